"""The accelerate configurations in ``configs/accelerate/`` load as ``accelerate launch`` loads them."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("accelerate")

from accelerate.commands.config.config_args import load_config_from_file

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "accelerate"
EXPECTED = {
    "one-gpu.yaml": ("NO", 1),
    "multi-gpu-ddp.yaml": ("MULTI_GPU", 8),
    "deepspeed-zero2.yaml": ("DEEPSPEED", 8),
    "deepspeed-zero3.yaml": ("DEEPSPEED", 8),
    "fsdp.yaml": ("FSDP", 8),
}


def test_every_configuration_is_listed() -> None:
    assert sorted(path.name for path in CONFIGS.glob("*.yaml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_configuration_loads(name: str) -> None:
    config = load_config_from_file(str(CONFIGS / name))
    kind, processes = EXPECTED[name]
    assert str(config.distributed_type).rsplit(".", 1)[-1] == kind
    assert config.num_processes == processes
    assert str(config.mixed_precision).rsplit(".", 1)[-1].lower() == "bf16"
    if kind == "DEEPSPEED":
        assert config.deepspeed_config["zero_stage"] == int(name[-6])
    if kind == "FSDP":
        assert config.fsdp_config["fsdp_transformer_layer_cls_to_wrap"] == "LlamaDecoderLayer"
    # The README gives the command that uses each file.
    assert f"--config_file configs/accelerate/{name}" in (CONFIGS.parents[1] / "README.md").read_text()
