"""``llm-compiler compile``: write a program after a pass list as IR, bitcode, object or assembly."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from llm_compiler.cli.options import add_pass_list_option, frontend_options, make_compiler, user_pass_list
from llm_compiler.corpus.program_set import ProgramSource

EXAMPLES = """examples:
  llm-compiler compile examples/crc32.c --passes 'module(default<Oz>)' -o crc32.o
  llm-compiler compile examples/crc32.c -o crc32.ll            # unoptimized IR, as the models saw it
  llm-compiler compile prog.ll --passes 'function(sroa,instcombine<no-verify-fixpoint>)' -o prog.s
"""


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "compile",
        parents=[common],
        help="apply a pass list and write .ll, .bc, .o or .s",
        description="Compile one program with a pass list; the output kind follows -o's suffix.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="a C/C++ source or an IR file")
    add_pass_list_option(parser, "opt -passes= pipeline (default: none)", adapt=True)
    parser.add_argument("-o", "--output", required=True, metavar="OUT", help="OUT.ll, OUT.bc, OUT.o or OUT.s")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    compiler = make_compiler(args)
    passes = user_pass_list(compiler, args.passes, args.passes_from_llvm) if args.passes else None
    path = Path(args.file)
    program = ProgramSource(str(path), path, "", options=frontend_options(args)).load(compiler)
    output = compiler.compile_to(program, passes, Path(args.output))
    Console(stderr=True).print(f"wrote {output}", highlight=False, markup=False)
    return 0
