"""Dataset generators compile each candidate once, and what they write does not change."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_compiler import files
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import OZ_PIPELINE, CompileResult, Program
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.corpus.tokens import EstimatedTokenCounter
from llm_compiler.passes.pipeline import PassList
from llm_compiler.tasks.answers import (
    PassListAnswer,
    parse_disassembly_answer,
    parse_emulation_answer,
    parse_flag_tuning_answer,
)
from llm_compiler.tasks.dataset import DatasetWriter, read_samples
from llm_compiler.tasks.disassembly import disassembly_samples
from llm_compiler.tasks.emulation import emulation_samples
from llm_compiler.tasks.flag_tuning import TuningLabel, flag_tuning_samples
from llm_compiler.tasks.prompts import parse_disassembly_prompt
from llm_compiler.tasks.samples import DataSettings, SampleContext
from llm_compiler.toolchain.llvm import Toolchain
from tests.conftest import EXAMPLES

SOURCE = EXAMPLES / "crc32.c"
#: Budgets no sample exceeds, so every candidate gives samples to look at.
UNLIMITED = {"prompt_limit": 10**9, "answer_limit": 10**9}


class CountingCompiler(Compiler):
    """A real compiler that records every compile and every separate ``llc`` run."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.compiles: list[tuple[str | None, frozenset[str]]] = []
        self.lowered = 0

    def compile(
        self, program: Program, passes: PassList | None = None, outputs: Collection[str] = ()
    ) -> CompileResult:
        self.compiles.append((None if passes is None else passes.pipeline, frozenset(outputs)))
        return super().compile(program, passes, outputs)

    def lower(self, ir: str, *, filetype: str = "obj", name: str = "<ir>") -> bytes:
        self.lowered += 1
        return super().lower(ir, filetype=filetype, name=name)


@pytest.fixture(scope="module", params=["inprocess", "subprocess"])
def counting(toolchain: Toolchain, request: pytest.FixtureRequest) -> Iterator[CountingCompiler]:
    with CountingCompiler(toolchain, engine=request.param, workers=1) as compiler:
        yield compiler


@pytest.fixture()
def compiler(counting: CountingCompiler) -> CountingCompiler:
    counting.compiles.clear()
    counting.lowered = 0
    return counting


def context(compiler: Compiler, program: Program, **settings: Any) -> SampleContext:
    record = ProgramSource(name=str(SOURCE), path=SOURCE, split="test")
    data = DataSettings(**{**UNLIMITED, **settings})
    return SampleContext(data, record, program, EstimatedTokenCounter(), compiler.llvm_version)


@pytest.mark.parametrize("targets", [("ir", "asm"), ("ir",)])
def test_emulation_compiles_each_list_once(compiler: CountingCompiler, targets: tuple[str, ...]) -> None:
    program = compiler.load(SOURCE)
    compiler.compiles.clear()
    made = context(compiler, program, task="emulation", seed=1, samples_per_program=3, targets=targets)
    samples, dropped = emulation_samples(compiler, program, made)
    assert not dropped
    assert len(samples) == 3 * len(targets)
    assert compiler.compiles[0] == (None, frozenset())  # the input, measured once
    lists = compiler.compiles[1:]
    assert [outputs for _, outputs in lists] == [frozenset(("ir", *targets))] * 3
    assert {pipeline for pipeline, _ in lists} == {sample["pipeline"] for sample in samples}
    assert compiler.lowered == 0
    for sample in samples:
        answer = parse_emulation_answer(sample["answer"])
        expected = compiler.compile(program, compiler.passes(sample["pipeline"]), ("ir", "asm"))
        assert answer.code == (expected.ir if sample["target"] == "ir" else expected.assembly)
        assert answer.bin_size == expected.measurement.binary_size
        assert answer.ir_count == expected.measurement.ir_instructions


def test_flag_tuning_compiles_the_label_once(compiler: CountingCompiler) -> None:
    program = compiler.load(SOURCE)
    compiler.compiles.clear()
    label = TuningLabel(OZ_PIPELINE, 0, True, "passed")
    samples, dropped = flag_tuning_samples(
        compiler, program, context(compiler, program, task="flag-tuning"), label
    )
    assert not dropped and len(samples) == 1
    assert compiler.compiles == [(None, frozenset()), (OZ_PIPELINE, frozenset({"ir"}))]
    assert compiler.lowered == 0
    answer = parse_flag_tuning_answer(samples[0]["answer"])
    assert isinstance(answer, PassListAnswer)  # -Oz makes crc32 smaller than the input
    assert answer.code == compiler.optimize(program, compiler.passes(OZ_PIPELINE))
    assert answer.size_after == samples[0]["output_binary_size"] < answer.size_before


def test_disassembly_compiles_once_and_its_assembly_is_llc_s(compiler: CountingCompiler) -> None:
    program = compiler.load(SOURCE)
    compiler.compiles.clear()
    samples, dropped = disassembly_samples(compiler, program, context(compiler, program, task="disassembly"))
    assert not dropped and len(samples) == 1
    assert compiler.compiles == [(OZ_PIPELINE, frozenset({"ir", "asm"}))]
    assert compiler.lowered == 0
    ir = parse_disassembly_answer(samples[0]["answer"]).ir
    # The round trip the evaluation relies on: llc on the stored IR gives the stored assembly.
    assert compiler.lower(ir, filetype="asm").decode() == parse_disassembly_prompt(samples[0]["prompt"]).asm


def test_dataset_writer_files_are_whole_and_match(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    writer = DatasetWriter(tmp_path, "emulation", {"seed": 1})
    writer.write_program("p", [{"split": "train", "n": 1, "nested": {"a": [1, 2]}}])
    writer.report.dropped["timeout"] += 2
    writer.save_report()
    assert writer.write_parquet() == 1
    expected = json.dumps(writer.report.to_json(), indent=2, sort_keys=True) + "\n"
    assert (tmp_path / "report.json").read_text() == expected
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "done.jsonl",
        "report.json",
        "settings.json",
        "train",
    ]
    assert sorted(path.name for path in (tmp_path / "train").iterdir()) == [
        "shard-00000.jsonl", "shard-00000.parquet",
    ]  # fmt: skip
    assert pq.read_table(tmp_path / "train" / "shard-00000.parquet").to_pylist() == read_samples(tmp_path)


class _Killed(KeyboardInterrupt):
    """Stands for a run killed while a file is being replaced."""


def test_a_resume_killed_while_cleaning_a_shard_leaves_it_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = DatasetWriter(tmp_path, "emulation", {"seed": 1})
    writer.write_program("done", [{"split": "train", "n": 1}])
    writer.save_report()
    shard = tmp_path / "train" / "shard-00000.jsonl"
    with shard.open("a") as stream:  # a program killed while its samples were written
        stream.write(json.dumps({"split": "train", "n": 2, "program_key": "unfinished"}) + "\n")
    before = shard.read_bytes()

    def killed(*args: object) -> None:
        raise _Killed

    monkeypatch.setattr(files.os, "replace", killed)
    with pytest.raises(_Killed):
        DatasetWriter(tmp_path, "emulation", {"seed": 1}, resume=True)
    monkeypatch.undo()
    assert shard.read_bytes() == before
    assert sorted(path.name for path in shard.parent.iterdir()) == ["shard-00000.jsonl"]
    DatasetWriter(tmp_path, "emulation", {"seed": 1}, resume=True)
    assert [sample["n"] for sample in read_samples(tmp_path)] == [1]
