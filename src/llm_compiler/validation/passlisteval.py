"""PassListEval: a pass list passes only if every test program still works with it.

For each program of the suites (system notes, section 6): the source is compiled to
IR with the measurement front end (once, cached), the candidate list is applied, the
result is lowered, then linked and run in the sandbox by the build-and-run
:class:`~llm_compiler.validation.checker.Checker`, and its standard output and exit
status are compared with those of a conservative ``default<O2>`` build (computed
once, cached). The verdict per program is one
:class:`~llm_compiler.validation.outcomes.Outcome`; the list passes when no outcome
is a failure. Each failure carries the program, the evidence and a shell command that
replays it.

Work is shared three ways: programs are checked in parallel; a program's verdict
depends only on the object it is built from, so a build whose optimized IR was linked
and run before (same program, same IR hash, by any list, in any run) is judged on how
that ended, link failures included, without a new link or run
(:attr:`PassListEval.stats` counts these reuses);
and whole verdicts are cached per (pass list, suite versions, LLVM version) on disk.
Where the package ships verdicts for the exact LLVM build in use
(:mod:`llm_compiler.validation.shipped`), they join that cache on first use.

A timeout says how busy the machine was as much as what the list did, so it is never
stored: a run or link past its limits is tried once more with longer ones (the
checker's :data:`~llm_compiler.validation.checker.RETRY_FACTOR`); a pass on that try
is a pass (and stored as one); a second timeout, or a compile past the compiler's time
limit, makes the check a TIMEOUT that is kept nowhere: not in the ``runs``, ``ir`` or
``verdicts`` tables, not in the in-memory references or programs. A verdict with a
timeout among its failures is :attr:`Verdict.transient`: it holds for this run only,
and is not stored either, so a later check (another build, a quieter machine) checks
the list again.

With ``stop_at_first_failure`` a list stops being checked at its first failing
program; ``stop_on_link_failure=False`` lets it go on past link failures, which is
what :class:`~llm_compiler.validation.gate.Gate` needs: a suite program's link failure
counts only where it can happen to the target, while a miscompile counts everywhere.
"""

from __future__ import annotations

import base64
import json
import logging
import shlex
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_compiler import files
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.errors import CommandFailed, CompileTimeout, InvalidInput
from llm_compiler.passes.pipeline import PassList
from llm_compiler.toolchain.frontend import FRONTEND_FLAGS, FrontendOptions
from llm_compiler.validation import shipped
from llm_compiler.validation.checker import EXECUTABLE_NAME, OBJECT_NAME, Checker, LinkFailure
from llm_compiler.validation.outcomes import Outcome
from llm_compiler.validation.sandbox import Limits, RunResult
from llm_compiler.validation.suites import Suite, TestProgram

REFERENCE_PIPELINE = "default<O2>"


@dataclass(frozen=True)
class ProgramCheck:
    """The verdict of one pass list on one program, with the evidence."""

    program: str
    suite: str
    outcome: Outcome
    detail: str = ""
    command: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "program": self.program,
            "suite": self.suite,
            "outcome": str(self.outcome),
            "detail": self.detail,
            "command": self.command,
        }


@dataclass(frozen=True)
class Verdict:
    """The verdict of a pass list over suites."""

    pipeline: str
    llvm_version: str
    suites: dict[str, str]
    passed: bool
    outcomes: dict[str, int]
    failures: tuple[ProgramCheck, ...] = ()
    seconds: float = 0.0
    cached: bool = False
    notes: tuple[str, ...] = field(default=())

    @property
    def transient(self) -> bool:
        """Whether a timeout is among the failures: the verdict holds for this run only
        (a busy machine can time out a good list), so it is never stored."""
        return any(f.outcome is Outcome.TIMEOUT for f in self.failures)

    @property
    def link_failures(self) -> tuple[ProgramCheck, ...]:
        """Programs that did not link (not run, so nothing was miscompiled)."""
        return tuple(f for f in self.failures if f.outcome is Outcome.LINK_FAIL)

    @property
    def miscompiles(self) -> tuple[ProgramCheck, ...]:
        """Failures other than link failures: the list broke a program."""
        return tuple(f for f in self.failures if f.outcome is not Outcome.LINK_FAIL)

    def to_json(self) -> dict[str, Any]:
        """``{"pipeline", "passed", "outcomes", "failures": [{"program", "outcome", "command"}]}``
        and more (suites, LLVM version, details, notes)."""
        notes = {"notes": list(self.notes)} if self.notes else {}
        return notes | {
            "pipeline": self.pipeline,
            "passed": self.passed,
            "outcomes": self.outcomes,
            "failures": [failure.to_json() for failure in self.failures],
            "suites": self.suites,
            "llvm_version": self.llvm_version,
            "seconds": round(self.seconds, 3),
            "cached": self.cached,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        """The verdict :meth:`to_json` wrote, marked ``cached``."""
        failures = tuple(
            ProgramCheck(
                program=f["program"],
                suite=f["suite"],
                outcome=Outcome.from_label(f["outcome"]),
                detail=f["detail"],
                command=f["command"],
            )
            for f in data["failures"]
        )
        return cls(
            pipeline=data["pipeline"],
            llvm_version=data["llvm_version"],
            suites=data["suites"],
            passed=data["passed"],
            outcomes=data["outcomes"],
            failures=failures,
            seconds=data["seconds"],
            cached=True,
            notes=tuple(data.get("notes", ())),
        )


#: Raised when the way runs are judged changes (2: a run stopped at its CPU-time limit
#: is a timeout; 3: program checks kept by IR hash; 4: link failures kept with runs
#: instead; 5: timeouts are retried and never stored, so the runs and verdicts that
#: older stores kept for them are not recalled), so that no cached run or verdict of
#: the old rules is reused.
CACHE_FORMAT = 5


@dataclass
class CheckStats:
    """How much checking work was reused.

    Attributes:
        checks: Program checks asked for (one per program per list checked).
        reused: Checks answered from an earlier check of the same optimized IR.
        verdicts_reused: Whole lists answered from the verdict cache.
    """

    checks: int = 0
    reused: int = 0
    verdicts_reused: int = 0

    @property
    def hit_rate(self) -> float:
        return self.reused / self.checks if self.checks else 0.0


def default_cache_dir() -> Path:
    """Where validation keeps IR, runs and verdicts by default (``files.cache_dir("validation")``)."""
    return files.cache_dir("validation")


class PassListEval:
    """Checks pass lists against test suites.

    Args:
        compiler: Builds the programs (its engine, time limit and pass-list gate).
        suites: The suites to check against.
        jobs: Programs checked at once (default: the compiler's workers).
        limits: Limits of each test run.
        retry_limits: Limits of the one second try of a run that stopped at ``limits``
            (default: the checker's ``RETRY_FACTOR`` times its wall-clock and CPU time).
        cache_dir: Where IR, reference outputs and verdicts are kept.
        stop_at_first_failure: Stop checking a list once one program fails.
        stop_on_link_failure: With ``stop_at_first_failure``, whether a link failure
            stops the check too (False: only a miscompile does).
        reuse_checks: Reuse program verdicts by optimized-IR hash and check programs
            that failed before first (False only to measure what that saves).
    """

    def __init__(
        self,
        compiler: Compiler,
        suites: Sequence[Suite],
        *,
        jobs: int | None = None,
        limits: Limits | None = None,
        retry_limits: Limits | None = None,
        cache_dir: Path | None = None,
        stop_at_first_failure: bool = False,
        stop_on_link_failure: bool = True,
        reuse_checks: bool = True,
    ) -> None:
        if not suites or not any(suite.programs for suite in suites):
            raise InvalidInput("No test programs to check pass lists against.")
        self.compiler = compiler
        self.suites = tuple(suites)
        self.jobs = jobs or compiler.workers
        self.limits = limits or Limits()
        self.checker = Checker(
            compiler.toolchain, link_timeout=compiler.timeout, limits=self.limits, retry_limits=retry_limits
        )
        self.stop_at_first_failure = stop_at_first_failure
        self.stop_on_link_failure = stop_on_link_failure
        self.reuse_checks = reuse_checks
        self.stats = CheckStats()
        self._failures: dict[str, int] = {}
        self.cache_dir = (cache_dir or default_cache_dir()) / compiler.llvm_version
        (self.cache_dir / "sources").mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.cache_dir / f"cache-{CACHE_FORMAT}.sqlite", check_same_thread=False, isolation_level=None
        )
        self._db.execute("PRAGMA busy_timeout=60000")
        files.enable_wal(self._db)
        self._db.executescript(
            """CREATE TABLE IF NOT EXISTS ir (key TEXT PRIMARY KEY, ir TEXT NOT NULL);
               CREATE TABLE IF NOT EXISTS runs (key TEXT, ir_hash TEXT, stdout TEXT, returncode INTEGER,
                   timed_out INTEGER, link_detail TEXT, PRIMARY KEY (key, ir_hash));
               CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, verdict TEXT NOT NULL);
               CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"""
        )
        self._shipped_done = False
        self._programs: dict[str, Program | ProgramCheck] = {}
        self._references: dict[str, RunResult | None] = {}

    def close(self) -> None:
        self._db.close()

    @property
    def programs(self) -> list[TestProgram]:
        return [program for suite in self.suites for program in suite.programs]

    # Building -------------------------------------------------------------------------

    def source_path(self, test: TestProgram) -> Path:
        """The program's source, written where a replay command can find it."""
        path = self.cache_dir / "sources" / f"{test.suite.replace(':', '_')}-{test.name}{test.suffix}"
        if not path.exists() or path.read_text() != test.source:
            path.write_text(test.source)
        return path

    def program_ir(self, test: TestProgram) -> Program | ProgramCheck:
        """``test`` as unoptimized IR (front end once, then from the store), or the check
        that says why it cannot be built (UNSUPPORTED, or TIMEOUT, kept nowhere)."""
        with self._lock:
            if test.key in self._programs:
                return self._programs[test.key]
            row = self._db.execute("SELECT ir FROM ir WHERE key = ?", (test.key,)).fetchone()
        if row is not None:
            program: Program | ProgramCheck = Program(
                test.name, row[0], test.language, str(self.source_path(test))
            )
        else:
            try:
                program = self.compiler.load(self.source_path(test), FrontendOptions(extra_flags=test.flags))
            except CompileTimeout as error:  # kept nowhere: the next check compiles it again
                return ProgramCheck(test.name, test.suite, Outcome.TIMEOUT, f"the front end: {error}")
            except (InvalidInput, CommandFailed) as error:
                program = ProgramCheck(
                    test.name, test.suite, Outcome.UNSUPPORTED, f"does not compile: {error}"
                )
            else:
                with self._lock:
                    self._db.execute("INSERT OR REPLACE INTO ir VALUES (?, ?)", (test.key, program.ir))
        with self._lock:
            self._programs[test.key] = program
        return program

    def _link_and_run(
        self, test: TestProgram, obj: bytes, ir_hash: str, *, recall_link_failures: bool = True
    ) -> tuple[RunResult | LinkFailure, bool]:
        """Runs a build with the checker, or recalls how the same program's same IR
        ended before (in any run): the run, or the link failure. Returns the result and
        whether it was recalled. A run or link that timed out (twice) is not stored, and
        one that an older store kept is not recalled."""
        with self._lock:
            row = self._db.execute(
                "SELECT stdout, returncode, timed_out, link_detail FROM runs "
                "WHERE key = ? AND ir_hash = ? AND NOT timed_out",
                (test.key, ir_hash),
            ).fetchone()
        if row is not None and row[3] is None:
            return RunResult(base64.b64decode(row[0]), b"", row[1], bool(row[2])), True
        if row is not None and recall_link_failures:
            return LinkFailure(row[3]), True
        result = self.checker.link_and_run(obj, subject=test.name)
        if result.timed_out:
            return result, False
        if isinstance(result, LinkFailure):
            values: tuple[object, ...] = (test.key, ir_hash, "", 0, 0, result.detail)
        else:
            stdout = base64.b64encode(result.stdout).decode()
            values = (test.key, ir_hash, stdout, result.returncode, 0, None)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?)", values)
        return result, False

    def _reference(self, test: TestProgram, program: Program) -> RunResult | ProgramCheck | None:
        """The -O2 reference run; None when it does not build or pass (the program is
        unsupported); a TIMEOUT check, remembered nowhere, when it timed out."""
        with self._lock:
            if test.key in self._references:
                return self._references[test.key]
        reference: RunResult | None = None
        try:
            obj, measurement = self.compiler.object_code(program, self.compiler.passes(REFERENCE_PIPELINE))
        except CompileTimeout as error:
            return ProgramCheck(test.name, test.suite, Outcome.TIMEOUT, f"the -O2 reference build: {error}")
        except CommandFailed:
            pass  # the reference does not build: the program is unsupported
        else:
            result, _ = self._link_and_run(test, obj, measurement.ir_hash)
            if result.timed_out:
                detail = "the -O2 reference build ran past its time limit twice"
                return ProgramCheck(test.name, test.suite, Outcome.TIMEOUT, detail)
            if isinstance(result, RunResult) and result.returncode == 0:
                reference = result
        with self._lock:
            self._references[test.key] = reference
        return reference

    def replay_command(self, test: TestProgram, pipeline: str) -> str:
        """A shell command that rebuilds and runs ``test`` with ``pipeline``."""
        tool = self.compiler.toolchain.tool
        source = self.source_path(test)
        compiler = tool("clang++" if test.language == "c++" else "clang")
        front = [str(compiler), *FRONTEND_FLAGS, *test.flags, str(source), "-o", "program.ll"]
        bound = ["timeout", f"{self.compiler.timeout:g}"]  # a list that hangs opt ends like the check
        steps = [
            shlex.join(front),
            shlex.join(
                [*bound, str(tool("opt")), f"-passes={pipeline}", "program.ll", "-S", "-o", "optimized.ll"]
            ),
            shlex.join([*bound, str(tool("llc")), "-filetype=obj", "optimized.ll", "-o", OBJECT_NAME]),
            self.checker.link_line,  # the very link the check ran
            # bounded like the check's second try, so that replaying a hang ends (exit status 124)
            f"timeout {self.checker.retry_limits.timeout:g} ./{EXECUTABLE_NAME}",
        ]
        return " && ".join(steps)

    # Checking -------------------------------------------------------------------------

    def check_program(self, test: TestProgram, passes: PassList) -> ProgramCheck:
        """The verdict of ``passes`` on one program."""
        pipeline = passes.pipeline
        program = self.program_ir(test)
        if isinstance(program, ProgramCheck):
            return program
        reference = self._reference(test, program)
        if isinstance(reference, ProgramCheck):
            return reference
        if reference is None:
            return ProgramCheck(
                test.name, test.suite, Outcome.UNSUPPORTED, "the -O2 reference build does not pass"
            )
        command = self.replay_command(test, pipeline)
        with self._lock:
            self.stats.checks += 1
        try:
            obj, measurement = self.compiler.object_code(program, passes)
        except CompileTimeout as error:
            return ProgramCheck(test.name, test.suite, Outcome.TIMEOUT, str(error), command)
        except CommandFailed as error:
            return ProgramCheck(
                test.name, test.suite, Outcome.COMPILE_FAIL, f"{error}\n{error.stderr[-2000:]}", command
            )
        # The reuse counted is that of builds other lists made; the old mode (to
        # measure what reuse saves) links repeated link failures again.
        result, recalled = self._link_and_run(
            test, obj, measurement.ir_hash, recall_link_failures=self.reuse_checks
        )
        if recalled and self.reuse_checks:
            with self._lock:
                self.stats.reused += 1
        return self._judge(test, reference, result, command)

    def _judge(
        self, test: TestProgram, reference: RunResult, result: RunResult | LinkFailure, command: str
    ) -> ProgramCheck:
        """Compares how one build ended with the reference."""
        if isinstance(result, LinkFailure) and result.timed_out:
            detail = f"the link ran past its time limit twice: {result.detail}"
            return ProgramCheck(test.name, test.suite, Outcome.TIMEOUT, detail, command)
        if isinstance(result, LinkFailure):
            return ProgramCheck(test.name, test.suite, Outcome.LINK_FAIL, result.detail, command)
        if result.timed_out:
            limits = f"{self.limits.timeout:g} s, then {self.checker.retry_limits.timeout:g} s"
            detail = f"the test ran past its time limit twice ({limits})"
            return ProgramCheck(test.name, test.suite, Outcome.TIMEOUT, detail, command)
        if result.returncode != reference.returncode:
            detail = f"exit status {result.returncode} (reference {reference.returncode})"
            if result.stderr:
                detail += f"; stderr: {result.stderr[-500:].decode(errors='replace')}"
            return ProgramCheck(test.name, test.suite, Outcome.RUNTIME_FAIL, detail, command)
        if result.stdout != reference.stdout:
            detail = f"stdout {result.stdout[:300]!r}, reference {reference.stdout[:300]!r}"
            return ProgramCheck(test.name, test.suite, Outcome.OUTPUT_MISMATCH, detail, command)
        return ProgramCheck(test.name, test.suite, Outcome.PASS)

    @property
    def stop_mode(self) -> str | bool:
        """How a check stops, as its verdicts are keyed: False (every program), ``"any"``
        (at the first failure) or ``"miscompile"`` (at the first failure but a link failure)."""
        return self.stop_at_first_failure and ("any" if self.stop_on_link_failure else "miscompile")

    def _verdict_key(self, pipeline: str) -> str:
        suites = ";".join(f"{suite.name}={suite.version}" for suite in self.suites)
        return json.dumps([pipeline, suites, self.compiler.llvm_version, self.stop_mode])

    def _recall(self, key: str) -> Verdict | None:
        with self._lock:
            row = self._db.execute("SELECT verdict FROM verdicts WHERE key = ?", (key,)).fetchone()
        recalled = Verdict.from_json(json.loads(row[0])) if row is not None else None
        return recalled if recalled is not None and not recalled.transient else None

    def import_shipped(self, path: Path | None = None) -> int:
        """Copies the verdicts shipped for this LLVM build into the store, once per
        store and file (:mod:`llm_compiler.validation.shipped`; local verdicts win).

        Args:
            path: The shipped file (default: the package's for this LLVM major).

        Returns:
            How many verdicts were copied (0 when the file does not apply, or did before).
        """
        self._shipped_done = True
        path = path or shipped.shipped_file(self.compiler.toolchain.major)
        try:
            marker = f"shipped:{path.name}:{files.file_sha256(path)}"
        except OSError:
            return 0
        with self._lock:
            if self._db.execute("SELECT 1 FROM meta WHERE key = ?", (marker,)).fetchone():
                return 0
        verdicts, why = shipped.applicable(self, path)
        if why:
            logging.getLogger(__name__).info("Shipped verdicts not used: %s.", why)
        tests = {(test.suite, test.name): test for test in self.programs}
        rows = []
        for pipeline, data in verdicts.items():
            for failure in data["failures"]:  # the replay of this machine's files
                test = tests.get((failure["suite"], failure["program"]))
                failure["command"] = self.replay_command(test, pipeline) if test else ""
            data["notes"] = [shipped.SHIPPED_NOTE]
            rows.append((self._verdict_key(pipeline), json.dumps(data)))
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR IGNORE INTO verdicts VALUES (?, ?)", rows)
            if not why:  # a file that did not apply is looked at again next time
                self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (marker, str(len(rows))))
            self._db.execute("COMMIT")
        return len(rows)

    def check(self, passes: PassList, *, use_cache: bool = True) -> Verdict:
        """Checks ``passes`` on every program of the suites.

        The verdict is stored unless it is :attr:`~Verdict.transient` (a timeout among
        its failures); a stored verdict is recalled by later checks with ``use_cache``.

        Raises:
            InvalidPassList: The list fails the compiler's pass-list gate.
        """
        self.compiler.check(passes)  # once: the compiles below reuse the verdict
        key = self._verdict_key(passes.pipeline)
        if use_cache:
            recalled = self._recall(key)
            if recalled is None and not self._shipped_done and self.import_shipped():
                recalled = self._recall(key)
            if recalled is not None:
                self.stats.verdicts_reused += 1
                return recalled
        started = time.monotonic()
        results: list[ProgramCheck] = []
        stop = threading.Event()

        def one(test: TestProgram) -> ProgramCheck | None:
            if stop.is_set():
                return None
            check = self.check_program(test, passes)
            if check.outcome.is_failure and check.outcome is not Outcome.TIMEOUT:
                with self._lock:
                    self._failures[test.key] = self._failures.get(test.key, 0) + 1
            stops = self.stop_on_link_failure or check.outcome is not Outcome.LINK_FAIL
            if check.outcome.is_failure and self.stop_at_first_failure and stops:
                stop.set()
            return check

        # Programs that failed before go first: a list that breaks one stops sooner.
        programs = self.programs
        if self.reuse_checks:
            programs.sort(key=lambda test: -self._failures.get(test.key, 0))
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for check in pool.map(one, programs):
                if check is not None:
                    results.append(check)
        counts = Counter(str(check.outcome) for check in results)
        failures = tuple(check for check in results if check.outcome.is_failure)
        verdict = Verdict(
            pipeline=passes.pipeline,
            llvm_version=self.compiler.llvm_version,
            suites={suite.name: suite.version for suite in self.suites},
            passed=not failures,
            outcomes=dict(sorted(counts.items())),
            failures=failures,
            seconds=time.monotonic() - started,
        )
        if not verdict.transient:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO verdicts VALUES (?, ?)", (key, json.dumps(verdict.to_json()))
                )
        return verdict
