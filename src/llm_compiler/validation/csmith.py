"""A suite of random C programs from Csmith, generated with fixed seeds and cached.

Csmith (Debian: ``csmith`` and ``libcsmith-dev``) writes random, undefined-behaviour
free C programs that print a checksum of their global state, so any difference
between two builds is a miscompile. :func:`csmith_suite` generates programs for
seeds ``seed .. seed+count-1`` (small settings keep them quick to compile), builds
each once at ``-O0`` and keeps only those that finish within the time limit with
exit status 0; slow or hanging programs are discarded here, not counted as failures
later. Generated sources and the list of discarded seeds are cached (written whole or
not at all, so an interrupted run leaves no half program), so the suite is the same
on every run.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from llm_compiler.errors import LlmCompilerError
from llm_compiler.files import atomic_write_bytes, atomic_write_text
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command
from llm_compiler.validation.sandbox import Limits, run_sandboxed
from llm_compiler.validation.suites import Suite, TestProgram

#: Csmith settings that keep programs small and quick.
CSMITH_OPTIONS = (
    "--max-funcs",
    "4",
    "--max-block-depth",
    "3",
    "--max-expr-complexity",
    "6",
    "--no-packed-struct",
)

INSTALL_HINT = "Install Csmith with `sudo apt-get install csmith libcsmith-dev`."


def csmith_include_dir() -> Path | None:
    """The directory holding ``csmith.h``, if Csmith's runtime headers are installed."""
    for candidate in [Path("/usr/include/csmith"), *sorted(Path("/usr/include").glob("csmith-*"))]:
        if (candidate / "csmith.h").is_file():
            return candidate
    return None


def csmith_suite(
    toolchain: Toolchain, count: int, seed: int, cache_dir: Path, run_seconds: float = 2.0
) -> Suite:
    """``count`` Csmith programs from seed ``seed`` on, generated once and cached.

    Raises:
        LlmCompilerError: Csmith or its headers are not installed.
    """
    csmith = shutil.which("csmith")
    include = csmith_include_dir()
    if csmith is None or include is None:
        raise LlmCompilerError(f"The csmith suite needs Csmith and its headers. {INSTALL_HINT}")
    folder = cache_dir / "csmith"
    folder.mkdir(parents=True, exist_ok=True)
    discarded_file = folder / "discarded.json"
    discarded: dict[str, str] = json.loads(discarded_file.read_text()) if discarded_file.exists() else {}
    flags = ("-w", f"-I{include}")
    programs = []
    for number in range(seed, seed + count):
        source = folder / f"csmith-{number}.c"
        if str(number) in discarded:
            continue
        if not source.exists():
            reason = _generate(csmith, toolchain, number, source, flags, run_seconds)
            if reason is not None:
                discarded[str(number)] = reason
                atomic_write_text(discarded_file, json.dumps(discarded, indent=1))
                continue
        programs.append(
            TestProgram(f"csmith-{number}", "c", source.read_text(), "Csmith random program", "csmith", flags)
        )
    return Suite(f"csmith:{seed}+{count}", tuple(programs))


def _generate(
    csmith: str, toolchain: Toolchain, number: int, source: Path, flags: tuple[str, ...], run_seconds: float
) -> str | None:
    """Writes program ``number`` to ``source``; returns why it was discarded, or None."""
    with tempfile.TemporaryDirectory(prefix="llm-compiler-csmith-") as scratch:
        directory = Path(scratch)
        candidate = directory / "program.c"
        # Csmith writes platform.info into its working directory: keep it in the scratch one.
        run_command(
            [csmith, "--seed", str(number), *CSMITH_OPTIONS, "-o", candidate], timeout=60, cwd=directory
        )
        try:
            run_command(
                [toolchain.tool("clang"), "-O0", *flags, candidate, "-o", directory / "program"],
                timeout=120,
                cwd=directory,
            )
        except LlmCompilerError as error:
            return f"does not compile at -O0: {str(error)[:200]}"
        result = run_sandboxed(directory / "program", directory, Limits(timeout=run_seconds, cpu_seconds=10))
        if result.timed_out:
            return f"runs longer than {run_seconds:g} s"
        if result.returncode != 0:
            return f"exits with status {result.returncode}"
        atomic_write_bytes(source, candidate.read_bytes())
    return None
