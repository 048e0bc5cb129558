"""``llm-compiler optimize``: a model's pass lists, measured and validated, or -Oz.

A unit that cannot be optimized (IR this LLVM cannot read, a crash, an object or a
check that cannot read the unit's objects) is reported with its reason, in the table,
as a JSON record with ``error`` (``--json``) and in ``errors.jsonl`` (``--out``), and
the others go on; it is not in ``results.jsonl``, so ``--resume`` tries it again. The
exit status is 0 when any unit was optimized; when none was, it is the error of a
single unit (status 2), or for several a one-paragraph error naming the first. A
model's backend failing (``ModelError``) still ends the run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from llm_compiler.cli.options import (
    add_model_options,
    add_objective_option,
    add_program_arguments,
    make_compiler,
    model_from_args,
    objective_from,
    program_set,
    run_dir,
)
from llm_compiler.cli.tables import results_table
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.metrics import gains_text
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import Program
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.errors import InvalidInput, LlmCompilerError, reason_of
from llm_compiler.files import RunDir, atomic_write_bytes
from llm_compiler.models.base import ModelError
from llm_compiler.models.optimize import (
    FLAG_TUNING_BUDGET,
    ListOptimizer,
    ModelOptimizer,
    OptimizeSettings,
    UnitResult,
)
from llm_compiler.models.proposed import proposer_optimizer
from llm_compiler.models.registry import parse_spec as parse_model_spec
from llm_compiler.selection import Policy, make_gate
from llm_compiler.selection.registry import check_spec, is_proposer_spec

EXAMPLES = """examples:
  llm-compiler optimize examples/ --out results/            # the built-in predictor (no GPU, no download)
  llm-compiler optimize src/ --model builtin:k=3 --out results/   # measure its top 3 lists only
  llm-compiler optimize src/ --model builtin:my-ranker/ranker.json  # a ranker from `predictor train`
  llm-compiler optimize examples/crc32.c --model hf:facebook/llm-compiler-7b-ftd -o crc32.o
  llm-compiler optimize src/ --model gguf:llm-compiler-7b-ftd.Q4_K_M.gguf --out results/
  llm-compiler optimize src/ --model openai:http://127.0.0.1:8000#facebook/llm-compiler-13b-ftd \\
      --samples 8 --temperature 0.8 --out results/
  llm-compiler optimize src/ --model replay:results/results.jsonl --out rescored/   # re-score answers
"""

EMITS = {"obj": ".o", "ir": ".ll", "asm": ".s"}
RESULTS = "results.jsonl"
ERRORS = "errors.jsonl"


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "optimize",
        parents=[common],
        help="pass lists from the built-in predictor or a model; keep the smallest validated result, or -Oz",
        description=(
            "LLM Compiler's flag tuning, made safe. Without --model, the built-in predictor ranks its "
            "candidate lists for each unit and its first ones (at most 10; builtin:k=N: exactly N) are "
            "measured beside -Oz and validated. With a model: the flag-tuning prompt, the model's "
            "answers (generation stops at the first <code> unless --full-answer), each list read "
            "leniently, mapped from the model's LLVM 17 where sound, checked by the pass-list gate, "
            "measured beside -Oz, and validated as tune validates (the target's own link, PassListEval "
            "on the suites, a runnable target's own run, --check). The smallest validated result is "
            "kept; otherwise -Oz, with the reason. No result is ever larger than -Oz."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_program_arguments(parser)
    add_model_options(
        parser,
        required=False,
        default_help="builtin (default: the built-in predictor; builtin:PATH, builtin:k=N, builtin:max=N), ",
    )
    group = parser.add_argument_group("answers and checks")
    group.add_argument(
        "--full-answer",
        action="store_true",
        help="generate the optimized IR after the list too (slower; the list is all that is used)",
    )
    group.add_argument(
        "--max-tokens",
        type=int,
        default=512,
        help="new tokens per answer without --full-answer (default: 512)",
    )
    group.add_argument(
        "--budget",
        type=int,
        default=FLAG_TUNING_BUDGET,
        metavar="TOKENS",
        help=f"longest prompt sent; longer units keep -Oz (default: {FLAG_TUNING_BUDGET:,})",
    )
    group.add_argument(
        "--from-llvm",
        type=int,
        default=17,
        metavar="N",
        help="the LLVM whose pass names the model writes (default: 17, the released models')",
    )
    group.add_argument(
        "--suite",
        action="append",
        default=[],
        metavar="NAME",
        help="PassListEval suite a list must pass: builtin (default), csmith[:N], humaneval-x:PATH",
    )
    group.add_argument("--check", metavar="CMD", help="shell command a list must pass (as tune's --check)")
    add_objective_option(group)
    out = parser.add_argument_group("output")
    out.add_argument("-o", "--output", metavar="FILE", help="the kept result of the one unit given")
    out.add_argument(
        "--emit", choices=sorted(EMITS), default="obj", help="what -o and --out write: obj (default), ir, asm"
    )
    out.add_argument(
        "--out",
        metavar="DIR",
        help=f"write {RESULTS} (one record per unit, as it is done), settings.json, each kept result and "
        f"{ERRORS} (the units that could not be optimized, with the reason)",
    )
    out.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out: units already there are kept, the rest optimized (same settings)",
    )
    out.add_argument("--json", action="store_true", help="print each unit's record as JSON on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    args.model = args.model or "builtin"
    # A misspelt or malformed spec is refused before any unit is loaded.
    if is_proposer_spec(args.model):
        check_spec(args.model)
    else:
        parse_model_spec(args.model)
    objective = objective_from(args)
    compiler = make_compiler(args)
    sources = list(program_set(args))
    if not sources:
        raise InvalidInput(f"{' '.join(args.programs)}: no programs selected.")
    if args.output and len(sources) != 1:
        raise InvalidInput(f"-o takes one unit and {len(sources)} were given; use --out DIR for several.")
    settings = OptimizeSettings(
        samples=args.samples,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        full_answer=args.full_answer,
        budget=args.budget,
        seed=args.model_seed,
        source_llvm=args.from_llvm,
    )
    identity = {
        **_identity(settings),
        "model": args.model,
        "suites": args.suite or ["builtin"],
        "check": args.check,
    }
    if objective is not DEFAULT_OBJECTIVE:  # only another objective is named: older runs resume
        identity["objective"] = objective.value
    folder = run_dir(args, identity)
    out = folder.path if folder else None
    done = {record["unit"]: record for record in folder.records()} if folder else {}
    todo = [source for source in sources if source.name not in done]
    console = Console(stderr=True)
    console.print(
        f"optimize {len(sources)} units with {args.model}; LLVM {compiler.llvm_version} "
        f"({compiler.toolchain.bin_dir}), {compiler.engine_note}",
        highlight=False,
        markup=False,
    )
    if done:
        console.print(
            f"{len(sources) - len(todo)} units already in {out}; optimizing {len(todo)}", highlight=False
        )
    results: list[UnitResult | dict[str, Any]] = [done[s.name] for s in sources if s.name in done]
    if todo:
        gate = make_gate(compiler, args.suite, args.check)
        jobs = max(1, args.jobs)
        if is_proposer_spec(args.model):
            optimizer: ListOptimizer = proposer_optimizer(
                compiler, gate, args.model, jobs, objective=objective
            )
            results += _run(optimizer, todo, compiler, args, folder, console)
        else:
            with model_from_args(args) as model:
                policy = Policy(jobs=jobs, objective=objective)
                optimizer = ModelOptimizer(compiler, model, gate, settings, jobs=jobs, policy=policy)
                results += _run(optimizer, todo, compiler, args, folder, console)
    records = [r.to_json() if isinstance(r, UnitResult) else r for r in results]
    failed = [record for record in records if record.get("error")]
    if len(failed) == len(records) == 1:
        raise failed[0]["exception"]  # one unit: its own error, as before
    if not args.json:
        _print(Console(), records, objective)
    if failed and len(failed) == len(records):
        raise InvalidInput(
            f"None of the {len(records)} units could be optimized; the first: " + str(failed[0]["error"])
        )
    return 0


def _identity(settings: OptimizeSettings) -> dict[str, Any]:
    return {
        "samples": settings.samples,
        "temperature": settings.temperature,
        "seed": settings.seed,
        "full_answer": settings.full_answer,
        "max_tokens": settings.max_tokens,
        "budget": settings.budget,
        "from_llvm": settings.source_llvm,
    }


def _run(
    optimizer: ListOptimizer,
    sources: list[ProgramSource],
    compiler: Compiler,
    args: argparse.Namespace,
    folder: RunDir | None,
    console: Console,
) -> list[UnitResult | dict[str, Any]]:
    results: list[UnitResult | dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    programs: dict[str, Program] = {}
    if folder:  # the units of an earlier run's errors are tried again: this run says how they fare
        (folder.path / ERRORS).unlink(missing_ok=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(f"optimize with {optimizer.spec}", total=len(sources))
        for result in _outcomes(optimizer, sources, compiler, programs):
            if isinstance(result, dict):
                failures.append(result)
                if folder:
                    folder.write_text(ERRORS, "".join(json.dumps(f) + "\n" for f in _shown(failures)))
                if args.json:
                    sys.stdout.write(json.dumps(next(_shown([result]))) + "\n")
                    sys.stdout.flush()
                results.append(result)
                progress.advance(task)
                continue
            record = result.to_json()
            target = Path(args.output) if args.output else None
            if folder and not target:
                target = folder.path / (_safe(result.unit) + EMITS[args.emit])
            if target:
                _write(compiler, programs[result.unit], result.chosen, args.emit, target)
            # After the kept result is written: a resumed run never finds a record without it.
            if folder:
                folder.append(record)
            if args.json:
                sys.stdout.write(json.dumps(record) + "\n")
                sys.stdout.flush()
            results.append(result)
            progress.advance(task)
    return results


def _outcomes(
    optimizer: ListOptimizer, sources: list[ProgramSource], compiler: Compiler, programs: dict[str, Program]
) -> Iterator[UnitResult | dict[str, Any]]:
    """Each unit's result, or for a unit that cannot be loaded or optimized a failure
    record (``unit``, ``status: "error"``, ``error``, and the ``exception``), in order.

    Units go to the optimizer a batch at a time, as :meth:`ListOptimizer.run` takes them;
    when a batch stops on a unit, its units not yet done go again one at a time, so the
    failure is pinned on its unit and the others are optimized.
    """
    size = max(1, optimizer.batch_size)
    for start in range(0, len(sources), size):
        batch = []
        for source in sources[start : start + size]:
            try:
                programs[source.name] = programs.get(source.name) or source.load(compiler)
            except LlmCompilerError as error:
                yield _failure(optimizer, source, error)
                continue
            batch.append(source)
        done: set[str] = set()
        try:
            for result in optimizer.run(batch, loaded=programs):
                done.add(result.unit)
                yield result
            continue
        except ModelError:
            raise
        except LlmCompilerError:
            pass  # which unit stopped the batch is found below, one unit at a time
        for source in batch:
            if source.name in done:
                continue
            try:
                yield from optimizer.run([source], loaded=programs)
            except ModelError:
                raise
            except LlmCompilerError as error:
                yield _failure(optimizer, source, error)


def _failure(optimizer: ListOptimizer, source: ProgramSource, error: LlmCompilerError) -> dict[str, Any]:
    return {
        "unit": source.name,
        "model": optimizer.spec,
        "llvm_version": optimizer.compiler.llvm_version,
        "status": "error",
        "error": reason_of(error, 2000),
        "exception": error,
    }


def _shown(failures: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Failure records as written (without the exception object)."""
    for failure in failures:
        yield {key: value for key, value in failure.items() if key != "exception"}


def _write(compiler: Compiler, program: Program, pipeline: str, emit: str, target: Path) -> None:
    """Writes the kept result; an object validation compiled comes from the compiler's cache."""
    passes = compiler.passes(pipeline)
    if emit == "obj":
        data = compiler.object_code(program, passes)[0]
    elif emit == "ir":
        data = compiler.optimize(program, passes).encode()
    else:
        data = compiler.assemble(program, passes).encode()
    atomic_write_bytes(target, data)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name.strip("/")).strip("_")[-120:] or "unit"


def _print(console: Console, everything: list[dict[str, Any]], objective: Objective) -> None:
    records = [record for record in everything if not record.get("error")]
    failed = [record for record in everything if record.get("error")]
    rows = [
        (
            record["unit"],
            str(record["oz_size"]),
            str(record["binary_size"]),
            f"{0.0 - record['improvement']:+.1%}",
            record["chosen"] if not record["fallback"] else f"-Oz: {record['fallback']}",
        )
        for record in records
    ] + [(record["unit"], "-", "-", "-", "error (below)") for record in failed]
    table = results_table(
        f"Pass lists ({objective.description}; -Oz kept when no list validated)",
        "unit", ("-Oz", "kept", "vs -Oz"), "pass list, or why -Oz", rows, console.width,
    )  # fmt: skip
    console.print(table, markup=False)
    for record in records:
        if record["fallback"]:
            console.print(
                f"  {record['unit']}: {record['fallback_detail']}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
    for record in failed:
        console.print(f"  {record['unit']}: {record['error']}", highlight=False, markup=False, soft_wrap=True)
    reasons = Counter(record["fallback"] for record in records if record["fallback"])
    improved = sum(1 for record in records if record["binary_size"] < record["oz_size"])
    console.print(
        gains_text([(record["oz_size"], record["binary_size"]) for record in records], objective)
        + f"; units improved: {improved}/{len(records)}"
        + ("; -Oz kept: " + ", ".join(f"{n} {why}" for why, n in reasons.most_common()) if reasons else "")
        + (f"; {len(failed)} could not be optimized (reasons above)" if failed else ""),
        highlight=False,
        soft_wrap=True,
    )
