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


def report(records: list[dict[str, Any]]) -> str:
    """The markdown table of the last record per (project, mode), with geometric means."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for record in records:
        latest[record["project"], record["mode"]] = record
    names = [name for name in PROJECTS if any(project == name for project, _ in latest)]
    names += sorted({project for project, _ in latest} - set(names))

    def get(project: str, mode: str) -> dict[str, Any] | None:
        record = latest.get((project, mode))
        return record if record and record.get("built") else None

    def cell(value: float | None, form: str = "{:.0f}") -> str:
        return "-" if value is None else form.format(value)

    def ratio(top: float | None, bottom: float | None) -> float | None:
        return top / bottom if top is not None and bottom else None

    def field(project: str, mode: str, key: str) -> float | None:
        record = get(project, mode)
        return None if record is None else record[key]

    lines = [
        "| project | clang-oz B | lto B | cc B | cc vs oz | lto vs oz | clang s | cc s | cc/clang "
        "| rebuild s | rebuild/clang | tests oz/lto/cc/rb/j8 | j8 identical |",
        "|" + "---|" * 13,
    ]
    ratios: dict[str, list[float]] = {"cc": [], "lto": [], "time": [], "rebuild": []}
    larger, different = [], []
    for name in names:
        oz, lto, cc = (field(name, mode, "total_bytes") for mode in ("clang-oz", "clang-oz-lto", "cc"))
        clang_s, cc_s = field(name, "clang-oz", "total_s"), field(name, "cc", "total_s")
        rebuild_s, clang_build = field(name, "cc-rebuild", "build_s"), field(name, "clang-oz", "build_s")
        row = {"cc": ratio(cc, oz), "lto": ratio(lto, oz), "time": ratio(cc_s, clang_s)}
        row["rebuild"] = ratio(rebuild_s, clang_build)
        for key, value in row.items():
            if value is not None:
                ratios[key].append(value)
        if oz is not None and cc is not None and cc > oz:
            larger.append(f"{name}: cc {cc} B > clang-oz {oz} B (+{(cc / oz - 1) * 100:.2f} %)")
        baseline = get(name, "clang-oz")
        for mode in ("clang-oz-lto", "cc"):
            other = get(name, mode)
            if baseline and other and set(other["artifacts"]) != set(baseline["artifacts"]):
                different.append(f"{name}: {mode} measured other artifacts than clang-oz")
        tests = "/".join(
            {True: "pass", False: "FAIL", None: "-"}[(latest.get((name, mode)) or {}).get("tests_passed")]
            for mode in MODES
        )
        j8 = latest.get((name, "cc-j8"))
        identical = "-" if not j8 or j8.get("identical") is None else ("yes" if j8["identical"] else "NO")
        flag = " **LARGER**" if oz is not None and cc is not None and cc > oz else ""
        lines.append(
            f"| {name} | {cell(oz)} | {cell(lto)} | {cell(cc)}{flag} "
            f"| {cell(reduction(row['cc']), '{:+.2f} %')} | {cell(reduction(row['lto']), '{:+.2f} %')} "
            f"| {cell(clang_s, '{:.1f}')} | {cell(cc_s, '{:.1f}')} | {cell(row['time'], '{:.2f}')} "
            f"| {cell(rebuild_s, '{:.1f}')} | {cell(row['rebuild'], '{:.2f}')} | {tests} | {identical} |"
        )
    means = {key: geomean(values) for key, values in ratios.items()}
    count = {key: f"n={len(values)}" for key, values in ratios.items()}
    lines.append(
        f"| geomean over projects | | | | {cell(reduction(means['cc']), '{:+.2f} %')} "
        f"(x{cell(means['cc'], '{:.4f}')}, {count['cc']}) | {cell(reduction(means['lto']), '{:+.2f} %')} "
        f"(x{cell(means['lto'], '{:.4f}')}, {count['lto']}) | | | {cell(means['time'], '{:.2f}')} "
        f"({count['time']}) | | {cell(means['rebuild'], '{:.2f}')} ({count['rebuild']}) | | |"
    )
    notes = [
        "",
        "Bytes: .text + .data summed over the project's linked artifacts. `vs oz`: reduction "
        "against clang -Oz (positive is smaller). Seconds: configure + build at -j1; rebuild: "
        "the build phase of the warm-cache rebuild, and its ratio to clang-oz's build phase.",
    ]
    for line in larger:
        notes.append(f"**WARNING: llm-compiler cc is larger than clang -Oz: {line}**")
    notes.extend(f"warning: {line}" for line in different)
    failed = [
        f"{p} {m}" for (p, m), r in latest.items() if not r.get("built") or r.get("tests_passed") is False
    ]
    if failed:
        notes.append("failed (build or tests): " + ", ".join(sorted(failed)))
    return "\n".join(lines + notes)


def reduction(value: float | None) -> float | None:
    return None if value is None else (1 - value) * 100
