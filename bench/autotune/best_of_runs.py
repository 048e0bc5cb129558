"""How far the searches are from the best any of them found: the best of several runs, per unit.

Run on the folders ``bench_autotune.py`` wrote (the same units, any searches and budgets)::

    .venv/bin/python bench/autotune/best_of_runs.py /work/bench-autotune/*-*

For each run it prints the geomean reduction vs -Oz of its reported (validated) lists,
and for all runs together the geomean of each unit's smallest validated size over every
run: an upper bound for any search that explores what these searches explored. It also
prints, as a share of that bound, what each run reached, and the units where the runs
disagree most.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def geomean_reduction(pairs: list[tuple[int, int]]) -> float:
    """1 - exp(mean log(size / -Oz size)), in percent."""
    return 100 * (1 - math.exp(sum(math.log(size / oz) for oz, size in pairs) / len(pairs)))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("runs", nargs="+", type=Path, help="folders with best.jsonl")
    parser.add_argument("--show", type=int, default=10, help="units where the runs disagree most")
    args = parser.parse_args(argv)
    sizes: dict[str, dict[str, tuple[int, int]]] = {}
    for run in args.runs:
        for line in (run / "best.jsonl").read_text().splitlines():
            record = json.loads(line)
            sizes.setdefault(record["program"], {})[run.name] = (record["oz_size"], record["best_size"])
    units = [unit for unit, found in sizes.items() if len(found) == len(args.runs)]
    if not units:
        print("no unit is in every run", file=sys.stderr)
        return 1
    best = [(sizes[u][args.runs[0].name][0], min(size for _, size in sizes[u].values())) for u in units]
    bound = geomean_reduction(best)
    print(
        f"{len(units)} units in all {len(args.runs)} runs; the best validated list of any run: {bound:.2f}%"
    )
    print("| run | validated | share of the best of all runs |")
    print("| --- | ---: | ---: |")
    for run in args.runs:
        reached = geomean_reduction([sizes[u][run.name] for u in units])
        print(f"| {run.name} | {reached:.2f}% | {reached / bound if bound else 1.0:.2f} |")
    spread = sorted(
        units,
        key=lambda u: -(max(s for _, s in sizes[u].values()) - min(s for _, s in sizes[u].values())),
    )
    for unit in spread[: args.show]:
        found = ", ".join(f"{run} {size}" for run, (_, size) in sorted(sizes[unit].items()))
        print(f"{unit}: -Oz {next(iter(sizes[unit].values()))[0]}; {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
