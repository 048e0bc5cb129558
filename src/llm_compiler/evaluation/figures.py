"""The figures of a flag-tuning evaluation, from its rows.

:func:`summarize` turns rows into the figures per system and per package: geometric
mean size reduction against -Oz zero-shot and with backup, shares improved and
regressed, shares of each outcome, compiles and seconds per unit, and the MAPE of
predicted sizes; and, where rows have them, each system's bytes per group of sections
summed over its units (:func:`section_totals`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from llm_compiler.core.metrics import geometric_mean_improvement, total_improvement
from llm_compiler.evaluation.results import Failure, Row
from llm_compiler.toolchain.elf import SECTION_GROUPS


def by_system_and_target(
    rows: Iterable[Mapping[str, Any]], figures: Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """``figures`` of each system's rows, with ``"by_target"``: the same per row ``target``."""
    by_system: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by_system[row["system"]].append(row)
    systems = {}
    for system, group in by_system.items():
        by_target: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for row in group:
            by_target[row["target"]].append(row)
        targets = {target: figures(part) for target, part in sorted(by_target.items())}
        systems[system] = {**figures(group), "by_target": targets}
    return systems


def mape(pairs: Iterable[tuple[int, int]]) -> float | None:
    """Mean absolute percentage error of (predicted, actual) pairs, as a fraction.

    Example:
        >>> mape([(110, 100), (45, 50)])
        0.1
    """
    errors = [abs(predicted - actual) / actual for predicted, actual in pairs if actual > 0]
    return sum(errors) / len(errors) if errors else None


def metrics(rows: Sequence[Row]) -> dict[str, Any]:
    """The figures of one system over ``rows`` (see the module docstring)."""
    count = len(rows)
    outcomes = Counter(row.outcome for row in rows)
    unvalidated = [
        (row.oz_size, min(row.unvalidated_size, row.oz_size)) for row in rows if row.unvalidated_size
    ]
    return {
        "units": count,
        "geomean_zero_shot": geometric_mean_improvement([(row.oz_size, row.zero_shot_size) for row in rows]),
        "geomean_backup": geometric_mean_improvement([(row.oz_size, row.size) for row in rows]),
        "total_backup": total_improvement([(row.oz_size, row.size) for row in rows]),
        "oz_bytes": sum(row.oz_size for row in rows),
        "bytes": sum(row.size for row in rows),
        "improved": sum(row.zero_shot_size < row.oz_size for row in rows) / count if count else 0.0,
        "regressed": sum(row.zero_shot_size > row.oz_size for row in rows) / count if count else 0.0,
        "outcomes": {outcome: n / count for outcome, n in sorted(outcomes.items())},
        "compiles_per_unit": sum(row.compiles for row in rows) / count if count else 0.0,
        "seconds_per_unit": sum(row.seconds for row in rows) / count if count else 0.0,
        "mape_before": mape((r.predicted_before, r.unoptimized_size) for r in rows if r.predicted_before),
        "mape_after": mape(
            (r.predicted_after, r.measured_after) for r in rows if r.predicted_after and r.measured_after
        ),
        "geomean_unvalidated": geometric_mean_improvement(unvalidated) if unvalidated else None,
    }


def section_totals(rows: Sequence[Row]) -> dict[str, dict[str, int]]:
    """Per system, the bytes of each group of sections summed over its rows that have
    sections, with ``total`` (their sum) and ``units`` (how many rows); systems without
    sections are left out.

    Example:
        >>> row = Row("u", "p", "gcc-os", 9, 20, 8, 8, False, 8, "gcc", "gcc -Os",
        ...           sections={".text": 6, ".eh_frame": 0, ".rodata": 2, ".data": 0, "other": 0})
        >>> section_totals([row])["gcc-os"]["total"]
        8
    """
    totals: dict[str, dict[str, int]] = {}
    for row in rows:
        if row.sections is None:
            continue
        found = totals.setdefault(row.system, {**dict.fromkeys(SECTION_GROUPS, 0), "total": 0, "units": 0})
        for group, size in row.sections.items():
            found[group] = found.get(group, 0) + size
            found["total"] += size
        found["units"] += 1
    return totals


def summarize(
    rows: Sequence[Row],
    *,
    llvm_version: str,
    programs: str,
    settings: dict[str, Any],
    failures: Sequence[Failure] = (),
) -> dict[str, Any]:
    """``report.json``: the figures per system, and per package and system, over the rows;
    ``errors``: each unit and system that gave no row, with the reason."""
    by_system: dict[str, list[Row]] = defaultdict(list)
    by_package: dict[str, dict[str, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        by_system[row.system].append(row)
        by_package[row.package][row.system].append(row)
    return {
        "task": "flag-tuning",
        "llvm_version": llvm_version,
        "programs": programs,
        "units": len({row.unit for row in rows}),
        "systems": {name: metrics(group) for name, group in by_system.items()},
        "packages": {
            package: {name: metrics(group) for name, group in systems.items()}
            for package, systems in sorted(by_package.items())
        },
        "settings": settings,
        "sections": section_totals(rows),
        "errors": [{"unit": f.unit, "system": f.system, "error": f.error} for f in failures],
    }
