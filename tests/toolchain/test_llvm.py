"""Finding LLVM: explicit directories, LLVM_BIN, the newest /usr/lib/llvm-N, clear errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from llm_compiler.errors import LLVMNotFound
from llm_compiler.toolchain import llvm
from llm_compiler.toolchain.llvm import MINIMUM_MAJOR, Toolchain, find_toolchain


def test_finds_a_supported_llvm(toolchain: Toolchain) -> None:
    assert toolchain.major >= MINIMUM_MAJOR
    assert toolchain.tool("opt").is_file() and toolchain.tool("clang++").is_file()
    assert toolchain.version.count(".") == 2


def test_explicit_directory_wins(toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLVM_BIN", "/nonexistent")
    assert find_toolchain(toolchain.bin_dir) == toolchain


def test_llvm_bin_environment_variable(toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLVM_BIN", str(toolchain.bin_dir))
    assert find_toolchain() == toolchain


def test_directory_without_llvm_is_explained(tmp_path: Path) -> None:
    with pytest.raises(LLVMNotFound) as caught:
        find_toolchain(tmp_path)
    message = str(caught.value)
    assert str(tmp_path) in message and "apt-get install clang-19" in message and "--llvm-bin" in message


def test_too_old_llvm_is_rejected(tmp_path: Path) -> None:
    fake_opt = tmp_path / "opt"
    fake_opt.write_text("#!/bin/sh\necho 'Debian LLVM version 14.0.6'\n")
    fake_opt.chmod(0o755)
    with pytest.raises(LLVMNotFound, match=r"LLVM 14\.0\.6.*needs LLVM >= 17"):
        find_toolchain(tmp_path)


def test_nothing_found_lists_where_it_looked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLVM_BIN", raising=False)
    monkeypatch.setattr(llvm, "_candidate_dirs", lambda: [])
    llvm._find_cached.cache_clear()
    try:
        with pytest.raises(LLVMNotFound, match=r"No LLVM >= 17 found.*LLVM_BIN"):
            find_toolchain()
    finally:
        llvm._find_cached.cache_clear()


def test_missing_tool_is_named(toolchain: Toolchain) -> None:
    with pytest.raises(LLVMNotFound, match="no-such-tool"):
        toolchain.tool("no-such-tool")


def test_the_version_is_read_once_per_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runs = tmp_path / "runs"
    opt = tmp_path / "opt"
    opt.write_text(f"#!/bin/sh\necho run >> {runs}\necho 'LLVM version 19.1.7'\n")
    opt.chmod(0o755)
    assert llvm._read_version(opt) == "19.1.7"
    assert llvm._read_version(opt) == "19.1.7"
    assert runs.read_text() == "run\n"  # the second answer came from the memo
    opt.write_text(f"#!/bin/sh\necho run >> {runs}\necho 'LLVM version 19.1.8'\n")  # an upgrade
    os.utime(opt, ns=(opt.stat().st_atime_ns, opt.stat().st_mtime_ns + 10**9))
    assert llvm._read_version(opt) == "19.1.8"
    assert runs.read_text() == "run\nrun\n"
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(not_a_folder))  # no memo: it costs the process only
    other = tmp_path / "other-opt"
    other.write_text("#!/bin/sh\necho 'LLVM version 22.1.0'\n")
    other.chmod(0o755)
    assert llvm._read_version(other) == "22.1.0"
