"""``llm-compiler data``: task datasets (emulation, flag tuning, disassembly) and a viewer."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from llm_compiler.cli.options import (
    add_execution_options,
    add_output_options,
    add_pass_list_option,
    add_program_arguments,
    make_executor,
    program_set,
)
from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import InvalidInput
from llm_compiler.tasks.dataset import DEFAULT_SHARD_SIZE, GenerationReport
from llm_compiler.tasks.generate import ProgramOutput, generate
from llm_compiler.tasks.samples import TASKS, DataSettings
from llm_compiler.toolchain.llvm import find_toolchain

EXAMPLES = """examples:
  llm-compiler data emulation ~/.local/share/llm-compiler/corpus --out data/emulation
  llm-compiler data emulation examples/ --out /tmp/emu --samples-per-program 2 --seed 1
  llm-compiler tune examples/ --out runs/ex && \\
    llm-compiler data flag-tuning examples/ --tuning runs/ex --out data/flags
  llm-compiler data disassembly examples/ --target aarch64-linux-gnu --out data/dis-arm
  llm-compiler data show data/emulation/train/shard-00000.jsonl --index 3

Datasets load with datasets.load_dataset("json", data_files={"train": "DIR/train/*.jsonl", ...}).
Fields are described in docs/datasets.md.
"""


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "data",
        help="make datasets of the three LLM Compiler tasks in the released models' formats",
        description="Make emulation, flag tuning and disassembly datasets, or show a sample.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tasks = parser.add_subparsers(dest="task", required=True, metavar="TASK")
    for task in TASKS:
        sub = tasks.add_parser(task, parents=[common], help=f"{task} samples")
        add_program_arguments(sub, required=False)
        sub.add_argument(
            "--programs", dest="programs_option", nargs="+", default=[], metavar="PROGRAM",
            help="the same as the positional PROGRAM arguments",
        )  # fmt: skip
        sub.add_argument("--out", type=Path, required=True, metavar="DIR", help="dataset folder")
        sub.add_argument("--seed", type=int, default=0, help="seed of the random pass lists (default: 0)")
        sub.add_argument(
            "--samples-per-program", type=int, default=4, metavar="N",
            help="random pass lists per program (emulation; default: 4)",
        )  # fmt: skip
        add_pass_list_option(
            sub, "emulation: also emulate this pass list for every program (repeatable)", repeatable=True
        )
        sub.add_argument(
            "--emulation-targets", default="ir,asm", metavar="ir,asm",
            help="emulation outputs: ir, asm or both (default)",
        )  # fmt: skip
        sub.add_argument(
            "--tokenizer", metavar="PATH", help="Hugging Face tokenizer (default: the estimator)"
        )
        sub.add_argument(
            "--prompt-limit", type=int, metavar="TOKENS", help="override the task's prompt budget"
        )
        sub.add_argument(
            "--answer-limit", type=int, metavar="TOKENS", help="override the task's answer budget"
        )
        sub.add_argument(
            "--tuning", metavar="DIR", help="flag tuning: the tune --out folder giving the labels"
        )
        sub.add_argument(
            "--include-unvalidated", action="store_true",
            help="flag tuning: also use lists that were not checked by PassListEval",
        )  # fmt: skip
        sub.add_argument("--resume", action="store_true", help="continue the dataset in --out")
        sub.add_argument("--shard-size", type=int, default=DEFAULT_SHARD_SIZE, metavar="N")
        add_execution_options(sub)
        sub.set_defaults(run=run_generate)
    show = tasks.add_parser("show", help="pretty-print a sample of a dataset")
    show.add_argument("file", type=Path, metavar="FILE", help="a shard (.jsonl)")
    show.add_argument("--index", type=int, default=0, help="which sample (default: the first)")
    add_output_options(show)
    show.set_defaults(run=run_show)


def _settings(args: argparse.Namespace) -> DataSettings:
    """The generation settings from the command line (extra pass lists checked here)."""
    targets = tuple(target.strip() for target in args.emulation_targets.split(",") if target.strip())
    if not targets or set(targets) - {"ir", "asm"}:
        raise InvalidInput(f"--emulation-targets takes ir, asm or both, not {args.emulation_targets!r}.")
    settings = DataSettings(
        task=args.task,
        seed=args.seed,
        samples_per_program=args.samples_per_program,
        targets=targets,
        tokenizer=args.tokenizer,
        prompt_limit=args.prompt_limit,
        answer_limit=args.answer_limit,
        llvm_bin=args.llvm_bin,
        timeout=args.timeout,
        engine=args.engine,
        allow_extra=tuple(args.allow_pass),
        require_validation=not args.include_unvalidated,
        tuning=str(Path(args.tuning).resolve()) if args.tuning else None,
        extra_lists=tuple(args.passes),
    )
    if settings.extra_lists:
        # Refuse a bad --passes list here, before every program fails on it.
        with Compiler(
            find_toolchain(args.llvm_bin), allow_extra=args.allow_pass, engine="subprocess"
        ) as checker:
            for pipeline in settings.extra_lists:
                checker.passes(pipeline)
    return settings


def run_generate(args: argparse.Namespace) -> int:
    settings = _settings(args)
    args.programs = [*args.programs, *args.programs_option]
    if not args.programs:
        raise InvalidInput("data needs programs: give files, folders, compile_commands.json or a corpus.")
    programs = program_set(args)
    console = Console(stderr=True)
    executor = make_executor(args)
    console.print(f"{args.task} samples into {args.out}, jobs on {executor.description}")
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed} programs"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    bar = progress.add_task(args.task, total=None)
    samples = 0

    def on_program(output: ProgramOutput) -> None:
        nonlocal samples
        samples += len(output.samples)
        progress.update(bar, advance=1, description=f"{args.task}: {samples} samples")

    try:
        with progress:
            report = generate(
                settings,
                programs,
                args.out,
                executor,
                resume=args.resume,
                shard_size=args.shard_size,
                window=max(4, 2 * args.jobs, 2 * (args.dask_local or 0)),
                on_program=on_program,
            )
    finally:
        executor.close()
    return _print_summary(console, report, args.out)


def _print_summary(console: Console, report: GenerationReport, out: Path) -> int:
    """Prints what was made and the programs that failed, with their reasons; the exit
    status is 1 when programs gave no sample at all (0 when some failed and others gave
    samples)."""
    figures = report.to_json()
    console.print(
        f"{figures['programs']} programs, {figures['samples_total']} samples "
        f"({', '.join(f'{k} {v}' for k, v in sorted(figures['samples'].items()))}) "
        f"in {figures['seconds']:.1f} s"
    )
    if figures["dropped"]:
        console.print(
            "dropped: " + ", ".join(f"{reason} {n}" for reason, n in sorted(figures["dropped"].items()))
        )
    if report.programs_failed:
        # A program that cannot be read or measured is an outcome with its reason; the run went on.
        for failure in report.failed[:20]:
            console.print(
                f"  {failure['program']}: {failure['reason']}", highlight=False, markup=False, soft_wrap=True
            )
        console.print(f"{report.programs_failed} programs failed (reasons in {out / 'report.json'})")
    return 0 if figures["samples_total"] or not figures["programs"] else 1


def run_show(args: argparse.Namespace) -> int:
    if not args.file.is_file():
        raise InvalidInput(f"{args.file}: no such file.")
    lines = [line for line in args.file.read_text().splitlines() if line.strip()]
    if not 0 <= args.index < len(lines):
        raise InvalidInput(f"{args.file} has {len(lines)} samples; --index must be below that.")
    try:
        sample = json.loads(lines[args.index])
    except json.JSONDecodeError as error:
        raise InvalidInput(f"{args.file}: sample {args.index} is not JSON ({error}).") from error
    console = Console(highlight=False)
    fields = {key: value for key, value in sample.items() if key not in ("prompt", "answer")}
    console.rule(f"[bold]{escape(str(sample.get('task')))}[/] {escape(str(sample.get('program_name')))}")
    for key, value in fields.items():
        console.print(
            f"[bold]{key}[/]: {escape(json.dumps(value) if isinstance(value, dict) else str(value))}"
        )
    console.rule("prompt")
    console.print(escape(str(sample.get("prompt", ""))))
    console.rule("answer")
    console.print(escape(str(sample.get("answer", ""))))
    return 0
