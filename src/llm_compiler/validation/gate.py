"""Choosing suites from the command line, and the gate that tune's best lists pass.

A suite is named ``builtin``, ``csmith`` or ``csmith:N`` (N programs, default 20),
or ``humaneval-x:PATH``. :class:`Gate` is what ``tune`` asks before a list leaves the
tool, in this order:

1. **the target's own link** (:mod:`llm_compiler.validation.linkage`): the target
   built with the list references no symbol that nothing would resolve;
2. **PassListEval** on the suites: a miscompile of any suite program (wrong output,
   crash, non-zero exit, timeout, compiler failure) rejects the list for every
   target, since it shows a pass that breaks code; a suite program's *link* failure
   does not, because step 1 decides whether a link failure can happen to this target
   (a C unit never needs libstdc++'s inline-only bodies);
3. a runnable target's own behaviour (the differential run check);
4. the user's own check (``--check CMD``, run with the candidate's object file).

It says which of these applied, so a target that could only be checked against the
bundled suites is reported as such, and a rejection says which check failed, with
what :mod:`llm_compiler.validation.salvage` needs to find the passes to blame.

A rejection that rests on a timeout (a suite program or the target itself ran past
its limits twice, or a compile past the compiler's) is :attr:`GateResult.transient`:
it holds for this run only, since a busy machine times out good lists too. Callers
must not cache anything decided by it (a chosen list, a fallback to -Oz, an object),
nor look for passes to blame in it.
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
from llm_compiler.validation.linkage import LinkageCheck, build_command
from llm_compiler.validation.outcomes import Outcome
from llm_compiler.validation.passlisteval import PassListEval, ProgramCheck, default_cache_dir
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
    """Whether a list may leave the tool for a program, and what was checked.

    Attributes:
        passed: Whether the list may be reported.
        outcome: PASS, or the outcome of the failing check.
        description: What was checked, or what failed, readable.
        check: The check that rejected the list: ``"linkage"``, ``"suite"``,
            ``"program"`` (the target's own run), ``"user"`` or ``"none"`` (nothing
            could check); empty when it passed.
        failure: For ``"suite"``, the failing program's check.
        command: A shell command that replays the failure (empty when it passed).
        transient: The rejection rests on a timeout (``outcome`` is TIMEOUT): it holds
            for this run only, and nothing decided by it may be cached or stored.
    """

    passed: bool
    outcome: Outcome
    description: str
    check: str = ""
    failure: ProgramCheck | None = None
    command: str = ""
    transient: bool = False

    def __post_init__(self) -> None:
        if self.transient and (self.passed or self.outcome is not Outcome.TIMEOUT):
            raise ValueError(
                f"only a rejection by a timeout is transient, not {self.outcome} ({self.passed=})"
            )


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
            PassListEval(
                compiler, suites, cache_dir=cache_dir, stop_at_first_failure=True, stop_on_link_failure=False
            )
            if suites
            else None
        )
        self.linkage = LinkageCheck(compiler)
        self.differential = DifferentialChecker(compiler)
        self.user_check = user_check

    def check(self, program: Program, passes: PassList) -> GateResult:
        """Runs the checks in order; the first that fails decides (for the suites, a
        miscompile other than a timeout before a timeout, so that a rejection is
        :attr:`~GateResult.transient` only when nothing but a timeout rejects)."""
        linkage = self.linkage.check(program, passes)
        if not linkage.passed:
            return GateResult(
                False,
                linkage.outcome,
                linkage.detail,
                "linkage",
                command=linkage.command,
                transient=linkage.transient,
            )
        done = ["the target's own link (its undefined symbols)"]
        suite_note = ""
        if self.evaluator is not None:
            verdict = self.evaluator.check(passes)
            if verdict.miscompiles:
                failure = min(verdict.miscompiles, key=lambda f: f.outcome is Outcome.TIMEOUT)
                description = f"PassListEval: {failure.outcome} on {failure.program}"
                transient = failure.outcome is Outcome.TIMEOUT
                if transient:
                    description += f" ({failure.detail}; a timeout is not kept: checked again next time)"
                return GateResult(
                    False, failure.outcome, description, "suite", failure, failure.command, transient
                )
            done.append(f"PassListEval ({sum(verdict.outcomes.values())} programs)")
            if verdict.link_failures:
                names = ", ".join(f.program for f in verdict.link_failures[:3])
                suite_note = f"; link failures of {names} do not apply: the target's own object links"
        if is_runnable(program):
            result = self.differential.check(program, passes)
            if result.outcome.is_failure:
                description = f"the program itself: {result.outcome} ({result.detail[:200]})"
                command = build_command(self.compiler, program, passes.pipeline)
                command += f" && {self.differential.checker.link_line} && ./program"
                transient = result.outcome is Outcome.TIMEOUT
                return GateResult(
                    False, result.outcome, description, "program", command=command, transient=transient
                )
            if result.outcome is Outcome.PASS:
                done.append("the program's own output and exit status")
        if self.user_check:
            ok, detail = self._user_check(program, passes)
            if not ok:
                command = f"LLM_COMPILER_PASSES={shlex.quote(passes.pipeline)} {self.user_check}"
                description = f"--check failed: {detail}"
                return GateResult(False, Outcome.RUNTIME_FAIL, description, "user", command=command)
            done.append(f"--check {self.user_check!r}")
        if len(done) == 1:
            return GateResult(False, Outcome.UNSUPPORTED, "nothing could check this list", "none")
        only_suites = len(done) == 2 and self.evaluator is not None
        note = " (only the bundled suites could check this target's behaviour)" if only_suites else ""
        return GateResult(True, Outcome.PASS, "passed: " + ", ".join(done) + note + suite_note)

    def check_object(self, program: Program, obj: bytes, label: str) -> GateResult:
        """The checks that apply to an object built from ``program`` by other means than
        one list (a joined unit, whose lists each passed :meth:`check`): the target's
        own link, its own run and the user's check. ``label`` names how it was built."""
        linkage = self.linkage.check_object(program, obj)
        if not linkage.passed:
            return GateResult(False, linkage.outcome, linkage.detail, "linkage", transient=linkage.transient)
        done = ["the target's own link (its undefined symbols)"]
        if is_runnable(program):
            result = self.differential.check_object(program, obj, label)
            if result.outcome.is_failure:
                description = f"the program itself: {result.outcome} ({result.detail[:200]})"
                transient = result.outcome is Outcome.TIMEOUT
                return GateResult(False, result.outcome, description, "program", transient=transient)
            if result.outcome is Outcome.PASS:
                done.append("the program's own output and exit status")
        if self.user_check:
            ok, detail = self._run_user_check(program, obj, label)
            if not ok:
                return GateResult(False, Outcome.RUNTIME_FAIL, f"--check failed: {detail}", "user")
            done.append(f"--check {self.user_check!r}")
        return GateResult(True, Outcome.PASS, "passed: " + ", ".join(done))

    def user_check_passes(self, program: Program, passes: PassList) -> bool:
        """Whether the user's ``--check`` passes with ``passes`` (True when there is none)."""
        return not self.user_check or self._user_check(program, passes)[0]

    def _user_check(self, program: Program, passes: PassList) -> tuple[bool, str]:
        try:
            obj = self.compiler.object_code(program, passes)[0]
        except CommandFailed as error:
            return False, str(error)
        return self._run_user_check(program, obj, passes.pipeline)

    def _run_user_check(self, program: Program, obj: bytes, pipeline: str) -> tuple[bool, str]:
        with tempfile.TemporaryDirectory(prefix="llm-compiler-check-") as scratch:
            path = Path(scratch) / "candidate.o"
            path.write_bytes(obj)
            env = {**os.environ, "LLM_COMPILER_OBJECT": str(path), "LLM_COMPILER_PASSES": pipeline}
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
