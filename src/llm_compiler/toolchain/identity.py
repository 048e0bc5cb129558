"""The identity of an LLVM build by its contents: what a verdict made elsewhere must match.

A pass list's verdict (PassListEval, :mod:`llm_compiler.validation.shipped`) holds for
the objects the compiler built from the suite programs. :func:`build_identity` names
the compiler by the SHA-256 of its files, so two machines share an identity only when
they run the same files: Debian's ``clang-19`` of one package version gives one
identity everywhere, and a rebuilt, patched or other vendor's LLVM of the same version
number another. (What the programs include from the system is compared through their
IR, :func:`~llm_compiler.validation.shipped.suite_ir_digest`.)

The files are ``clang``, ``clang++``, ``opt``, ``llc`` and ``ld.lld`` (when there) and
the LLVM libraries they load (``libLLVM``, ``libclang-cpp``: what ``ldd`` lists from
the LLVM's own library folder, and what the in-process engine loads). Hashing them
costs a few tenths of a second (about 200 MB for Debian's LLVM 19), so each file's
hash is remembered on disk by its path, size, modification time and inode, and the
whole identity once per process.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
from pathlib import Path

from llm_compiler.errors import LlmCompilerError, ToolchainError
from llm_compiler.files import atomic_write_text, cache_dir, file_sha256
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command

#: The toolchain's programs that build and link what a verdict judged.
TOOLS = ("clang", "clang++", "opt", "llc", "ld.lld")

_LDD_LINE = re.compile(r"^\s*(\S+)\s+=>\s+(/\S+)", re.MULTILINE)


def build_identity(toolchain: Toolchain) -> str:
    """A SHA-256 (hex) of the files that decide what ``toolchain`` builds and runs
    (module docstring): equal on two machines only when every file is.

    Raises:
        ToolchainError: A tool's libraries cannot be listed.
    """
    return _identity(toolchain.bin_dir, toolchain.version)


def identity_files(toolchain: Toolchain) -> dict[str, Path]:
    """The files :func:`build_identity` hashes, by the name it gives each (a tool's
    name, or a library's file name)."""
    return _files(toolchain.bin_dir)


@functools.lru_cache(maxsize=8)
def _identity(bin_dir: Path, version: str) -> str:
    parts = {name: file_hash(path) for name, path in sorted(_files(bin_dir).items())}
    return hashlib.sha256(json.dumps([version, parts], sort_keys=True).encode()).hexdigest()


def _files(bin_dir: Path) -> dict[str, Path]:
    files: dict[str, Path] = {}
    llvm_lib = (bin_dir.parent / "lib").resolve()
    for name in TOOLS:
        tool = bin_dir / name
        if not tool.is_file():
            continue
        files[name] = tool.resolve()
        for library, path in _libraries(tool.resolve()).items():
            resolved = path.resolve()
            ours = resolved.parent == llvm_lib or library.startswith(("libLLVM", "libclang-cpp"))
            if ours:
                files[library] = resolved
    for found in sorted(llvm_lib.glob("libLLVM*.so*")):  # what the in-process engine may load
        files.setdefault(found.name, found.resolve())
    return files


def _libraries(tool: Path) -> dict[str, Path]:
    """The shared libraries ``tool`` loads (``ldd``), remembered by the tool's file."""
    status = tool.stat()
    memo = _memo_path("ldd", f"{tool}|{status.st_size}|{status.st_mtime_ns}|{status.st_ino}")
    with contextlib.suppress(OSError, ValueError):
        return {name: Path(path) for name, path in json.loads(memo.read_text()).items()}
    result = run_command(["ldd", tool], timeout=60, check=False)
    if result.returncode != 0:
        raise ToolchainError(
            f"`ldd {tool}` failed (status {result.returncode}): {result.stderr_text[-300:]}; "
            "the LLVM build's identity needs the libraries it loads."
        )
    found = {match.group(1): match.group(2) for match in _LDD_LINE.finditer(result.stdout_text)}
    with contextlib.suppress(OSError, LlmCompilerError):
        atomic_write_text(memo, json.dumps(found))
    return {name: Path(path) for name, path in found.items()}


def file_hash(path: Path) -> str:
    """The SHA-256 of ``path``'s bytes, remembered on disk by its path, size,
    modification time and inode."""
    status = path.stat()
    memo = _memo_path("sha256", f"{path}|{status.st_size}|{status.st_mtime_ns}|{status.st_ino}")
    with contextlib.suppress(OSError):
        remembered = memo.read_text().strip()
        if re.fullmatch(r"[0-9a-f]{64}", remembered):
            return remembered
    value = file_sha256(path)
    with contextlib.suppress(OSError, LlmCompilerError):  # a read-only cache costs a hash
        atomic_write_text(memo, value + "\n")
    return value


def _memo_path(kind: str, identity: str) -> Path:
    return cache_dir("identity", kind) / hashlib.sha256(identity.encode()).hexdigest()[:32]
