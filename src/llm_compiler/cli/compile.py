"""``llm-compiler compile``: write a program after a pass list as IR, bitcode, object or assembly.

An object or assembly file of a list other than ``default<Oz>`` is written only once the
selection layer has checked the list on the program as ``tune`` and ``optimize`` check
theirs (a second compile, then the gate: the link, PassListEval's suites, a runnable
program's own run and ``--check``); ``--unchecked`` writes it without, and says so. IR
and bitcode are written as asked (they are for reading, not for linking into a program).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from llm_compiler.cli.options import add_pass_list_option, frontend_options, make_compiler, user_pass_list
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.errors import InvalidInput
from llm_compiler.passes.pipeline import PassList
from llm_compiler.selection import Selector, Verdict, make_gate

EXAMPLES = """examples:
  llm-compiler compile examples/crc32.c --passes 'module(default<Oz>)' -o crc32.o
  llm-compiler compile examples/crc32.c -o crc32.ll            # unoptimized IR, as the models saw it
  llm-compiler compile prog.ll --passes 'function(sroa,instcombine<no-verify-fixpoint>)' -o prog.s
  llm-compiler compile prog.c --passes 'function(sroa)' -o prog.o --unchecked   # not validated
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
    parser.add_argument(
        "--suite",
        action="append",
        default=[],
        metavar="NAME",
        help="PassListEval suite the list must pass before an object is written: builtin (default), "
        "csmith[:N], humaneval-x:PATH",
    )
    parser.add_argument("--check", metavar="CMD", help="shell command the list must pass (as tune's --check)")
    parser.add_argument(
        "--unchecked", action="store_true", help="write an object or assembly without checking the list"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    compiler = make_compiler(args)
    passes = user_pass_list(compiler, args.passes, args.passes_from_llvm) if args.passes else None
    path = Path(args.file)
    program = ProgramSource(str(path), path, "", options=frontend_options(args)).load(compiler)
    output = Path(args.output)
    console = Console(stderr=True, highlight=False)
    said = ""
    if passes is not None and passes.pipeline != OZ_PIPELINE and output.suffix in (".o", ".s"):
        if args.unchecked:
            said = " (unchecked: --unchecked)"
        else:
            verdict, detail = _check(compiler, program, passes, args)
            if verdict.is_failure:
                raise InvalidInput(
                    f"{output} not written: the list is {verdict.value} on {path} ({detail}). "
                    "--unchecked writes it without the check."
                )
            said = f" ({verdict.value}: {detail})"
    written = compiler.compile_to(program, passes, output)
    console.print(f"wrote {written}{said}", markup=False)
    return 0


def _check(
    compiler: Compiler, program: Program, passes: PassList, args: argparse.Namespace
) -> tuple[Verdict, str]:
    """The selection layer's verdict on ``passes`` for ``program``: measured, compiled a
    second time, then the gate (:meth:`~llm_compiler.selection.Selector.check`)."""
    selector = Selector(compiler, make_gate(compiler, args.suite or ["builtin"], args.check))
    size, digest, error = selector.measure(program)(passes)
    if size is None:
        return Verdict.COMPILE_FAILURE, error
    verdict, detail, _, _ = selector.check(program, passes, size, digest)
    return verdict, detail
