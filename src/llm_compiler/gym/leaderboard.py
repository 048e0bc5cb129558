"""A leaderboard of agents on a dataset: each benchmark's result written as it is done.

For every benchmark the agent's best pipeline is measured against -Oz in the reward's
metric (IR instructions, .text bytes, or .text + .data bytes) and validated as any kept
list is (:meth:`PassOrderingEnv.validate`). A row holds the unoptimized, -Oz and agent
costs, the verdict, the env steps and the wall time; rows go to ``results.jsonl`` of the
run folder (:class:`~llm_compiler.files.RunDir`) as they are done, and a resumed run
skips the benchmarks already there.

The table gives, per agent: the geometric mean over benchmarks of the reduction against
-Oz (``1 - cost/Oz``, positive when smaller than -Oz, the sign of the project's other
tables), first of the agent's pipelines as they are, then as the tool would keep them
(a pipeline that fails validation or is not smaller than -Oz counts as -Oz); the mean
of the episode rewards; env steps; and wall time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from llm_compiler.errors import LlmCompilerError, reason_of
from llm_compiler.files import RunDir
from llm_compiler.gym.baselines import Agent
from llm_compiler.gym.env import PassOrderingEnv
from llm_compiler.selection import Verdict


def evaluate_agent(
    agent: Agent,
    env: PassOrderingEnv,
    uris: Iterable[str],
    out: Path,
    *,
    identity: dict[str, Any],
    resume: bool = False,
    progress: Callable[[str], None] = lambda line: None,
) -> list[dict[str, Any]]:
    """Runs ``agent`` on each benchmark of ``uris`` and returns every row (module docstring).

    A benchmark that fails (it does not compile, LLVM crashes on -Oz) is a row with its
    reason, and the others go on.

    Raises:
        InvalidInput: ``out`` holds another run's rows (see :class:`RunDir`).
    """
    run = RunDir(out, identity, resume=resume)
    rows = run.records()
    done = {row["benchmark"] for row in rows}
    uris = [uri for uri in uris if uri not in done]
    for index, uri in enumerate(uris, 1):
        try:
            row = _row(agent, env, uri)
        except LlmCompilerError as error:
            row = {"benchmark": uri, "agent": agent.name, "error": reason_of(error)}
        run.append(row)
        rows.append(row)
        progress(f"{agent.name}: {index}/{len(uris)} {uri}: {_line(row)}")
    return rows


def _row(agent: Agent, env: PassOrderingEnv, uri: str) -> dict[str, Any]:
    result = agent.run(env, uri)
    initial, oz = env.baseline()
    verdict = env.validate(result.pipeline) if result.pipeline else Verdict.NOT_CHECKED
    kept = result.cost if verdict is Verdict.VALIDATED and result.cost < oz else oz
    return {
        **asdict(result),
        "agent": agent.name,
        "metric": env.reward_space.metric,
        "initial": initial,
        "oz": oz,
        "verdict": str(verdict),
        "kept": kept,
    }


def _line(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"failed: {row['error']}"
    return f"{row['cost']} vs -Oz {row['oz']} ({row['verdict']})"


def _reduction(rows: Sequence[dict[str, Any]], key: str) -> float:
    ratios = [row[key] / row["oz"] for row in rows if row["oz"] > 0]
    if not ratios:
        return 0.0
    return 1.0 - math.exp(sum(math.log(max(ratio, 1e-9)) for ratio in ratios) / len(ratios))


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The leaderboard figures of one agent's rows (module docstring)."""
    measured = [row for row in rows if "error" not in row]
    return {
        "agent": rows[0]["agent"] if rows else "",
        "benchmarks": len(measured),
        "failed": len(rows) - len(measured),
        "reduction": _reduction(measured, "cost"),
        "reduction_kept": _reduction(measured, "kept"),
        "validated": sum(row["verdict"] == str(Verdict.VALIDATED) for row in measured),
        "mean_reward": sum(row["reward"] for row in measured) / len(measured) if measured else 0.0,
        "steps": sum(row["steps"] for row in measured),
        "seconds": sum(row["seconds"] for row in measured),
    }


HEADERS = ("agent", "units", "vs -Oz", "kept vs -Oz", "validated", "mean reward", "steps", "seconds")


def table_rows(summaries: Sequence[dict[str, Any]]) -> list[tuple[str, ...]]:
    """The summaries as table cells, in :data:`HEADERS`'s order."""
    return [
        (
            s["agent"],
            f"{s['benchmarks']}" + (f" ({s['failed']} failed)" if s["failed"] else ""),
            f"{100 * s['reduction']:+.2f}%",
            f"{100 * s['reduction_kept']:+.2f}%",
            f"{s['validated']}",
            f"{s['mean_reward']:.3f}",
            f"{s['steps']}",
            f"{s['seconds']:.0f}",
        )
        for s in summaries
    ]
