"""The tables of the real-project benchmark: bytes and times per project and mode.

:func:`report` reads the records ``bench_projects.py`` appends to ``results.jsonl`` and
prints three markdown tables of the last record per (project, mode). The first: total
bytes and the reductions against clang -Oz (and against gcc -Os, when a ``gcc-os``
record is there); the times of clang -Oz, of the cold ``cc``
build, of ``cc-warm`` (verdicts warm, objects cold) and their ratios to clang -Oz's;
the rebuild's build phase over clang -Oz's; clang -Oz -flto's time and the
whole-program build's over it; the tests of each mode, whether the warm and parallel
builds were byte-identical to the cold one; and the geometric means over projects. A
project whose ``llm-compiler cc`` total exceeds clang -Oz's is flagged. The second,
where the time goes: per project and ``cc`` mode, from the driver's log
(:func:`unit_summary`), the units compiled (misses), those the cache served (hits), the
whole-program links, and the seconds the driver spent in each. The third, where the
bytes are (:func:`section_table`): per project and mode, the artifacts' bytes by kind
of section, their total and its reductions against clang -Oz and gcc -Os; then per mode
the sums over projects and the geometric means of those reductions. A record written
before sections were measured shows ``-`` in their cells.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from projects import MODES, PROJECTS

from llm_compiler.toolchain.elf import SECTION_GROUPS


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
#: The size columns against gcc -Os, shown for the modes of the records when ``gcc-os``
#: is among them: (mode, heading).
GCC_SIZE_MODES = (
    ("clang-oz", "-Oz"),
    ("cc", "cc"),
    ("cc-tuned", "tuned"),
    ("cc-whole-program", "whole program"),
    ("clang-oz-lto", "-Oz -flto"),
    ("gcc-os-lto", "gcc -Os -flto"),
)
#: The modes whose measured artifacts must be those of clang -Oz.
COMPARED_MODES = (*(mode for mode, _ in SIZE_MODES), "gcc-os", "gcc-os-lto")
#: The baselines of the section table: (mode, heading).
BASELINES = (("clang-oz", "vs clang -Oz"), ("gcc-os", "vs gcc -Os"))
#: The time ratios: key -> (mode, its time field, the baseline mode, the baseline's field).
TIME_RATIOS = {
    "cold": ("cc", "total_s", "clang-oz", "total_s"),
    "warm": ("cc-warm", "total_s", "clang-oz", "total_s"),
    "rebuild": ("cc-rebuild", "build_s", "clang-oz", "build_s"),
    "whole": ("cc-whole-program", "total_s", "clang-oz-lto", "total_s"),
}


def unit_summary(log: Path) -> dict[str, Any]:
    """What ``llm-compiler cc`` did, counted from its log (``LLM_COMPILER_CC_LOG``).

    Returns:
        ``units`` (the compiles: the lines that are not whole-program links), ``hits``
        (those the cache served), ``misses`` (the rest), ``links`` (whole-program links),
        the seconds summed over each (``miss_s``, ``hit_s``, ``link_s``), the units'
        ``kept`` and ``origin`` counts, the links' ``link_kept``, the slowest five
        compiles and the first five fallbacks' reasons.
    """
    if not log.is_file():
        return {"units": 0}
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    units = [line for line in lines if not line.get("link")]
    links = [line for line in lines if line.get("link")]
    hits = [line for line in units if line.get("cached")]
    misses = [line for line in units if not line.get("cached")]

    def counts(group: list[dict[str, Any]], key: str) -> dict[str, int]:
        found: dict[str, int] = {}
        for line in group:
            found[line.get(key) or "-"] = found.get(line.get(key) or "-", 0) + 1
        return found

    def seconds(group: list[dict[str, Any]]) -> float:
        return round(sum(float(line.get("seconds") or 0) for line in group), 2)

    slowest = sorted(units, key=lambda line: -float(line.get("seconds") or 0))[:5]
    return {
        "units": len(units),
        "cached": len(hits),
        "hits": len(hits),
        "misses": len(misses),
        "links": len(links),
        "miss_s": seconds(misses),
        "hit_s": seconds(hits),
        "link_s": seconds(links),
        "kept": counts(units, "kept"),
        "origin": counts(misses, "origin"),
        "link_kept": counts(links, "kept"),
        "slowest": [
            [line.get("source", ""), line.get("seconds"), bool(line.get("cached"))] for line in slowest
        ],
        "fallbacks": [line.get("reason", "")[:200] for line in units if line.get("kept") == "clang"][:5],
    }


def report(records: list[dict[str, Any]]) -> str:
    """The two markdown tables of the last record per (project, mode): sizes and times,
    with geometric means of the per-project ratios and the totals over projects; and
    where the time of the ``cc`` modes went."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for record in records:
        latest[record["project"], record["mode"]] = record
    names = [name for name in PROJECTS if any(project == name for project, _ in latest)]
    names += sorted({project for project, _ in latest} - set(names))

    def field(project: str, mode: str, key: str) -> float | None:
        record = latest.get((project, mode))
        return record[key] if record and record.get("built") else None

    present = {mode for (_, mode), record in latest.items() if record.get("built")}
    gcc_modes = [(m, h) for m, h in GCC_SIZE_MODES if m in present] if "gcc-os" in present else []
    headings = [f"{heading} vs -Oz" for _, heading in SIZE_MODES]
    headings += [f"{heading} vs gcc -Os" for _, heading in gcc_modes]
    lines = [
        "| project | clang -Oz B | "
        + " | ".join(headings)
        + " | clang -Oz s | cc s | cc/clang | warm s | warm/clang | rebuild/clang | -Oz -flto s "
        + "| whole-program s | wp/-flto | tests "
        + "/".join(MODES)
        + " | warm identical | -j identical |",
        "|" + "---|" * (14 + len(headings)),
    ]
    size_keys = [*(m for m, _ in SIZE_MODES), *(f"{m} vs gcc" for m, _ in gcc_modes)]
    ratios: dict[str, list[float]] = {key: [] for key in (*size_keys, *TIME_RATIOS)}
    totals: dict[str, list[float]] = {key: [0, 0] for key in size_keys}  # [mode, its baseline]
    larger, different = [], []
    for name in names:
        oz = field(name, "clang-oz", "total_bytes")
        os_ = field(name, "gcc-os", "total_bytes")
        row: dict[str, float | None] = {}
        for key, mode, reference in [
            *((m, m, oz) for m, _ in SIZE_MODES),
            *((f"{m} vs gcc", m, os_) for m, _ in gcc_modes),
        ]:
            size = field(name, mode, "total_bytes")
            row[key] = ratio(size, reference)
            if size is not None and reference is not None:
                totals[key][0] += size
                totals[key][1] += reference
                if key == mode and mode.startswith("cc") and size > reference:
                    larger.append(f"{name}: {mode} {size:.0f} B > clang -Oz {oz:.0f} B")
        for mode in COMPARED_MODES:
            if field(name, mode, "total_bytes") is not None and oz is not None:
                artifacts = (latest[name, mode]["artifacts"], latest[name, "clang-oz"]["artifacts"])
                if set(artifacts[0]) != set(artifacts[1]):
                    different.append(f"{name}: {mode} measured other artifacts than clang-oz")
        for key, (mode, seconds, base, base_seconds) in TIME_RATIOS.items():
            row[key] = ratio(field(name, mode, seconds), field(name, base, base_seconds))
        for key, value in row.items():
            if value is not None:
                ratios[key].append(value)
        tests = "/".join(
            {True: "pass", False: "FAIL", None: "-"}[(latest.get((name, mode)) or {}).get("tests_passed")]
            for mode in MODES
        )
        times = " | ".join(
            (
                cell(field(name, "clang-oz", "total_s"), "{:.1f}"),
                cell(field(name, "cc", "total_s"), "{:.1f}"),
                cell(row["cold"], "{:.2f}"),
                cell(field(name, "cc-warm", "total_s"), "{:.1f}"),
                cell(row["warm"], "{:.2f}"),
                cell(row["rebuild"], "{:.2f}"),
                cell(field(name, "clang-oz-lto", "total_s"), "{:.1f}"),
                cell(field(name, "cc-whole-program", "total_s"), "{:.1f}"),
                cell(row["whole"], "{:.2f}"),
            )
        )
        sizes = " | ".join(cell(reduction(row[key]), "{:+.2f} %") for key in size_keys)
        lines.append(
            f"| {name} | {cell(oz)} | {sizes} | {times} | {tests} "
            f"| {identical(latest.get((name, 'cc-warm')))} | {identical(latest.get((name, 'cc-j8')))} |"
        )
    means = {key: geomean(values) for key, values in ratios.items()}
    mean_sizes = " | ".join(
        f"{cell(reduction(means[key]), '{:+.2f} %')} (n={len(ratios[key])})" for key in size_keys
    )
    mean_times = {key: f"{cell(means[key], '{:.2f}')} (n={len(ratios[key])})" for key in TIME_RATIOS}
    lines.append(
        f"| geomean over projects | | {mean_sizes} | | | {mean_times['cold']} | | {mean_times['warm']} "
        f"| {mean_times['rebuild']} | | | {mean_times['whole']} | | | |"
    )
    total_sizes = " | ".join(
        cell(reduction(ratio(*totals[key])), "{:+.2f} %") + f" ({totals[key][1] - totals[key][0]:+.0f} B)"
        for key in size_keys
    )
    lines.append(f"| total bytes over projects | | {total_sizes} |" + " |" * 12)
    notes = [
        "",
        "Bytes: .text + .data summed over each project's linked artifacts. `vs -Oz`: reduction "
        "against clang -Oz (positive is smaller); the totals' bytes are those saved. Seconds: "
        "configure + build at -j1; cc: the cold build (empty object cache; with --fresh-state "
        "an empty verdict store too); warm: the same with the verdict store the cold build left "
        "(with --fresh-state; else one more cold build); rebuild/clang: the build phase of the "
        "warm-cache rebuild over clang -Oz's build phase; wp/-flto: the whole-program build "
        "over clang -Oz -flto's. Identical: the linked artifacts' bytes equal the cold cc build's."
        + (" `vs gcc -Os`: the reduction against gcc -Os, in the same way." if gcc_modes else ""),
    ]
    notes.extend(f"**WARNING: larger than clang -Oz: {line}**" for line in larger)
    notes.extend(f"warning: {line}" for line in different)
    shared = sorted(f"{p} {m}" for (p, m), r in latest.items() if r.get("fresh_state") is False)
    if shared:
        notes.append("built with the user's XDG_CACHE_HOME (no --fresh-state): " + ", ".join(shared))
    failed = [
        f"{p} {m}" for (p, m), r in latest.items() if not r.get("built") or r.get("tests_passed") is False
    ]
    if failed:
        notes.append("failed (build or tests): " + ", ".join(sorted(failed)))
    return "\n".join([*lines, *notes, "", time_table(latest, names), "", section_table(latest, names)])


def time_table(latest: dict[tuple[str, str], dict[str, Any]], names: list[str]) -> str:
    """Where the time goes: per project and ``cc`` mode, the driver log's counts and
    seconds (:func:`unit_summary`) beside the wall time they fall in."""
    lines = [
        "Where the time goes (driver log; seconds summed over commands):",
        "",
        "| project | mode | wall s | units | misses | hits | links | miss s | hit s | link s "
        "| outside s | slowest unit s | kept |",
        "|" + "---|" * 13,
    ]
    for name in names:
        for mode in MODES:
            record = latest.get((name, mode))
            if record is None or "driver" not in record:
                continue
            driver = dict(record["driver"])
            if "misses" not in driver and "cached" in driver:  # a record from before the split
                driver.update(hits=driver["cached"], misses=driver["units"] - driver["cached"])
            # The rebuild's and the tuned build's logs cover their final build phase alone.
            wall = record.get("build_s" if mode in ("cc-rebuild", "cc-tuned") else "total_s")
            spent = [driver.get(key) for key in ("miss_s", "hit_s", "link_s")]
            outside = None
            if wall is not None and record.get("jobs") == 1 and all(v is not None for v in spent):
                outside = wall - sum(v for v in spent if v is not None)
            kept = ", ".join(f"{key} {count}" for key, count in sorted(driver.get("kept", {}).items()))
            counts = " | ".join(cell(driver.get(key)) for key in ("units", "misses", "hits", "links"))
            seconds = " | ".join(cell(value, "{:.1f}") for value in spent)
            slowest = driver.get("slowest") or [["-", None, False]]
            source, slowest_s = Path(slowest[0][0]).name, slowest[0][1]
            lines.append(
                f"| {name} | {mode} | {cell(wall, '{:.1f}')} | {counts} | {seconds} "
                f"| {cell(outside, '{:.1f}')} | {source} {cell(slowest_s, '{:.1f}')} | {kept} |"
            )
    lines += [
        "",
        "wall: configure + build (the rebuild's and the tuned build's: the build phase, which "
        "their logs cover). units: the compiles the driver logged (configure's checks "
        "included); misses: compiled; hits: served by the object cache; links: whole-program "
        "links; their seconds: each command's own from its start in the driver. outside: the "
        "wall time not in those (make, configure's scripts, the links handed to clang, each "
        "command's start-up before the driver runs), at -j1 only.",
    ]
    return "\n".join(lines)


def section_table(latest: dict[tuple[str, str], dict[str, Any]], names: list[str]) -> str:
    """Where the bytes are: per project and built mode, the linked artifacts' bytes by
    group of :data:`SECTION_GROUPS` (``-`` for a record measured before sections were),
    their total, and its reductions against clang -Oz and gcc -Os; then per mode the
    sums over projects and the geometric means over projects of those reductions."""
    columns = " | ".join(SECTION_GROUPS)
    baselines = " | ".join(heading for _, heading in BASELINES)
    lines = [
        "Where the bytes are (sections of the linked artifacts, bytes):",
        "",
        f"| project | mode | {columns} | total | {baselines} |",
        "|" + "---|" * (3 + len(SECTION_GROUPS) + len(BASELINES)),
    ]
    modes = [mode for mode in MODES if any(m == mode and r.get("built") for (_, m), r in latest.items())]
    # Per mode: the group sums over projects (None once a record has no sections), the
    # total, the projects, and the per-project ratios to each baseline.
    sums: dict[str, dict[str, int] | None] = {mode: dict.fromkeys(SECTION_GROUPS, 0) for mode in modes}
    total: dict[str, int] = dict.fromkeys(modes, 0)
    count: dict[str, int] = dict.fromkeys(modes, 0)
    ratios: dict[tuple[str, str], list[float]] = {(m, b): [] for m in modes for b, _ in BASELINES}
    mismatched = []
    for name in names:
        for mode in modes:
            record = latest.get((name, mode))
            if record is None or not record.get("built"):
                continue
            sections = record.get("sections")
            size = record["total_bytes"]
            total[mode] += size
            count[mode] += 1
            mode_sums = sums[mode]
            if sections is None or mode_sums is None:
                sums[mode] = None
            else:
                for group in SECTION_GROUPS:
                    mode_sums[group] += sections[group]
                if sum(sections.values()) != size:
                    mismatched.append(f"{name} {mode}")
            cells = []
            for base, _ in BASELINES:
                baseline = latest.get((name, base))
                value = None
                if base != mode and baseline and baseline.get("built"):
                    value = ratio(size, baseline["total_bytes"])
                if value is not None:
                    ratios[mode, base].append(value)
                cells.append(cell(reduction(value), "{:+.2f} %"))
            groups = " | ".join(cell(None if sections is None else sections[g]) for g in SECTION_GROUPS)
            lines.append(f"| {name} | {mode} | {groups} | {size} | {' | '.join(cells)} |")
    for mode in modes:
        mode_sums = sums[mode]
        groups = " | ".join(cell(None if mode_sums is None else mode_sums[g]) for g in SECTION_GROUPS)
        means = " | ".join(
            f"{cell(reduction(geomean(ratios[mode, base])), '{:+.2f} %')} (n={len(ratios[mode, base])})"
            for base, _ in BASELINES
        )
        lines.append(f"| total over {count[mode]} projects | {mode} | {groups} | {total[mode]} | {means} |")
    lines += [
        "",
        "Bytes of the linked artifacts by section, as `llvm-size` counts them (allocated, "
        "file-backed): .text code; .eh_frame all unwind tables (.eh_frame_hdr, "
        ".gcc_except_table...); .rodata read-only data; .data writable data; other the rest "
        "(symbol, relocation and version tables of the dynamic linker, notes...). vs: the "
        "reduction of the total against that mode's (positive is smaller); in the totals' rows "
        "the geometric mean over projects of the per-project ratios.",
    ]
    if mismatched:
        lines.append("warning: sections do not add up to the total: " + ", ".join(mismatched))
    return "\n".join(lines)


def identical(record: dict[str, Any] | None) -> str:
    """A build's ``identical`` against the cold ``cc`` build, as a cell."""
    if not record or record.get("identical") is None:
        return "-"
    return f"yes (-j{record['jobs']})" if record["identical"] else "NO"


def cell(value: float | None, form: str = "{:.0f}") -> str:
    return "-" if value is None else form.format(value)


def ratio(top: float | None, bottom: float | None) -> float | None:
    return top / bottom if top is not None and bottom else None


def reduction(value: float | None) -> float | None:
    return None if value is None else (1 - value) * 100
