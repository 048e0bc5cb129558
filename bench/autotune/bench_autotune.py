"""Improvement over -Oz as a function of the search budget, and compiles per second.

Run: ``.venv/bin/python bench/autotune/bench_autotune.py [--budgets 10 100 1000]``.

For each budget (random lists per program, -Oz included) a fresh tuning run with the
same seed goes over two program sets, on a local pool of all cores:

* the bundled examples (whole translation units, runnable, so the best lists are
  validated);
* function-sized modules extracted from the examples with ``llvm-extract``, standing in
  for a corpus slice (not runnable: their reported lists stay at -Oz, so the table
  shows the search's own figures for them).

Reported per budget and set: the geomean binary-size reduction vs -Oz after random
search, after minimization and broadcast, and after validation; the programs
improved; the mean minimized list length; compiles (evaluations) per second of wall
time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from llm_compiler.autotune.jobs import TuneSettings
from llm_compiler.autotune.store import Store
from llm_compiler.autotune.tuner import Tuner
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.executors import LocalExecutor
from llm_compiler.core.metrics import geometric_mean_improvement
from llm_compiler.corpus.functions import extract_function
from llm_compiler.corpus.program_set import ProgramSet, ProgramSource
from llm_compiler.toolchain.ir import defined_functions

ROOT = Path(__file__).resolve().parents[2]


def run(
    label: str, specs: list[ProgramSource], budget: int, seed: int, jobs: int, compiler: Compiler
) -> None:
    settings = TuneSettings(seed=seed, budget=budget, engine=compiler.engine, timeout=compiler.timeout)
    with tempfile.TemporaryDirectory() as scratch:
        store = Store(Path(scratch) / "tune.sqlite")
        executor = LocalExecutor(jobs)
        started = time.perf_counter()
        try:
            report = Tuner(settings, store, executor, compiler).run(specs)
        finally:
            executor.close()
        seconds = time.perf_counter() - started
        compiles = sum(1 for _ in store.iter_evaluations())
        store.close()
    tuned = report.tuned
    searched = geometric_mean_improvement([(p.oz_size, min(p.oz_size, p.random_size)) for p in tuned])
    minimized = geometric_mean_improvement([(p.oz_size, min(p.oz_size, p.broadcast_size)) for p in tuned])
    print(
        f"| {label} | {budget} | {searched:.2%} | {minimized:.2%} | {report.geomean_improvement:.2%} | "
        f"{sum(p.improved for p in tuned)}/{len(tuned)} | {report.mean_minimized_length:.2f} | "
        f"{compiles} | {compiles / seconds:.1f} |",
        flush=True,
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--budgets", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--functions", type=int, default=24, help="function modules in the second set")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    with Compiler(workers=1) as compiler:
        examples = sorted((ROOT / "examples").glob("*.c*"))
        with tempfile.TemporaryDirectory() as scratch:
            modules = []
            for path in examples:
                unit = compiler.load(path)
                for name in defined_functions(unit.ir):
                    if name == "main":
                        continue
                    module = extract_function(compiler, unit, name)
                    target = Path(scratch) / f"{len(modules):03d}.ll"
                    target.write_text(module.ir)
                    modules.append(target)
            step = max(1, len(modules) // args.functions)
            modules = list(ProgramSet(modules[::step][: args.functions]))
            note = compiler.engine_note
            print(f"LLVM {compiler.llvm_version}, {note}, {args.jobs} processes, seed {args.seed}")
            print("| programs | budget | random search | + minimization, broadcast | validated | improved | "
                  "mean minimized length | compiles | compiles/s |")  # fmt: skip
            print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
            for budget in args.budgets:
                run("8 examples", list(ProgramSet(examples)), budget, args.seed,
                    args.jobs, compiler)  # fmt: skip
                run(f"{len(modules)} function modules", modules, budget, args.seed, args.jobs, compiler)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
