"""``llm-compiler measure``: code size of programs unoptimized, under -Oz and a pass list.

A unit that cannot be measured (IR this LLVM cannot read, a crash of opt or llc, an
object in a format no reader here knows) is a row with its reason, and the others are
measured; the exit status is 0 when any unit was measured. When none was, it is the
error of a single unit (status 2), or for several a one-paragraph error naming the first.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from llm_compiler.cli.options import (
    add_objective_option,
    add_pass_list_option,
    add_program_arguments,
    make_compiler,
    objective_from,
    program_set,
    user_pass_list,
)
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.objective import Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.errors import InvalidInput, LlmCompilerError, reason_of
from llm_compiler.passes.pipeline import PassList

EXAMPLES = """examples:
  llm-compiler measure examples/crc32.c
  llm-compiler measure examples/ --passes 'module(default<Oz>),function(sroa)'
  llm-compiler measure build/compile_commands.json --json > sizes.jsonl
  llm-compiler measure prog.ll --passes 'function(loop-mssa(licm<allowspeculation>))'
  llm-compiler measure examples/ --objective ir-instructions   # no code generation
"""


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "measure",
        parents=[common],
        help="binary size and IR instruction count, unoptimized, -Oz and after a pass list",
        description=(
            "Measure programs as LLM Compiler does: binary size = .text + .data of the object "
            "(Berkeley llvm-size), and the IR instruction count; for the unoptimized input, "
            "for -Oz, and for --passes when given."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_program_arguments(parser)
    add_pass_list_option(parser, "an opt -passes= pipeline to measure too", adapt=True)
    parser.add_argument("--json", action="store_true", help="one JSON object per program on stdout")
    add_objective_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    objective = objective_from(args)
    compiler = make_compiler(args)
    passes = user_pass_list(compiler, args.passes, args.passes_from_llvm) if args.passes else None
    records: list[dict[str, Any]] = []
    errors: list[LlmCompilerError] = []
    for source in program_set(args):
        record: dict[str, Any] = {
            "program": source.name,
            "file": str(source.path),
            "llvm_version": compiler.llvm_version,
            "objective": objective.value,
        }
        try:
            program = source.load(compiler)
            record["unoptimized"] = _measured(compiler, program, None, objective)
            record["oz"] = _measured(compiler, program, compiler.passes(OZ_PIPELINE), objective)
            record["passes"] = _measured(compiler, program, passes, objective) if passes else None
        except LlmCompilerError as error:
            errors.append(error)
            record.update(unoptimized=None, oz=None, passes=None, error=reason_of(error, 2000))
        if args.json:
            sys.stdout.write(json.dumps(record) + "\n")
            sys.stdout.flush()
        records.append(record)
    if len(errors) == len(records) == 1:
        raise errors[0]  # one unit: its own error, as before
    if not args.json:
        _print_table(records, compiler.llvm_version, str(passes) if passes else None, objective)
    if errors and len(errors) == len(records):
        raise InvalidInput(
            f"None of the {len(records)} units could be measured; the first: {records[0]['error']}"
        )
    return 0


def _measured(
    compiler: Compiler, program: Program, passes: PassList | None, objective: Objective
) -> dict[str, Any]:
    """The JSON of one measurement; with an objective that needs no object, the IR is
    counted and the object sizes are null."""
    if objective.needs_object:
        return compiler.measure(program, passes).to_json()
    counted = compiler.count(program, passes)
    return {
        "pipeline": counted.pipeline,
        "binary_size": None,
        "text": None,
        "data": None,
        "ir_instructions": counted.ir_instructions,
    }


_FIELD = {"binary-size": "binary_size", "text-size": "text", "ir-instructions": "ir_instructions"}


def _print_table(
    records: list[dict[str, Any]], llvm_version: str, pipeline: str | None, objective: Objective
) -> None:
    title = "binary = .text + .data bytes" if objective.needs_object else "no code generated"
    table = Table(title=f"Code size (LLVM {llvm_version}; {title}; compared in {objective.description})")
    table.add_column("program", overflow="ellipsis", no_wrap=True)
    columns = [("unoptimized", "unopt"), ("oz", "-Oz")]
    if pipeline:
        columns.append(("passes", "passes"))
    for _, label in columns:
        if objective.needs_object:
            table.add_column(f"{label}\nbinary", justify="right")
        table.add_column(f"{label}\nIR inst", justify="right")
    if pipeline:
        table.add_column(f"smaller\nthan -Oz\n({objective.value})", justify="right")
    failed = [record for record in records if record.get("error")]
    for record in records:
        row = [record["program"]]
        if record.get("error"):
            table.add_row(*row, "error (below)", *[""] * (len(table.columns) - 2))
            continue
        for key, _ in columns:
            row += [str(record[key]["binary_size"])] if objective.needs_object else []
            row.append(str(record[key]["ir_instructions"]))
        if pipeline:
            oz, mine = record["oz"][_FIELD[objective.value]], record["passes"][_FIELD[objective.value]]
            row.append(f"{(oz - mine) / oz:+.1%}" if oz else "n/a")
        table.add_row(*row)
    console = Console()
    console.print(table)
    if pipeline:
        console.print(f"passes: {pipeline}", highlight=False, markup=False, soft_wrap=True)
    for record in failed:
        console.print(
            f"  {record['program']}: {record['error']}", highlight=False, markup=False, soft_wrap=True
        )
    if failed:
        console.print(
            f"{len(failed)} of {len(records)} units could not be measured (reasons above)", highlight=False
        )
