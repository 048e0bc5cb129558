"""What the real-project benchmark measures of a build: its linked artifacts' sizes,
sections and digests, and the sections of records written before they were measured.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from llm_compiler.toolchain.elf import SECTION_GROUPS, berkeley_size, section_sizes


def is_linked_elf(path: Path) -> bool:
    """An ELF executable or shared object (not a relocatable object, not a script)."""
    with path.open("rb") as stream:
        header = stream.read(18)
    return len(header) == 18 and header[:4] == b"\x7fELF" and header[16] in (2, 3)


def measure_artifacts(tree: Path, patterns: tuple[str, ...]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Sizes and digests of the linked artifacts matching ``patterns``; and the patterns
    that matched none. Links count once, as their target; ``lt-*`` libtool copies not."""
    found: dict[str, dict[str, Any]] = {}
    missing = []
    for pattern in patterns:
        matched = False
        for path in sorted(tree.glob(pattern)):
            real = path.resolve()
            if not real.is_file() or real.name.startswith("lt-") or not is_linked_elf(real):
                continue
            matched = True
            name = str(real.relative_to(tree.resolve()))
            if name not in found:
                data = real.read_bytes()
                size = berkeley_size(data)
                found[name] = {
                    "text": size.text,
                    "data": size.data,
                    "bytes": size.binary_size,
                    "sections": section_sizes(data),
                    "sha256": hashlib.sha256(data).hexdigest(),
                }
        if not matched:
            missing.append(pattern)
    return found, missing


def section_totals(artifacts: dict[str, dict[str, Any]]) -> dict[str, int] | None:
    """The artifacts' ``sections`` summed per group; None when one has none (measured
    before sections were)."""
    if any("sections" not in artifact for artifact in artifacts.values()):
        return None
    return {group: sum(a["sections"][group] for a in artifacts.values()) for group in SECTION_GROUPS}


def fill_sections(records: list[dict[str, Any]]) -> int:
    """Adds ``sections`` to the built records that lack them, read from their artifacts
    where these are still in the record's tree with the recorded SHA-256 (a later build
    may have replaced them). Returns how many records got them."""
    filled = 0
    for record in records:
        if "sections" in record or not record.get("built") or not record.get("artifacts"):
            continue
        found = {}
        for name, artifact in record["artifacts"].items():
            path = Path(record.get("tree", "")) / name
            if not path.is_file():
                break
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest() != artifact.get("sha256"):
                break
            found[name] = section_sizes(data)
        else:
            for name, sections in found.items():
                record["artifacts"][name]["sections"] = sections
            record["sections"] = section_totals(record["artifacts"])
            filled += 1
    return filled
