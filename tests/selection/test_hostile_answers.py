"""Hostile model answers through the one path: no crash, never above -Oz, a verdict each.

Answers a model may write (malformed, over-long, unknown and renamed passes, option and
shell injection, nested junk, another LLVM's names, empty, binary; drawn by
:func:`tests.selection.hostile.hostile_answers`) are replayed through
:class:`~llm_compiler.models.optimize.ModelOptimizer`, the path ``optimize`` and
``evaluate`` use, with the real compiler and a gate. The bench
``bench/selection/bench_hostile_answers.py`` runs 1,000 of them with the bundled suites.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.models.optimize import ModelOptimizer, OptimizeSettings, UnitResult
from llm_compiler.models.registry import load_model
from llm_compiler.selection import Gate, Verdict
from llm_compiler.tasks.prompts import flag_tuning_prompt
from llm_compiler.toolchain.llvm import Toolchain
from tests.conftest import EXAMPLES
from tests.selection.hostile import INJECTIONS, hostile_answers


@pytest.fixture(scope="module")
def unit(toolchain: Toolchain) -> Iterator[tuple[Compiler, Program, int]]:
    with Compiler(toolchain) as compiler:
        program = compiler.load(EXAMPLES / "crc32.c")
        yield compiler, program, compiler.measure_oz(program).binary_size


def decide(compiler: Compiler, program: Program, answers: list[str], folder: Path) -> UnitResult:
    """One unit decided from ``answers``, as ``optimize --model replay:FILE`` would."""
    prompt = flag_tuning_prompt(program.ir)
    replay = folder / "answers.jsonl"
    replay.write_text(json.dumps({"prompt": prompt, "completions": answers}) + "\n")
    # The link check and the program's own run; the bundled suites are the bench's.
    gate = Gate(compiler, [])
    settings = OptimizeSettings(samples=len(answers), temperature=0.8 if len(answers) > 1 else 0.0)
    optimizer = ModelOptimizer(compiler, load_model(f"replay:{replay}"), gate, settings)
    [proposal] = optimizer.propose([program])
    return optimizer.decide(program.name, program, proposal)


def check(result: UnitResult, oz: int, answers: list[str]) -> None:
    """Never above -Oz, a verdict for every answer, and a kept list only when validated."""
    assert result.oz_size == oz and result.binary_size <= oz, answers
    assert len(result.candidates) >= len(answers)
    for candidate in result.candidates:
        if candidate.verdict is Verdict.NOT_CHECKED:  # only behind a list that was kept
            assert result.fallback is None and candidate.binary_size is not None
    if result.fallback is None:
        kept = {c.run for c in result.candidates if c.verdict is Verdict.VALIDATED}
        assert result.chosen in kept and result.binary_size < oz
    else:
        assert result.chosen == OZ_PIPELINE and result.binary_size == oz
        assert isinstance(result.fallback, Verdict) and result.fallback.is_failure


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answers=st.lists(hostile_answers(), min_size=1, max_size=3))
def test_hostile_answers_never_crash_nor_grow_the_unit(
    answers: list[str], unit: tuple[Compiler, Program, int], tmp_path: Path
) -> None:
    compiler, program, oz = unit
    check(decide(compiler, program, answers, tmp_path), oz, answers)


@pytest.mark.parametrize("injection", INJECTIONS)
def test_injected_text_is_refused_by_the_grammar(
    injection: str, unit: tuple[Compiler, Program, int], tmp_path: Path
) -> None:
    compiler, program, oz = unit
    answer = f"Run opt -p '{injection}' to reduce the binary size from 900 bytes to 800 bytes:\n\n<code>"
    result = decide(compiler, program, [answer], tmp_path)
    [candidate] = result.candidates
    if "'" in injection:
        # The quote closes the answer's list: only the quoted part is parsed, the rest is prose.
        assert candidate.run == injection.split("'")[0]
    else:
        assert candidate.run is None and candidate.verdict in (Verdict.PARSE_ERROR, Verdict.UNKNOWN_PASS)
    assert result.binary_size <= oz
    if candidate.run is None:
        assert result.chosen == OZ_PIPELINE and result.binary_size == oz
