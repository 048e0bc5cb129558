"""``llm-compiler emulate``: a model's prediction of ``opt``'s output beside the real one."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from llm_compiler.cli.options import (
    add_model_options,
    add_pass_list_option,
    frontend_options,
    make_compiler,
    model_from_args,
)
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.errors import InvalidInput
from llm_compiler.models.emulate import EMULATION_BUDGET, emulate

EXAMPLES = """examples:
  llm-compiler emulate examples/crc32.c --passes 'function(sroa,instcombine<no-verify-fixpoint>)' \\
      --model hf:facebook/llm-compiler-7b
  llm-compiler emulate prog.ll --passes 'module(default<Oz>)' --emit asm --model gguf:llm-compiler-7b.gguf
"""


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "emulate",
        parents=[common],
        help="a model's prediction of opt's output, beside the real output",
        description=(
            "Asks the model what opt -p PASSES makes of the program (IR, or assembly with --emit asm) "
            "and compares: does the prediction parse and compile, does it match exactly, and the "
            "predicted against the real instruction count and binary size."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="a C/C++ source or an IR file")
    add_pass_list_option(parser, "the opt -passes= pipeline to emulate (required)")
    parser.add_argument(
        "--emit",
        choices=("ir", "asm"),
        default="ir",
        help="what the model writes: ir (default) or asm (--target stays the front end's target triple)",
    )
    add_model_options(parser)
    parser.add_argument(
        "--budget",
        type=int,
        default=EMULATION_BUDGET,
        metavar="TOKENS",
        help=f"longest prompt sent (default: {EMULATION_BUDGET:,})",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        metavar="N",
        help="new tokens per answer (default: what the context leaves)",
    )
    parser.add_argument("--json", action="store_true", help="print each answer's record as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not args.passes:
        raise InvalidInput("emulate needs --passes PIPELINE: the list whose effect the model predicts.")
    compiler = make_compiler(args)
    passes = compiler.passes(args.passes)
    path = Path(args.file)
    program = ProgramSource(str(path), path, "", options=frontend_options(args)).load(compiler)
    with model_from_args(args) as model:
        results = emulate(
            compiler,
            model,
            program,
            passes,
            target=args.emit,
            samples=args.samples,
            temperature=args.temperature,
            seed=args.model_seed,
            budget=args.budget,
            max_tokens=args.max_tokens,
        )
    if args.json:
        for result in results:
            sys.stdout.write(json.dumps(result.to_json()) + "\n")
        return 0
    table = Table(title=f"Emulation of opt -p '{passes.pipeline}' ({args.emit})")
    for column in (
        "answer",
        "compiles",
        "exact",
        "IR inst (pred/real)",
        "binary (pred/real/of pred)",
        "error",
    ):
        table.add_column(column)
    for number, result in enumerate(results, 1):
        table.add_row(
            str(number),
            "yes" if result.compiles else "no",
            "yes" if result.exact_match else "no",
            f"{_n(result.predicted_ir_count)}/{result.real_ir_count}",
            f"{_n(result.predicted_binary_size)}/{result.real_binary_size}/{_n(result.measured_binary_size)}",
            result.error,
        )
    Console().print(table, markup=False)
    return 0


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)
