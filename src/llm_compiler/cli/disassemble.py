"""``llm-compiler disassemble``: assembly to LLVM-IR with a model, verified by a round trip."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from llm_compiler.cli.options import add_model_options, make_compiler, model_from_args
from llm_compiler.errors import InvalidInput
from llm_compiler.files import atomic_write_text
from llm_compiler.models.disassemble import DISASSEMBLY_BUDGET, lift

EXAMPLES = """examples:
  llm-compiler disassemble crc32.s --model hf:facebook/llm-compiler-7b-ftd -o crc32.ll
  llm-compiler disassemble *.s --model gguf:llm-compiler-7b-ftd.Q4_K_M.gguf --samples 8 --temperature 0.8
"""


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "disassemble",
        parents=[common],
        help="lift assembly to LLVM-IR with a model; round trips are verified",
        description=(
            "Asks the model to lift each assembly file to LLVM-IR. Each candidate IR is parsed, verified "
            "and lowered with llc; one whose assembly equals the input (comments, blank lines and "
            "name-only directives aside) is a round trip and is returned first. Otherwise the candidate "
            "closest by BLEU is returned, marked as not verified."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", nargs="+", metavar="FILE.s", help="assembly files")
    add_model_options(parser)
    parser.add_argument(
        "--budget",
        type=int,
        default=DISASSEMBLY_BUDGET,
        metavar="TOKENS",
        help=f"longest prompt sent (default: {DISASSEMBLY_BUDGET:,})",
    )
    parser.add_argument("--triple", metavar="TRIPLE", help="the lifted IR must be for this target triple")
    parser.add_argument("-o", "--output", metavar="FILE.ll", help="write the chosen IR (one input only)")
    parser.add_argument("--out", metavar="DIR", help="write results.jsonl and each chosen IR there")
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=8192,
        metavar="N",
        help="new tokens per answer (default: 8,192, the paper's)",
    )
    parser.add_argument("--json", action="store_true", help="print each record as JSON on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    files = [Path(name) for name in args.files]
    if args.output and len(files) != 1:
        raise InvalidInput(f"-o takes one file and {len(files)} were given; use --out DIR for several.")
    compiler = make_compiler(args)
    with model_from_args(args) as model:
        results = lift(
            compiler,
            model,
            files,
            samples=args.samples,
            temperature=args.temperature,
            seed=args.model_seed,
            target=args.triple,
            budget=args.budget,
            max_tokens=args.max_tokens,
        )
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    console = Console()
    lines = []
    for result in results:
        record = result.to_json()
        lines.append(json.dumps(record))
        if args.json:
            sys.stdout.write(lines[-1] + "\n")
        if result.ir is not None:
            if args.output:
                atomic_write_text(Path(args.output), result.ir)
            elif out:
                atomic_write_text(out / (Path(result.file).stem + ".ll"), result.ir)
        if not args.json:
            status = (
                "round trip (verified)"
                if result.verified
                else f"not verified, BLEU {result.bleu:.3f}"
                if result.ir is not None
                else f"no IR: {result.error}"
            )
            console.print(f"{result.file}: {status}", highlight=False, markup=False, soft_wrap=True)
    if out:
        atomic_write_text(out / "results.jsonl", "\n".join(lines) + "\n")
    return 0 if all(result.ir is not None for result in results) else 1
