"""The one program-set reader: files, folders, compile commands and corpus queries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.corpus.program_set import ProgramSet
from llm_compiler.corpus.store import CorpusStore, Provenance, Unit
from llm_compiler.errors import InvalidInput
from tests.conftest import EXAMPLES

IR = "define i32 @{name}(i32 %x) {{\n  %y = add i32 %x, {n}\n  ret i32 %y\n}}\n"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A corpus of six units: two packages (train, test), a unit and two functions each."""
    store = CorpusStore(tmp_path / "corpus")
    n = 0
    for package, split in (("alpha", "train"), ("beta", "test")):
        for function in (None, "f", "g"):
            n += 1
            ir = IR.format(name=function or "main", n=n)
            unit = Unit(
                id=f"{n:016x}", split=split, language="c",
                provenance=Provenance("files", package, file="a.c", function=function,
                                      parent="0" * 16 if function else None),
                o0_size=1, oz_size=1, instructions=2, tokens=10, token_counter="test", llvm_version="19",
            )  # fmt: skip
            store.add(unit, ir)
    return store.root


def names(programs: ProgramSet) -> list[str]:
    return [source.name for source in programs]


def test_corpus_queries_choose_split_kind_and_limit(corpus: Path) -> None:
    everything = ["alpha/a.c", "alpha/a.c:f", "alpha/a.c:g", "beta/a.c", "beta/a.c:f", "beta/a.c:g"]
    assert names(ProgramSet([corpus])) == everything
    assert names(ProgramSet([corpus / "manifest.jsonl"])) == everything
    assert names(ProgramSet([f"corpus:{corpus}?split=test"])) == everything[3:]
    assert names(ProgramSet([f"corpus:{corpus}?split=test&kind=function&limit=1"])) == ["beta/a.c:f"]
    assert names(ProgramSet([f"corpus:{corpus}?kind=unit"])) == ["alpha/a.c", "beta/a.c"]
    assert names(ProgramSet([corpus], splits=["train"], limit=2)) == everything[:2]
    assert {source.split for source in ProgramSet([f"corpus:{corpus}?split=train,test"])} == {"train", "test"}


@pytest.mark.parametrize(
    ("query", "needle"),
    [
        ("?split=tset", "split must be one of"),
        ("?kind=loop", "kind must be unit or function"),
        ("?limit=0", "limit must be a whole number"),
        ("?color=red", "unknown corpus option 'color'"),
    ],
)
def test_bad_corpus_queries_are_refused_naming_the_target(corpus: Path, query: str, needle: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        ProgramSet([f"corpus:{corpus}{query}"])
    assert str(caught.value).startswith(f"corpus:{corpus}{query}:") and needle in str(caught.value)


def test_missing_targets_are_refused_when_the_set_is_made(tmp_path: Path) -> None:
    for target, needle in (
        (str(tmp_path / "nothing.c"), "no such file or folder"),
        (f"corpus:{tmp_path}", "no corpus there"),
        (str(tmp_path), "holds no C, C"),
    ):
        with pytest.raises(InvalidInput, match=needle):
            ProgramSet([target])
    with pytest.raises(InvalidInput, match="--limit"):
        ProgramSet([EXAMPLES], limit=0)


def test_files_folders_and_compile_commands(tmp_path: Path, compiler: Compiler) -> None:
    examples = list(ProgramSet([EXAMPLES]))
    assert [source.name for source in examples] == [str(p) for p in sorted(EXAMPLES.glob("*.c*"))]
    assert {source.provenance["package"] for source in examples} == {"examples"}
    assert len({source.split for source in examples}) == 1  # split by folder, not by file
    database = tmp_path / "compile_commands.json"
    entry = {"directory": str(EXAMPLES), "file": "crc32.c", "command": "cc -DX=1 -c crc32.c"}
    database.write_text(json.dumps([entry]))
    (source,) = ProgramSet([database])
    assert source.options is not None and "-DX=1" in source.options.extra_flags
    assert source.load(compiler).id == examples[1].load(compiler).id


def test_a_program_has_the_same_id_wherever_its_file_lies(tmp_path: Path, compiler: Compiler) -> None:
    """The search's draws are seeded by the id, so results must not depend on the clone's path."""
    ids = set()
    for folder in ("a", "b/deeper"):
        copy = tmp_path / folder / "crc32.c"
        copy.parent.mkdir(parents=True)
        copy.write_text((EXAMPLES / "crc32.c").read_text())
        program = compiler.load(copy)
        assert str(copy) in program.ir  # clang names the source by the path it was given
        ids.add(program.id)
    assert len(ids) == 1


def test_a_corpus_unit_loads_as_llvm_prints_it(corpus: Path, compiler: Compiler) -> None:
    source = next(iter(ProgramSet([f"corpus:{corpus}?kind=function&limit=1"])))
    program = source.load(compiler)
    assert program.name == "alpha/a.c:f" and "define i32 @f" in program.ir
    assert program.source == str(source.path) and source.key() == source.unit_id
