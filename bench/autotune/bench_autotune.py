"""Searches side by side: what each finds, and what is left after validation, by budget.

Run, for the corpus's test split (its packages never chose anything)::

    .venv/bin/python bench/autotune/bench_autotune.py \\
        --programs 'corpus:/work/corpus?split=test&kind=unit' \\
        --packages bzip2 giflib speex nettle --units 100 \\
        --budgets 100 1000 --searches random@full predicted --out /work/bench-autotune

Units are taken package by package in the order given (all of a package, or
``--per-package``, before the next; within a package in a fixed pseudo-random order),
until ``--units``; ``--max-oz-size`` keeps only units whose -Oz object is at most that
many bytes (compile time grows with size; units with no code are always left out). A
search is named as ``tune --search`` names it, optionally with the pass set it draws
from: ``random@full`` is LLM Compiler's random search over the
paper's whole set; without a suffix, ``--pass-set`` applies. For each
budget and search, a fresh tuning run with the same seed goes over them on a local
pool of ``--jobs`` processes (search, minimization, broadcast, validation with
salvage). Printed per run, as a Markdown row:

* **found**: geomean reduction vs -Oz of the best list each unit's search,
  minimization and broadcast found (unvalidated);
* **validated**: geomean vs -Oz of the lists reported (validated, -Oz when none);
* **total bytes**: the same lists' summed size against the units' summed -Oz size
  (instructions with ``--objective ir-instructions``, where every figure is in IR
  instructions);
* **kept**: validated / found;
* units improved (validated), compiles per unit (evaluations stored, all phases, and the
  per-function phase's compiles with ``--per-function``),
  wall time, and lists validated per minute of the validation phase (each list the
  gate checked, salvaged repairs included).

Each run's summary and store are kept under ``--out/SEARCH-BUDGET`` for
``bench/autotune/run_corpus_programs.py``, which links and runs the corpus's programs
with the reported lists.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from llm_compiler.autotune.export import export_run
from llm_compiler.autotune.jobs import TuneSettings
from llm_compiler.autotune.tuner import TuneProgress, Tuner
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.executors import LocalExecutor
from llm_compiler.core.metrics import geometric_mean_improvement

try:
    from llm_compiler.core.store import Store
except ImportError:  # a checkout from before the store moved to core (a baseline commit)
    from llm_compiler.autotune.store import Store  # type: ignore[no-redef]
from llm_compiler.corpus.program_set import ProgramSet, ProgramSource
from llm_compiler.predictor.search import make_search


class PhaseClock(TuneProgress):
    """Wall time per phase."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._current: tuple[str, float] | None = None

    def phase(self, name: str, total: int) -> None:
        self._close()
        self._current = (name, time.perf_counter())

    def _close(self) -> None:
        if self._current is not None:
            name, started = self._current
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
            self._current = None

    def finish(self) -> None:
        self._close()


def oz_sizes(specs: list[str]) -> dict[str, int]:
    """-Oz sizes of corpus units by unit id, from the corpus manifests named."""
    sizes = {}
    for spec in specs:
        folder = Path(spec.removeprefix("corpus:").split("?")[0])
        manifest = folder / "manifest.jsonl" if folder.is_dir() else folder
        if manifest.is_file():
            for line in manifest.read_text().splitlines():
                if line.strip():
                    unit = json.loads(line)
                    sizes[unit["id"]] = int(unit.get("oz_size") or 0)
    return sizes


def select(
    specs: list[str],
    packages: list[str],
    units: int,
    per_package: int,
    max_oz_size: int | None,
    min_oz_size: int = 1,
) -> list[ProgramSource]:
    """Units of ``packages`` in the given order (at most ``per_package`` each, -Oz size
    from ``min_oz_size`` to ``max_oz_size``), in a fixed pseudo-random order within each
    package."""
    sources = list(ProgramSet(specs))
    if max_oz_size is not None or min_oz_size > 1:
        sizes = oz_sizes(specs)
        largest = max_oz_size if max_oz_size is not None else float("inf")
        sources = [s for s in sources if max(1, min_oz_size) <= sizes.get(s.unit_id or "", 0) <= largest]
    if not packages:
        return sources[:units]
    chosen: list[ProgramSource] = []
    for package in packages:
        mine = [s for s in sources if s.provenance.get("package") == package]
        mine.sort(key=lambda s: hashlib.sha256(s.key().encode()).hexdigest())
        chosen += mine[: min(per_package, units - len(chosen))]
    return chosen


def run(
    search: str, budget: int, sources: list[ProgramSource], args: argparse.Namespace, compiler: Compiler
) -> dict[str, Any]:
    named, _, space = search.partition("+")
    name, _, pass_set = named.partition("@")
    # Objective and space are named only when asked for, so that the bench runs on code
    # from before they existed (a baseline commit's checkout) with the same settings.
    extra: dict[str, Any] = {"space": space} if space else {}
    if args.per_function:
        extra["per_function"] = args.per_function
    if args.objective != "binary-size":
        from llm_compiler.core.objective import Objective

        extra["objective"] = Objective.parse(args.objective)
    settings = TuneSettings(
        seed=args.seed,
        budget=budget,
        engine=compiler.engine,
        timeout=compiler.timeout,
        proposer=make_search(name, compiler, args.seed),
        pass_set=pass_set or args.pass_set,
        validate=not args.no_validate,
        **extra,
    )
    name = f"{search.replace(':', '_').replace('@', '_').replace('+', '_')}-{budget}"
    out = Path(args.out) / (name + (f"-pf{args.per_function}" if args.per_function else ""))
    out.mkdir(parents=True, exist_ok=True)
    (out / "tune.sqlite").unlink(missing_ok=True)
    if args.continue_from:
        # The same search's finished run: its jobs are skipped, only later phases run.
        shutil.copyfile(Path(args.continue_from) / name / "tune.sqlite", out / "tune.sqlite")
    store = Store(out / "tune.sqlite")
    executor = LocalExecutor(args.jobs)
    clock = PhaseClock()
    started = time.perf_counter()
    tuner = Tuner(settings, store, executor, compiler, clock)
    try:
        report = tuner.run(sources)
    finally:
        executor.close()
        clock.finish()
    seconds = time.perf_counter() - started
    export_run(out, report, store, compiler, tuner.programs)
    store.close()
    tuned = report.tuned
    found = geometric_mean_improvement([(p.oz_size, min(p.oz_size, p.broadcast_size)) for p in tuned])
    validated = report.geomean_improvement
    checked = sum(len(p.rejected) + p.validation.startswith("passed") for p in tuned)
    validation_minutes = clock.seconds.get("validation", 0.0) / 60
    row = {
        "search": search,
        "budget": budget,
        "units": len(tuned),
        "found": found,
        "validated": validated,
        "total_validated": 1 - sum(p.best_size for p in tuned) / max(1, sum(p.oz_size for p in tuned)),
        "kept": validated / found if found else 1.0,
        "improved": sum(p.improved for p in tuned),
        # Evaluations stored for the unit in every phase, and the per-function phase's compiles.
        "compiles_per_unit": sum(p.compiles for p in tuned) / max(1, len(tuned)),
        "seconds": seconds,
        "phase_seconds": clock.seconds,
        "lists_validated": checked,
        "lists_validated_per_minute": checked / validation_minutes if validation_minutes else 0.0,
        "rejections": sum(len(p.rejected) for p in tuned),
        "repaired": sum("(repaired:" in p.validation for p in tuned),
    }
    (out / "bench.json").write_text(json.dumps(row, indent=1))
    return row


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--programs", nargs="+", required=True, help="program-set specs")
    parser.add_argument("--packages", nargs="*", default=[], help="take units of these packages, in order")
    parser.add_argument("--units", type=int, default=100)
    parser.add_argument("--per-package", type=int, default=10**9, help="at most N units of a package")
    parser.add_argument("--max-oz-size", type=int, help="only units whose -Oz size is at most N bytes")
    parser.add_argument(
        "--min-oz-size", type=int, default=1, help="only units whose -Oz size is at least N bytes"
    )
    parser.add_argument(
        "--objective",
        default="binary-size",
        help="what the searches minimize (tune --objective); figures are in its unit",
    )
    parser.add_argument("--budgets", type=int, nargs="+", default=[100, 1000])
    parser.add_argument(
        "--per-function",
        type=int,
        default=0,
        help="function-level lists tried per unit after its validated list (tune --per-function)",
    )
    parser.add_argument(
        "--continue-from",
        help="an earlier --out of the same units, searches and budgets: each run starts from its store "
        "(its phases are not run again; wall time is then the added phases')",
    )
    parser.add_argument(
        "--searches",
        nargs="+",
        default=["random@full", "local"],
        help="search names (tune --search), each optionally @safe or @full (its pass set) and +SPACE "
        "(tune --space: params, nested, rich), e.g. predicted+rich",
    )
    parser.add_argument("--pass-set", default="safe", choices=["safe", "full"])
    parser.add_argument("--no-validate", action="store_true", help="report the search's own figures only")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", required=True, help="folder for each run's results")
    args = parser.parse_args(argv)
    sources = select(
        args.programs, args.packages, args.units, args.per_package, args.max_oz_size, args.min_oz_size
    )
    with Compiler(workers=1) as compiler:
        counts: dict[str, int] = {}
        for source in sources:
            package = str(source.provenance.get("package"))
            counts[package] = counts.get(package, 0) + 1
        print(
            f"LLVM {compiler.llvm_version}, {compiler.engine_note}, {args.jobs} processes, seed {args.seed}, "
            f"pass set {args.pass_set}, objective {args.objective}; {len(sources)} units: "
            + ", ".join(f"{package} {n}" for package, n in counts.items()),
            flush=True,
        )
        unit = "instructions" if args.objective == "ir-instructions" else "bytes"
        print(f"| search | budget | found (unvalidated) | validated | total {unit} | kept | improved | "
              "compiles/unit | wall time | lists validated/min |")  # fmt: skip
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for budget in args.budgets:
            for search in args.searches:
                row = run(search, budget, sources, args, compiler)
                print(
                    f"| {search} | {budget} | {row['found']:.2%} | {row['validated']:.2%} | "
                    f"{row['total_validated']:.2%} | "
                    f"{row['kept']:.2f} | {row['improved']}/{row['units']} | "
                    f"{row['compiles_per_unit']:.0f} | "
                    f"{row['seconds'] / 60:.1f} min | {row['lists_validated_per_minute']:.1f} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
