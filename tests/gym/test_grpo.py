"""The GRPO reward on the real LLVM, and TRL's trainer calling it with a tiny model."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.gym.grpo import PassListReward, prompt_rows
from llm_compiler.tasks.prompts import flag_tuning_prompt

EXAMPLES = Path(__file__).parents[2] / "examples"
CRC32 = f"file:{EXAMPLES / 'crc32.c'}"


@pytest.fixture(scope="module")
def reward() -> Iterator[PassListReward]:
    with Compiler(timeout=120, workers=2) as compiler:
        yield PassListReward(compiler)


def answer(pipeline: str) -> str:
    return f"Run opt -passes={pipeline} to reduce the binary size from 10 bytes to 5 bytes:\n\n<code>x</code>"


def test_malformed_and_unusable_answers_get_zero(reward: PassListReward) -> None:
    assert reward.score(CRC32, "") == 0.0
    assert reward.score(CRC32, "I would use -Oz.") == 0.0
    assert reward.score(CRC32, answer("function(no-such-pass)")) == 0.0
    assert reward.score(CRC32, answer("sroa;rm")) == 0.0
    assert reward.score(CRC32, answer("module(default<O0>)")) == 0.0  # larger than -Oz
    assert reward.outcomes["AnswerParseError"] >= 2 and reward.outcomes["not-smaller-than-oz"] == 1


def test_a_validated_list_smaller_than_oz_is_rewarded_by_its_saving(reward: PassListReward) -> None:
    compiler = reward.compiler
    program = compiler.load(EXAMPLES / "crc32.c")
    oz = compiler.measure_oz(program).binary_size
    pipeline = "module(default<Oz>),cgscc(function-attrs),function(instcombine<no-verify-fixpoint>)"
    size = compiler.measure(program, compiler.passes(pipeline)).binary_size
    got = reward.score(CRC32, answer(pipeline))
    if size < oz:
        assert got == pytest.approx((oz - size) / oz) and got > 0
    else:
        assert got == 0.0
    assert reward(["p"], [[{"role": "assistant", "content": answer(pipeline)}]], benchmark=[CRC32]) == [got]


def test_prompt_rows_hold_the_papers_prompt(reward: PassListReward) -> None:
    (row,) = prompt_rows([CRC32], reward.compiler)
    program = reward.compiler.load(EXAMPLES / "crc32.c")
    assert row == {"prompt": flag_tuning_prompt(program.ir), "benchmark": CRC32}


@pytest.mark.slow
def test_trls_grpo_trainer_calls_the_reward(reward: PassListReward, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    trl = pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    tiny_models = pytest.importorskip("tests.models.tiny_models")
    model = tiny_models.hf_model_dir("untrained")
    seen: list[list[float]] = []

    def recorded(
        prompts: list[str], completions: list[str], benchmark: list[str], **kwargs: object
    ) -> list[float]:
        scores = reward(prompts, completions, benchmark=benchmark)
        seen.append(scores)
        return scores

    # Short prompts keep the step fast: the reward reads the benchmark column, not the prompt.
    rows = [{"prompt": f"[INST] optimize {name} [/INST]", "benchmark": f"file:{EXAMPLES / name}"}
            for name in ("crc32.c", "bitops.c")]  # fmt: skip
    fields = trl.GRPOConfig.__dataclass_fields__
    checkpointing = "activation_checkpointing"
    if checkpointing not in fields:
        checkpointing = "gradient_checkpointing"
    config = trl.GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        max_steps=1,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=8,
        use_cpu=True,
        report_to=[],
        logging_steps=1,
        save_strategy="no",
        # Off, named as the installed transformers names it (TRL turns it on otherwise).
        **{checkpointing: False},
    )
    with warnings.catch_warnings():
        # TRL (1.16) reads transformers 5's deprecated ``is_gradient_checkpointing``: theirs to rename.
        warnings.filterwarnings(
            "ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning
        )
        trainer = trl.GRPOTrainer(
            model=str(model),
            reward_funcs=recorded,
            args=config,
            train_dataset=datasets.Dataset.from_list(rows),
        )
        trainer.train()
    assert seen and all(isinstance(score, float) for scores in seen for score in scores)
