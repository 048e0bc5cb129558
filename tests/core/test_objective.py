"""Objectives: counting IR without code generation, and one objective through a whole choice."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.objective import Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.core.store import EvaluationRow, Store
from llm_compiler.errors import InvalidInput
from llm_compiler.selection import Candidate, Policy, Selector, Verdict, make_gate
from llm_compiler.toolchain.llvm import Toolchain
from tests.conftest import EXAMPLES

#: On crc32.c (LLVM 19.1.7) fewer IR instructions than -Oz (89 vs 91) but more bytes (614 vs 527).
FEWER_INSTRUCTIONS_MORE_BYTES = "function(mem2reg),function(simplifycfg)"


def test_objectives_parse_and_read_their_figure() -> None:
    assert Objective.parse("text-size") is Objective.TEXT_SIZE
    with pytest.raises(InvalidInput, match="Did you mean ir-instructions"):
        Objective.parse("ir-instruction")
    row = EvaluationRow("p", "x", "exact", "ok", binary_size=10, text=8, data=2, ir_instructions=5)
    assert [row.cost(objective) for objective in Objective] == [10.0, 8.0, 5.0]
    counted = EvaluationRow("p", "x", "exact", "ok", ir_instructions=5)
    assert counted.cost(Objective.IR_INSTRUCTIONS) == 5.0
    assert counted.cost(Objective.BINARY_SIZE) == float("inf")
    assert EvaluationRow("p", "x", "exact", "timeout").cost(Objective.IR_INSTRUCTIONS) == float("inf")


@pytest.mark.parametrize("pipeline", [None, OZ_PIPELINE, "function(sroa),module(default<O2>)"])
def test_counting_equals_the_measurement_without_generating_code(
    compiler: Compiler, example_programs: dict[str, Program], pipeline: str | None
) -> None:
    program = example_programs["qsort_ints.c"]
    passes = compiler.passes(pipeline) if pipeline else None
    before = compiler.counts["compiles"]
    counted = compiler.count(program, passes)
    assert compiler.counts["compiles"] == before  # no compile (and no object) for a count
    measured = compiler.compile(program, passes, fresh=True).measurement
    assert (counted.ir_instructions, counted.ir_hash) == (measured.ir_instructions, measured.ir_hash)
    assert counted.binary_size is None and counted.text is None
    with pytest.raises(ValueError, match="needs an object"):
        Objective.BINARY_SIZE.of(counted)
    assert compiler.value(program, passes, Objective.IR_INSTRUCTIONS)[0] == measured.ir_instructions
    assert compiler.value(program, passes, Objective.TEXT_SIZE)[0] == measured.text


def test_the_store_keeps_counted_rows_apart_and_reads_them_back(tmp_path: Path) -> None:
    store = Store(tmp_path / "tune.sqlite")
    counted = EvaluationRow("p1", "function(sroa)", "exact", "ok", ir_instructions=40, output_hash="h1")
    full = EvaluationRow(
        "p1", OZ_PIPELINE, "exact", "ok", binary_size=9, text=9, data=0, ir_instructions=30, output_hash="h2"
    )
    store.record([counted, full], "19.1.7")
    rows = store.evaluations("p1", "19.1.7")
    assert rows[("function(sroa)", "exact")].ir_instructions == 40
    assert rows[("function(sroa)", "exact")].binary_size is None
    assert rows[(OZ_PIPELINE, "exact")].binary_size == 9
    store.close()
    with sqlite3.connect(tmp_path / "tune.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM measurements").fetchone() == (1,)
        assert db.execute("SELECT * FROM ir_counts").fetchall() == [("h1", 40)]
        # A store written before counted rows existed lacks the table; it is still read.
        db.execute("DROP TABLE ir_counts")
    old = Store(tmp_path / "tune.sqlite", read_only=True)
    assert old.evaluations("p1", "19.1.7")[(OZ_PIPELINE, "exact")].ir_instructions == 30
    old.close()


def test_the_objective_decides_what_smaller_than_oz_means(toolchain: Toolchain) -> None:
    with Compiler(toolchain, engine="inprocess", workers=1) as compiler:
        program = compiler.load(EXAMPLES / "crc32.c")
        gate = make_gate(compiler, ("builtin",))
        candidate = Candidate(pipeline=FEWER_INSTRUCTIONS_MORE_BYTES, run=FEWER_INSTRUCTIONS_MORE_BYTES)
        in_bytes = Selector(compiler, gate).select(program, [candidate])
        assert in_bytes.fallback is Verdict.NOT_SMALLER
        assert in_bytes.candidates[0].detail == "614 bytes, -Oz 527"
        counts_before = compiler.counts["counts"]
        policy = Policy(objective=Objective.IR_INSTRUCTIONS)
        in_instructions = Selector(compiler, gate, policy).select(program, [candidate])
        assert compiler.counts["counts"] > counts_before  # measured by counting the IR
        assert in_instructions.fallback is None and in_instructions.validated
        assert in_instructions.chosen == FEWER_INSTRUCTIONS_MORE_BYTES
        oz = compiler.measure_oz(program)
        assert in_instructions.oz_size == oz.ir_instructions
        assert in_instructions.binary_size < oz.ir_instructions
