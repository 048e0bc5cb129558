"""Samples per second of each task dataset, in this process and on a local pool.

Run: ``.venv/bin/python bench/tasks/bench_tasks.py [--programs CORPUS_OR_FILES...]
[--limit 40] [--samples-per-program 4] [--jobs 2]``.

For each task (compiler emulation, flag tuning, disassembly) the same programs are
turned into a dataset twice, side by side in one run: in this process, and on a local
pool of ``--jobs`` processes. Flag tuning first needs labels: a tuning run
(``tune``, budget 20, on the pool) over the same programs, timed apart. Reported per
task and executor: programs, samples written, samples dropped (and why), seconds,
samples per second, and the pool's speed-up over this process. The default programs
are the bundled examples; ``--programs`` takes a corpus (``--limit`` units of it).
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path

from llm_compiler.autotune.jobs import TuneSettings
from llm_compiler.autotune.tuner import Tuner
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.executors import Executor, InlineExecutor, LocalExecutor
from llm_compiler.core.store import Store
from llm_compiler.corpus.program_set import ProgramSet, ProgramSource
from llm_compiler.tasks.generate import generate
from llm_compiler.tasks.samples import DataSettings
from llm_compiler.toolchain.llvm import find_toolchain

ROOT = Path(__file__).resolve().parents[2]


def tune(records: list[ProgramSource], out: Path, jobs: int) -> float:
    """Runs a small tuning run whose best lists label the flag tuning samples."""
    specs = records
    out.mkdir(parents=True)
    store = Store(out / "tune.sqlite")
    executor = LocalExecutor(jobs)
    started = time.perf_counter()
    try:
        with Compiler(find_toolchain()) as compiler:
            Tuner(TuneSettings(seed=1, budget=20), store, executor, compiler).run(specs)
    finally:
        executor.close()
        store.close()
    return time.perf_counter() - started


def measure(settings: DataSettings, records: list[ProgramSource], executor: Executor, out: Path) -> None:
    started = time.perf_counter()
    try:
        report = generate(settings, iter(records), out, executor, window=8)
    finally:
        executor.close()
    seconds = time.perf_counter() - started
    total = sum(report.samples.values())
    dropped = ", ".join(f"{reason} {n}" for reason, n in sorted(report.dropped.items())) or "none"
    rate = total / seconds
    print(
        f"| {settings.task} | {executor.description} | "
        f"{report.programs} (+{report.programs_failed} failed) | {total} | "
        f"{dropped} | {seconds:.1f} | {rate:.2f} |",
        flush=True,
    )
    RATES[(settings.task, executor.description)] = rate


RATES: dict[tuple[str, str], float] = {}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--programs", nargs="+", default=[str(ROOT / "examples")])
    parser.add_argument("--limit", type=int, default=40, help="at most this many programs")
    parser.add_argument("--samples-per-program", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    records = list(itertools.islice(ProgramSet(args.programs), args.limit))
    print(f"{len(records)} programs from {' '.join(args.programs)}; LLVM {find_toolchain().version}\n")
    print("| task | executor | programs | samples | dropped | seconds | samples/s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        tune_seconds = tune(records, root / "tune", args.jobs)
        for task in ("emulation", "flag-tuning", "disassembly"):
            settings = DataSettings(
                task=task,
                seed=1,
                samples_per_program=args.samples_per_program,
                tuning=str(root / "tune") if task == "flag-tuning" else None,
            )
            for name, executor in (("inline", InlineExecutor()), ("pool", LocalExecutor(args.jobs))):
                measure(settings, records, executor, root / f"{task}-{name}")
    print(f"\nflag tuning labels: a tuning run (budget 20, {args.jobs} processes) took {tune_seconds:.1f} s")
    for task in ("emulation", "flag-tuning", "disassembly"):
        inline, pool = (rate for (t, _), rate in RATES.items() if t == task)
        ratio = f"{pool / inline:.2f}x" if inline else "n/a (no samples)"
        print(f"{task}: pool of {args.jobs} / this process = {ratio}")


if __name__ == "__main__":
    main()
