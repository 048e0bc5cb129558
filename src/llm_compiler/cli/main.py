"""The ``llm-compiler`` command: argument parsing and error reporting for all subcommands.

Each subcommand lives in its own module of this package with two functions,
``add_parser(subparsers, common)`` and ``run(args) -> int``; they only parse
arguments and present results, the work is done by the library. Options shared by
several subcommands are defined once, in :mod:`llm_compiler.cli.options`.

Errors of llm-compiler (:class:`~llm_compiler.errors.LlmCompilerError`) are printed
as one paragraph and exit with status 2; ``--debug`` shows the traceback instead.
Interrupting with Ctrl-C exits with status 130.

``llm-compiler cc`` and ``llm-compiler c++`` are the exception: they stand in for a
compiler in a build, so their arguments are a compiler's and go, unparsed, to
:mod:`llm_compiler.cli.cc`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from llm_compiler import __version__

if TYPE_CHECKING:
    import argparse

#: Commands that take a compiler's command line, not argparse options.
DRIVER_COMMANDS = ("cc", "c++")

SUBCOMMANDS = (
    "measure",
    "compile",
    "passes",
    "tune",
    "validate",
    "corpus",
    "data",
    "optimize",
    "predictor",
    "disassemble",
    "emulate",
    "evaluate",
    "train",
    "gym",
)

EPILOG = """examples:
  llm-compiler measure examples/crc32.c
  llm-compiler measure examples/ --passes 'module(default<Oz>),function(sroa)' --json
  llm-compiler compile examples/crc32.c --passes 'module(default<Oz>)' -o crc32.s
  llm-compiler passes --excluded
  llm-compiler tune examples/ --budget 100 --seed 1
  llm-compiler tune 'corpus:~/.local/share/llm-compiler/corpus?split=test&limit=50' --out runs/test
  llm-compiler validate --passes 'module(default<Oz>)'
  llm-compiler optimize examples/ --out results/
  llm-compiler optimize examples/ --model gguf:llm-compiler-7b-ftd.Q4_K_M.gguf --out results/
  llm-compiler disassemble crc32.s --model hf:facebook/llm-compiler-7b-ftd -o crc32.ll
  llm-compiler emulate examples/crc32.c --passes 'module(default<Oz>)' --model hf:facebook/llm-compiler-7b
  llm-compiler evaluate flag-tuning examples/ --system oz --system tune:100 --out runs/eval
  llm-compiler train --data data/flags --model facebook/llm-compiler-7b --out models/ftd
  llm-compiler gym eval greedy --dataset examples/ --steps 20
  make CC="llm-compiler cc --results tuned/"     # build with tuned lists (llm-compiler cc --help)
"""


def build_parser() -> argparse.ArgumentParser:
    import argparse
    import importlib

    from llm_compiler.cli.options import common_options

    parser = argparse.ArgumentParser(
        prog="llm-compiler",
        description="Measure and tune LLVM pass lists for code size, the way LLM Compiler does.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"llm-compiler {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in DRIVER_COMMANDS:
        # main() hands these to the driver before parsing; listed here so --help shows them.
        language = "C" if name == "cc" else "C++"
        subparsers.add_parser(
            name,
            add_help=False,
            help=f"a {language} compiler for your build (clang's command line): objects smaller than "
            f"-Oz, validated; llm-compiler {name} --help",
        )
    common = common_options()
    for name in SUBCOMMANDS:
        module = importlib.import_module(f"llm_compiler.cli.{name}")
        module.add_parser(subparsers, common)
    return parser


def _configure_logging(verbosity: int) -> None:
    import logging

    from rich.console import Console
    from rich.logging import RichHandler

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


#: What the compile server runs for a driver command, and what it loads first.
SERVED_ENTRY = "llm_compiler.cli.cc:main"
SERVER_PRELOAD = "llm_compiler.driver.warm:preload"


def _served(command: str, arguments: list[str]) -> int | None:
    """Runs a driver command in the compile server (:mod:`llm_compiler.driver.server`);
    its exit status, or None where it runs here: ``--no-server``
    (``LLM_COMPILER_NO_SERVER``), an option without its value (the command reports it),
    or no server to take it."""
    import os

    from llm_compiler.driver import direct

    try:
        given, _ = direct.scan_options(arguments, os.environ)
    except ValueError:
        return None
    if direct.is_set(given, "--no-server"):
        return None
    from llm_compiler.driver.server import delegate

    return delegate(command, arguments, entry=SERVED_ENTRY, preload=SERVER_PRELOAD)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``llm-compiler`` console script."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in DRIVER_COMMANDS:
        # `cc` runs once per unit of a build: an unchanged unit is answered before anything
        # beyond the standard library is imported (llm_compiler.driver.direct).
        from llm_compiler.driver.direct import serve

        status = serve(arguments[0], arguments[1:])
        if status is not None:
            return status
        status = _served(arguments[0], arguments[1:])
        if status is not None:
            return status
        from llm_compiler.cli import cc

        return cc.main(arguments[0], arguments[1:])
    # Loaded here, not at the top: `cc` runs once per unit of a build and skips them.
    from concurrent.futures.process import BrokenProcessPool

    from rich.console import Console
    from rich.markup import escape

    from llm_compiler.errors import LlmCompilerError

    parser = build_parser()
    args = parser.parse_args(arguments)
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
    except BrokenProcessPool as error:
        if args.debug:
            raise
        Console(stderr=True, highlight=False, soft_wrap=True).print(
            f"error: a worker process was killed ({error}): out of memory, or a signal. What was finished "
            "is kept; run the same command again to go on (with --resume where the command takes it), "
            "with fewer --jobs if memory ran out."
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
