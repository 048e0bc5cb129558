"""The table of the real-project benchmark: bytes and times per project and mode.

:func:`report` reads the records ``bench_projects.py`` appends to ``results.jsonl`` and
prints a markdown table of the last record per (project, mode): total bytes, the
reductions against clang -Oz, build times and their ratios to clang's, the tests of
each mode, whether the parallel build was byte-identical, and the geometric means over
projects. A project whose ``llm-compiler cc`` total exceeds clang -Oz's is flagged.
"""

from __future__ import annotations

import math
from typing import Any

from projects import MODES, PROJECTS


def geomean(values: list[float]) -> float | None:
    values = [value for value in values if value > 0]
    return math.exp(sum(math.log(value) for value in values) / len(values)) if values else None


#: The size columns: (mode, heading), each with its reduction against clang -Oz.
SIZE_MODES = (
    ("cc", "cc"),
    ("cc-tuned", "tuned"),
    ("cc-whole-program", "whole program"),
    ("clang-oz-lto", "-Oz -flto"),
)


def report(records: list[dict[str, Any]]) -> str:
    """The markdown table of the last record per (project, mode), with geometric means
    of the per-project ratios and the totals over projects."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for record in records:
        latest[record["project"], record["mode"]] = record
    names = [name for name in PROJECTS if any(project == name for project, _ in latest)]
    names += sorted({project for project, _ in latest} - set(names))

    def field(project: str, mode: str, key: str) -> float | None:
        record = latest.get((project, mode))
        return record[key] if record and record.get("built") else None

    headings = [f"{heading} vs -Oz" for _, heading in SIZE_MODES]
    lines = [
        "| project | clang -Oz B | "
        + " | ".join(headings)
        + " | clang s | cc s | cc/clang | rebuild/clang | tests "
        + "/".join(MODES)
        + " | -j identical |",
        "|" + "---|" * (9 + len(SIZE_MODES)),
    ]
    ratios: dict[str, list[float]] = {key: [] for key in (*(m for m, _ in SIZE_MODES), "time", "rebuild")}
    totals: dict[str, list[float]] = {mode: [0, 0] for mode, _ in SIZE_MODES}  # [mode, clang -Oz]
    larger, different = [], []
    for name in names:
        oz = field(name, "clang-oz", "total_bytes")
        row: dict[str, float | None] = {}
        for mode, _ in SIZE_MODES:
            size = field(name, mode, "total_bytes")
            row[mode] = ratio(size, oz)
            if size is not None and oz is not None:
                totals[mode][0] += size
                totals[mode][1] += oz
                if mode.startswith("cc") and size > oz:
                    larger.append(f"{name}: {mode} {size:.0f} B > clang -Oz {oz:.0f} B")
                artifacts = (latest[name, mode]["artifacts"], latest[name, "clang-oz"]["artifacts"])
                if set(artifacts[0]) != set(artifacts[1]):
                    different.append(f"{name}: {mode} measured other artifacts than clang-oz")
        clang_s, cc_s = field(name, "clang-oz", "total_s"), field(name, "cc", "total_s")
        row["time"] = ratio(cc_s, clang_s)
        row["rebuild"] = ratio(field(name, "cc-rebuild", "build_s"), field(name, "clang-oz", "build_s"))
        for key, value in row.items():
            if value is not None:
                ratios[key].append(value)
        tests = "/".join(
            {True: "pass", False: "FAIL", None: "-"}[(latest.get((name, mode)) or {}).get("tests_passed")]
            for mode in MODES
        )
        parallel = latest.get((name, "cc-j8"))
        if not parallel or parallel.get("identical") is None:
            same = "-"
        else:
            same = f"yes (-j{parallel['jobs']})" if parallel["identical"] else "NO"
        sizes = " | ".join(cell(reduction(row[mode]), "{:+.2f} %") for mode, _ in SIZE_MODES)
        lines.append(
            f"| {name} | {cell(oz)} | {sizes} | {cell(clang_s, '{:.1f}')} | {cell(cc_s, '{:.1f}')} "
            f"| {cell(row['time'], '{:.2f}')} | {cell(row['rebuild'], '{:.2f}')} | {tests} | {same} |"
        )
    means = {key: geomean(values) for key, values in ratios.items()}
    mean_sizes = " | ".join(
        f"{cell(reduction(means[mode]), '{:+.2f} %')} (n={len(ratios[mode])})" for mode, _ in SIZE_MODES
    )
    lines.append(
        f"| geomean over projects | | {mean_sizes} | | | {cell(means['time'], '{:.2f}')} "
        f"| {cell(means['rebuild'], '{:.2f}')} | | |"
    )
    total_sizes = " | ".join(
        cell(reduction(ratio(*totals[mode])), "{:+.2f} %") + f" ({totals[mode][1] - totals[mode][0]:+.0f} B)"
        for mode, _ in SIZE_MODES
    )
    lines.append(f"| total bytes over projects | | {total_sizes} | | | | | | |")
    notes = [
        "",
        "Bytes: .text + .data summed over each project's linked artifacts. `vs -Oz`: reduction "
        "against clang -Oz (positive is smaller); the totals' bytes are those saved. Seconds: "
        "configure + build at -j1; rebuild/clang: the build phase of the warm-cache rebuild "
        "over clang -Oz's build phase.",
    ]
    notes.extend(f"**WARNING: larger than clang -Oz: {line}**" for line in larger)
    notes.extend(f"warning: {line}" for line in different)
    failed = [
        f"{p} {m}" for (p, m), r in latest.items() if not r.get("built") or r.get("tests_passed") is False
    ]
    if failed:
        notes.append("failed (build or tests): " + ", ".join(sorted(failed)))
    return "\n".join(lines + notes)


def cell(value: float | None, form: str = "{:.0f}") -> str:
    return "-" if value is None else form.format(value)


def ratio(top: float | None, bottom: float | None) -> float | None:
    return top / bottom if top is not None and bottom else None


def reduction(value: float | None) -> float | None:
    return None if value is None else (1 - value) * 100
