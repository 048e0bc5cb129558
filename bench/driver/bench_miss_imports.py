"""Import time of a ``llm-compiler cc`` cache miss, for source trees side by side.

Run: ``.venv/bin/python bench/driver/bench_miss_imports.py [--runs N] TREE...``, where
each TREE is a checkout of the project (``git worktree add /tmp/old HEAD~1``, and ``.``).

A hit imports :mod:`llm_compiler.cli.cc` and stops; a miss also imports the chooser's
modules: the driver's predictor chooser, the built-in predictor and its shipped rankers.
Each run is a fresh interpreter (as each build command is), the trees interleaved so
that both see the same load; the figure is the median wall time of those imports, and
the modules of :mod:`llm_compiler.autotune` the miss brought in are counted. The
import of :mod:`llm_compiler.cli.cc` (what every command pays, hit or miss) is timed
apart, since what it imports a miss does not import again.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys, time
started = time.perf_counter()
import llm_compiler.cli.cc
hit = time.perf_counter()
import llm_compiler.driver.predicted
import llm_compiler.predictor.proposer
import llm_compiler.predictor.shipped
done = time.perf_counter()
print(json.dumps({"hit": hit - started, "seconds": done - hit,
                  "autotune": sorted(m for m in sys.modules if m.startswith("llm_compiler.autotune"))}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path, help="project checkouts to compare")
    parser.add_argument("--runs", type=int, default=20, help="fresh interpreters per tree")
    options = parser.parse_args()
    times: dict[Path, list[float]] = {tree: [] for tree in options.trees}
    hits: dict[Path, list[float]] = {tree: [] for tree in options.trees}
    modules: dict[Path, list[str]] = {}
    for _ in range(options.runs):
        for tree in options.trees:
            env = {**os.environ, "PYTHONPATH": str(tree.resolve() / "src")}
            out = subprocess.run(
                [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120
            )
            if out.returncode != 0:
                sys.exit(f"{tree}: the imports failed:\n{out.stderr}")
            record = json.loads(out.stdout)
            times[tree].append(record["seconds"])
            hits[tree].append(record["hit"])
            modules[tree] = record["autotune"]
    print("| tree | cli.cc (median ms) | a miss's chooser on top (median ms) | autotune modules |")
    print("| --- | ---: | ---: | ---: |")
    for tree in options.trees:
        hit, miss = 1000 * statistics.median(hits[tree]), 1000 * statistics.median(times[tree])
        print(f"| {tree} | {hit:.0f} | {miss:.0f} | {len(modules[tree])} |")


if __name__ == "__main__":
    main()
