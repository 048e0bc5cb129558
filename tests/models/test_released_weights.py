"""The released LLM Compiler weights, where a local copy and an accelerator are at hand.

Set ``LLM_COMPILER_MODEL`` to a spec of a local copy (``hf:/models/llm-compiler-7b-ftd``,
``vllm:/models/llm-compiler-13b-ftd`` or ``gguf:/models/llm-compiler-7b-ftd.Q4_K_M.gguf``)
and run ``pytest -m gpu tests/models``. Skipped otherwise; no test downloads weights.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli

SPEC = os.environ.get("LLM_COMPILER_MODEL", "")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not SPEC, reason="LLM_COMPILER_MODEL names no local copy of the released weights"),
]


def test_the_released_model_never_makes_code_larger_than_oz(tmp_path: Path) -> None:
    result = run_cli("optimize", str(EXAMPLES), "--model", SPEC, "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(records) == len(list(EXAMPLES.glob("*.c*")))
    for record in records:
        assert record["binary_size"] <= record["oz_size"]
        assert record["fallback"] is None or record["fallback_detail"]
    # The released models answer in their own format: most answers must at least parse.
    verdicts = [candidate["verdict"] for record in records for candidate in record["candidates"]]
    assert sum(verdict != "parse-error" for verdict in verdicts) >= len(verdicts) // 2, verdicts


def test_the_released_model_lifts_assembly_that_compiles_back(tmp_path: Path) -> None:
    assembly = tmp_path / "crc32.s"
    compiled = run_cli(
        "compile", str(EXAMPLES / "crc32.c"), "--passes", "module(default<Oz>)", "-o", str(assembly)
    )
    assert compiled.returncode == 0, compiled.stderr
    result = run_cli("disassemble", str(assembly), "--model", SPEC, "--json")
    record = json.loads(result.stdout)
    assert record["ir"] is not None, record["error"]
    assert record["bleu"] > 0.5
