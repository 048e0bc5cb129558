"""``llm-compiler tune``: find pass lists that beat -Oz, validated, for each program."""

from __future__ import annotations

import argparse
import json
import os
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from llm_compiler.autotune.random_search import TuningResult, geometric_mean_improvement, tune_program
from llm_compiler.cli.main import frontend_options, make_compiler
from llm_compiler.corpus.inputs import expand_targets
from llm_compiler.errors import InvalidInput
from llm_compiler.passes.pipeline import parse_pipeline
from llm_compiler.validation.differential import DifferentialChecker

EXAMPLES = """examples:
  llm-compiler tune examples/ --budget 100 --seed 1
  llm-compiler tune src/parser.c -I include --budget 500 --out results/
  llm-compiler tune build/compile_commands.json --jobs 8 --out results/
"""


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "tune",
        parents=[common],
        help="random search for pass lists smaller than -Oz, validated by running the program",
        description=(
            "Random search (lists of 1..50 searchable passes) per program; -Oz is always "
            "evaluated and is the baseline. The best list is only reported when a build with "
            "it prints the same output as the -O0 build (programs with main()); otherwise -Oz "
            "is kept."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "targets", nargs="+", metavar="TARGET", help="source/IR files, folders, compile_commands.json"
    )
    parser.add_argument(
        "--budget", type=int, default=100, help="pass lists per program, -Oz included (default: 100)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="programs tuned at once (default: all cores)"
    )
    parser.add_argument("--out", metavar="DIR", help="write summary.json and results.jsonl there")
    parser.add_argument(
        "--no-validate", action="store_true", help="report the best list without running it (unsafe)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.budget < 1:
        raise InvalidInput(f"--budget must be at least 1 (the -Oz baseline), not {args.budget}.")
    compiler = make_compiler(args)
    specs = expand_targets(args.targets, frontend_options(args))
    programs = [spec.load(compiler) for spec in specs]
    checker = None if args.no_validate else DifferentialChecker(compiler)
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.jsonl").write_text("")
    console = Console(stderr=True)
    console.print(f"LLVM {compiler.llvm_version}, {compiler.engine_note}", highlight=False, markup=False)
    results: dict[str, TuningResult] = {}
    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console) as progress:
        compiles = progress.add_task("compiles", total=len(programs) * args.budget)
        done = progress.add_task("programs", total=len(programs))
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {
                pool.submit(
                    tune_program,
                    compiler,
                    program,
                    budget=args.budget,
                    seed=args.seed,
                    checker=checker,
                    on_compile=lambda _: progress.advance(compiles),
                ): program
                for program in programs
            }
            for future in as_completed(futures):
                result = future.result()
                results[result.program] = result
                progress.advance(done)
                if out:
                    with (out / "results.jsonl").open("a") as stream:
                        stream.write(json.dumps(result.to_json()) + "\n")
    ordered = [results[program.name] for program in programs]
    _print_report(Console(), ordered, compiler.llvm_version)
    if out:
        (out / "summary.json").write_text(
            json.dumps(summary(ordered, compiler.llvm_version, compiler.engine), indent=2) + "\n"
        )
        console.print(f"wrote {out / 'summary.json'} and {out / 'results.jsonl'}", highlight=False)
    return 0


def summary(results: list[TuningResult], llvm_version: str, engine: str) -> dict[str, Any]:
    """The summary.json document of a tuning run."""
    return {
        "llvm_version": llvm_version,
        "engine": engine,
        "geomean_improvement_vs_oz": geometric_mean_improvement(results),
        "programs": [
            {
                "program": r.program,
                "program_id": r.program_id,
                "oz_size": r.oz.binary_size,
                "best_size": r.best.binary_size,
                "best_pipeline": r.best_pipeline,
                "compiles": r.compiles,
                "validation": r.validation,
            }
            for r in results
        ],
    }


def _print_report(console: Console, results: list[TuningResult], llvm_version: str) -> None:
    table = Table(title=f"Tuning results (LLVM {llvm_version}; binary = .text + .data bytes)")
    table.add_column("program", overflow="fold")
    for column in ("-Oz", "best", "smaller than -Oz", "passes"):
        table.add_column(column, justify="right")
    table.add_column("validation", overflow="fold")
    lengths = []
    for r in results:
        improved = r.best.binary_size < r.oz.binary_size
        length = len(parse_pipeline(r.best_pipeline))
        if improved:
            lengths.append(length)
        table.add_row(
            r.program,
            str(r.oz.binary_size),
            str(r.best.binary_size),
            f"{r.improvement_vs_oz:+.1%}",
            str(length) if improved else "-Oz",
            r.validation,
        )
    console.print(table, markup=False)
    mean_length = sum(lengths) / len(lengths) if lengths else 0.0
    console.print(
        f"geomean binary-size reduction vs -Oz: {geometric_mean_improvement(results):.2%}; "
        f"programs improved: {len(lengths)}/{len(results)}; mean length of improving lists: "
        f"{mean_length:.1f} passes (random search, not minimized). The full pass lists are in "
        "summary.json with --out.",
        highlight=False,
    )
