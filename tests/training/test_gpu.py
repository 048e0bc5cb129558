"""The training recipe on one GPU, in under ten minutes: marked ``gpu``, skipped without one.

It makes emulation data from the examples (which all fall in the test split, so they are
moved to the training split here), trains ``llama:small`` from scratch with the
``small`` preset for a fixed four minutes (bfloat16 where the GPU has it), and writes
tokens/s and the final loss to ``$LLM_COMPILER_GPU_REPORT`` (default: the test's
temporary folder) and the terminal. Run it with::

    .venv/bin/python -m pytest -m gpu tests/training/test_gpu.py -s
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("trl")
torch = pytest.importorskip("torch")

from llm_compiler.cli.main import main  # noqa: E402
from tests.models.tiny_models import tokenizer_dir  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TRAIN_SECONDS = 240


@pytest.mark.gpu
def test_recipe_on_one_gpu(tmp_path: Path) -> None:
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    data = tmp_path / "emu"
    assert main(["data", "emulation", str(EXAMPLES), "--samples-per-program", "16", "--out", str(data)]) == 0
    (data / "train").mkdir(exist_ok=True)
    moved = [
        shard for split in ("validation", "test") for shard in sorted((data / split).glob("shard-*.jsonl"))
    ]
    for number, shard in enumerate(moved, start=1000):
        records = [{**json.loads(line), "split": "train"} for line in shard.read_text().splitlines()]
        (data / "train" / f"shard-{number:05d}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in records)
        )
        shard.unlink()
    out = tmp_path / "model"
    argv = ["train", "--data", str(data), "--init", "llama:small", "--tokenizer", str(tokenizer_dir())]
    argv += ["--preset", "small", "--max-length", "16384", "--batch-tokens", "65536", "--drop-long"]
    argv += [
        "--epochs",
        "1000",
        "--max-time",
        str(TRAIN_SECONDS),
        "--logging-steps",
        "10",
        "--device",
        "cuda",
    ]
    argv += ["--no-eval", "--out", str(out)]
    assert main(argv) == 0
    report = json.loads((out / "training.json").read_text())
    figures = {
        "gpu": torch.cuda.get_device_name(0),
        "steps": report["steps"],
        "tokens_seen": report["tokens_seen"],
        "tokens_per_second": report["tokens_per_second"],
        "first_loss": report["first_loss"],
        "final_loss": report["final_loss"],
        "train_seconds": report["train_seconds"],
    }
    Path(os.environ.get("LLM_COMPILER_GPU_REPORT", tmp_path / "gpu-report.json")).write_text(
        json.dumps(figures, indent=2) + "\n"
    )
    print(json.dumps(figures))
    assert report["final_loss"] < report["first_loss"]
    assert report["train_seconds"] < TRAIN_SECONDS + 60
