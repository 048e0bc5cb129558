"""The ``llm-compiler`` command: argument parsing and error reporting for all subcommands.

Each subcommand lives in its own module of this package with two functions,
``add_parser(subparsers, common)`` and ``run(args) -> int``; they only parse
arguments and present results, the work is done by the library.

Errors of llm-compiler (:class:`~llm_compiler.errors.LlmCompilerError`) are printed
as one paragraph and exit with status 2; ``--debug`` shows the traceback instead.
Interrupting with Ctrl-C exits with status 130.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.logging import RichHandler
from rich.markup import escape

from llm_compiler import __version__
from llm_compiler.core.compiler import DEFAULT_TIMEOUT, Compiler
from llm_compiler.core.engines import Engine
from llm_compiler.errors import LlmCompilerError
from llm_compiler.toolchain.frontend import FrontendOptions
from llm_compiler.toolchain.llvm import find_toolchain

SUBCOMMANDS = ("measure", "compile", "passes", "tune", "validate", "corpus", "data")

EPILOG = """examples:
  llm-compiler measure examples/crc32.c
  llm-compiler measure examples/ --passes 'module(default<Oz>),function(sroa)' --json
  llm-compiler compile examples/crc32.c --passes 'module(default<Oz>)' -o crc32.s
  llm-compiler passes --excluded
  llm-compiler tune examples/ --budget 100 --seed 1
  llm-compiler validate --passes 'module(default<Oz>)'
"""


def common_options() -> argparse.ArgumentParser:
    """Options every subcommand takes."""
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("toolchain")
    group.add_argument(
        "--llvm-bin",
        metavar="DIR",
        help="LLVM bin directory (default: $LLVM_BIN, else the newest /usr/lib/llvm-N/bin, N >= 17)",
    )
    group.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"time limit of each compiler process (default: {DEFAULT_TIMEOUT:g})",
    )
    group.add_argument(
        "--engine",
        choices=[engine.value for engine in Engine],
        default="auto",
        help="inprocess: LLVM's C API in crash-isolated workers; subprocess: opt and llc; "
        "auto (default): inprocess when the LLVM library loads",
    )
    group.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="in-process compile workers (default: the number of cores)",
    )
    group.add_argument(
        "--allow-pass",
        action="append",
        default=[],
        metavar="NAME",
        help="accept this opt pass in pass lists although it is not searchable (repeatable)",
    )
    front = common.add_argument_group("front end (C/C++ sources)")
    front.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR")
    front.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]")
    front.add_argument("--target", metavar="TRIPLE", help="target triple (default: the host)")
    front.add_argument(
        "--cflag",
        dest="cflags",
        action="append",
        default=[],
        metavar="FLAG",
        help="extra clang flag, e.g. --cflag=-std=c11 (repeatable)",
    )
    output = common.add_argument_group("output")
    output.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    output.add_argument("-v", "--verbose", action="count", default=0, help="log commands (-vv: more)")
    return common


def frontend_options(args: argparse.Namespace) -> FrontendOptions:
    """Front-end options from the parsed common arguments."""
    defines: dict[str, str | None] = {}
    for define in args.defines:
        name, equals, value = define.partition("=")
        defines[name] = value if equals else None
    return FrontendOptions(
        include_dirs=tuple(args.include_dirs),
        defines=defines,
        target=args.target,
        extra_flags=tuple(args.cflags),
    )


def make_compiler(args: argparse.Namespace) -> Compiler:
    """A :class:`Compiler` configured from the parsed common arguments."""
    toolchain = find_toolchain(args.llvm_bin)
    compiler = Compiler(
        toolchain,
        timeout=args.timeout,
        allow_extra=args.allow_pass,
        engine=args.engine,
        workers=args.workers,
    )
    logging.getLogger("llm_compiler").info("LLVM %s, %s", toolchain.version, compiler.engine_note)
    return compiler


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="llm-compiler",
        description="Measure and tune LLVM pass lists for code size, the way LLM Compiler does.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"llm-compiler {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = common_options()
    for name in SUBCOMMANDS:
        module = importlib.import_module(f"llm_compiler.cli.{name}")
        module.add_parser(subparsers, common)
    return parser


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(
        level=level,
        format="%(message)s",
        handlers=[RichHandler(console=Console(stderr=True), show_path=False)],
        force=True,
    )
    if verbosity == 1:
        # -v shows each command run; the runner logs them at DEBUG.
        logging.getLogger("llm_compiler.toolchain.runner").setLevel(logging.DEBUG)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``llm-compiler`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose)
    try:
        return int(args.run(args))
    except LlmCompilerError as error:
        if args.debug:
            raise
        Console(stderr=True, highlight=False, soft_wrap=True).print(
            f"[bold red]error:[/] {escape(str(error))}", markup=True
        )
        return 2
    except KeyboardInterrupt:
        Console(stderr=True).print("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
