"""``llm-compiler predictor``: train the built-in predictor from tuning runs, or show one."""

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
    make_compiler,
    make_executor,
    objective_from,
)
from llm_compiler.files import atomic_write_text
from llm_compiler.predictor.dataset import CANDIDATES, POOL_SIZE, build_training_data
from llm_compiler.predictor.ranker import fit, load
from llm_compiler.predictor.shipped import ranker_file

EXAMPLES = """examples:
  llm-compiler tune 'corpus:CORPUS?split=train' --budget 100 --out runs/train
  llm-compiler predictor train --tuning runs/train --out my-predictor/
  llm-compiler optimize src/ --model builtin:my-predictor/ranker.json --out results/
  llm-compiler evaluate flag-tuning 'corpus:CORPUS?split=test' --system builtin:my-predictor/ranker.json \\
      --system common:10 --system random:10 --system tune:100 --out runs/eval
  llm-compiler predictor show                      # the shipped predictor's manifest
"""


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "predictor",
        help="train the built-in predictor from tuning runs, or show what one was trained on",
        description=(
            "The built-in predictor ranks a fixed set of candidate pass lists for a unit from its IR "
            "features; optimize measures its top k beside -Oz and validates them. `train` makes one from "
            "tuning runs (`tune --out RUN`): the runs' validated lists, every unit measured under every "
            "candidate, a nearest-neighbour ranker chosen on held-out packages."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    train = actions.add_parser(
        "train", parents=[common], help="train a predictor from tuning runs", epilog=EXAMPLES
    )
    train.add_argument(
        "--tuning", nargs="+", required=True, metavar="RUN", help="tuning runs: `tune --out` folders"
    )
    train.add_argument("--out", required=True, metavar="DIR", help="writes ranker.json and training.json")
    train.add_argument(
        "--pool",
        type=int,
        default=POOL_SIZE,
        metavar="N",
        help=f"lists measured on every unit (default: {POOL_SIZE})",
    )
    train.add_argument(
        "--candidates",
        type=int,
        default=CANDIDATES,
        metavar="K",
        help=f"lists the predictor ranks, chosen from the pool (default: {CANDIDATES})",
    )
    add_objective_option(train)
    add_execution_options(train)
    train.set_defaults(run=run_train)
    show = actions.add_parser("show", parents=[common], help="a predictor's manifest and held-out figures")
    show.add_argument("path", nargs="?", help="a ranker.json (default: the shipped one for the LLVM in use)")
    show.set_defaults(run=run_show)


def run_train(args: argparse.Namespace) -> int:
    objective = objective_from(args)
    compiler = make_compiler(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    console = Console(stderr=True)
    executor = make_executor(args)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("reading the tuning runs", total=None)

            def advance(what: str, done: int, total: int) -> None:
                progress.update(task, description=what, completed=done, total=total)

            data = build_training_data(
                compiler,
                [Path(run) for run in args.tuning],
                pool=args.pool,
                candidates=args.candidates,
                executor=executor,
                progress=advance,
                objective=objective,
            )
            progress.update(task, description="choosing the ranker on held-out packages", total=None)
            ranker = fit(data, compiler)
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
        title="Held-out packages: geomean size reduction vs -Oz of the best of the top k (measured, "
        "before validation)"
    )
    table.add_column("order")
    for k in (1, 3, 10):
        table.add_column(f"k={k}", justify="right")
    names = {
        "predictor": "the predictor",
        "by_frequency": "most often the best (no learning)",
        "by_coverage": "greedy coverage (no learning)",
        "oracle": "the best of all candidates",
    }
    for name, label in names.items():
        figures = held_out.get(name, {})
        table.add_row(label, *(f"{figures.get(f'top_{k}', 0):.2f}%" for k in (1, 3, 10)))
    console.print(table)
    chosen = held_out.get("chosen", {})
    console.print(
        f"chosen on held-out packages: {chosen.get('neighbours')} neighbours, prior {chosen.get('prior')}, "
        f"target {chosen.get('target')}",
        highlight=False,
    )
