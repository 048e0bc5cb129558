"""``llm-compiler predictor``: make its training table, train the built-in predictor, or show one."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from llm_compiler.cli.options import (
    add_execution_options,
    add_objective_option,
    add_program_arguments,
    make_compiler,
    make_executor,
    objective_from,
    program_set,
)
from llm_compiler.errors import InvalidInput
from llm_compiler.files import atomic_write_text
from llm_compiler.predictor.dataset import POOL_SIZE, build_training_data, data_from_table, pool_from_runs
from llm_compiler.predictor.fit import CANDIDATES, fit
from llm_compiler.predictor.ranker import load
from llm_compiler.predictor.shipped import ranker_file, shipped_pool
from llm_compiler.predictor.table import SHARD_SIZE, build_table, read_table

EXAMPLES = """examples:
  llm-compiler tune 'corpus:CORPUS/slice.jsonl?split=train' --budget 100 --out runs/train
  llm-compiler predictor table 'corpus:CORPUS?split=train' --tuning runs/train --shipped --out table/
  llm-compiler predictor train --table table/ --out my-predictor/
  llm-compiler optimize src/ --model builtin:my-predictor/ranker.json --out results/
  llm-compiler evaluate flag-tuning 'corpus:CORPUS?split=test' --system builtin:my-predictor/ranker.json \\
      --system common:10 --system random:10 --system tune:100 --out runs/eval
  llm-compiler predictor show                      # the shipped predictor's manifest
"""


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "predictor",
        help="make the predictor's training table, train the built-in predictor, or show one",
        description=(
            "The built-in predictor ranks a fixed set of candidate pass lists for a unit from its IR "
            "features; optimize measures its first lists beside -Oz and validates them. `table` measures a "
            "pool of lists (tuning runs' validated lists, the shipped rankers' candidates, a file) on every "
            "unit, in shards that resume; `train` chooses candidates and a ranker (boosted trees, ranking "
            "trees, nearest neighbours) on held-out packages."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    table = actions.add_parser(
        "table",
        parents=[common],
        help="measure a pool of lists on every unit: the training table, in shards that resume",
        epilog=EXAMPLES,
    )
    add_program_arguments(table)
    table.add_argument(
        "--out", required=True, metavar="DIR", help="the table's folder (resumed when it exists)"
    )
    table.add_argument(
        "--tuning", nargs="+", default=[], metavar="RUN", help="pool: the lists these runs kept"
    )
    table.add_argument("--lists", metavar="FILE", help="pool: the lists of this file, one per line")
    table.add_argument(
        "--shipped",
        action="store_true",
        help="pool: the candidates of every shipped ranker, adapted to this LLVM",
    )
    table.add_argument(
        "--pool",
        type=int,
        default=POOL_SIZE,
        metavar="N",
        help=f"at most N lists from the runs (default: {POOL_SIZE})",
    )
    table.add_argument(
        "--shard-size",
        type=int,
        default=SHARD_SIZE,
        metavar="N",
        help=f"units per shard (default: {SHARD_SIZE})",
    )
    add_objective_option(table)
    add_execution_options(table)
    table.set_defaults(run=run_table)
    train = actions.add_parser(
        "train", parents=[common], help="train a predictor from a table or tuning runs", epilog=EXAMPLES
    )
    source = train.add_mutually_exclusive_group(required=True)
    source.add_argument("--table", nargs="+", metavar="DIR", help="training tables (`predictor table --out`)")
    source.add_argument("--tuning", nargs="+", metavar="RUN", help="tuning runs: `tune --out` folders")
    train.add_argument("--out", required=True, metavar="DIR", help="writes ranker.json and training.json")
    train.add_argument(
        "--pool",
        type=int,
        default=POOL_SIZE,
        metavar="N",
        help=f"with --tuning: lists measured on every unit (default: {POOL_SIZE})",
    )
    train.add_argument(
        "--candidates",
        type=int,
        default=CANDIDATES,
        metavar="K",
        help=f"lists the predictor ranks, chosen from the pool (default: {CANDIDATES})",
    )
    train.add_argument(
        "--no-boosted", action="store_true", help="try only the learners that need no LightGBM"
    )
    add_objective_option(train)
    add_execution_options(train)
    train.set_defaults(run=run_train)
    show = actions.add_parser("show", parents=[common], help="a predictor's manifest and held-out figures")
    show.add_argument("path", nargs="?", help="a ranker.json (default: the shipped one for the LLVM in use)")
    show.set_defaults(run=run_show)


def _columns() -> tuple[Any, ...]:
    return (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())


def run_table(args: argparse.Namespace) -> int:
    objective = objective_from(args)
    compiler = make_compiler(args)
    sources: dict[str, str] = {}
    if args.lists:
        path = Path(args.lists)
        if not path.is_file():
            raise InvalidInput(f"--lists {path}: no such file (one opt -passes= list per line).")
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                sources.setdefault(line.strip(), str(path))
    if args.tuning:
        for pipeline in pool_from_runs(compiler, [Path(run) for run in args.tuning], args.pool):
            sources.setdefault(pipeline, "tuning")
    if args.shipped:
        for pipeline, origin in shipped_pool(compiler):
            sources.setdefault(pipeline, origin)
    console = Console(stderr=True)
    executor = make_executor(args)
    try:
        with Progress(*_columns(), console=console, transient=True) as progress:
            task = progress.add_task("measuring the pool on every unit", total=None)
            counts = build_table(
                compiler,
                program_set(args),
                Path(args.out),
                list(sources),
                pool_sources=sources,
                shard_size=args.shard_size,
                executor=executor,
                objective=objective,
                progress=lambda done, total: progress.update(task, completed=done, total=total),
            )
    finally:
        executor.close()
    table = read_table(Path(args.out))
    out = Console()
    out.print(
        f"{args.out}: {len(table.units)} units x {len(table.pipelines)} lists in {counts['shards']} shards "
        f"({counts['written']} written now, {counts['skipped']} there already; {counts['failed']} units "
        f"failed and left out); {sum(s['seconds'] for s in table.shards):.0f} s of measuring in all",
        highlight=False,
        soft_wrap=True,
    )
    # A unit that cannot be measured is left out with its reason (in its shard's first line).
    failed = {name: reason for shard in table.shards for name, reason in shard.get("failed", {}).items()}
    for name, reason in sorted(failed.items()):
        out.print(f"  left out {name}: {reason}", highlight=False, markup=False, soft_wrap=True)
    return 1 if failed and not table.units else 0


def run_train(args: argparse.Namespace) -> int:
    objective = objective_from(args)
    compiler = make_compiler(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    console = Console(stderr=True)
    executor = make_executor(args)
    try:
        with Progress(*_columns(), console=console, transient=True) as progress:
            task = progress.add_task("reading the training data", total=None)

            def advance(what: str, done: int, total: int) -> None:
                progress.update(task, description=what, completed=done, total=total)

            if args.table:
                data = data_from_table(compiler, [read_table(Path(path)) for path in args.table], objective)
            else:
                data = build_training_data(
                    compiler,
                    [Path(run) for run in args.tuning],
                    pool=args.pool,
                    candidates=args.pool,
                    executor=executor,
                    progress=advance,
                    objective=objective,
                )
            progress.update(task, description="choosing the ranker on held-out packages", total=None)
            ranker = fit(data, compiler, candidates=args.candidates, boosted=not args.no_boosted)
    finally:
        executor.close()
    text = json.dumps(data.to_json(), sort_keys=True, separators=(",", ":"))
    atomic_write_text(out / "training.json", text + "\n")
    path = ranker.save(out / "ranker.json")
    _print(Console(), ranker.manifest, path)
    return 0


def run_show(args: argparse.Namespace) -> int:
    compiler = make_compiler(args)
    path = Path(args.path) if args.path else ranker_file(compiler)
    ranker = load(path, compiler)
    _print(Console(), ranker.manifest, path)
    return 0


def _print(console: Console, manifest: dict[str, Any], path: Path) -> None:
    training = manifest.get("training", {})
    console.print(
        f"{path} ({path.stat().st_size:,} bytes): LLVM {manifest.get('llvm_version')}, "
        f"features v{manifest.get('feature_version')}, {training.get('units')} units of "
        f"{', '.join(f'{name} {n}' for name, n in training.get('packages', {}).items())}; "
        f"{training.get('candidates')} candidates chosen from {training.get('pool')} lists",
        highlight=False,
        soft_wrap=True,
    )
    held_out = manifest.get("held_out", {})
    table = Table(
        title="Held-out packages: geomean size reduction vs -Oz of the best of the first k lists (measured, "
        "before validation; first: the first list alone)"
    )
    table.add_column("ranker")
    for k in (1, 3, 10):
        table.add_column(f"k={k}", justify="right")
    table.add_column("total bytes k=10", justify="right")
    table.add_column("first", justify="right")
    for name, figures in _learner_rows(held_out):
        table.add_row(
            name + (" (chosen)" if name == held_out.get("chosen") else ""),
            *(f"{figures.get(f'top_{k}', 0):.2f}%" for k in (1, 3, 10)),
            f"{figures.get('total_10', 0):.2f}%" if "total_10" in figures else "",
            f"{figures.get('first', 0):.2f}%" if "first" in figures else "",
        )
    console.print(table)
    adaptive = held_out.get("adaptive") or {}
    if adaptive:
        console.print(
            "adaptive k (stop below a predicted gain): "
            + "; ".join(f"{float(t):g}: {p['lists']} lists, {p['gain']:.2f}%" for t, p in adaptive.items()),
            highlight=False,
            soft_wrap=True,
        )


def _learner_rows(held_out: dict[str, Any]) -> list[tuple[str, dict[str, float]]]:
    """The held-out figures as rows: every learner of a format-2 file, or the first format's four."""
    if "learners" in held_out:
        figures = held_out["learners"]
        shown = [name for name in figures if not name.startswith("neighbours:")]
        neighbours = [name for name in figures if name.startswith("neighbours:")]
        if neighbours:
            best = max(neighbours, key=lambda n: sum(figures[n][f"top_{k}"] for k in (1, 3, 10)))
            shown.append(held_out.get("chosen") if held_out.get("chosen") in neighbours else best)
        return [(name, figures[name]) for name in shown]
    names = {
        "predictor": "the predictor",
        "by_frequency": "frequency",
        "by_coverage": "coverage",
        "oracle": "oracle",
    }
    return [(label, held_out.get(name, {})) for name, label in names.items()]
