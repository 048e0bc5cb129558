"""``llm-compiler evaluate disassembly | emulation | perplexity``: the other tasks' scores."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from typing import Any

from llm_compiler.cli.options import (
    add_model_options,
    add_program_arguments,
    make_compiler,
    model_from_args,
    run_dir,
)
from llm_compiler.evaluation.disassembly import disassembly_rows, summarize_disassembly
from llm_compiler.evaluation.emulation import emulation_rows, summarize_emulation
from llm_compiler.evaluation.perplexity import dataset_samples, evaluate_perplexity
from llm_compiler.models.request import PROMPT_BUDGET
from llm_compiler.tasks.prompts import EmulationTarget, parse_emulation_prompt


def add_parsers(tasks: Any, common: argparse.ArgumentParser, add_output: Callable[[Any], None]) -> None:
    """The three subcommands, under ``evaluate``."""
    dis = tasks.add_parser(
        "disassembly",
        parents=[common],
        help="round trips, BLEU and exact match of a model's lifts of -Oz assembly",
        description="Each unit is compiled with -Oz to IR and assembly; the model lifts the assembly back.",
    )
    add_program_arguments(dis)
    add_model_options(dis)
    dis.add_argument(
        "--budget", type=int, default=8192, metavar="TOKENS", help="longest prompt (default: 8,192)"
    )
    dis.add_argument("--max-tokens", type=int, default=8192, metavar="N", help="new tokens (default: 8,192)")
    add_output(dis)
    dis.set_defaults(run=run_disassembly)
    emu = tasks.add_parser(
        "emulation",
        parents=[common],
        help="compile rate, exact match, BLEU and size errors of a model's emulation answers",
        description="Scores the model on samples made by `llm-compiler data emulation`.",
    )
    emu.add_argument("dataset", metavar="DATASET", help="a dataset folder, one of its splits, or a shard")
    emu.add_argument("--split", default="test", help="the split of a dataset folder (default: test)")
    emu.add_argument("--limit", type=int, metavar="N", help="at most N samples")
    add_model_options(emu)
    emu.add_argument(
        "--budget",
        type=int,
        default=PROMPT_BUDGET,
        metavar="TOKENS",
        help=f"longest prompt (default: {PROMPT_BUDGET:,})",
    )
    emu.add_argument(
        "--max-tokens", type=int, metavar="N", help="new tokens (default: what the context leaves)"
    )
    add_output(emu)
    emu.set_defaults(run=run_emulation)
    ppl = tasks.add_parser(
        "perplexity",
        help="next-token perplexity of an hf: model on a dataset split",
        description="exp(mean negative log-likelihood) of each sample's prompt and answer.",
    )
    ppl.add_argument("dataset", metavar="DATASET", help="a dataset folder, one of its splits, or a shard")
    ppl.add_argument("--split", default="test", help="the split (default: test)")
    ppl.add_argument("--limit", type=int, metavar="N", help="at most N samples")
    add_model_options(ppl)
    ppl.add_argument("--max-tokens", type=int, metavar="N", help="window length (default: the context)")
    add_output(ppl)
    ppl.set_defaults(run=run_perplexity, verbose=0, debug=False)


def _run(
    args: argparse.Namespace,
    task: str,
    key: Callable[[dict[str, Any]], tuple[str, str]],
    rows_of: Callable[[Any, set[tuple[str, str]]], Iterable[dict[str, Any]]],
    summarize: Callable[[list[dict[str, Any]]], dict[str, Any]],
    identity: dict[str, Any],
) -> int:
    out = run_dir(args, {"task": task, "model": args.model, **identity})
    rows = out.records() if out else []
    done = {key(row) for row in rows}
    with model_from_args(args) as model:
        for row in rows_of(model, done):
            if out is not None:
                out.append(row)
            rows.append(row)
    summary = summarize(rows)
    if out is not None:
        out.write_text("report.json", json.dumps(summary, indent=2) + "\n")
        out.write_text("report.md", _markdown(summary))
    sys.stdout.write(json.dumps(summary) + "\n" if args.json else _markdown(summary))
    return 0


def run_disassembly(args: argparse.Namespace) -> int:
    from llm_compiler.cli.options import program_set

    compiler = make_compiler(args)
    sources = list(program_set(args))

    def rows_of(model: Any, done: set[tuple[str, str]]) -> Iterable[dict[str, Any]]:
        todo = [source for source in sources if (source.name, model.spec) not in done]
        return disassembly_rows(
            compiler,
            model,
            todo,
            samples=args.samples,
            temperature=args.temperature,
            seed=args.model_seed,
            budget=args.budget,
            max_tokens=args.max_tokens,
        )

    identity = {"programs": args.programs, "samples": args.samples, "temperature": args.temperature}
    return _run(
        args, "disassembly", lambda r: (r["unit"], r["system"]), rows_of, summarize_disassembly, identity
    )


def _sample_id(record: dict[str, Any]) -> str:
    target = parse_emulation_prompt(str(record["prompt"])).target
    name = "ir" if target is EmulationTarget.IR else "asm"
    return f"{record.get('program', '-')}:{record.get('index', 0)}:{name}"


def run_emulation(args: argparse.Namespace) -> int:
    compiler = make_compiler(args)

    def rows_of(model: Any, done: set[tuple[str, str]]) -> Iterable[dict[str, Any]]:
        records = [
            record
            for record in dataset_samples(args.dataset, args.split, task="emulation", limit=args.limit)
            if (_sample_id(record), model.spec) not in done
        ]
        return emulation_rows(
            compiler,
            model,
            records,
            temperature=args.temperature,
            seed=args.model_seed,
            budget=args.budget,
            max_tokens=args.max_tokens,
        )

    identity = {"dataset": args.dataset, "split": args.split, "limit": args.limit}
    return _run(
        args, "emulation", lambda r: (r["sample"], r["system"]), rows_of, summarize_emulation, identity
    )


def run_perplexity(args: argparse.Namespace) -> int:
    out = run_dir(
        args,
        {
            "task": "perplexity",
            "model": args.model,
            "dataset": args.dataset,
            "split": args.split,
            "limit": args.limit,
        },
    )
    with model_from_args(args) as model:
        rows, summary = evaluate_perplexity(
            model, args.dataset, args.split, max_tokens=args.max_tokens, limit=args.limit
        )
    if out is not None:
        out.write_text("results.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
        out.write_text("report.json", json.dumps(summary, indent=2) + "\n")
        out.write_text("report.md", _markdown(summary))
    sys.stdout.write(json.dumps(summary) + "\n" if args.json else _markdown(summary))
    return 0


def _markdown(summary: dict[str, Any]) -> str:
    """One table of the summary's figures per system (and the paper's, where it gives them)."""
    systems = summary.get("systems", {})
    keys = [
        k for k in next(iter(systems.values()), {}) if not isinstance(next(iter(systems.values()))[k], dict)
    ]
    lines = [
        f"# {summary.get('task', 'evaluation')}",
        "",
        "| system | " + " | ".join(keys) + " |",
        "|---|" + "---:|" * len(keys),
    ]
    for name, figures in systems.items():
        lines.append(f"| {name} | " + " | ".join(_cell(figures.get(k)) for k in keys) + " |")
    paper = summary.get("paper")
    if paper:
        lines += [
            "",
            "Published figures (paper: LLVM 17, MiBench; for orientation, not a comparison):",
            "",
            "```",
            json.dumps(paper, indent=2),
            "```",
        ]
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
