"""``llm-compiler validate``: check a pass list against test suites (PassListEval)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from llm_compiler.cli.options import add_pass_list_option, make_compiler
from llm_compiler.errors import InvalidInput
from llm_compiler.passes.registry import load_registry
from llm_compiler.validation.gate import load_suites
from llm_compiler.validation.passlisteval import PassListEval
from llm_compiler.validation.reduce import write_reproducer
from llm_compiler.validation.sandbox import isolation

EXAMPLES = """examples:
  llm-compiler validate --passes 'module(default<Oz>)'
  llm-compiler validate --passes 'cgscc(attributor-cgscc)' --json
  llm-compiler validate --passes "$(cat best.txt)" --suite builtin --suite csmith:50
  llm-compiler validate --passes 'module(internalize),module(globaldce)' --allow-unsafe-passes --reduce repro/
  llm-compiler validate --passes 'default<O2>' --suite humaneval-x:humaneval_cpp.jsonl.gz

exit status: 0 the list passes, 1 it fails, 2 usage or set-up error.
"""


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "validate",
        parents=[common],
        help="check a pass list on self-testing programs (PassListEval)",
        description=(
            "Apply the pass list to every program of the suites, link with its tests, run it in a "
            "sandbox and compare output and exit status with a -O2 build. The list passes when no "
            "program fails to compile, link or run, or prints something else."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_pass_list_option(parser, "the opt -passes= pipeline to check (required)")
    parser.add_argument(
        "--suite", action="append", default=[], metavar="NAME",
        help="builtin (default), csmith[:N], humaneval-x:PATH (repeatable)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.add_argument(
        "--reduce", metavar="DIR", help="write a minimal reproducer of each failing program there"
    )
    parser.add_argument(
        "--allow-unsafe-passes", action="store_true",
        help="accept any pass opt knows, not only the searchable set (to check known-bad lists)",
    )  # fmt: skip
    parser.add_argument("--first-failure", action="store_true", help="stop at the first failing program")
    parser.add_argument("--no-cache", action="store_true", help="check again even if a verdict is cached")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not args.passes:
        raise InvalidInput("validate needs the list to check: --passes PIPELINE.")
    compiler = make_compiler(args)
    if args.allow_unsafe_passes:
        registry = load_registry(compiler.toolchain)
        compiler.allow_extra = tuple(
            sorted({entry.name for entry in registry.entries if entry.kind == "pass"})
        )
    passes = compiler.passes(args.passes)
    suites = load_suites(args.suite, compiler)
    evaluator = PassListEval(compiler, suites, stop_at_first_failure=args.first_failure)
    try:
        verdict = evaluator.check(passes, use_cache=not args.no_cache)
        reproducers = []
        if args.reduce and verdict.failures:
            for failure in verdict.failures[:5]:
                reproducers.append(write_reproducer(evaluator, failure, passes, Path(args.reduce)))
    finally:
        evaluator.close()
    if args.json:
        document = verdict.to_json()
        document["reproducers"] = [str(path) for path in reproducers]
        sys.stdout.write(json.dumps(document) + "\n")
    else:
        _print(verdict, reproducers)
    return 0 if verdict.passed else 1


def _print(verdict: Any, reproducers: list[Path]) -> None:
    console = Console()
    status = "[bold green]passes[/]" if verdict.passed else "[bold red]fails[/]"
    suites = ", ".join(f"{name} ({version})" for name, version in verdict.suites.items())
    console.print(
        f"pass list {status} on {suites}, LLVM {verdict.llvm_version}"
        + (" (cached)" if verdict.cached else "")
    )
    for note in verdict.notes:
        console.print(f"note: {note}", highlight=False, markup=False)
    console.print("outcomes: " + ", ".join(f"{k} {v}" for k, v in verdict.outcomes.items()), highlight=False)
    console.print(f"test isolation: {isolation()}", highlight=False, markup=False)
    if verdict.failures:
        table = Table(title="failures")
        for column in ("program", "outcome", "evidence"):
            table.add_column(column, overflow="fold")
        for failure in verdict.failures[:20]:
            table.add_row(
                failure.program,
                str(failure.outcome),
                failure.detail.splitlines()[0][:300] if failure.detail else "",
            )
        console.print(table, markup=False)
        console.print(
            f"replay the first: {verdict.failures[0].command}", highlight=False, markup=False, soft_wrap=True
        )
    for path in reproducers:
        console.print(f"reproducer: {path}", highlight=False, markup=False)
