"""Test binaries cannot write outside their directory and are stopped by their limits."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command
from llm_compiler.validation.sandbox import Limits, RunResult, isolation, run_sandboxed

ESCAPE = r"""
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  FILE *f = fopen("OUTSIDE", "w");
  if (f) { fputs("escaped", f); fclose(f); }
  FILE *g = fopen("inside.txt", "w");
  if (!g) return 3;
  fputs("ok", g); fclose(g);
  printf("env=%s\n", getenv("HOME") ? getenv("HOME") : "none");
  return 0;
}
"""


def build(toolchain: Toolchain, directory: Path, source: str) -> Path:
    (directory / "p.c").write_text(source)
    run_command([toolchain.tool("clang"), "p.c", "-o", "p"], timeout=60, cwd=directory)
    return directory / "p"


@pytest.mark.skipif("bubblewrap" not in isolation(), reason="bubblewrap does not work on this machine")
def test_writes_outside_the_directory_fail(toolchain: Toolchain, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    target = tmp_path / "outside.txt"
    escaping = build(toolchain, work, ESCAPE.replace("OUTSIDE", str(target)))
    result = run_sandboxed(escaping, work)
    assert result.returncode == 0 and result.stdout == b"env=none\n"
    assert not target.exists(), "the test wrote outside its directory"
    assert (work / "inside.txt").read_text() == "ok"


def test_limits_stop_runaway_programs(toolchain: Toolchain, tmp_path: Path) -> None:
    spin = build(toolchain, tmp_path, "int main(void) { volatile unsigned x = 0; for (;;) x++; }\n")
    result = run_sandboxed(spin, tmp_path, Limits(timeout=1.0, cpu_seconds=30))
    assert result.timed_out
    # the CPU-time limit strikes first: still a hang, not a crash
    cpu_bound = run_sandboxed(spin, tmp_path, Limits(timeout=30.0, cpu_seconds=1))
    assert cpu_bound.timed_out and cpu_bound.returncode != 0
    hog = build(
        toolchain,
        tmp_path,
        "#include <stdlib.h>\n#include <string.h>\nint main(void) { for (int i = 0; i < 64; i++) "
        "{ char *p = malloc(1 << 26); if (!p) return 7; memset(p, 1, 1 << 26); } return 0; }\n",
    )
    limited = run_sandboxed(hog, tmp_path, Limits(memory_bytes=256 * 1024**2))
    assert limited.returncode != 0


def test_a_crash_reads_as_its_signal(toolchain: Toolchain, tmp_path: Path) -> None:
    crash = build(toolchain, tmp_path, "int main(void) { volatile int *p = 0; return *p; }\n")
    result = run_sandboxed(crash, tmp_path)
    assert result.killed_by == signal.SIGSEGV and not result.timed_out
    exits = build(toolchain, tmp_path, "int main(void) { return 7; }\n")
    assert run_sandboxed(exits, tmp_path).killed_by is None
    assert RunResult(b"", b"", -signal.SIGABRT).killed_by == signal.SIGABRT
    assert RunResult(b"", b"", 128 + signal.SIGABRT).killed_by == signal.SIGABRT
    assert RunResult(b"", b"", 1).killed_by is None and RunResult(b"", b"", 255).killed_by is None


def test_endless_output_is_bounded_and_arguments_stdin_and_environment_arrive(
    toolchain: Toolchain, tmp_path: Path
) -> None:
    forever = build(toolchain, tmp_path, '#include <stdio.h>\nint main(void) { for (;;) puts("y"); }\n')
    limits = Limits(timeout=20, cpu_seconds=20, file_bytes=1024**2)
    result = run_sandboxed(forever, tmp_path, limits)
    assert result.killed_by == signal.SIGXFSZ and len(result.stdout) <= 1024**2
    echo = build(
        toolchain,
        tmp_path,
        "#include <stdio.h>\n#include <stdlib.h>\nint main(int argc, char **argv) { int c; "
        'while ((c = getchar()) != EOF) putchar(c); printf(" %s %s\\n", argv[1], getenv("X")); return 4; }\n',
    )
    result = run_sandboxed(echo, tmp_path, arguments=["arg"], stdin=b"in", environment={"X": "x"})
    assert (result.stdout, result.returncode) == (b"in arg x\n", 4)
