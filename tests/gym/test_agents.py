"""The environment's baselines, the leaderboard and ``llm-compiler gym`` on the real LLVM."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("gymnasium")

from llm_compiler.core.compiler import Compiler
from llm_compiler.gym.baselines import GreedyAgent, LocalSearchAgent, RandomAgent, make_agent
from llm_compiler.gym.env import PassOrderingEnv
from llm_compiler.gym.leaderboard import evaluate_agent, summary
from tests.conftest import run_cli

EXAMPLES = Path(__file__).parents[2] / "examples"
CRC32 = f"file:{EXAMPLES / 'crc32.c'}"


@pytest.fixture(scope="module")
def env() -> Iterator[PassOrderingEnv]:
    with Compiler(timeout=120, workers=2) as compiler:
        yield PassOrderingEnv(
            observation_space="IrInstructionCount", reward_space="IrInstructionCountOz", compiler=compiler
        )


@pytest.mark.parametrize(
    "agent", [RandomAgent(steps=15, seed=2), GreedyAgent(steps=4), LocalSearchAgent(budget=20)]
)
def test_an_agents_result_replays(env: PassOrderingEnv, agent: object) -> None:
    result = agent.run(env, CRC32)  # type: ignore[attr-defined]
    assert result.benchmark == CRC32 and result.steps > 0
    env.reset(options={"benchmark": CRC32})
    initial = env.state.ir_instructions
    if result.pipeline:
        # The pipeline, applied as text in a fresh episode, gives the same cost.
        text = PassOrderingEnv(
            observation_space="IrInstructionCount",
            action_space="text",
            compiler=env.compiler,
            benchmark=CRC32,
        )
        text.reset()
        _, reward, *_ = text.step(result.pipeline)
        assert text.state.ir_instructions == result.cost
        assert reward == pytest.approx(result.reward)
    assert result.cost <= initial


def test_greedys_first_step_is_the_best_single_action(env: PassOrderingEnv) -> None:
    result = GreedyAgent(steps=1).run(env, CRC32)
    env.reset(options={"benchmark": CRC32})
    rewards = [env.peek(action)[0] for action in range(int(env.action_space.n))]  # type: ignore[attr-defined]
    assert result.reward == pytest.approx(max(rewards)) and max(rewards) > 0
    assert result.steps == len(rewards)


def test_the_leaderboard_resumes_and_validates(env: PassOrderingEnv, tmp_path: Path) -> None:
    uris = [f"file:{EXAMPLES / name}" for name in ("crc32.c", "bitops.c")]
    agent = make_agent("random", steps=4)
    rows = evaluate_agent(agent, env, uris[:1], tmp_path, identity={"a": 1})
    assert len(rows) == 1 and rows[0]["verdict"] in ("validated", "validation-failure", "not-checked")
    lines: list[str] = []
    rows = evaluate_agent(agent, env, uris, tmp_path, identity={"a": 1}, resume=True, progress=lines.append)
    assert [row["benchmark"] for row in rows] == uris and len(lines) == 1  # the first was not run again
    written = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [row["benchmark"] for row in written] == uris
    figures = summary(rows)
    assert figures["benchmarks"] == 2
    for row in rows:
        assert row["kept"] <= row["oz"]
        assert row["kept"] == (
            row["cost"] if row["verdict"] == "validated" and row["cost"] < row["oz"] else row["oz"]
        )


def test_an_unknown_agent_is_named() -> None:
    with pytest.raises(Exception, match="Unknown agent 'nope'"):
        make_agent("nope")


def test_gym_eval_prints_the_leaderboard(tmp_path: Path) -> None:
    result = run_cli(
        "gym",
        "eval",
        "random",
        "--dataset",
        str(EXAMPLES),
        "--limit",
        "2",
        "--steps",
        "5",
        "--out",
        str(tmp_path / "r"),
    )
    assert result.returncode == 0, result.stderr
    for header in ("agent", "vs -Oz", "kept vs -Oz", "validated", "mean reward"):
        assert header in result.stdout
    assert "random: 2/2" in result.stderr
    again = run_cli(
        "gym", "eval", "random", "--dataset", str(EXAMPLES), "--limit", "2", "--out", str(tmp_path / "r")
    )
    assert again.returncode == 2 and "--resume" in again.stderr


@pytest.mark.slow
def test_ppo_trains_and_runs(tmp_path: Path) -> None:
    pytest.importorskip("stable_baselines3")
    model = tmp_path / "ppo.zip"
    trained = run_cli(
        "gym",
        "train-ppo",
        "--dataset",
        str(EXAMPLES),
        "--limit",
        "2",
        "--seconds",
        "8",
        "--steps",
        "10",
        "--out",
        str(model),
    )
    assert trained.returncode == 0, trained.stderr
    assert model.is_file() and "env steps" in trained.stdout
    ran = run_cli(
        "gym", "eval", "ppo", "--model", str(model), "--dataset", str(EXAMPLES), "--limit", "2",
        "--steps", "5", "--out", str(tmp_path / "p"),
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "ppo" in ran.stdout
