"""Shared fixtures: the real LLVM toolchain, a compiler, the bundled examples, isolated caches."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.toolchain.llvm import Toolchain, find_toolchain

#: The LLVM whose exact figures the tests check (the shipped data's reference). Tests of
#: other LLVMs name theirs (tests/test_other_llvm.py); LLVM_BIN still overrides this.
REFERENCE_LLVM = Path("/usr/lib/llvm-19/bin")
if not os.environ.get("LLVM_BIN") and (REFERENCE_LLVM / "opt").is_file():
    # Set before any test module is imported, and inherited by the CLI's subprocesses, so a
    # newer LLVM installed beside it (which the tool itself would pick) changes no test.
    os.environ["LLVM_BIN"] = str(REFERENCE_LLVM)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
EXAMPLE_FILES = sorted(p for p in EXAMPLES.iterdir() if p.suffix in (".c", ".cpp"))


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One cache for the session (derived pass sets, validation builds), never the user's.

    Under pytest-xdist the workers share it, as builds and tuning jobs on one machine do:
    what one worker derived or validated, the others read.
    """
    previous = os.environ.get("XDG_CACHE_HOME")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = tmp_path_factory.getbasetemp().parent / "cache"
        shared.mkdir(exist_ok=True)
        os.environ["XDG_CACHE_HOME"] = str(shared)
    else:
        os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if previous is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = previous


@pytest.fixture(autouse=True, scope="session")
def _own_compile_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The compile servers ``llm-compiler cc`` starts are the session's own, and go soon."""
    saved = {name: os.environ.get(name) for name in ("XDG_RUNTIME_DIR", "LLM_COMPILER_SERVER_IDLE")}
    os.environ["XDG_RUNTIME_DIR"] = str(tmp_path_factory.mktemp("run"))
    os.environ["LLM_COMPILER_SERVER_IDLE"] = "20"
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def toolchain() -> Toolchain:
    return find_toolchain()


@pytest.fixture(scope="session", params=["subprocess", "inprocess"])
def compiler(toolchain: Toolchain, request: pytest.FixtureRequest) -> Iterator[Compiler]:
    """A compiler for each engine: tests that use it run once per engine."""
    with Compiler(toolchain, timeout=120, engine=request.param, workers=2) as compiler:
        yield compiler


@pytest.fixture(scope="session")
def example_programs(compiler: Compiler) -> dict[str, Program]:
    return {path.name: compiler.load(path) for path in EXAMPLE_FILES}


@pytest.fixture()
def write(tmp_path: Path) -> Iterator[object]:
    """Writes a file under the test's temporary folder and returns its path."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    yield _write


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs the real ``llm-compiler`` command in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "llm_compiler", *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env={**os.environ, **(env or {})},
        timeout=600,
        check=False,
    )
