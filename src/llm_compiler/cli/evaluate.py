"""``llm-compiler evaluate``: the paper's tables for models, searches and baselines, as reports."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from llm_compiler.autotune.jobs import TuneSettings
from llm_compiler.cli.evaluate_tasks import add_parsers as add_task_parsers
from llm_compiler.cli.options import (
    add_execution_options,
    add_model_options,
    add_program_arguments,
    make_compiler,
    make_executor,
    model_from_args,
    program_set,
)
from llm_compiler.errors import InvalidInput
from llm_compiler.evaluation.flag_tuning import FlagTuningHarness, Row, summarize, system_kind
from llm_compiler.files import atomic_write_text
from llm_compiler.models.optimize import FLAG_TUNING_BUDGET, OptimizeSettings
from llm_compiler.predictor.search import make_search
from llm_compiler.validation.gate import Gate, load_suites

EXAMPLES = """examples:
  llm-compiler evaluate flag-tuning examples/ --system oz --system tune:100 --out runs/eval
  llm-compiler evaluate flag-tuning 'corpus:~/.local/share/llm-compiler/corpus?split=test&limit=50' \\
      --system oz --system tune:100 --system hf:facebook/llm-compiler-7b-ftd --out runs/eval --resume
  llm-compiler evaluate disassembly examples/ --model gguf:llm-compiler-7b-ftd.Q4_K_M.gguf --out runs/dis
  llm-compiler evaluate emulation data/emu/test/shard-00000.jsonl --model hf:facebook/llm-compiler-7b
  llm-compiler evaluate perplexity data/flags --split test --model hf:facebook/llm-compiler-7b-ftd
  llm-compiler evaluate compare runs/eval runs/eval-old
"""

RESULTS, REPORT_JSON, REPORT_MD, REPORT_HTML = "results.jsonl", "report.json", "report.md", "report.html"


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="the paper's tables for models, searches and baselines, as reports",
        description=(
            "Flag tuning, disassembly, compiler emulation and perplexity measured as LLM Compiler measures "
            "them, for any model, the autotuner or a baseline, on any program set. --out DIR writes "
            f"{RESULTS} (one row per unit and system, as each is done; --resume continues a killed run), "
            f"{REPORT_JSON}, {REPORT_MD} and a self-contained {REPORT_HTML} with plots."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tasks = parser.add_subparsers(dest="task", required=True, metavar="TASK")
    flags = tasks.add_parser(
        "flag-tuning",
        parents=[common],
        help="size reduction against -Oz, zero-shot and with -Oz backup, per system",
        description=(
            "Runs each --system on every unit: oz, o3, o2, os, passes:PIPELINE, tune:N (the autotuner, "
            "budget N) or a model spec. Every list is measured and validated before it counts as an "
            "improvement; gains found but not validated are reported apart."
        ),
    )
    add_program_arguments(flags)
    flags.add_argument(
        "--system",
        action="append",
        required=True,
        metavar="SYSTEM",
        help="oz, o3, o2, os, passes:PIPELINE, tune:N or a model spec (repeatable)",
    )
    flags.add_argument(
        "--suite", action="append", default=[], metavar="NAME", help="PassListEval suites (default: builtin)"
    )
    flags.add_argument("--seed", type=int, default=0, help="the autotuner's seed (default: 0)")
    flags.add_argument(
        "--budget-tokens",
        type=int,
        default=FLAG_TUNING_BUDGET,
        metavar="N",
        help=f"longest prompt sent to a model; longer units score as -Oz (default: {FLAG_TUNING_BUDGET:,})",
    )
    flags.add_argument(
        "--max-tokens", type=int, default=512, metavar="N", help="new tokens per model answer (default: 512)"
    )
    add_model_options(flags, required=False)
    add_execution_options(flags)
    _add_output(flags)
    flags.set_defaults(run=run_flag_tuning)
    compare = tasks.add_parser("compare", help="earlier runs side by side")
    compare.add_argument("runs", nargs="+", metavar="RUN", help="--out folders of earlier runs")
    compare.add_argument("--html", metavar="FILE", help="also write the comparison as HTML")
    compare.set_defaults(run=run_compare, verbose=0, debug=False)
    add_task_parsers(tasks, common, _add_output)


def _add_output(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("output")
    group.add_argument("--out", metavar="DIR", help="write results and reports there")
    group.add_argument("--resume", action="store_true", help="continue the run held in --out")
    group.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")


def prepare_out(args: argparse.Namespace, identity: dict[str, Any]) -> Path | None:
    """The output folder, checked: a run's settings must match to be resumed.

    Raises:
        InvalidInput: Results are there and --resume was not given, or were made otherwise.
    """
    if not args.out:
        if args.resume:
            raise InvalidInput("--resume continues the run in --out DIR; give --out.")
        return None
    out = Path(args.out)
    settings = out / "settings.json"
    if (out / RESULTS).exists() and not args.resume:
        raise InvalidInput(
            f"{out} holds results of an earlier run: add --resume to continue it, or use another --out."
        )
    if settings.exists() and args.resume:
        earlier = json.loads(settings.read_text())
        if earlier != identity:
            raise InvalidInput(
                f"{out} was made with other settings ({settings}); --resume needs the same ones. "
                f"Earlier: {json.dumps(earlier)}; now: {json.dumps(identity)}."
            )
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(settings, json.dumps(identity, indent=2, sort_keys=True) + "\n")
    return out


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows written so far; a last line torn by a kill is dropped."""
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def append_row(out: Path | None, row: dict[str, Any]) -> None:
    if out is not None:
        with (out / RESULTS).open("a") as stream:
            stream.write(json.dumps(row) + "\n")


def run_flag_tuning(args: argparse.Namespace) -> int:
    for system in args.system:
        system_kind(system)  # refuse unknown systems before anything runs
    compiler = make_compiler(args)
    sources = list(program_set(args))
    if not sources:
        raise InvalidInput(f"{' '.join(args.programs)}: no programs selected.")
    identity = {
        "task": "flag-tuning",
        "programs": args.programs,
        "only_split": args.only_split,
        "limit": args.limit,
        "systems": args.system,
        "suites": args.suite or ["builtin"],
        "seed": args.seed,
        "samples": args.samples,
        "temperature": args.temperature,
        "budget_tokens": args.budget_tokens,
        "max_tokens": args.max_tokens,
        "llvm_version": compiler.llvm_version,
    }
    out = prepare_out(args, identity)
    rows = [Row.from_json(r) for r in read_rows(out / RESULTS)] if out else []
    done = {(row.unit, row.system) for row in rows}
    gate = Gate(compiler, load_suites(args.suite, compiler))
    tune_settings = TuneSettings(
        seed=args.seed,
        llvm_bin=str(compiler.toolchain.bin_dir),
        timeout=args.timeout,
        engine=compiler.engine,
        suites=tuple(args.suite) or ("builtin",),
        proposer=make_search(None, compiler, args.seed),
    )
    optimize_settings = OptimizeSettings(
        samples=args.samples,
        temperature=args.temperature,
        seed=args.model_seed,
        budget=args.budget_tokens,
        max_tokens=args.max_tokens,
    )
    executor = make_executor(args)

    def load(spec: str) -> Any:
        args.model = spec
        return model_from_args(args)

    harness = FlagTuningHarness(
        compiler, gate, tune_settings, optimize_settings, load, executor, out, max(1, args.jobs)
    )
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            for system in args.system:
                todo = [source for source in sources if (source.name, system) not in done]
                task = progress.add_task(system, total=len(sources), completed=len(sources) - len(todo))
                for row in harness.run(system, todo) if todo else ():
                    append_row(out, row.to_json())
                    rows.append(row)
                    progress.advance(task)
    finally:
        executor.close()
    summary = summarize(
        rows, llvm_version=compiler.llvm_version, programs=" ".join(args.programs), settings=identity
    )
    write_reports(out, summary, [row.to_json() for row in rows], args.json)
    return 0


def write_reports(
    out: Path | None, summary: dict[str, Any], rows: list[dict[str, Any]], as_json: bool
) -> None:
    """report.json, report.md and report.html in ``out``; the summary on stdout."""
    from llm_compiler.evaluation import report

    if out is not None:
        atomic_write_text(out / REPORT_JSON, json.dumps(summary, indent=2) + "\n")
        report.write_markdown(summary, out / REPORT_MD)
        report.write_html(summary, rows, out / REPORT_HTML)
        Console(stderr=True).print(f"wrote {out / REPORT_MD}, {out / REPORT_HTML}", highlight=False)
    if as_json:
        sys.stdout.write(json.dumps(summary) + "\n")
    elif out is not None:
        sys.stdout.write((out / REPORT_MD).read_text())
    else:
        with tempfile.TemporaryDirectory(prefix="llm-compiler-report-") as scratch:
            report.write_markdown(summary, Path(scratch) / REPORT_MD)
            sys.stdout.write((Path(scratch) / REPORT_MD).read_text())


def run_compare(args: argparse.Namespace) -> int:
    from llm_compiler.evaluation import report

    runs = [(name, report.load_run(Path(name))) for name in args.runs]
    sys.stdout.write(report.compare(runs))
    if args.html:
        atomic_write_text(Path(args.html), report.compare_html(runs))
    return 0
