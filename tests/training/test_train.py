"""``llm-compiler train`` end to end on the CPU: a tiny Llama with Code Llama's real tokenizer, TRL, peft.

The data are flag tuning samples in the released prompt format on the IR of small C
functions (a pass-list answer with its code, an "already optimal" answer), written as
``llm-compiler data`` writes a dataset, with one test-split sample for the evaluation
that follows training.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")

from llm_compiler.cli.main import main
from llm_compiler.errors import InvalidInput, TrainingError
from llm_compiler.models.base import GenerationRequest
from llm_compiler.models.registry import load_model
from llm_compiler.tasks.answers import parse_flag_tuning_head
from llm_compiler.training.callbacks import read_log
from llm_compiler.training.data import DataSource, read_mixture, tokenize
from llm_compiler.training.presets import PRESETS, batch_layout
from llm_compiler.training.trainer import TrainSettings, latest_checkpoint, load_tokenizer, train
from tests.models.tiny_models import FLAG_TUNING_PROMPT, tokenizer_dir
from tests.models.tiny_samples import _POPCOUNT_OPTIMIZED_IR

_ADD_IR = """\
define i32 @add(i32 %0, i32 %1) {
  %3 = alloca i32, align 4
  %4 = alloca i32, align 4
  store i32 %0, ptr %3, align 4
  store i32 %1, ptr %4, align 4
  %5 = load i32, ptr %3, align 4
  %6 = load i32, ptr %4, align 4
  %7 = add nsw i32 %5, %6
  ret i32 %7
}
"""
_ADD_OPTIMIZED_IR = """\
define i32 @add(i32 %0, i32 %1) {
  %3 = add nsw i32 %1, %0
  ret i32 %3
}
"""
TRAIN = [
    (
        FLAG_TUNING_PROMPT.format(ir=_ADD_IR),
        "Run opt -p 'module(function(sroa,instcombine))' to reduce the binary size from 72 bytes to 65 "
        f"bytes:\n\n<code>{_ADD_OPTIMIZED_IR}</code>",
    ),
    (
        FLAG_TUNING_PROMPT.format(ir=_POPCOUNT_OPTIMIZED_IR),
        "The input code is already optimal: its binary size is 81 bytes.",
    ),
]
TEST = [
    (
        FLAG_TUNING_PROMPT.format(ir=_ADD_OPTIMIZED_IR),
        "The input code is already optimal: its binary size is 65 bytes.",
    )
]


def write_dataset(root: Path, splits: dict[str, list[tuple[str, str]]], task: str = "flag-tuning") -> Path:
    """A dataset folder laid out as ``llm-compiler data`` writes one."""
    for split, samples in splits.items():
        (root / split).mkdir(parents=True, exist_ok=True)
        lines = [
            json.dumps(
                {"task": task, "program": f"{split}{i}", "split": split, "prompt": prompt, "answer": answer}
            )
            for i, (prompt, answer) in enumerate(samples)
        ]
        (root / split / "shard-00000.jsonl").write_text("\n".join(lines) + "\n")
    return root


def tiny_settings(data: Path, out: Path, **changes: Any) -> TrainSettings:
    preset = PRESETS["small"].with_overrides(
        learning_rate=1e-2, warmup_steps=5, max_length=512, batch_tokens=512, weight_decay=0.0
    )
    values: dict[str, Any] = {
        "data": (DataSource(data),),
        "out": out,
        "init": "llama:tiny",
        "tokenizer": str(tokenizer_dir()),
        "preset": preset,
        "max_steps": 20,
        "logging_steps": 1,
        "save_steps": 10,
        "device": "cpu",
        "packing": False,
    }
    values.update(changes)
    return TrainSettings(**values)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny model trained from scratch by the CLI, then evaluated on the test split."""
    root = tmp_path_factory.mktemp("train")
    data = write_dataset(root / "data", {"train": TRAIN, "test": TEST})
    out = root / "model"
    argv = ["train", "--data", str(data), "--init", "llama:tiny", "--tokenizer", str(tokenizer_dir())]
    argv += ["--preset", "small", "--lr", "1e-2", "--warmup-steps", "5", "--weight-decay", "0"]
    argv += ["--max-length", "512", "--batch-tokens", "512", "--max-steps", "70"]
    argv += ["--logging-steps", "5", "--save-steps", "1000", "--device", "cpu", "--eval-limit", "1"]
    argv += ["--export-gguf", "f32", "--out", str(out)]
    assert main(argv) == 0
    return out


@pytest.mark.slow
def test_loss_falls_and_the_report_says_so(trained: Path) -> None:
    report = json.loads((trained / "training.json").read_text())
    assert report["steps"] == 70
    assert report["final_loss"] < report["first_loss"] / 100
    assert report["tokens_per_second"] > 0 and report["tokens_seen"] > 0
    assert report["data"]["per_task"] == {"flag-tuning": 2}
    log = read_log(trained / "log.jsonl")
    assert [record["step"] for record in log if "loss" in record] == list(range(5, 75, 5))
    assert any(path.name.startswith("events.out.tfevents") for path in (trained / "tensorboard").rglob("*"))


@pytest.mark.slow
def test_the_model_loads_through_hf_and_its_answers_parse(trained: Path) -> None:
    model = load_model(f"hf:{trained}", device="cpu")
    for prompt, answer in TRAIN:
        text = model.generate([GenerationRequest(prompt=prompt, max_tokens=60, stop=("<code>",))])[0].texts[0]
        assert parse_flag_tuning_head(text) == parse_flag_tuning_head(answer.split("<code>")[0])
    model.close()


@pytest.mark.slow
def test_the_evaluation_after_training_ran_on_the_test_split(trained: Path) -> None:
    report = json.loads((trained / "training.json").read_text())
    assert report["evaluations"]["flag-tuning"]["command"][:3] == ["llm-compiler", "evaluate", "flag-tuning"]
    rows = [
        json.loads(line)
        for line in (trained / "eval" / "flag-tuning" / "results.jsonl").read_text().splitlines()
    ]
    assert {row["system"] for row in rows} == {"oz", "builtin", f"hf:{trained}"}
    assert len(rows) == 3


@pytest.mark.slow
def test_gguf_export_is_written(trained: Path) -> None:
    gguf = pytest.importorskip("gguf")
    reader = gguf.GGUFReader(str(trained / "model.gguf"))
    assert "token_embd.weight" in {tensor.name for tensor in reader.tensors}


@pytest.mark.slow
def test_resume_continues_the_same_loss_curve(tmp_path: Path) -> None:
    from transformers import TrainerCallback

    class StopAt(TrainerCallback):  # type: ignore[misc]
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.global_step == 6:
                control.should_training_stop = True

    data = write_dataset(tmp_path / "data", {"train": TRAIN})
    whole = train(tiny_settings(data, tmp_path / "whole", max_steps=12, save_steps=6))
    interrupted = tiny_settings(data, tmp_path / "resumed", max_steps=12, save_steps=6)
    train(interrupted, callbacks=[StopAt()])
    assert latest_checkpoint(tmp_path / "resumed").name == "checkpoint-6"
    with pytest.raises(InvalidInput, match="--resume"):
        train(interrupted)
    resumed = train(interrupted, resume=True)
    assert resumed.report["steps"] == 12
    assert [step for step, _ in resumed.report["loss_curve"]] == list(range(1, 13))
    losses = [loss for _, loss in resumed.report["loss_curve"]]
    assert losses == pytest.approx([loss for _, loss in whole.report["loss_curve"]], rel=1e-4)
    assert losses[-1] < losses[0]
    # The schedule reaches TRL as the preset states it: step k (from 0) runs at a linear warm-up
    # over 5 steps, then a cosine from the peak down to peak/30 at the last step.
    rates = [
        record["learning_rate"] for record in read_log(tmp_path / "whole" / "log.jsonl") if "loss" in record
    ]
    floor = 1 / 30
    expected = [
        1e-2 * (k / 5 if k < 5 else floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * (k - 5) / 7)))
        for k in range(12)
    ]
    assert rates == pytest.approx(expected, rel=1e-6)
    with pytest.raises(InvalidInput, match="other settings"):
        train(tiny_settings(data, tmp_path / "resumed", max_steps=12, save_steps=6, seed=1), resume=True)


# peft (0.21) reads transformers 5's deprecated is_gradient_checkpointing when it loads an adapter.
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
@pytest.mark.slow
def test_lora_adapters_merge_and_load(tmp_path: Path) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from tests.models.tiny_models import hf_model_dir

    data = write_dataset(tmp_path / "data", {"train": TRAIN})
    base = hf_model_dir()
    outcome = train(
        tiny_settings(data, tmp_path / "lora", init=None, model=str(base), lora=True, max_steps=5)
    )
    assert (outcome.out / "adapter" / "adapter_config.json").is_file()
    merged = AutoModelForCausalLM.from_pretrained(outcome.out)
    adapted = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base), outcome.out / "adapter")
    untouched = AutoModelForCausalLM.from_pretrained(base)
    ids = torch.tensor([[1, 518, 25580, 29962, 29871, 29896]])
    with torch.no_grad():
        got, want, before = (m.eval()(input_ids=ids).logits for m in (merged, adapted, untouched))
    assert torch.allclose(got, want, atol=1e-4)
    assert not torch.allclose(got, before, atol=1e-4)
    model = load_model(f"hf:{outcome.out}", device="cpu")
    assert model.generate([GenerationRequest(prompt=TRAIN[1][0], max_tokens=4)])[0].texts
    model.close()


def test_packed_samples_do_not_see_each_other(tmp_path: Path) -> None:
    """Packing puts whole samples in one row; attention stays within each (position ids reset)."""
    import datasets
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl.data_utils import pack_dataset
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    data = write_dataset(tmp_path / "data", {"train": TRAIN})
    tokenizer = load_tokenizer(tiny_settings(data, tmp_path / "out"))
    tokens = tokenize(read_mixture([DataSource(data)], "train", 0), tokenizer, 1024)
    rows = datasets.Dataset.from_dict({"input_ids": tokens.input_ids})
    packed = pack_dataset(rows, 1024, "bfd")
    assert len(packed) == 1 and sorted(packed[0]["seq_lengths"]) == sorted(
        len(ids) for ids in tokens.input_ids
    )
    batch = DataCollatorForLanguageModeling(pad_token_id=0, padding_free=True)([packed[0]])
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1)
    config.num_attention_heads = config.num_key_value_heads = 2
    model = LlamaForCausalLM(config).eval()
    first = packed[0]["seq_lengths"][0]
    with torch.no_grad():
        # As the trainer calls it (TRL passes use_cache=False): transformers then finds the packed
        # samples from the position ids and keeps attention within each.
        together = model(input_ids=batch["input_ids"], position_ids=batch["position_ids"], use_cache=False)
        alone = [
            model(input_ids=batch["input_ids"][:, :first]).logits[0],
            model(input_ids=batch["input_ids"][:, first:]).logits[0],
        ]
    assert torch.allclose(together.logits[0, :first], alone[0], atol=1e-4)
    assert torch.allclose(together.logits[0, first:], alone[1], atol=1e-4)


def test_samples_longer_than_the_context_are_refused_or_dropped_and_out_of_memory_is_named(
    tmp_path: Path,
) -> None:
    data = write_dataset(tmp_path / "data", {"train": TRAIN})
    tokenizer = load_tokenizer(tiny_settings(data, tmp_path / "out"))
    samples = read_mixture([DataSource(data)], "train", 0)
    with pytest.raises(TrainingError, match=r"1 of 2 samples are longer than the context of 200 tokens"):
        tokenize(samples, tokenizer, 200)
    kept = tokenize(samples, tokenizer, 200, drop_long=True)
    assert len(kept) == 1 and kept.dropped_long == {"flag-tuning": 1}
    with pytest.raises(TrainingError, match="no sample fits"):
        tokenize(samples, tokenizer, 20, drop_long=True)
    # The loss falls on the answer and EOS only, and the prompt is tokenized alone, as the backends send it.
    assert kept.input_ids[0][: kept.completion_mask[0].index(1)] == tokenizer(TRAIN[1][0])["input_ids"]
    assert kept.input_ids[0][-1] == tokenizer.eos_token_id
    # A run refused for its data leaves nothing that holds back the corrected command, which
    # trains (here until it runs out of memory, and says what to change).
    short = tiny_settings(data, tmp_path / "run").preset.with_overrides(max_length=200)
    with pytest.raises(TrainingError, match="longer than the context"):
        train(tiny_settings(data, tmp_path / "run", preset=short))

    import torch
    from transformers import TrainerCallback

    class Exhausted(TrainerCallback):  # type: ignore[misc]
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.global_step == 2:
                raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    with pytest.raises(
        TrainingError, match=r"out of memory at step 2 .*--per-device-batch.*--lora.*--resume"
    ):
        train(tiny_settings(data, tmp_path / "run", max_steps=4), callbacks=[Exhausted()])


def test_data_mixing_by_ratio(tmp_path: Path) -> None:
    flags = write_dataset(tmp_path / "flags", {"train": TRAIN * 5})
    emulation = write_dataset(tmp_path / "emu", {"train": TRAIN * 2}, task="emulation")
    mixed = read_mixture([DataSource.parse(f"{flags}:0.4"), DataSource.parse(f"{emulation}:2")], "train", 3)
    assert [sample["task"] for sample in mixed].count("flag-tuning") == 4
    assert [sample["task"] for sample in mixed].count("emulation") == 8
    assert mixed == read_mixture([DataSource(flags, 0.4), DataSource(emulation, 2.0)], "train", 3)
    assert DataSource.parse("a:b/c") == DataSource(Path("a:b/c"))
    with pytest.raises(InvalidInput, match="positive"):
        DataSource.parse(f"{flags}:0")
    with pytest.raises(InvalidInput, match="no train samples"):
        read_mixture([DataSource(write_dataset(tmp_path / "held-out", {"test": TRAIN}))], "train", 0)
    with pytest.raises(InvalidInput, match="no such dataset"):
        read_mixture([DataSource(tmp_path / "nothing")], "train", 0)


def test_missing_tokenizer_and_bad_settings_are_named(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "data", {"train": TRAIN})
    with pytest.raises(TrainingError, match="--tokenizer DIR"):
        load_tokenizer(tiny_settings(data, tmp_path / "out", tokenizer=str(tmp_path)))
    with pytest.raises(InvalidInput, match="either --model"):
        tiny_settings(data, tmp_path / "out", model="x")
    with pytest.raises(InvalidInput, match="llama:SIZE"):
        tiny_settings(data, tmp_path / "out", init="llama:huge")


def test_the_paper_recipe_is_the_default(tmp_path: Path) -> None:
    from llm_compiler.cli.main import build_parser
    from llm_compiler.cli.train import settings_from_args

    args = build_parser().parse_args(
        ["train", "--data", str(tmp_path), "--model", "m", "--out", str(tmp_path / "o")]
    )
    settings = settings_from_args(args)
    assert settings.preset == PRESETS["paper"] and not settings.lora and settings.packing


def test_paper_batch_layout() -> None:
    assert batch_layout(PRESETS["paper"].batch_tokens, 16_384, devices=1) == (1, 256)
    assert batch_layout(PRESETS["paper"].batch_tokens, 16_384, devices=8, per_device=2) == (2, 16)
    paper = PRESETS["paper"]
    assert (paper.learning_rate, paper.beta1, paper.beta2, paper.warmup_steps) == (2e-5, 0.9, 0.95, 1000)
    assert (paper.final_lr_ratio, paper.rope_theta, paper.max_length) == (1 / 30, 1e6, 16_384)


def test_each_trained_task_is_evaluated_on_its_test_split(tmp_path: Path) -> None:
    from llm_compiler.training.after import evaluation_commands

    flags = write_dataset(tmp_path / "flags", {"train": TRAIN, "test": TEST})
    emulation = write_dataset(tmp_path / "emu", {"train": TRAIN, "test": TEST}, task="emulation")
    disassembly = write_dataset(tmp_path / "dis", {"train": TRAIN, "test": TEST}, task="disassembly")
    untested = write_dataset(tmp_path / "none", {"train": TRAIN}, task="disassembly")
    sources = [DataSource(path) for path in (flags, emulation, disassembly)]
    model = tmp_path / "model"
    commands = {
        c.task: c
        for c in evaluation_commands(sources, ["flag-tuning", "emulation", "disassembly"], model, 5, "cpu")
    }
    assert commands["flag-tuning"].argv[:3] == (
        "evaluate",
        "flag-tuning",
        str(model / "eval" / "flag-tuning" / "programs"),
    )
    assert (model / "eval" / "flag-tuning" / "programs" / "test0.ll").read_text() == _ADD_OPTIMIZED_IR
    assert {"oz", "builtin", f"hf:{model}"} <= set(commands["flag-tuning"].argv)
    assert commands["emulation"].argv[:3] == ("evaluate", "emulation", str(emulation))
    assert commands["emulation"].argv[commands["emulation"].argv.index("--max-tokens") + 1] == "64"
    assert commands["disassembly"].argv[:2] == ("evaluate", "perplexity")
    assert evaluation_commands([DataSource(untested)], ["disassembly"], model, 5, "cpu") == []
