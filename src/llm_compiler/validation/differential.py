"""Differential run check: a pass list must not change what a runnable program does.

A program that defines ``main`` is built twice, with a reference pipeline
(``default<O0>``: no optimization, the conservative build) and with the candidate
pass list; each build is compiled once to an object, then linked and run by the
build-and-run :class:`~llm_compiler.validation.checker.Checker` (one link line, the
sandbox and its limits). The candidate passes when it compiles, links, runs and
prints the same standard output with the same exit status. The reference result is
computed once per program.

A timeout says how busy the machine was as much as what the list did: a run or link
past its limits is tried once more with longer ones (the checker's
:data:`~llm_compiler.validation.checker.RETRY_FACTOR`), and what still times out, or a
compile past the compiler's time limit, is a TIMEOUT that is
:attr:`CheckResult.transient`: it rejects the list for this check only. A reference
that timed out is not remembered (the next check builds and runs it again) and makes
the check a TIMEOUT, never UNSUPPORTED, which would let the list pass unchecked.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import O0_PIPELINE, Program
from llm_compiler.errors import CommandFailed, CompileTimeout
from llm_compiler.passes.pipeline import PassList
from llm_compiler.toolchain.ir import defined_functions
from llm_compiler.validation.checker import RETRY_FACTOR, Checker, LinkFailure
from llm_compiler.validation.outcomes import Outcome
from llm_compiler.validation.sandbox import Limits, RunResult


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

    @property
    def transient(self) -> bool:
        """Whether the verdict rests on a timeout (a compile, link or run past its limits,
        the reference's included): it holds for this check only, since a busy machine
        times out good lists too, so nothing decided by it may be cached."""
        return self.outcome is Outcome.TIMEOUT


def is_runnable(program: Program) -> bool:
    """True when the program defines ``main`` and can therefore be run."""
    return "main" in defined_functions(program.ir)


class DifferentialChecker:
    """Checks pass lists on runnable programs against a reference build.

    Args:
        compiler: The compiler (toolchain, timeouts, pass-list gate).
        run_timeout: Seconds each test executable may run (wall clock and CPU time).
        limits: All limits of each run; when given, ``run_timeout`` is not used.

    Example::

        checker = DifferentialChecker(compiler)
        result = checker.check(program, compiler.passes("module(default<Oz>)"))
        result.outcome.is_failure
    """

    def __init__(
        self, compiler: Compiler, *, run_timeout: float = 10.0, limits: Limits | None = None
    ) -> None:
        self.compiler = compiler
        limits = limits or Limits(timeout=run_timeout, cpu_seconds=max(1, round(run_timeout)))
        self.checker = Checker(compiler.toolchain, link_timeout=compiler.timeout, limits=limits)
        self._reference: dict[str, RunResult | CheckResult] = {}

    def check(self, program: Program, passes: PassList) -> CheckResult:
        """Builds and runs ``program`` with ``passes`` and compares with the reference.

        Returns:
            PASS, or UNSUPPORTED (no ``main``, or the reference build fails), or the
            failure: COMPILE_FAIL, TIMEOUT (compiling, linking or running, the
            reference's included: :attr:`~CheckResult.transient`), LINK_FAIL,
            RUNTIME_FAIL (a signal, or a non-zero exit status other than the
            reference's) or OUTPUT_MISMATCH (other output, or exit status 0 where the
            reference's was not).

        Raises:
            InvalidPassList: The list fails the compiler's pass-list gate.
        """
        return self._against_reference(program, passes.pipeline, lambda: self._build_and_run(program, passes))

    def check_object(self, program: Program, obj: bytes, label: str) -> CheckResult:
        """Links and runs an object built from ``program`` some other way (``label``
        says how) and compares with the reference, as :meth:`check` does."""
        return self._against_reference(program, label, lambda: self._run(program, label, obj))

    def _against_reference(
        self, program: Program, label: str, candidate: Callable[[], RunResult | CheckResult]
    ) -> CheckResult:
        if not is_runnable(program):
            return CheckResult(Outcome.UNSUPPORTED, program.name, label, "no main() to run")
        reference = self._reference_run(program)
        if isinstance(reference, CheckResult) and reference.transient:
            detail = f"the -O0 reference: {reference.detail}; a timeout is not kept: checked again next time"
            return CheckResult(Outcome.TIMEOUT, program.name, label, detail)
        if isinstance(reference, CheckResult):
            return CheckResult(
                Outcome.UNSUPPORTED, program.name, label, f"reference build failed: {reference.detail}"
            )
        return self._compare(program, label, reference, candidate())

    def _compare(
        self, program: Program, pipeline: str, reference: RunResult, candidate: RunResult | CheckResult
    ) -> CheckResult:
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
        """The -O0 build's run, remembered per program unless it timed out."""
        remembered = self._reference.get(program.id)
        if remembered is not None:
            return remembered
        result = self._build_and_run(program, self.compiler.pass_set.parse(O0_PIPELINE))
        if not (isinstance(result, CheckResult) and result.transient):
            self._reference[program.id] = result
        return result

    def _build_and_run(self, program: Program, passes: PassList) -> RunResult | CheckResult:
        """The run of ``program`` built with ``passes``, or the failure that ended it."""
        pipeline = passes.pipeline
        try:
            obj = self.compiler.compile(program, passes, ("obj",)).obj
        except CompileTimeout as error:
            return CheckResult(Outcome.TIMEOUT, program.name, pipeline, str(error))
        except CommandFailed as error:
            return CheckResult(Outcome.COMPILE_FAIL, program.name, pipeline, str(error))
        assert obj is not None
        return self._run(program, pipeline, obj)

    def _run(self, program: Program, pipeline: str, obj: bytes) -> RunResult | CheckResult:
        result = self.checker.link_and_run(obj, subject=program.name)
        if isinstance(result, LinkFailure) and result.timed_out:
            limit = self.checker.link_timeout
            detail = f"the link ran past its time limit twice ({limit:g} s, then {limit * RETRY_FACTOR:g} s)"
            return CheckResult(Outcome.TIMEOUT, program.name, pipeline, f"{detail}: {result.detail}")
        if isinstance(result, LinkFailure):
            return CheckResult(Outcome.LINK_FAIL, program.name, pipeline, result.detail)
        if result.timed_out:
            limits = f"{self.checker.limits.timeout:g} s, then {self.checker.retry_limits.timeout:g} s"
            detail = f"the program ran past its limits twice ({limits})"
            return CheckResult(Outcome.TIMEOUT, program.name, pipeline, detail)
        if result.killed_by is not None:
            return CheckResult(
                Outcome.RUNTIME_FAIL,
                program.name,
                pipeline,
                f"killed by signal {_signal_name(result.killed_by)}",
            )
        return result


def _signal_name(number: int) -> str:
    """``11 (SIGSEGV)``, or just the number of a signal Python does not name."""
    try:
        return f"{number} ({signal.Signals(number).name})"
    except ValueError:
        return str(number)
