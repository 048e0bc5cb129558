"""Files written one way: the cache folder, atomic writes, JSONL and Parquet tables."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from llm_compiler import files
from llm_compiler.errors import LlmCompilerError
from llm_compiler.files import (
    atomic_write_bytes,
    atomic_write_text,
    cache_dir,
    jsonl_to_parquet,
    write_jsonl,
    write_parquet,
)
from llm_compiler.passes.searchable import cache_file
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.llvm_c import _shim_path

ROWS = [
    {"name": "a", "size": 1, "rejected": [{"pipeline": "function(sroa)", "outcome": "fail"}]},
    {"name": "b", "size": 2, "rejected": []},
    {"name": "c", "size": 3, "rejected": [{"pipeline": "module(globaldce)", "detail": "x", "extra": [1]}]},
]


def test_atomic_writes_leave_only_the_file(tmp_path: Path) -> None:
    target = tmp_path / "new" / "folder" / "out.txt"
    assert atomic_write_text(target, "héllo\n") == target
    assert target.read_bytes() == "héllo\n".encode()
    atomic_write_bytes(target, b"\x00\xff")
    assert target.read_bytes() == b"\x00\xff"
    assert os.listdir(target.parent) == ["out.txt"]


def _write_parquet(path: Path) -> None:
    pytest.importorskip("pyarrow.parquet")
    write_parquet(path, ROWS, json_columns=["rejected"])


def _jsonl_to_parquet(path: Path) -> None:
    pytest.importorskip("pyarrow.parquet")
    write_jsonl(path.with_suffix(".jsonl"), ROWS)
    jsonl_to_parquet(path.with_suffix(".jsonl"))


WRITERS = {
    "atomic_write_text": lambda path: atomic_write_text(path, "new\n"),
    "atomic_write_bytes": lambda path: atomic_write_bytes(path, b"new\n"),
    "write_jsonl": lambda path: write_jsonl(path, ROWS),
    "write_parquet": _write_parquet,
    "jsonl_to_parquet": _jsonl_to_parquet,
}


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002], ids=lambda umask: f"umask-{umask:03o}")
@pytest.mark.parametrize("writer", WRITERS.values(), ids=WRITERS.keys())
def test_written_files_get_the_permissions_write_text_gives(tmp_path: Path, umask: int, writer: Any) -> None:
    def mode(path: Path) -> int:
        return stat.S_IMODE(path.stat().st_mode)

    previous = os.umask(umask)
    try:
        by_hand = tmp_path / "by-hand.txt"
        by_hand.write_text("old\n")
        new = tmp_path / "new" / "out.parquet"
        writer(new)
        # A new file: what the umask allows, as write_text (not owner-only, as mkstemp).
        assert mode(new) == mode(by_hand) == 0o666 & ~umask
        # A replaced file keeps its own permissions, as write_text leaves them.
        by_hand.chmod(0o640)
        by_hand.write_text("new\n")
        replaced = tmp_path / "replaced.parquet"
        replaced.write_text("old\n")
        replaced.chmod(0o640)
        writer(replaced)
        assert mode(replaced) == mode(by_hand) == 0o640
        assert replaced.read_bytes() != b"old\n"
    finally:
        os.umask(previous)


class _Interrupted(KeyboardInterrupt):
    """Stands for a run killed while writing (a BaseException, not an Exception)."""


def _fail_writing(monkeypatch: pytest.MonkeyPatch) -> type[BaseException]:
    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, stream: Any) -> None:
            self.stream = stream

        def __enter__(self) -> FullDisk:
            return self

        def __exit__(self, *exc: object) -> None:
            self.stream.close()

        def write(self, data: bytes) -> int:
            self.stream.write(data[:3])  # part of it reaches the temporary file
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fdopen", lambda fd, mode: FullDisk(real_fdopen(fd, mode)))
    return OSError


def _fail_renaming(monkeypatch: pytest.MonkeyPatch) -> type[BaseException]:
    def interrupted(*args: object) -> None:
        raise _Interrupted

    monkeypatch.setattr(files.os, "replace", interrupted)
    return _Interrupted


@pytest.mark.parametrize("fail", [_fail_writing, _fail_renaming], ids=["writing", "renaming"])
def test_a_failed_atomic_write_keeps_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: Any
) -> None:
    target = tmp_path / "report.json"
    target.write_text("old\n")
    raised = fail(monkeypatch)
    with pytest.raises(raised):
        atomic_write_text(target, "new and longer\n")
    monkeypatch.undo()
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["report.json"]


def test_a_failed_parquet_write_keeps_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyarrow.parquet")
    target = tmp_path / "best.parquet"
    target.write_bytes(b"old")
    with pytest.raises(_fail_renaming(monkeypatch)):
        write_parquet(target, ROWS, json_columns=["rejected"])
    monkeypatch.undo()
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["best.parquet"]


def test_cache_dir_honours_xdg_cache_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toolchain: Toolchain
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "llm-compiler"
    assert cache_dir("passes") == tmp_path / "llm-compiler" / "passes"
    # The places that cache things ask cache_dir, with the sub-folders they always used.
    assert cache_file("19.1.7") == tmp_path / "llm-compiler" / "passes" / "llvm-19.1.7.txt"
    assert _shim_path(toolchain) == (
        tmp_path / "llm-compiler" / "llc-shim" / f"llvm-{toolchain.version}" / "libllmc.so"
    )
    assert not (tmp_path / "llm-compiler").exists()  # named, not created
    for unset in ("", None):
        if unset is None:
            monkeypatch.delenv("XDG_CACHE_HOME")
        else:
            monkeypatch.setenv("XDG_CACHE_HOME", unset)
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        assert cache_dir("passes") == tmp_path / "home" / ".cache" / "llm-compiler" / "passes"


def test_write_jsonl_writes_one_object_a_line(tmp_path: Path) -> None:
    target = tmp_path / "best.jsonl"
    written = write_jsonl(target, iter(ROWS))
    assert written == ROWS
    assert target.read_text() == "".join(json.dumps(row) + "\n" for row in ROWS)


def test_write_parquet_json_columns_round_trip(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    target = tmp_path / "best.parquet"
    assert write_parquet(target, ROWS, json_columns=["rejected"]) is True
    table = pq.read_table(target)
    assert table.column_names == ["name", "size", "rejected"]
    assert table.column("name").to_pylist() == ["a", "b", "c"]
    assert table.column("size").to_pylist() == [1, 2, 3]
    stored = table.column("rejected").to_pylist()
    assert all(isinstance(text, str) for text in stored)
    assert [json.loads(text) for text in stored] == [row["rejected"] for row in ROWS]
    assert stored[2] == json.dumps(ROWS[2]["rejected"], sort_keys=True)
    assert os.listdir(tmp_path) == ["best.parquet"]


def test_jsonl_to_parquet_keeps_the_rows(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    shard = tmp_path / "shard-00000.jsonl"
    rows = [{"n": 1, "fields": {"a": "x"}}, {"n": 2, "fields": {"a": "y"}}]
    write_jsonl(shard, rows)
    assert jsonl_to_parquet(shard) is True
    assert pq.read_table(tmp_path / "shard-00000.parquet").to_pylist() == rows


def test_without_pyarrow_parquet_is_skipped_or_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "have_pyarrow", lambda: False)
    target = tmp_path / "t.parquet"
    assert write_parquet(target, ROWS) is False
    with pytest.raises(LlmCompilerError, match="pip install 'llm-compiler\\[parquet\\]'"):
        write_parquet(target, ROWS, required=True)
    write_jsonl(tmp_path / "t.jsonl", ROWS)
    assert jsonl_to_parquet(tmp_path / "t.jsonl") is False
    assert sorted(os.listdir(tmp_path)) == ["t.jsonl"]
