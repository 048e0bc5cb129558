"""The tuning store: units' IR kept, kept lists read back typed, old stores still read."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from llm_compiler.core.store import Store
from llm_compiler.errors import InvalidInput


def test_units_ir_and_final_results_read_back(tmp_path: Path) -> None:
    path = tmp_path / "tune.sqlite"
    store = Store(path)
    store.add_program("a1", "pkg/a.c", "/src/pkg/a.c", "ok", ir="define i32 @f() {\n  ret i32 0\n}\n")
    store.add_program("b2", "pkg/b.c", "/src/pkg/b.c", "ok")
    store.set_result("a1", "final", "function(sroa)", 100, json.dumps({"validation": "passed: ..."}), True)
    store.set_result("b2", "final", "function(gvn)", 90, json.dumps({"validation": "unchecked: off"}), False)
    store.close()
    reader = Store(path, read_only=True)
    assert reader.program_ir("a1") == "define i32 @f() {\n  ret i32 0\n}\n"
    assert reader.program_ir("b2") is None
    finals = reader.final_results()
    reader.close()
    assert [(f.name, f.pipeline, f.binary_size, f.validated) for f in finals] == [
        ("pkg/a.c", "function(sroa)", 100, True),
        ("pkg/b.c", "function(gvn)", 90, False),
    ]
    assert finals[0].validation == "passed: ..."


def test_a_store_from_before_the_validated_flag_is_read_from_its_notes(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # the schema of earlier versions
        db.executescript(
            """CREATE TABLE programs (program_id TEXT PRIMARY KEY, name TEXT NOT NULL, source TEXT,
                   status TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '');
               CREATE TABLE results (program_id TEXT NOT NULL, phase TEXT NOT NULL,
                   pipeline TEXT NOT NULL, binary_size INTEGER NOT NULL,
                   detail TEXT NOT NULL DEFAULT '', PRIMARY KEY (program_id, phase));"""
        )
        db.execute("INSERT INTO programs VALUES ('x', 'x.c', 'x.c', 'ok', '')")
        db.execute(
            "INSERT INTO results VALUES ('x', 'final', 'function(dce)', 7, ?)",
            (json.dumps({"validation": "unchecked: off"}),),
        )
    reader = Store(path, read_only=True)
    [final] = reader.final_results()
    assert not final.validated and reader.program_ir("x") is None
    reader.close()
    Store(path).close()  # opened for writing, it gains the new column and table
    writer = Store(path)
    writer.set_result("x", "final", "function(dce)", 7, "{}", True)
    assert writer.final_results()[0].validated
    writer.close()


def test_what_is_not_a_store_is_named(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no tuning store"):
        Store(tmp_path / "missing.sqlite", read_only=True)
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database")
    with pytest.raises(InvalidInput, match="is not a tuning store"):
        Store(junk, read_only=True)
