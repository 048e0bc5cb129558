"""Minimal reproducers of a failing pass list: the shortest failing sub-list, reduced IR.

:func:`ddmin` is delta debugging over a sequence and a predicate ("still fails").
:func:`write_reproducer` applies it to the top-level passes of a list that fails a
test program (the same outcome must persist), reduces the program's IR with
``llvm-reduce`` when the failure is a compiler failure (for miscompiles the IR cannot
be reduced without a trustworthy oracle, so it is kept whole), and writes a folder
with the source, the IR, the pass list, the expected output and ``replay.sh``.
"""

from __future__ import annotations

import shlex
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from llm_compiler.core.program import Program
from llm_compiler.errors import CommandFailed
from llm_compiler.passes.pipeline import PassList
from llm_compiler.toolchain.runner import run_command
from llm_compiler.validation.outcomes import Outcome
from llm_compiler.validation.passlisteval import PassListEval, ProgramCheck
from llm_compiler.validation.suites import TestProgram

T = TypeVar("T")


def ddmin(items: Sequence[T], fails: Callable[[list[T]], bool]) -> list[T]:
    """A 1-minimal failing subsequence of ``items`` (Zeller's delta debugging).

    ``fails(items)`` must be true. Removing any single element of the result makes
    ``fails`` false.

    Example:
        >>> ddmin(list(range(8)), lambda xs: 3 in xs and 6 in xs)
        [3, 6]
    """
    current = list(items)
    granularity = 2
    while len(current) >= 2:
        size = max(1, len(current) // granularity)
        chunks = [current[i : i + size] for i in range(0, len(current), size)]
        reduced = False
        for index in range(len(chunks)):
            complement = [item for j, chunk in enumerate(chunks) if j != index for item in chunk]
            if complement and fails(complement):
                current = complement
                granularity = max(granularity - 1, 2)
                reduced = True
                break
        if not reduced:
            if granularity >= len(current):
                break
            granularity = min(len(current), granularity * 2)
    return current


def shortest_failing_list(
    evaluator: PassListEval, test: TestProgram, passes: PassList, outcome: Outcome
) -> PassList:
    """The 1-minimal sub-list of ``passes`` that still gives ``outcome`` on ``test``."""

    def fails(nodes: list[object]) -> bool:
        return evaluator.check_program(test, PassList(nodes)).outcome is outcome  # type: ignore[arg-type]

    return PassList(ddmin(list(passes), fails))  # type: ignore[arg-type]


_INTERESTING = """#!/bin/sh
# Interesting when opt and llc still fail on the candidate IR as on the original.
out=$({opt} {passes} "$1" -o - 2>&1 >/tmp/llm-compiler-reduce-$$.bc) && \\
out=$({llc} -filetype=obj /tmp/llm-compiler-reduce-$$.bc -o /dev/null 2>&1)
status=$?
rm -f /tmp/llm-compiler-reduce-$$.bc
[ $status -ne 0 ] || exit 1
{needle_test}
"""


def _needle(detail: str) -> str | None:
    for line in detail.splitlines():
        if "LLVM ERROR:" in line:
            return line.split("LLVM ERROR:", 1)[1].strip()[:120]
    return None


def reduce_ir(
    evaluator: PassListEval, program: Program, passes: PassList, detail: str, folder: Path
) -> Path | None:
    """Reduces ``program``'s IR with llvm-reduce while opt/llc still fail; None if it cannot."""
    tool = evaluator.compiler.toolchain.tool
    try:
        reducer = tool("llvm-reduce")
    except Exception:
        return None
    needle = _needle(detail)
    needle_test = f"printf '%s' \"$out\" | grep -qF -- {shlex.quote(needle)}" if needle else "exit 0"
    script = folder / "interesting.sh"
    script.write_text(
        _INTERESTING.format(
            opt=shlex.quote(str(tool("opt"))),
            llc=shlex.quote(str(tool("llc"))),
            passes=shlex.quote(f"-passes={passes.pipeline}"),
            needle_test=needle_test,
        )
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    original = folder / "program.ll"
    reduced = folder / "reduced.ll"
    try:
        run_command(
            [reducer, f"--test={script}", "--abort-on-invalid-reduction", original, "-o", reduced],
            timeout=600,
            cwd=folder,
        )
    except CommandFailed:
        return None
    return reduced if reduced.exists() else None


def write_reproducer(evaluator: PassListEval, failure: ProgramCheck, passes: PassList, out: Path) -> Path:
    """Writes a minimal reproducer of ``failure`` (of ``passes``) under ``out``.

    Returns:
        The reproducer's folder.
    """
    test = next(t for t in evaluator.programs if t.name == failure.program and t.suite == failure.suite)
    program = evaluator.program_ir(test)
    folder = out / f"{test.suite.replace(':', '_')}-{test.name}"
    folder.mkdir(parents=True, exist_ok=True)
    shortest = shortest_failing_list(evaluator, test, passes, failure.outcome)
    (folder / f"program{test.suffix}").write_text(test.source)
    if isinstance(program, Program):
        (folder / "program.ll").write_text(program.ir)
    (folder / "passes.txt").write_text(shortest.pipeline + "\n")
    (folder / "original-passes.txt").write_text(passes.pipeline + "\n")
    reference = evaluator._references.get(test.key)
    if reference is not None:
        (folder / "expected-output.txt").write_bytes(reference.stdout)
    command = evaluator.replay_command(test, shortest.pipeline)
    replay = folder / "replay.sh"
    replay.write_text(
        "#!/bin/sh\n# Rebuilds the program with the failing pass list and runs it; compare with\n"
        '# expected-output.txt (the -O2 build\'s output).\nset -x\ncd "$(dirname "$0")"\n'
        f"{command}\n"
    )
    replay.chmod(replay.stat().st_mode | stat.S_IEXEC)
    reduced = None
    if failure.outcome in (Outcome.COMPILE_FAIL,) and isinstance(program, Program):
        reduced = reduce_ir(evaluator, program, shortest, failure.detail, folder)
    check = evaluator.check_program(test, shortest)
    lines = [
        f"# Reproducer: {failure.outcome} on {test.name} ({test.suite})",
        "",
        f"- LLVM {evaluator.compiler.llvm_version}",
        f"- failing pass list (1-minimal, from {len(passes)} passes): `{shortest.pipeline}`",
        f"- what the program exercises: {test.exercises or 'n/a'}",
        f"- reduced IR: {'reduced.ll (llvm-reduce, interesting.sh)' if reduced else 'not reduced'}",
        "",
        "Replay (writes program.ll, optimized.ll, program.o and program here):",
        "",
        "    ./replay.sh",
        "",
        "Evidence:",
        "",
        *("    " + line for line in check.detail.splitlines()[:30]),
    ]
    (folder / "README.md").write_text("\n".join(lines) + "\n")
    return folder
