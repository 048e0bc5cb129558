"""Differential run check: a pass list must not change what a runnable program does.

A program that defines ``main`` is built twice, with a reference pipeline
(``default<O0>``: no optimization, the conservative build) and with the candidate
pass list, each lowered with ``llc`` and linked with ``clang++``; both executables run
in a fresh temporary directory with a time limit. The candidate passes when it
compiles, links, runs and prints the same standard output with the same exit status.
The reference result is computed once per program.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import O0_PIPELINE, Program
from llm_compiler.errors import CommandFailed, CompileTimeout
from llm_compiler.passes.pipeline import PassList
from llm_compiler.toolchain.ir import defined_functions
from llm_compiler.toolchain.runner import run_command
from llm_compiler.validation.outcomes import Outcome

#: Environment of test runs: nothing inherited but a minimal PATH and locale.
_RUN_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}


@dataclass(frozen=True)
class RunResult:
    """What an executable printed and how it exited."""

    stdout: bytes
    returncode: int


@dataclass(frozen=True)
class CheckResult:
    """The verdict on one (program, pass list) pair, with the evidence.

    Attributes:
        outcome: The verdict.
        program: The program's name.
        pipeline: The pass list checked.
        detail: What went wrong (the failing command and its output), or "".
    """

    outcome: Outcome
    program: str
    pipeline: str
    detail: str = ""


def is_runnable(program: Program) -> bool:
    """True when the program defines ``main`` and can therefore be run."""
    return "main" in defined_functions(program.ir)


class DifferentialChecker:
    """Checks pass lists on runnable programs against a reference build.

    Args:
        compiler: The compiler (toolchain, timeouts, pass-list gate).
        run_timeout: Seconds each test executable may run.
    """

    def __init__(self, compiler: Compiler, *, run_timeout: float = 10.0) -> None:
        self.compiler = compiler
        self.run_timeout = run_timeout
        self._reference: dict[str, RunResult | CheckResult] = {}

    def check(self, program: Program, passes: PassList) -> CheckResult:
        """Builds and runs ``program`` with ``passes`` and compares with the reference."""
        pipeline = passes.pipeline
        if not is_runnable(program):
            return CheckResult(Outcome.UNSUPPORTED, program.name, pipeline, "no main() to run")
        reference = self._reference_run(program)
        if isinstance(reference, CheckResult):
            return CheckResult(
                Outcome.UNSUPPORTED, program.name, pipeline, f"reference build failed: {reference.detail}"
            )
        candidate = self._build_and_run(program, passes)
        if isinstance(candidate, CheckResult):
            return candidate
        if candidate.returncode != reference.returncode:
            return CheckResult(
                Outcome.RUNTIME_FAIL if candidate.returncode != 0 else Outcome.OUTPUT_MISMATCH,
                program.name,
                pipeline,
                f"exit status {candidate.returncode}, reference {reference.returncode}",
            )
        if candidate.stdout != reference.stdout:
            return CheckResult(
                Outcome.OUTPUT_MISMATCH,
                program.name,
                pipeline,
                f"stdout {candidate.stdout[:200]!r}, reference {reference.stdout[:200]!r}",
            )
        return CheckResult(Outcome.PASS, program.name, pipeline)

    def _reference_run(self, program: Program) -> RunResult | CheckResult:
        if program.id not in self._reference:
            passes = self.compiler.pass_set.parse(O0_PIPELINE)
            self._reference[program.id] = self._build_and_run(program, passes)
        return self._reference[program.id]

    def _build_and_run(self, program: Program, passes: PassList) -> RunResult | CheckResult:
        pipeline = passes.pipeline
        with tempfile.TemporaryDirectory(prefix="llm-compiler-check-") as scratch:
            directory = Path(scratch)
            try:
                optimized = self.compiler.optimize(program, passes)
                (directory / "program.o").write_bytes(self.compiler.lower(optimized, name=program.name))
            except CompileTimeout as error:
                return CheckResult(Outcome.TIMEOUT, program.name, pipeline, str(error))
            except CommandFailed as error:
                return CheckResult(Outcome.COMPILE_FAIL, program.name, pipeline, str(error))
            try:
                run_command(
                    [self.compiler.toolchain.tool("clang++"), "-no-pie", "program.o", "-lm", "-o", "program"],
                    timeout=self.compiler.timeout,
                    cwd=directory,
                    subject=program.name,
                )
            except CommandFailed as error:
                return CheckResult(Outcome.LINK_FAIL, program.name, pipeline, f"{error}\n{error.stderr}")
            try:
                result = run_command(
                    [os.fspath(directory / "program")],
                    timeout=self.run_timeout,
                    cwd=directory,
                    env=_RUN_ENV,
                    check=False,
                    subject=program.name,
                )
            except CompileTimeout as error:
                return CheckResult(Outcome.TIMEOUT, program.name, pipeline, str(error))
        if result.returncode < 0:
            return CheckResult(
                Outcome.RUNTIME_FAIL, program.name, pipeline, f"killed by signal {-result.returncode}"
            )
        return RunResult(result.stdout, result.returncode)
