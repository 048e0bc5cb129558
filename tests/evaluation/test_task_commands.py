"""evaluate disassembly, emulation and perplexity from the command line, with resuming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.tasks.answers import DisassemblyAnswer, build_disassembly_answer
from llm_compiler.tasks.prompts import disassembly_prompt
from llm_compiler.toolchain.llvm import Toolchain
from tests.conftest import EXAMPLES, run_cli

CRC = EXAMPLES / "crc32.c"


def test_disassembly_scores_a_perfect_lift_and_resumes(toolchain: Toolchain, tmp_path: Path) -> None:
    with Compiler(toolchain, engine="subprocess") as compiler:
        program = compiler.load(CRC)
        compiled = compiler.compile(program, compiler.passes("default<Oz>"), ("ir", "asm"))
    assert compiled.ir is not None and compiled.assembly is not None
    replay = tmp_path / "answers.jsonl"
    answer = build_disassembly_answer(DisassemblyAnswer(compiled.ir))
    replay.write_text(
        json.dumps({"prompt": disassembly_prompt(compiled.assembly), "completions": [answer]}) + "\n"
    )
    out = tmp_path / "run"
    command = ("evaluate", "disassembly", str(CRC), "--model", f"replay:{replay}", "--out", str(out))
    result = run_cli(*command)
    assert result.returncode == 0, result.stderr
    figures = json.loads((out / "report.json").read_text())["systems"][f"replay:{replay}"]
    assert figures["round_trip_rate"] == 1 and figures["exact_match_rate"] == 1 and figures["bleu"] == 1
    assert "round_trip_rate" in (out / "report.md").read_text()
    again = run_cli(*command, "--resume")
    assert again.returncode == 0 and len((out / "results.jsonl").read_text().splitlines()) == 1


def test_emulation_and_perplexity_on_a_dataset(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    tiny_models = pytest.importorskip("tests.models.tiny_models")
    data = tmp_path / "emu"
    made = run_cli(
        "data", "emulation", str(CRC), "--out", str(data), "--samples-per-program", "1", "--jobs", "1"
    )
    assert made.returncode == 0, made.stderr
    shards = sorted(data.rglob("shard-*.jsonl"))
    samples = [json.loads(line) for shard in shards for line in shard.read_text().splitlines()]
    assert samples
    replay = tmp_path / "answers.jsonl"
    replay.write_text(
        "".join(json.dumps({"prompt": s["prompt"], "completions": [s["answer"]]}) + "\n" for s in samples)
    )
    scored = run_cli("evaluate", "emulation", str(shards[0]), "--model", f"replay:{replay}", "--json")
    assert scored.returncode == 0, scored.stderr
    figures = json.loads(scored.stdout)["systems"][f"replay:{replay}"]
    assert (
        figures["exact_match_rate"] == 1 and figures["compile_rate"] == 1 and figures["binary_size_mape"] == 0
    )
    model = tiny_models.hf_model_dir("untrained")
    ppl = run_cli(
        "evaluate",
        "perplexity",
        str(shards[0]),
        "--model",
        f"hf:{model}",
        "--device",
        "cpu",
        "--limit",
        "1",
        "--json",
    )
    assert ppl.returncode == 0, ppl.stderr
    report = json.loads(ppl.stdout)["systems"][f"hf:{model}"]
    assert report["tokens"] > 100 and 1 < report["perplexity"] < 1e6  # untrained: near the vocabulary's size
