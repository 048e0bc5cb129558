"""Choosing suites from the command line, and the gate that tune's best lists pass.

A suite is named ``builtin``, ``csmith`` or ``csmith:N`` (N programs, default 20),
or ``humaneval-x:PATH``. :class:`Gate` is what ``tune`` asks before a list leaves the
tool: the list must pass PassListEval on the bundled suites, keep a runnable target's
own behaviour (the differential run check) and keep the user's own check green
(``--check CMD``, run with the candidate's object file). It says which of these
applied, so a target that could only be checked against the bundled suites is
reported as such.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.errors import CommandFailed, InvalidInput
from llm_compiler.passes.pipeline import PassList
from llm_compiler.toolchain.runner import run_command
from llm_compiler.validation.csmith import csmith_suite
from llm_compiler.validation.differential import DifferentialChecker, is_runnable
from llm_compiler.validation.outcomes import Outcome
from llm_compiler.validation.passlisteval import PassListEval, default_cache_dir
from llm_compiler.validation.suites import Suite, builtin_suite, humaneval_x_suite

DEFAULT_CSMITH_PROGRAMS = 20


def load_suites(names: Sequence[str], compiler: Compiler, cache_dir: Path | None = None) -> list[Suite]:
    """The suites named on a command line (``builtin`` when none is named).

    Raises:
        InvalidInput: An unknown suite name or an unreadable HumanEval-X file.
    """
    suites = []
    for name in names or ["builtin"]:
        kind, _, argument = name.partition(":")
        if kind == "builtin":
            suites.append(builtin_suite())
        elif kind == "csmith":
            count = int(argument) if argument.isdigit() else DEFAULT_CSMITH_PROGRAMS
            base = (cache_dir or default_cache_dir()) / compiler.llvm_version
            suites.append(csmith_suite(compiler.toolchain, count, 1, base))
        elif kind == "humaneval-x" and argument:
            suites.append(humaneval_x_suite(Path(argument)))
        else:
            raise InvalidInput(
                f"Unknown suite {name!r}: use builtin, csmith[:N] or humaneval-x:PATH "
                "(a .jsonl or .jsonl.gz)."
            )
    return suites


@dataclass(frozen=True)
class GateResult:
    """Whether a list may leave the tool for a program, and what was checked."""

    passed: bool
    outcome: Outcome
    description: str


class Gate:
    """Every check a best list must pass before ``tune`` reports it.

    Args:
        compiler: The compiler.
        suites: Bundled or user suites for PassListEval (empty: none).
        user_check: A shell command run with ``LLM_COMPILER_OBJECT`` (the target built
            with the candidate) and ``LLM_COMPILER_PASSES`` set; exit 0 means pass.
        cache_dir: PassListEval's cache.
    """

    def __init__(
        self,
        compiler: Compiler,
        suites: Sequence[Suite],
        user_check: str | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        self.compiler = compiler
        self.evaluator = (
            PassListEval(compiler, suites, cache_dir=cache_dir, stop_at_first_failure=True)
            if suites
            else None
        )
        self.differential = DifferentialChecker(compiler)
        self.user_check = user_check

    def check(self, program: Program, passes: PassList) -> GateResult:
        done = []
        if self.evaluator is not None:
            verdict = self.evaluator.check(passes)
            if not verdict.passed:
                failure = verdict.failures[0]
                return GateResult(
                    False, failure.outcome, f"PassListEval: {failure.outcome} on {failure.program}"
                )
            done.append(f"PassListEval ({sum(verdict.outcomes.values())} programs)")
        if is_runnable(program):
            result = self.differential.check(program, passes)
            if result.outcome.is_failure:
                return GateResult(
                    False, result.outcome, f"the program itself: {result.outcome} ({result.detail[:200]})"
                )
            if result.outcome is Outcome.PASS:
                done.append("the program's own output and exit status")
        if self.user_check:
            ok, detail = self._user_check(program, passes)
            if not ok:
                return GateResult(False, Outcome.RUNTIME_FAIL, f"--check failed: {detail}")
            done.append(f"--check {self.user_check!r}")
        if not done:
            return GateResult(False, Outcome.UNSUPPORTED, "nothing could check this list")
        only_suites = len(done) == 1 and self.evaluator is not None
        note = " (only the bundled suites could check this target)" if only_suites else ""
        return GateResult(True, Outcome.PASS, "passed: " + ", ".join(done) + note)

    def _user_check(self, program: Program, passes: PassList) -> tuple[bool, str]:
        with tempfile.TemporaryDirectory(prefix="llm-compiler-check-") as scratch:
            obj = Path(scratch) / "candidate.o"
            try:
                obj.write_bytes(self.compiler.object_code(program, passes)[0])
            except CommandFailed as error:
                return False, str(error)
            env = {**os.environ, "LLM_COMPILER_OBJECT": str(obj), "LLM_COMPILER_PASSES": passes.pipeline}
            result = run_command(
                ["sh", "-c", self.user_check or "true"],
                timeout=3600,
                env=env,
                check=False,
                subject=program.name,
            )
        if result.returncode != 0:
            tail = (result.stdout_text + result.stderr_text)[-300:]
            return (
                False,
                f"exit status {result.returncode}: {tail} (command: {shlex.quote(self.user_check or '')})",
            )
        return True, ""
