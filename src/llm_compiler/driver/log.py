"""The driver's log read back: what a build's objects lost against -Oz, in total.

``llm-compiler cc --log FILE`` appends one line per compile (:class:`~llm_compiler.driver.records.UnitLog`).
A rebuild appends again, so :func:`read_log` keeps the last line per object (its
directory and output path). :func:`log_summary` gives the figures a user of a build
wants: how many objects, the geomean gain over -Oz (the paper's figure) and the total
bytes against -Oz's total (what the binary loses), and against clang's own -Oz where the
driver measured it. It then shows where the bytes are: the kept objects' sections, totalled
by group (:data:`~llm_compiler.toolchain.elf.SECTION_GROUPS`), and those of the linked
files where the log holds whole-program links. :func:`with_sections` completes a line
with those figures as the driver writes it.
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from llm_compiler.core.metrics import gains_text, total_improvement
from llm_compiler.core.objective import Objective
from llm_compiler.driver.records import UnitLog
from llm_compiler.errors import InvalidInput
from llm_compiler.toolchain.elf import SECTION_GROUPS, section_sizes


def read_log(path: Path) -> list[dict[str, Any]]:
    """The log's records, the last one per object; lines torn by a killed build are skipped.

    Raises:
        InvalidInput: The file cannot be read.
    """
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise InvalidInput(f"{path}: cannot read the driver's log ({error}).") from error
    last: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and "output" in record:
            last[os.path.join(str(record.get("cwd", "")), str(record["output"]))] = record
    return list(last.values())


def log_summary(path: Path) -> str:
    """The summary ``llm-compiler cc --summary LOG`` prints (module docstring).

    Raises:
        InvalidInput: The file cannot be read or holds no record of a compile.
    """
    records = read_log(path)
    if not records:
        raise InvalidInput(f"{path}: no compile recorded (is it the file given to `llm-compiler cc --log`?).")
    measured = [r for r in records if r.get("oz_size") and r.get("size") is not None]
    kept = Counter(str(r.get("kept", "")) for r in records)
    lines = [
        f"{len(records)} objects in {path} (kept: "
        + ", ".join(f"{n} {how}" for how, n in kept.most_common())
        + f"); {len(measured)} measured against -Oz"
    ]
    if measured:
        lines.append(gains_text([(int(r["oz_size"]), int(r["size"])) for r in measured]))
        clang = [(int(r["clang_oz_size"]), int(r["size"])) for r in measured if r.get("clang_oz_size")]
        if clang:
            total = total_improvement(clang)
            lines.append(
                f"against clang -Oz ({len(clang)} objects): total bytes {sum(s for _, s in clang):,} vs "
                f"{sum(oz for oz, _ in clang):,} ({abs(total):.2%} {'smaller' if total >= 0 else 'larger'})"
            )
    units = [r for r in records if not r.get("link")]
    lines += section_table(units, "kept objects")
    links = [r for r in records if r.get("link")]
    if links:
        lines += section_table(links, "linked files")
    return "\n".join(lines)


def object_sections(data: bytes) -> dict[str, int] | None:
    """:func:`~llm_compiler.toolchain.elf.section_sizes` of an object, None when it is not ELF."""
    try:
        return section_sizes(data)
    except (InvalidInput, ValueError, IndexError):  # not ELF, or headers that do not parse
        return None


def with_sections(log: UnitLog) -> UnitLog:
    """``log`` with the sections of the file it kept (its ``output`` in its ``cwd``), read
    back when the line has none yet and a size (the file was written); a file that is not
    ELF, not a regular file or not there leaves them None."""
    if log.sections is not None or log.size is None or not log.output:
        return log
    path = Path(log.cwd, log.output)
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return log
        data = path.read_bytes()
    except OSError:
        return log
    return replace(log, sections=object_sections(data))


def section_table(records: Sequence[dict[str, Any]], what: str) -> list[str]:
    """Lines of the bytes of ``records`` by section group, totalled, with the log's own
    total of their sizes where they measure binary size (the groups add up to it)."""
    counted = [r for r in records if isinstance(r.get("sections"), dict)]
    built = [r for r in records if r.get("size") is not None]
    missing = sum(1 for r in built if not isinstance(r.get("sections"), dict))
    if not counted:
        return [
            f"sections of the {what}: none recorded ({len(built)} without section sizes: log lines "
            "written before the driver recorded them, or objects that are not ELF)"
        ]
    totals = {group: sum(int(r["sections"].get(group, 0)) for r in counted) for group in SECTION_GROUPS}
    total = sum(totals.values())
    lines = [f"sections of the {len(counted)} {what} (bytes):"]
    for group in SECTION_GROUPS:
        share = totals[group] / total if total else 0.0
        lines.append(f"  {group:<10} {totals[group]:>12,}  {share:6.1%}")
    lines.append(f"  {'total':<10} {total:>12,}")
    binary = [r for r in counted if r.get("size") is not None and _measures_binary_size(r)]
    if binary and len(binary) == len(counted):
        lines.append(f"  the log's sizes of these {what}: {sum(int(r['size']) for r in binary):,} bytes")
    if missing > 0:
        lines.append(f"  {missing} other {what} without section sizes (older log lines or not ELF)")
    return lines


def _measures_binary_size(record: dict[str, Any]) -> bool:
    return str(record.get("objective", Objective.BINARY_SIZE.value)) == Objective.BINARY_SIZE.value
