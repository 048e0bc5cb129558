"""The pass-ordering environment on the real LLVM: spaces, episodes, records, errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from llm_compiler.core.compiler import Compiler  # noqa: E402
from llm_compiler.errors import InvalidInput, InvalidPassList  # noqa: E402
from llm_compiler.gym import (  # noqa: E402
    ENV_ID,
    OBSERVATION_SPACES,
    REWARD_SPACES,
    EpisodeRecord,
    PassOrderingEnv,
)
from llm_compiler.selection import Verdict  # noqa: E402

EXAMPLES = Path(__file__).parents[2] / "examples"
CRC32 = f"file:{EXAMPLES / 'crc32.c'}"
DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def shared() -> Iterator[Compiler]:
    with Compiler(timeout=120, workers=2) as compiler:
        yield compiler


def make(compiler: Compiler, **options: object) -> PassOrderingEnv:
    return PassOrderingEnv(benchmark=CRC32, compiler=compiler, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", [name for name in OBSERVATION_SPACES if name != "IR2Vec"])
def test_check_env_passes_for_each_observation_space(shared: Compiler, name: str) -> None:
    env = make(shared, observation_space=name)
    check_env(env, skip_render_check=True)
    observation, _ = env.reset()
    assert env.observation_space.contains(observation)


def test_check_env_passes_for_ir2vec(shared: Compiler) -> None:
    pytest.importorskip("ir2vec")
    env = make(shared, observation_space="IR2Vec")
    check_env(env, skip_render_check=True)
    observation, _ = env.reset()
    assert observation.shape == (300,) and np.abs(observation).sum() > 0


@pytest.mark.parametrize("name", list(REWARD_SPACES))
def test_check_env_passes_for_each_reward_space(shared: Compiler, name: str) -> None:
    check_env(make(shared, reward_space=name), skip_render_check=True)


@pytest.mark.parametrize(("reward", "metric"), [("IrInstructionCountOz", "ir"), ("BinarySizeOz", "binary")])
def test_oz_rewards_sum_to_one_at_oz(shared: Compiler, reward: str, metric: str) -> None:
    env = make(shared, reward_space=reward, action_space="text", observation_space="IrInstructionCount")
    env.reset()
    _, first, *_ = env.step("function(sroa)")
    _, second, *_ = env.step("default<Oz>")
    program = env.benchmark.program  # type: ignore[union-attr]
    oz = shared.measure_oz(program)
    assert env.state.cost(metric) == (oz.ir_instructions if metric == "ir" else oz.binary_size)
    # The rewards of an episode that ends at -Oz's cost sum to 1 (sroa then -Oz may not be
    # exactly -Oz's module, but here it is: the sizes were just compared).
    assert first + second == pytest.approx(1.0)


def test_unnormalized_reward_is_the_decrease(shared: Compiler) -> None:
    env = make(shared, reward_space="IrInstructionCount", observation_space="IrInstructionCount")
    observation, _ = env.reset()
    sroa = env.action_names.index("function(sroa)")
    after, reward, terminated, truncated, info = env.step(sroa)
    assert reward == observation[0] - after[0] > 0
    assert (terminated, truncated) == (False, False)
    assert info["pipeline"] == "function(sroa)"


def test_peek_leaves_the_episode_as_it_was(shared: Compiler) -> None:
    env = make(shared, reward_space="BinarySize", observation_space="BinarySize")
    env.reset()
    before = env.state
    reward, state = env.peek(env.action_names.index("function(sroa)"))
    assert env.state == before and env.record.steps == ()
    _, stepped, *_ = env.step(env.action_names.index("function(sroa)"))
    assert stepped == reward and env.state.binary_size == state.binary_size


def test_a_recorded_episode_replays_with_the_same_sizes(shared: Compiler) -> None:
    """The record in data/ was made with Debian's LLVM 19.1.7 on data/crc32.ll (crc32.c's
    unoptimized IR, its file name without a folder, so that its hashes hold anywhere)."""
    data = json.loads((DATA / "crc32-episode.json").read_text())
    if data["llvm_version"] != shared.llvm_version:
        pytest.skip(f"the record is of LLVM {data['llvm_version']}, this is {shared.llvm_version}")
    data["benchmark"] = f"file:{DATA / 'crc32.ll'}"
    record = EpisodeRecord.from_json(data)
    env = PassOrderingEnv(compiler=shared, reward_space="BinarySize", observation_space="BinarySize")
    again = env.replay(record)
    assert again.same_sizes(record)
    assert [s.text for s in again.steps] == [s.text for s in record.steps]
    assert env.pipeline.pipeline == record.pipeline


def test_an_episode_replays_in_a_fresh_environment(shared: Compiler) -> None:
    env = make(shared, reward_space="BinarySizeOz", observation_space="Autophase")
    env.reset(seed=3)
    env.action_space.seed(3)
    for _ in range(12):
        env.step(env.action_space.sample())
    record = EpisodeRecord.from_json(json.loads(json.dumps(env.record.to_json())))
    with Compiler(timeout=120, workers=1) as fresh:
        again = make(fresh, reward_space="BinarySize", observation_space="IrInstructionCount").replay(record)
    assert again.same_sizes(record)
    changed = EpisodeRecord.from_json({**record.to_json(), "steps": [s.__dict__ for s in record.steps[:-1]]})
    assert not again.same_sizes(changed)
    # One opt process per step gives the same sizes; its IR text can differ in the order
    # of "; preds" comments, as each opt run parses the text again (use-list order).
    with Compiler(timeout=120, engine="subprocess") as processes:
        chained = make(processes, reward_space="BinarySize", observation_space="IrInstructionCount").replay(
            record
        )
    sizes = [(s.ir_instructions, s.text, s.data) for s in record.steps]
    assert [(s.ir_instructions, s.text, s.data) for s in chained.steps] == sizes


def test_a_vector_env_of_four_on_the_examples() -> None:
    benchmarks = sorted(EXAMPLES.glob("*.c"))[:4]
    envs = gymnasium.vector.SyncVectorEnv(
        [
            (
                lambda path=path: gymnasium.make(
                    ENV_ID, benchmark=f"file:{path}", observation_space="InstCount"
                )
            )
            for path in benchmarks
        ]
    )
    try:
        observations, infos = envs.reset(seed=0)
        assert observations.shape == (4, 70)
        assert [Path(uri.removeprefix("file:")) for uri in infos["benchmark"]] == benchmarks
        for _ in range(3):
            observations, rewards, terminated, _, infos = envs.step(envs.action_space.sample())
        assert rewards.shape == (4,) and not terminated.any()
    finally:
        envs.close()


def test_text_actions_are_parsed_and_checked(shared: Compiler) -> None:
    env = make(shared, action_space="text", observation_space="IrInstructionCount")
    env.reset()
    env.step("function(sroa),function(instcombine)")
    assert env.pipeline.pipeline == "function(sroa),function(instcombine)"
    with pytest.raises(InvalidPassList, match="no-such-pass"):
        env.step("function(no-such-pass)")
    with pytest.raises(InvalidPassList):
        env.step("sroa; rm -rf /")
    with pytest.raises(InvalidInput, match="pipeline string"):
        env.step(3)
    assert env.pipeline.pipeline == "function(sroa),function(instcombine)"


def test_discrete_actions_outside_the_space_are_refused(shared: Compiler) -> None:
    env = make(shared, observation_space="IrInstructionCount")
    env.reset()
    with pytest.raises(InvalidInput, match="outside the action space"):
        env.step(len(env.action_names))
    with pytest.raises(InvalidInput, match="an int"):
        env.step("function(sroa)")


def test_nested_actions_join_the_last_pass_manager(shared: Compiler) -> None:
    env = make(shared, action_space="nested", observation_space="IrInstructionCount")
    env.reset()
    n = len(env.action_names)
    assert env.action_space.n == 2 * n
    sroa, gvn = env.action_names.index("function(sroa)"), env.action_names.index("function(gvn)")
    env.step(sroa)
    env.step(n + gvn)
    assert env.pipeline.pipeline == "function(sroa,gvn)"
    assert env.record.steps[-1].action == f"{n + gvn}:+function(gvn)"


def test_the_params_space_is_wider(shared: Compiler) -> None:
    paper = make(shared, observation_space="IrInstructionCount")
    params = make(shared, observation_space="IrInstructionCount", action_space="params")
    assert set(paper.action_names) < set(params.action_names)


def test_validate_checks_the_current_pipeline(shared: Compiler) -> None:
    env = make(shared, action_space="text", observation_space="IrInstructionCount")
    env.reset()
    assert env.validate() is Verdict.NOT_CHECKED
    env.step("function(sroa,instcombine<no-verify-fixpoint>,simplifycfg)")
    assert env.validate() is Verdict.VALIDATED


def test_unknown_spaces_and_benchmarks_are_named(shared: Compiler) -> None:
    with pytest.raises(InvalidInput, match=r"observation space 'Nope'.*Autophase"):
        make(shared, observation_space="Nope")
    with pytest.raises(InvalidInput, match="reward space 'Nope'"):
        make(shared, reward_space="Nope")
    with pytest.raises(InvalidInput, match="no such file"):
        make(shared).reset(options={"benchmark": "file:/no/such.c"})
    with pytest.raises(InvalidInput, match="llvm-stress:SEED"):
        make(shared).reset(options={"benchmark": "llvm-stress:x"})
    with pytest.raises(InvalidInput, match="reset\\(\\) before step"):
        make(shared).step(0)


def test_datasets_and_generated_benchmarks(shared: Compiler) -> None:
    env = PassOrderingEnv(compiler=shared, observation_space="IrInstructionCount", datasets=[str(EXAMPLES)])
    assert {"builtin", "csmith", "llvm-stress", str(EXAMPLES)} <= set(env.datasets)
    assert (env.datasets["builtin"].size or 0) > 100 and env.datasets["llvm-stress"].size is None
    examples = list(env.datasets[str(EXAMPLES)].benchmark_uris())
    assert CRC32 in examples
    _, info = env.reset(seed=1, options={"dataset": str(EXAMPLES)})
    assert info["benchmark"] in examples
    _, info = env.reset(options={"benchmark": "llvm-stress:7?size=40"})
    assert info["ir_instructions"] > 40
    first = env.state.ir_hash
    env.reset(options={"benchmark": "llvm-stress:8?size=40"})
    assert env.state.ir_hash != first
    if shutil.which("csmith"):
        _, info = env.reset(options={"benchmark": "csmith:3"})
        assert info["benchmark"] == "csmith:3" and info["ir_instructions"] > 100
    _, info = env.reset(seed=0)  # the default dataset: the built-in suite's programs
    assert info["benchmark"] in list(env.datasets["builtin"].benchmark_uris())


def test_render_names_benchmark_and_pipeline(shared: Compiler) -> None:
    env = make(shared, render_mode="ansi", reward_space="BinarySize", observation_space="BinarySize")
    env.reset()
    env.step(0)
    text = env.render()
    assert text is not None and "crc32.c: 1 steps" in text and env.pipeline.pipeline in text


def test_importing_the_package_and_cli_loads_no_gymnasium() -> None:
    code = (
        "import sys, llm_compiler, llm_compiler.cli.main; "
        "print(sorted({'gymnasium', 'torch', 'stable_baselines3'} & set(sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
