"""``llm-compiler evaluate``: the paper's tables for models, searches and baselines, as reports.

``evaluate flag-tuning``: a unit a system cannot be run on (IR this LLVM cannot read, a
crash, an object or a check that cannot read the unit's objects) is reported with its
reason and fix, on the terminal, in the report's ``errors`` and in ``errors.jsonl``
(``--out``), and the others go on; it is not in ``results.jsonl``, so ``--resume`` tries
it again. The exit status is 0 when any unit gave a row; when none did, it is the error
of a single unit (status 2), or for several a one-paragraph error naming the first. A
model's backend failing still ends the run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from llm_compiler.autotune.jobs import TuneSettings
from llm_compiler.cli.evaluate_tasks import add_parsers as add_task_parsers
from llm_compiler.cli.options import (
    add_execution_options,
    add_model_options,
    add_objective_option,
    add_program_arguments,
    make_compiler,
    make_executor,
    model_from_args,
    objective_from,
    program_set,
    run_dir,
)
from llm_compiler.core.objective import DEFAULT_OBJECTIVE
from llm_compiler.errors import InvalidInput
from llm_compiler.evaluation.figures import summarize
from llm_compiler.evaluation.flag_tuning import FlagTuningHarness, system_kind
from llm_compiler.evaluation.results import Failure, Row
from llm_compiler.files import RunDir, atomic_write_text
from llm_compiler.models.optimize import FLAG_TUNING_BUDGET, OptimizeSettings
from llm_compiler.predictor.search import make_search
from llm_compiler.selection import make_gate

EXAMPLES = """examples:
  llm-compiler evaluate flag-tuning examples/ --system oz --system tune:100 --out runs/eval
  llm-compiler evaluate flag-tuning examples/ --system oz --system gcc-os --system gcc-os-lto --out runs/gcc
  llm-compiler evaluate flag-tuning examples/ --system tune:100 --system tune:100+frames --system gcc-os
  llm-compiler evaluate flag-tuning 'corpus:~/.local/share/llm-compiler/corpus?split=test&limit=50' \\
      --system oz --system tune:100 --system hf:facebook/llm-compiler-7b-ftd --out runs/eval --resume
  llm-compiler evaluate disassembly examples/ --model gguf:llm-compiler-7b-ftd.Q4_K_M.gguf --out runs/dis
  llm-compiler evaluate emulation data/emu/test/shard-00000.jsonl --model hf:facebook/llm-compiler-7b
  llm-compiler evaluate perplexity data/flags --split test --model hf:facebook/llm-compiler-7b-ftd
  llm-compiler evaluate compare runs/eval runs/eval-old
"""

RESULTS, REPORT_JSON, REPORT_MD, REPORT_HTML = "results.jsonl", "report.json", "report.md", "report.html"
ERRORS = "errors.jsonl"


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="the paper's tables for models, searches and baselines, as reports",
        description=(
            "Flag tuning, disassembly, compiler emulation and perplexity measured as LLM Compiler measures "
            "them, for any model, the autotuner or a baseline, on any program set. --out DIR writes "
            f"{RESULTS} (one row per unit and system, as each is done; --resume continues a killed run), "
            f"{REPORT_JSON}, {REPORT_MD} and a self-contained {REPORT_HTML} with plots; flag-tuning also "
            f"writes {ERRORS}, the units a system could not be run on, with the reason."
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
            "budget N), builtin[:k=N], common:N, random:N, local:N, a model spec, or gcc-os and "
            "gcc-os-lto (GCC's size for the same unit, gcc -Os and gcc -Os -flto, as the reference a "
            "user could switch to; a corpus keeps the GCC source of units added with GCC installed). "
            "SYSTEM+frames (tune:100+frames) applies what `llm-compiler cc` keeps besides the list: frame "
            "pointers in the functions whose unwind tables they shrink, checked as any object. "
            "Every list is measured and validated before it counts as an improvement; gains found but "
            "not validated are reported apart. Reports show each system's bytes per section "
            "(.text, .eh_frame, .rodata, .data, other)."
        ),
    )
    add_program_arguments(flags)
    flags.add_argument(
        "--system",
        action="append",
        required=True,
        metavar="SYSTEM",
        help="oz, o3, o2, os, passes:PIPELINE, tune:N, builtin, common:N, random:N, local:N, gcc-os, "
        "gcc-os-lto or a model spec, each of lists also as SYSTEM+frames (repeatable)",
    )
    flags.add_argument(
        "--suite", action="append", default=[], metavar="NAME", help="PassListEval suites (default: builtin)"
    )
    flags.add_argument("--seed", type=int, default=0, help="the autotuner's seed (default: 0)")
    add_objective_option(flags)
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
    objective = objective_from(args)
    if objective is not DEFAULT_OBJECTIVE:  # only another objective is named: older runs resume
        identity["objective"] = objective.value
    out = run_dir(args, identity)
    rows = [Row.from_json(r) for r in out.records()] if out else []
    done = {(row.unit, row.system) for row in rows}
    gate = make_gate(compiler, args.suite)
    tune_settings = TuneSettings(
        seed=args.seed,
        llvm_bin=str(compiler.toolchain.bin_dir),
        timeout=args.timeout,
        engine=compiler.engine,
        suites=tuple(args.suite) or ("builtin",),
        proposer=make_search(None, compiler, args.seed),
        objective=objective,
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
        compiler,
        gate,
        tune_settings,
        optimize_settings,
        load,
        executor,
        out.path if out else None,
        max(1, args.jobs),
    )
    harness.rows.update({(row.system, row.unit): row for row in rows})  # SYSTEM+frames resumes from them
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    failures: list[Failure] = []
    if out is not None:  # the units of an earlier run's errors are tried again: this run says how they fare
        (out.path / ERRORS).unlink(missing_ok=True)
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            for system in args.system:
                todo = [source for source in sources if (source.name, system) not in done]
                task = progress.add_task(system, total=len(sources), completed=len(sources) - len(todo))
                for outcome in harness.run(system, todo) if todo else ():
                    if isinstance(outcome, Failure):
                        failures.append(outcome)
                        progress.console.print(
                            f"{outcome.unit} ({outcome.system}): {outcome.error}",
                            highlight=False,
                            markup=False,
                            soft_wrap=True,
                        )
                        if out is not None:
                            out.write_text(ERRORS, "".join(json.dumps(f.to_json()) + "\n" for f in failures))
                    else:
                        if out is not None:
                            out.append(outcome.to_json())
                        rows.append(outcome)
                    progress.advance(task)
    finally:
        executor.close()
    if failures and not rows:
        units = {failure.unit for failure in failures}
        if len(units) == 1 and failures[0].exception is not None:
            raise failures[0].exception  # one unit: its own error, as measure and optimize give it
        raise InvalidInput(
            f"None of the {len(units)} units could be evaluated; the first: {failures[0].error}"
        )
    summary = summarize(
        rows,
        llvm_version=compiler.llvm_version,
        programs=" ".join(args.programs),
        settings=identity,
        failures=failures,
    )
    write_reports(out, summary, [row.to_json() for row in rows], args.json)
    if failures:
        console.print(
            f"{len(failures)} (unit, system) pairs could not be evaluated (reasons above"
            + (f" and in {out.path / ERRORS})" if out is not None else ")"),
            highlight=False,
            soft_wrap=True,
        )
    return 0


def write_reports(
    out: RunDir | None, summary: dict[str, Any], rows: list[dict[str, Any]], as_json: bool
) -> None:
    """report.json, report.md and report.html in ``out``; the summary on stdout."""
    from llm_compiler.evaluation import report

    if out is not None:
        out.write_text(REPORT_JSON, json.dumps(summary, indent=2) + "\n")
        written = report.write_reports(out.path, summary, rows)
        Console(stderr=True).print(f"wrote {', '.join(map(str, written))}", highlight=False)
    sys.stdout.write(json.dumps(summary) + "\n" if as_json else report.markdown(summary))


def run_compare(args: argparse.Namespace) -> int:
    from llm_compiler.evaluation import report

    runs = [(name, report.load_run(Path(name))) for name in args.runs]
    sys.stdout.write(report.compare(runs))
    if args.html:
        atomic_write_text(Path(args.html), report.compare_html(runs))
    return 0
