"""``llm-compiler gym``: the pass-ordering environment's baselines and leaderboard.

``gym eval AGENT --dataset TARGET`` runs an agent (``random``, ``greedy``, ``local`` or
``ppo``) on every benchmark of a dataset and prints the leaderboard table
(:mod:`llm_compiler.gym.leaderboard`); ``gym train-ppo --dataset TARGET`` trains the PPO
agent (:mod:`llm_compiler.gym.ppo`). gymnasium (and stable-baselines3 for PPO) are
imported only when a gym command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from llm_compiler.cli.options import make_compiler
from llm_compiler.errors import InvalidInput

EXAMPLES = """examples:
  llm-compiler gym eval random --dataset examples/ --steps 20
  llm-compiler gym eval greedy --dataset 'corpus:CORPUS?split=test&kind=unit&limit=24' --reward BinarySizeOz
  llm-compiler gym train-ppo --dataset 'corpus:CORPUS?split=train&kind=unit' --seconds 300 --out ppo.zip
  llm-compiler gym eval ppo --model ppo.zip --dataset 'corpus:CORPUS?split=test&kind=unit&limit=24'
"""

AGENTS = ("random", "greedy", "local", "ppo")


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "gym",
        help="the pass-ordering environment: baselines, leaderboard, PPO training",
        description="Run the Gymnasium pass-ordering environment's agents on a dataset.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="gym_action", metavar="ACTION", required=True)
    shared = argparse.ArgumentParser(add_help=False)
    shared.add_argument(
        "--dataset",
        required=True,
        metavar="TARGET",
        help="builtin, or a program set: a folder, compile_commands.json, corpus:DIR?split=test...",
    )
    shared.add_argument(
        "--reward",
        default="IrInstructionCountOz",
        metavar="SPACE",
        help="the reward space, whose metric the agents minimize (default: IrInstructionCountOz)",
    )
    shared.add_argument("--steps", type=int, default=45, metavar="N", help="actions an episode (default: 45)")
    shared.add_argument("--seed", type=int, default=0, metavar="N", help="seed (default: 0)")
    shared.add_argument("--limit", type=int, metavar="N", help="at most N benchmarks")
    evaluate = actions.add_parser(
        "eval", parents=[common, shared], help="an agent on every benchmark, and the leaderboard table"
    )
    evaluate.add_argument("agent", choices=AGENTS, help="the agent")
    evaluate.add_argument(
        "--budget", type=int, default=100, metavar="N", help="local search's pipelines (default: 100)"
    )
    evaluate.add_argument(
        "--model", type=Path, metavar="ZIP", help="the trained PPO model (gym train-ppo --out)"
    )
    evaluate.add_argument("--out", type=Path, metavar="DIR", help="results folder (default: runs/gym-AGENT)")
    evaluate.add_argument("--resume", action="store_true", help="continue the run in --out")
    evaluate.set_defaults(run=run_eval)
    train = actions.add_parser("train-ppo", parents=[common, shared], help="train the PPO agent")
    train.add_argument(
        "--seconds", type=float, default=300.0, metavar="S", help="wall-clock budget (default: 300)"
    )
    train.add_argument("--out", type=Path, required=True, metavar="ZIP", help="where the model goes")
    train.set_defaults(run=run_train)


def _uris(args: argparse.Namespace) -> list[str]:
    from llm_compiler.gym.benchmarks import datasets

    found = datasets([] if args.dataset == "builtin" else [args.dataset])
    uris = list(found[args.dataset].benchmark_uris())
    if args.limit is not None:
        if args.limit < 1:
            raise InvalidInput(f"--limit must be at least 1, not {args.limit}.")
        uris = uris[: args.limit]
    if not uris:
        raise InvalidInput(f"{args.dataset}: no benchmark there.")
    return uris


def _env(args: argparse.Namespace, observation: str) -> Any:
    from llm_compiler.gym.env import PassOrderingEnv

    return PassOrderingEnv(
        observation_space=observation, reward_space=args.reward, compiler=make_compiler(args)
    )


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_eval(args: argparse.Namespace) -> int:
    from llm_compiler.gym.baselines import make_agent
    from llm_compiler.gym.leaderboard import HEADERS, evaluate_agent, summary, table_rows

    uris = _uris(args)
    if args.agent == "ppo":
        from llm_compiler.gym.ppo import OBSERVATION, PpoAgent

        if args.model is None or not args.model.is_file():
            raise InvalidInput("gym eval ppo needs --model ZIP, a model that gym train-ppo wrote.")
        agent: Any = PpoAgent(args.model, args.steps)
        env = _env(args, OBSERVATION)
    else:
        agent = make_agent(args.agent, steps=args.steps, budget=args.budget, seed=args.seed)
        env = _env(args, "IrInstructionCount")
    identity = {
        "agent": args.agent,
        "dataset": args.dataset,
        "reward": args.reward,
        "steps": args.steps,
        "budget": args.budget,
        "seed": args.seed,
        "model": str(args.model) if args.model else None,
        "llvm": env.compiler.llvm_version,
    }
    out = args.out or Path("runs") / f"gym-{args.agent}"
    try:
        rows = evaluate_agent(
            agent, env, uris, out, identity=identity, resume=args.resume, progress=_progress
        )
    finally:
        env.close()
        env.compiler.close()
    table = Table(title=f"{args.dataset}, {args.reward}, LLVM {identity['llvm']}")
    for header in HEADERS:
        table.add_column(header, justify="left" if header == "agent" else "right")
    for cells in table_rows([summary(rows)]):
        table.add_row(*cells)
    Console(width=max(100, Console().width)).print(table)
    print(f"rows: {out / 'results.jsonl'}")
    return 0 if any("error" not in row for row in rows) else 1


def run_train(args: argparse.Namespace) -> int:
    from llm_compiler.gym.ppo import OBSERVATION, train_ppo

    uris = _uris(args)
    env = _env(args, OBSERVATION)
    try:
        done = train_ppo(env, uris, args.out, seconds=args.seconds, steps=args.steps, seed=args.seed)
    finally:
        env.close()
        env.compiler.close()
    steps, seconds = done["env_steps"], done["seconds"]
    print(f"trained on {len(uris)} benchmarks: {steps} env steps in {seconds} s -> {args.out}")
    return 0
