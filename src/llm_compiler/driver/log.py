"""The driver's log read back: what a build's objects lost against -Oz, in total.

``llm-compiler cc --log FILE`` appends one line per compile (:class:`~llm_compiler.driver.records.UnitLog`).
A rebuild appends again, so :func:`read_log` keeps the last line per object (its
directory and output path). :func:`log_summary` gives the figures a user of a build
wants: how many objects, the geomean gain over -Oz (the paper's figure) and the total
bytes against -Oz's total (what the binary loses), and against clang's own -Oz where the
driver measured it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from llm_compiler.core.metrics import gains_text, total_improvement
from llm_compiler.errors import InvalidInput


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
    return "\n".join(lines)
