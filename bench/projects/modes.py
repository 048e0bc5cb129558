"""How each mode of the real-project benchmark builds: its compiler wrappers, binutils,
environment, and the checks that its tools work (``bench_projects.py`` describes the modes).

A compiler is a wrapper script in ``WORK/<project>/tools/<mode>/`` (also first on
``PATH``, :func:`write_wrappers`), so that every build system takes it as one program:
clang or GCC with the mode's flags (:data:`CLANG_FLAGS`, :data:`GCC_FLAGS`), or
``llm-compiler cc``/``c++`` with the driver's options. The GCC modes have ``AR``,
``RANLIB`` and ``NM`` from GCC, every other mode from LLVM (:func:`binutils`); every
mode has ``LLVM_BIN``, and none the caller's build variables (:data:`SCRUBBED`,
:func:`environment`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.errors import ToolchainError
from llm_compiler.toolchain.runner import run_command

#: What each mode's wrapper appends to a clang command line.
CLANG_FLAGS = {
    "clang-oz": ("-Oz",),
    "clang-oz-lto": (
        "-Oz", "-flto", "-fuse-ld=lld", "-Wl,--undefined-version", "-Wno-unused-command-line-argument",
    ),
}  # fmt: skip
#: What each mode's wrapper appends to a GCC command line.
GCC_FLAGS = {"gcc-os": ("-Os",), "gcc-os-lto": ("-Os", "-flto=1")}
#: Environment variables of the caller that would change a build; removed.
SCRUBBED = ("CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CC", "CXX")
VENV_BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Context:
    """What every build of a run shares (from the command line)."""

    out: Path
    work: Path
    sources: Path
    llvm_bin: Path
    llm_compiler: Path
    timeout: float
    jobs: int
    tune_budget: int = 50
    tune_jobs: int = 2
    predictor: str | None = None
    hog: int = 0
    fresh_state: bool = False

    @property
    def results(self) -> Path:
        return self.out / "results.jsonl"

    def log(self, project: str, mode: str, suffix: str = "log") -> Path:
        return self.out / "logs" / f"{project}.{mode}.{suffix}"


def gcc_tool(name: str) -> Path:
    """The GCC program ``name`` (``gcc``, ``g++``, ``gcc-ar``...) on ``PATH``.

    Raises:
        ToolchainError: It is not installed.
    """
    found = shutil.which(name)
    if found is None:
        raise ToolchainError(
            f"{name} not found on PATH: the GCC modes need it (bash bench/projects/setup.sh)."
        )
    return Path(found)


def write_wrappers(folder: Path, mode: str, context: Context, driver_args: tuple[str, ...] = ()) -> None:
    """Writes the mode's ``cc`` and ``c++`` scripts into ``folder``: clang or GCC with the
    mode's flags, or ``llm-compiler cc``/``c++`` with ``driver_args`` (its own options)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, clang, gcc, driver in (("cc", "clang", "gcc", "cc"), ("c++", "clang++", "g++", "c++")):
        if mode in CLANG_FLAGS:
            line = f'exec {shlex.quote(str(context.llvm_bin / clang))} "$@" {" ".join(CLANG_FLAGS[mode])}'
        elif mode in GCC_FLAGS:
            line = f'exec {shlex.quote(str(gcc_tool(gcc)))} "$@" {" ".join(GCC_FLAGS[mode])}'
        else:
            line = f'exec {shlex.join([str(context.llm_compiler), driver, *driver_args])} "$@"'
        path = folder / name
        path.write_text(f"#!/bin/sh\n# bench_projects.py, mode {mode}\n{line}\n")
        path.chmod(0o755)


def binutils(mode: str, context: Context) -> dict[str, str]:
    """``AR``, ``RANLIB`` and ``NM`` of a mode: GCC's (their LTO plugin reads GCC's LTO
    objects) in the GCC modes, LLVM's (which read bitcode) in the others."""
    if mode in GCC_FLAGS:
        return {key: str(gcc_tool(f"gcc-{key.lower()}")) for key in ("AR", "RANLIB", "NM")}
    return {key: str(context.llvm_bin / f"llvm-{key.lower()}") for key in ("AR", "RANLIB", "NM")}


def environment(
    context: Context,
    tools: Path,
    mode: str,
    unit_log: Path | None,
    cache_home: Path | None = None,
    runtime_dir: Path | None = None,
) -> dict[str, str]:
    """The environment of every command of a build: the mode's tools and binutils;
    with ``cache_home``, that folder as ``XDG_CACHE_HOME`` (llm-compiler's every cache);
    with ``runtime_dir``, that one as ``XDG_RUNTIME_DIR`` (where the compile server's
    socket is looked for: a new folder means a server of the build's own)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in SCRUBBED and not key.startswith("LLM_COMPILER_")
    }
    env.update(
        PATH=f"{tools}:{VENV_BIN}:{env.get('PATH', '/usr/bin:/bin')}",
        CC=str(tools / "cc"),
        CXX=str(tools / "c++"),
        **binutils(mode, context),
        LLVM_BIN=str(context.llvm_bin),
        LC_ALL="C",
    )
    if unit_log is not None:
        env["LLM_COMPILER_CC_LOG"] = str(unit_log)
    if cache_home is not None:
        env["XDG_CACHE_HOME"] = str(cache_home)
    if runtime_dir is not None:
        env["XDG_RUNTIME_DIR"] = str(runtime_dir)
    return env


def check_lld(context: Context, tools: Path) -> None:
    """Fails early when the LTO wrapper cannot link with lld."""
    with tempfile.TemporaryDirectory() as scratch:
        program = Path(scratch) / "t"
        run_command(
            [tools / "cc", "-x", "c", "-", "-o", program],
            input=b"int main(void) { return 0; }\n",
            timeout=120,
        )
        comment = run_command([context.llvm_bin / "llvm-readelf", "-p", ".comment", program], timeout=60)
        if "LLD" not in comment.stdout_text:
            raise ToolchainError(
                f"{tools / 'cc'} did not link with lld (-fuse-ld=lld): no 'LLD' in .comment."
            )


def check_gcc_lto(tools: Path, env: dict[str, str]) -> None:
    """Fails early when GCC's LTO cannot go through an archive: an LTO object archived by
    the mode's ``AR`` and ``RANLIB`` and linked into a program with GCC's linker plugin."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "f.c").write_text("int f(void) { return 42; }\n")
        (folder / "main.c").write_text("int f(void);\nint main(void) { return f() != 42; }\n")
        steps: tuple[list[str | Path], ...] = (
            [tools / "cc", "-c", "f.c", "-o", "f.o"],
            [env["AR"], "cr", "libf.a", "f.o"],
            [env["RANLIB"], "libf.a"],
            [tools / "cc", "main.c", "-L.", "-lf", "-o", "main"],
            [folder / "main"],
        )
        for command in steps:
            run_command(command, cwd=folder, env=env, timeout=120, subject="GCC's LTO through an archive")
