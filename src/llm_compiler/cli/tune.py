"""``llm-compiler tune``: find validated pass lists that beat -Oz, as LLM Compiler's autotuner."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from llm_compiler.autotune.export import export_run
from llm_compiler.autotune.jobs import TuneSettings
from llm_compiler.autotune.tuner import TuneProgress, Tuner, TuneReport
from llm_compiler.cli.options import (
    add_execution_options,
    add_model_options,
    add_objective_option,
    add_pass_list_option,
    add_program_arguments,
    make_compiler,
    make_executor,
    model_from_args,
    objective_from,
    program_set,
    user_pass_list,
)
from llm_compiler.cli.tables import results_table
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.metrics import gains_text
from llm_compiler.core.objective import DEFAULT_OBJECTIVE
from llm_compiler.core.program import Program
from llm_compiler.core.store import Store
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.errors import InvalidInput, LlmCompilerError
from llm_compiler.passes.safety import PASS_SET_CHOICES
from llm_compiler.passes.space import DEFAULT_SPACE, SPACES
from llm_compiler.predictor.search import PREDICTED_FIRST, make_search
from llm_compiler.selection import MAX_REJECTIONS

EXAMPLES = """examples:
  llm-compiler tune examples/ --budget 100 --seed 1
  llm-compiler tune examples/ --passes 'module(default<Oz>),function(sroa)' --json
  llm-compiler tune 'corpus:~/.local/share/llm-compiler/corpus?split=test&limit=100' --out runs/test
  llm-compiler tune src/parser.c -I include --budget 500 --out results/
  llm-compiler tune build/compile_commands.json --out results/ --resume     # continue a killed run
  llm-compiler tune corpus/ --dask-local 8 --out results/                   # a Dask LocalCluster
  llm-compiler tune corpus/ --dask-scheduler tcp://10.0.0.5:8786 --out results/
  llm-compiler tune examples/ --model gguf:llm-compiler-7b-ftd.Q4_K_M.gguf   # the model's lists first
"""


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "tune",
        parents=[common],
        help="autotune: search, minimization, broadcast, validation",
        description=(
            "LLM Compiler's autotuner, with a better search. The search proposes --budget lists per "
            "program (-Oz always evaluated as the baseline): by default the built-in predictor's lists, then "
            "local search from the best lists so far; or the paper's random search (--search random). "
            "Then minimization to a fixed point, "
            "broadcast of the most common best lists, and validation: a list is only reported when the "
            "target still links, it passes PassListEval on the suites, keeps a runnable target's own "
            "output, and passes --check. A rejected list is repaired (the passes to blame dropped) and "
            "checked again; otherwise the next best list is tried, then -Oz is kept. Every evaluation is "
            "written to an SQLite store as it completes; --resume continues a killed run."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_program_arguments(parser)
    search = parser.add_argument_group("search")
    search.add_argument(
        "--budget", type=int, default=100, help="lists searched per program, -Oz included (default: 100)"
    )
    search.add_argument(
        "--time-budget",
        type=float,
        metavar="SECONDS",
        help="also stop random search after this long per program (not reproducible)",
    )
    search.add_argument(
        "--search",
        metavar="NAME",
        help=f"how lists are proposed: predicted (the built-in predictor's {PREDICTED_FIRST} lists for the "
        "program, then local search from them; the default, or local search where the predictor was not "
        "trained for this LLVM), local (local search from the best lists so far), random (LLM Compiler's "
        "random search), nevergrad[:OPTIMIZER] (the [search] extra)",
    )
    search.add_argument(
        "--pass-set",
        choices=PASS_SET_CHOICES,
        default="safe",
        help="passes the search draws from: safe (default: leaves out passes `llm-compiler passes --audit` "
        "saw break a program) or full (LLM Compiler's whole set)",
    )
    search.add_argument(
        "--space",
        choices=SPACES,
        default=DEFAULT_SPACE,
        help="what lists may hold: paper (default: flat lists of the set's passes at their default "
        "parameters), params (also each pass's parameter variants, derived from opt), nested (also "
        "grouped pass managers such as function(a,b) and cgscc(inline,function(...))), rich (both)",
    )
    search.add_argument(
        "--per-function",
        type=int,
        default=0,
        metavar="N",
        help="after each unit's validated best list, try N function-level lists and give each function "
        "the one that makes it smallest; the joined unit is kept when smaller and every list and the "
        "join pass validation (binary size only; default: 0, off)",
    )
    search.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    search.add_argument("--max-length", type=int, default=50, help="longest random list (default: 50)")
    add_pass_list_option(
        search, "also evaluate this pass list on every program (repeatable)", repeatable=True, adapt=True
    )
    add_objective_option(search)
    search.add_argument("--no-minimize", action="store_true", help="skip minimization")
    search.add_argument(
        "--insertion-search", action="store_true", help="add insertion search to minimization (slow)"
    )
    search.add_argument(
        "--broadcast",
        type=int,
        default=100,
        metavar="K",
        help="try the K most common best lists on every program (default: 100; 0: off)",
    )
    search.add_argument(
        "--no-validate",
        action="store_true",
        help="report best lists without running them (unsafe; their records say validated: false, "
        "and `llm-compiler cc --results` does not use them)",
    )
    search.add_argument(
        "--max-rejections",
        type=int,
        default=MAX_REJECTIONS,
        metavar="N",
        help=f"distinct lists validation may reject per program (each after salvage) before -Oz is kept "
        f"(default: {MAX_REJECTIONS})",
    )
    search.add_argument(
        "--suite",
        action="append",
        default=[],
        metavar="NAME",
        help="PassListEval suite that best lists must pass: builtin (default), csmith[:N], "
        "humaneval-x:PATH (repeatable)",
    )
    search.add_argument(
        "--check",
        metavar="CMD",
        help="shell command that must pass for a best list; it runs with LLM_COMPILER_OBJECT (the "
        "target's object built with the list) and LLM_COMPILER_PASSES set",
    )
    add_execution_options(parser)
    add_model_options(parser, required=False)
    run = parser.add_argument_group("results")
    run.add_argument(
        "--chunk-size",
        type=int,
        default=50,
        help="lists per job for random search (default: 50; adaptive searches run one job per program)",
    )
    run.add_argument(
        "--out", metavar="DIR", help="write summary.json, tables, objects and the store (tune.sqlite) there"
    )
    run.add_argument(
        "--store",
        metavar="PATH",
        help="the SQLite store (default: DIR/tune.sqlite with --out, else temporary)",
    )
    run.add_argument("--resume", action="store_true", help="continue the run held in the store")
    run.add_argument("--json", action="store_true", help="print the summary (summary.json) as JSON on stdout")
    parser.set_defaults(run=run_command)


class _RichProgress(TuneProgress):
    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: Any = None

    def phase(self, name: str, total: int) -> None:
        self.task = self.progress.add_task(name, total=total, note="")

    def advance(self, units: int, note: str = "") -> None:
        self.progress.advance(self.task, units)
        if note:
            self.progress.update(self.task, note=note)


def _settings(args: argparse.Namespace, compiler: Compiler) -> TuneSettings:
    """The run's settings from the command line (pass lists checked by the gate here)."""
    if args.budget < 1:
        raise InvalidInput(f"--budget must be at least 1 (the -Oz baseline), not {args.budget}.")
    if args.per_function < 0:
        raise InvalidInput(f"--per-function takes a number of lists (0: off), not {args.per_function}.")
    objective = objective_from(args)
    if args.per_function and objective is not DEFAULT_OBJECTIVE:
        raise InvalidInput(
            f"--per-function measures functions in bytes of the object; it works with --objective "
            f"{DEFAULT_OBJECTIVE.value}, not {objective.value}."
        )
    return TuneSettings(
        seed=args.seed,
        budget=args.budget,
        max_length=args.max_length,
        chunk_size=max(1, args.chunk_size),
        time_budget=args.time_budget,
        minimize=not args.no_minimize,
        insertion=args.insertion_search,
        broadcast=args.broadcast,
        validate=not args.no_validate,
        llvm_bin=str(compiler.toolchain.bin_dir),
        timeout=args.timeout,
        engine=compiler.engine,
        allow_extra=tuple(args.allow_pass),
        extra_lists=tuple(str(user_pass_list(compiler, text, args.passes_from_llvm)) for text in args.passes),
        suites=tuple(args.suite) or ("builtin",),
        user_check=args.check,
        proposer=make_search(args.search, compiler, args.seed, args.max_length),
        max_rejections=max(1, args.max_rejections),
        pass_set=args.pass_set,
        space=args.space,
        objective=objective,
        per_function=args.per_function,
    )


def _tune(
    settings: TuneSettings,
    sources: list[ProgramSource],
    loaded: dict[str, Program],
    store: Store,
    compiler: Compiler,
    args: argparse.Namespace,
    note: str,
) -> tuple[Tuner, TuneReport]:
    """Runs the tuner with a progress display on standard error."""
    console = Console(stderr=True)
    executor = make_executor(args)
    console.print(
        f"LLVM {compiler.llvm_version} ({compiler.toolchain.bin_dir}), {compiler.engine_note}; "
        f"jobs on {executor.description}; {note}",
        highlight=False,
        markup=False,
    )
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[note]}"),
    )
    try:
        with Progress(*columns, console=console) as progress:
            tuner = Tuner(settings, store, executor, compiler, _RichProgress(progress))
            return tuner, tuner.run(sources, loaded)
    finally:
        executor.close()


def _seed_with_model(
    settings: TuneSettings, sources: list[ProgramSource], compiler: Compiler, args: argparse.Namespace
) -> tuple[TuneSettings, dict[str, Program]]:
    """The settings with the model's lists proposed first for each program (``--model``),
    and the programs loaded to ask it (by source key; the tuner does not load them again,
    and records those that fail to load)."""
    from llm_compiler.models.proposer import SeededSearch, model_lists

    loaded: dict[str, Program] = {}
    for source in sources:
        try:
            loaded[source.key()] = source.load(compiler)
        except LlmCompilerError:
            continue
    programs = list(loaded.values())
    with model_from_args(args) as model:
        lists = model_lists(
            compiler,
            model,
            programs,
            samples=args.samples,
            temperature=args.temperature,
            seed=args.model_seed,
        )
    Console(stderr=True).print(
        f"{args.model} proposed {sum(map(len, lists.values()))} usable lists for "
        f"{sum(1 for found in lists.values() if found)} of {len(programs)} programs",
        highlight=False,
        markup=False,
    )
    seeded = SeededSearch(tuple(sorted(lists.items())), settings.search, args.model)
    return replace(settings, proposer=seeded), loaded


def run_command(args: argparse.Namespace) -> int:
    compiler = make_compiler(args)
    settings = _settings(args, compiler)
    sources = list(program_set(args))
    if not sources:
        raise InvalidInput(
            f"{' '.join(args.programs)}: no programs selected "
            "(check --only-split, --limit or the corpus query)."
        )
    loaded: dict[str, Program] = {}
    if args.model:
        settings, loaded = _seed_with_model(settings, sources, compiler, args)
    out = Path(args.out) if args.out else None
    scratch = None
    if args.store:
        store_path = Path(args.store)
    elif out:
        store_path = out / "tune.sqlite"
    else:
        scratch = tempfile.TemporaryDirectory(prefix="llm-compiler-tune-")
        store_path = Path(scratch.name) / "tune.sqlite"
    store = Store(store_path)
    console = Console(stderr=True)
    try:
        store.check_meta({**settings.identity(), "llvm_version": compiler.llvm_version}, resume=args.resume)
        note = f"store {store_path}" + (" (temporary; use --out to keep it)" if scratch else "")
        tuner, report = _tune(settings, sources, loaded, store, compiler, args, note)
        if args.json:
            sys.stdout.write(json.dumps(report.summary()) + "\n")
        else:
            _print_report(Console(), report)
        if out:
            written = export_run(out, report, store, compiler, tuner.programs)
            console.print("wrote " + ", ".join(str(path) for path in written), highlight=False, markup=False)
    finally:
        store.close()
        if scratch is not None:
            scratch.cleanup()
    if report.programs and not report.tuned:
        console.print("no program could be tuned (reasons above)", highlight=False)
        return 1
    return 0


def _print_report(console: Console, report: TuneReport) -> None:
    """The results table; long names and lists are shortened in it, and every best list
    is printed whole, on its own line, below it."""
    rows = [
        (
            (result.program, str(result.oz_size), str(result.best_size),
             f"{-result.improvement_vs_oz:+.1%}", str(result.length), result.best_pipeline)
            if result.ok
            else (result.program, "-", "-", "-", "-", f"{result.status}: {result.detail}")
        )
        for result in report.programs
    ]  # fmt: skip
    table = results_table(
        f"Tuning results (LLVM {report.llvm_version}; {report.objective.description})",
        "program", ("-Oz", "best", "vs -Oz", "passes"), "best pass list", rows, console.width,
    )  # fmt: skip
    console.print(table, markup=False)
    console.print("best pass lists (the exact opt -passes= text) and their validation:", highlight=False)
    for result in report.tuned:
        console.print(
            f"  {result.program}: {result.best_pipeline}", highlight=False, markup=False, soft_wrap=True
        )
        if result.function_lists is not None:
            for pipeline, functions in result.function_lists.lists.items():
                console.print(
                    f"    then {pipeline} on {', '.join(functions)}",
                    highlight=False,
                    markup=False,
                    soft_wrap=True,
                )
        console.print(f"    {result.validation}", highlight=False, markup=False, soft_wrap=True)
        if result.why_not_better:
            console.print(f"    {result.why_not_better}", highlight=False, markup=False, soft_wrap=True)
    failed = len(report.programs) - len(report.tuned)
    improved = sum(result.improved for result in report.tuned)
    console.print(
        gains_text([(result.oz_size, result.best_size) for result in report.tuned], report.objective)
        + f"; programs improved: {improved}/{len(report.tuned)}"
        + (f" ({failed} could not be tuned)" if failed else "")
        + f"; mean minimized list length: {report.mean_minimized_length:.2f} passes (LLM Compiler: 3.84); "
        f"distinct best lists: {report.distinct_before_broadcast} before broadcast, "
        f"{report.distinct_after_broadcast} after",
        highlight=False,
        soft_wrap=True,
    )
