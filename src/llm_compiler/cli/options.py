"""Options shared by the subcommands, defined once, and the objects made from them.

* :func:`common_options`: the toolchain (``--llvm-bin``, ``--timeout``, ``--engine``,
  ``--allow-pass``), ``--jobs``, the front end (``-I``, ``-D``, ``--target``,
  ``--cflag``) and output (``--debug``, ``-v``), taken by every command that compiles.
* :func:`add_program_arguments`: the programs a command works on, read by the one
  program-set reader (:mod:`llm_compiler.corpus.program_set`), with ``--only-split``
  and ``--limit``.
* :func:`add_execution_options`: where jobs run (``--dask-local``, ``--dask-scheduler``;
  ``--jobs`` is common).
* :func:`add_pass_list_option`: ``--passes PIPELINE``, repeatable where a command
  applies several lists, and ``--passes-from-llvm MAJOR`` where the command runs them
  through :func:`user_pass_list` (adapted to the installed LLVM, each change said on
  standard error; :mod:`llm_compiler.passes.versions`).
* :func:`add_model_options`: ``--model SPEC``, sampling and the backends' settings;
  :func:`model_from_args` loads the model (importing only its backend).
* :func:`add_objective_option`: ``--objective`` (what "smaller" means; binary size by
  default), read with :func:`objective_from`.

``--jobs N`` means the same everywhere: N processes compile at once (pool workers for
``tune`` and ``data``, in-process compile workers for ``measure``, ``validate`` and
``corpus``). The default is the number of cores.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import Any

from rich.console import Console

from llm_compiler.core.compiler import DEFAULT_TIMEOUT, Compiler
from llm_compiler.core.engines import Engine
from llm_compiler.core.executors import DaskExecutor, Executor, InlineExecutor, LocalExecutor
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.corpus.program_set import ProgramSet
from llm_compiler.corpus.store import SPLITS
from llm_compiler.errors import InvalidInput
from llm_compiler.files import RunDir
from llm_compiler.models.base import Model
from llm_compiler.passes.pipeline import PassList
from llm_compiler.passes.versions import MODEL_LLVM, adapt_user_pass_list
from llm_compiler.toolchain.frontend import FrontendOptions
from llm_compiler.toolchain.llvm import find_toolchain

DEFAULT_JOBS = os.cpu_count() or 1

PROGRAMS_HELP = (
    "C/C++/IR files, folders, compile_commands.json, or a corpus (its folder, its manifest.jsonl, "
    "or corpus:DIR?split=test&kind=function&limit=N)"
)


def common_options() -> argparse.ArgumentParser:
    """Options every subcommand that compiles takes."""
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
        default=Engine.AUTO.value,
        help="inprocess: LLVM's C API in crash-isolated workers; subprocess: opt and llc; "
        "auto (default): inprocess when the LLVM library loads",
    )
    group.add_argument(
        "--jobs",
        type=int,
        default=DEFAULT_JOBS,
        metavar="N",
        help=f"processes that compile at once (default: the number of cores, {DEFAULT_JOBS})",
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
    add_output_options(common)
    return common


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``--debug`` and ``-v`` (for commands without the common options)."""
    output = parser.add_argument_group("output")
    output.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    output.add_argument("-v", "--verbose", action="count", default=0, help="log commands (-vv: more)")


def add_program_arguments(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """The programs a command works on: positional ``PROGRAM...``, ``--only-split``, ``--limit``."""
    parser.add_argument("programs", nargs="+" if required else "*", metavar="PROGRAM", help=PROGRAMS_HELP)
    group = parser.add_argument_group("program selection")
    group.add_argument(
        "--only-split",
        action="append",
        choices=SPLITS,
        default=[],
        help="only programs of this split (repeatable; default: all)",
    )
    group.add_argument("--limit", type=int, metavar="N", help="at most the first N programs")


def program_set(args: argparse.Namespace) -> ProgramSet:
    """The programs named by :func:`add_program_arguments`'s arguments."""
    return ProgramSet(args.programs, frontend_options(args), splits=args.only_split, limit=args.limit)


def add_execution_options(parser: argparse.ArgumentParser) -> None:
    """Where jobs run besides the local pool of ``--jobs`` processes."""
    group = parser.add_argument_group("execution")
    group.add_argument("--dask-local", type=int, metavar="N", help="run on a Dask LocalCluster of N workers")
    group.add_argument("--dask-scheduler", metavar="ADDRESS", help="run on a Dask cluster (tcp://host:port)")


def make_executor(args: argparse.Namespace) -> Executor:
    """The executor the execution options name (``--jobs 1``: this process)."""
    if args.dask_scheduler or args.dask_local:
        return DaskExecutor(args.dask_scheduler, args.dask_local)
    if args.jobs <= 1:
        return InlineExecutor()
    return LocalExecutor(args.jobs)


def add_objective_option(
    parser: argparse.ArgumentParser, choices: tuple[Objective, ...] = tuple(Objective)
) -> None:
    """``--objective NAME``: what the command minimizes (default: binary size, the paper's)."""
    names = ", ".join(objective.value for objective in choices)
    parser.add_argument(
        "--objective",
        default=DEFAULT_OBJECTIVE.value,
        metavar="NAME",
        help=f"what smaller means: {names} (default: {DEFAULT_OBJECTIVE.value}, .text + .data bytes; "
        "ir-instructions counts the optimized IR and generates code only for the lists it validates)",
    )
    parser.set_defaults(objective_choices=choices)


def objective_from(args: argparse.Namespace) -> Objective:
    """The objective ``--objective`` names.

    Raises:
        InvalidInput: An unknown name, or one this command does not offer.
    """
    objective = Objective.parse(args.objective)
    choices = getattr(args, "objective_choices", tuple(Objective))
    if objective not in choices:
        names = ", ".join(choice.value for choice in choices)
        raise InvalidInput(f"--objective {objective.value} is not offered here; choose one of {names}.")
    return objective


def add_pass_list_option(
    parser: argparse.ArgumentParser,
    help: str,
    *,
    repeatable: bool = False,
    adapt: bool = False,
) -> None:
    """``--passes PIPELINE``: an ``opt -passes=`` pipeline (repeatable where asked); with
    ``adapt``, also ``--passes-from-llvm`` for commands that read lists with :func:`user_pass_list`."""
    if repeatable:
        parser.add_argument("--passes", action="append", default=[], metavar="PIPELINE", help=help)
    else:
        parser.add_argument("--passes", metavar="PIPELINE", help=help)
    if adapt:
        parser.add_argument(
            "--passes-from-llvm",
            type=int,
            metavar="MAJOR",
            help=f"the LLVM version --passes is written for: {MODEL_LLVM} (LLM Compiler's) maps its renamed "
            "passes to the installed opt's (default: the installed version; either way a plain instcombine "
            "runs without the fixpoint check that aborts LLVM >= 18)",
        )


def user_pass_list(compiler: Compiler, text: str, source_llvm: int | None = None) -> PassList:
    """A pass list from the command line, adapted to the installed LLVM and checked by the gate.

    Each change (``instcombine -> instcombine<no-verify-fixpoint>: ...``) is said on
    standard error.

    Raises:
        InvalidPassList: The list is not valid, or names a pass with no sound equivalent.
    """
    adapted = adapt_user_pass_list(text, compiler.pass_set, source_llvm=source_llvm)
    console = Console(stderr=True)
    for line in adapted.summary():
        console.print(
            f"pass list adapted to LLVM {compiler.llvm_version}: {line}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    compiler.check(adapted.passes)
    return adapted.passes


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
        workers=max(1, args.jobs),
    )
    logging.getLogger("llm_compiler").info(
        "LLVM %s (%s), %s", toolchain.version, toolchain.bin_dir, compiler.engine_note
    )
    return compiler


def add_model_options(
    parser: argparse.ArgumentParser, *, required: bool = True, default_help: str = ""
) -> None:
    """``--model SPEC`` and how it generates; backend settings default to the backend's own.

    Args:
        parser: The command's parser.
        required: Whether ``--model`` must be given.
        default_help: Specs this command adds before the model backends' (for ``--help``).
    """
    group = parser.add_argument_group("model")
    group.add_argument(
        "--model",
        required=required,
        metavar="SPEC",
        help=default_help
        + "hf:PATH_OR_ID, vllm:PATH_OR_ID, gguf:FILE, openai:URL[#MODEL] or replay:FILE.jsonl",
    )
    group.add_argument("--samples", type=int, default=1, metavar="K", help="answers per prompt (default: 1)")
    group.add_argument(
        "--temperature", type=float, default=0.0, help="sampling temperature (default: 0, greedy)"
    )
    group.add_argument("--model-seed", type=int, default=0, metavar="N", help="seed of sampling (default: 0)")
    group.add_argument("--device", help="hf: cpu, cuda, cuda:N or auto (default: auto)")
    group.add_argument("--dtype", help="hf, vllm: auto (default), float32, float16 or bfloat16")
    group.add_argument(
        "--context", type=int, metavar="TOKENS", help="use a shorter context than the model's (saves memory)"
    )
    group.add_argument("--tensor-parallel", type=int, metavar="N", help="vllm: GPUs to split the model over")
    group.add_argument("--gpu-layers", type=int, metavar="N", help="gguf: layers offloaded to a GPU")
    group.add_argument(
        "--tokenizer", metavar="PATH", help="openai, replay: count tokens with this tokenizer.json or folder"
    )
    group.add_argument(
        "--server-timeout", type=float, metavar="SECONDS", help="openai: seconds per request (default: 600)"
    )


def model_from_args(args: argparse.Namespace) -> Model:
    """The model ``--model`` names, with the backend settings given on the command line."""
    from llm_compiler.models.registry import load_model

    return load_model(
        args.model,
        device=args.device,
        dtype=args.dtype,
        context=args.context,
        tensor_parallel=args.tensor_parallel,
        gpu_layers=args.gpu_layers,
        tokenizer=args.tokenizer,
        timeout=args.server_timeout,
    )


def run_dir(args: argparse.Namespace, identity: dict[str, Any]) -> RunDir | None:
    """The run folder of ``--out`` (None without it), checked for ``--resume``.

    Raises:
        InvalidInput: ``--resume`` without ``--out``, results there without ``--resume``,
            or results made with other settings.
    """
    if not args.out:
        if getattr(args, "resume", False):
            raise InvalidInput("--resume continues the run in --out DIR; give --out.")
        return None
    return RunDir(Path(args.out), identity, resume=bool(getattr(args, "resume", False)))
