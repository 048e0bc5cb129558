"""The autotuner: search, minimization, broadcast and validation over many programs.

A :class:`Tuner` drives a run in phases, each a set of independent jobs
(:mod:`llm_compiler.autotune.jobs`) handed to an executor (this process, a local
pool, or Dask), and writes every job's evaluations to the store as it completes:

1. **random** (the search phase; the name stays for stores already written) - per
   program, ``budget`` lists in chunks from the run's proposer
   (:mod:`llm_compiler.selection.proposer`): the library's default is local search
   (:data:`~llm_compiler.autotune.strategies.DEFAULT_SEARCH`), and ``tune``'s default
   starts it from the built-in predictor (:mod:`llm_compiler.predictor.search`); -Oz is
   measured first whoever proposes;
2. **minimize** - the best list of each program that beats -Oz, to a fixed point;
3. **broadcast** - the K most common best lists tried on every program;
4. **validate** - the best lists handed to the selection layer
   (:mod:`llm_compiler.selection`), checked best first; -Oz is kept when none passes;
5. **functions** (``per_function`` > 0, binary size) - per-function lists after
   each unit's validated list (:mod:`llm_compiler.autotune.function_lists`), kept
   when the joined unit is smaller and passes its checks.

A killed run resumes from the store (jobs already done are skipped, evaluations
already made are not made again) and ends with the same results. Programs that do
not compile are recorded with the reason and left out; the run goes on. So are units
a job stops on (an object no reader here knows, a check that cannot read the unit's
objects, a worker's internal error): the unit is recorded with status ``error`` and
the reason, which names the unit and the fix, and later phases leave it out; a job
of the per-function phase that stops leaves the unit's validated list standing.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llm_compiler.autotune.function_lists import FunctionLists, FunctionListsOutcome
from llm_compiler.autotune.jobs import (
    JobOutput,
    TuneSettings,
    best_row,
    broadcast_job,
    function_lists_job,
    minimize_job,
    search_chunk_job,
    validate_job,
)
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.executors import Executor, Job
from llm_compiler.core.metrics import geometric_mean_improvement, total_improvement
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.core.store import EvaluationRow, Store
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.errors import LlmCompilerError, reason_of
from llm_compiler.passes.pipeline import parse_pipeline
from llm_compiler.selection import Candidate, Verdict

PHASES = ("random", "minimize", "broadcast", "validate", "functions")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobFailed:
    """What a job that stopped on its unit returns instead of its output (picklable).

    Attributes:
        reason: The error, in one paragraph (a worker's traceback cut to its first and
            last lines).
        full: The whole error text, traceback included (logged with ``-v``).
    """

    reason: str
    full: str


@dataclass(frozen=True)
class ProgramResult:
    """The replayable outcome of tuning one program.

    ``best_pipeline`` is the exact ``opt -passes=`` text; ``best_size`` is what
    ``opt -passes=<best_pipeline> | llc -filetype=obj`` gives with ``llvm_version``,
    in the run's ``objective`` (bytes of text + data by default; every ``*_size`` is).
    ``validated`` says the run validated what it kept (False for every record of a
    ``--no-validate`` run: ``cc --results`` refuses those); ``verdict`` is the closed
    label of what became of the kept list (``validated``, ``not-checked``) or why -Oz
    was kept, ``validation`` the same in words.
    """

    program: str
    program_id: str
    llvm_version: str
    status: str
    detail: str = ""
    unoptimized_size: int = 0
    oz_size: int = 0
    random_size: int = 0
    minimized_size: int = 0
    broadcast_size: int = 0
    best_size: int = 0
    best_pipeline: str = OZ_PIPELINE
    compiles: int = 0
    failures: int = 0
    validation: str = ""
    rejected: tuple[dict[str, str], ...] = ()
    objective: Objective = DEFAULT_OBJECTIVE
    function_lists: FunctionLists | None = None
    validated: bool = False
    verdict: Verdict = Verdict.NOT_CHECKED

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def improved(self) -> bool:
        return self.ok and self.best_size < self.oz_size

    @property
    def improvement_vs_oz(self) -> float:
        """Fractional reduction relative to -Oz in the objective (0.05 = 5% smaller)."""
        return 1.0 - self.best_size / self.oz_size if self.ok and self.oz_size else 0.0

    @property
    def why_not_better(self) -> str:
        """Why a list smaller than the reported one was not used ("" when none was found).

        Names the smallest rejected list's size, the check that failed, what failed and
        what salvage tried.
        """
        smaller = [entry for entry in self.rejected if int(entry.get("size", 0) or 0) < self.best_size]
        if not smaller:
            return ""
        entry = min(smaller, key=lambda e: int(e.get("size", 0)))
        culprits = ", ".join(entry.get("culprits", [])) or "none found"
        saving = 1.0 - int(entry["size"]) / self.oz_size if self.oz_size else 0.0
        return (
            f"a list of {entry['size']} {self.objective.unit} ({saving:.1%} below -Oz) was not used: "
            f"{entry.get('check') or 'gate'} check, {entry['outcome']}: {str(entry['detail'])[:200]}; "
            f"passes to blame: {culprits}; lists rejected in all: {len(self.rejected)}"
        )

    @property
    def length(self) -> int:
        """Passes in the best list (top-level elements)."""
        return len(parse_pipeline(self.best_pipeline))

    def to_json(self) -> dict[str, Any]:
        return {
            "program": self.program,
            "program_id": self.program_id,
            "llvm_version": self.llvm_version,
            "status": self.status,
            "detail": self.detail,
            "objective": self.objective.value,
            "unoptimized_size": self.unoptimized_size,
            "oz_size": self.oz_size,
            "random_search_size": self.random_size,
            "minimized_size": self.minimized_size,
            "broadcast_size": self.broadcast_size,
            "best_size": self.best_size,
            "best_pipeline": self.best_pipeline,
            "improvement_vs_oz": self.improvement_vs_oz,
            "compiles": self.compiles,
            "failures": self.failures,
            "validated": self.validated,
            "verdict": self.verdict.value,
            "validation": self.validation,
            "rejected": list(self.rejected),
            "function_lists": self.function_lists.to_json() if self.function_lists is not None else None,
        }


@dataclass
class TuneReport:
    """A run's results and the paper's summary figures."""

    llvm_version: str
    engine: str
    programs: list[ProgramResult]
    distinct_before_broadcast: int = 0
    distinct_after_broadcast: int = 0
    minimized_lengths: list[int] = field(default_factory=list)
    objective: Objective = DEFAULT_OBJECTIVE

    @property
    def tuned(self) -> list[ProgramResult]:
        return [p for p in self.programs if p.ok]

    @property
    def geomean_improvement(self) -> float:
        return geometric_mean_improvement([(p.oz_size, p.best_size) for p in self.tuned])

    @property
    def total_improvement(self) -> float:
        """The reduction of the tuned programs' summed sizes (bytes by default) against their
        summed -Oz sizes."""
        return total_improvement([(p.oz_size, p.best_size) for p in self.tuned])

    @property
    def mean_minimized_length(self) -> float:
        lengths = self.minimized_lengths
        return sum(lengths) / len(lengths) if lengths else 0.0

    def summary(self) -> dict[str, Any]:
        """The ``summary.json`` document (sizes in ``objective``'s ``unit``)."""
        oz_total, best_total = sum(p.oz_size for p in self.tuned), sum(p.best_size for p in self.tuned)
        totals = {f"oz_{self.objective.unit}": oz_total, f"best_{self.objective.unit}": best_total}
        return {
            "llvm_version": self.llvm_version,
            "engine": self.engine,
            "objective": self.objective.value,
            "unit": self.objective.unit,
            "geomean_improvement_vs_oz": self.geomean_improvement,
            "total_improvement_vs_oz": self.total_improvement,
            **totals,
            "programs_improved": sum(p.improved for p in self.tuned),
            "programs_tuned": len(self.tuned),
            "mean_minimized_length": self.mean_minimized_length,
            "distinct_best_lists_before_broadcast": self.distinct_before_broadcast,
            "distinct_best_lists_after_broadcast": self.distinct_after_broadcast,
            "programs": [
                {
                    "program": p.program,
                    "program_id": p.program_id,
                    "status": p.status,
                    "oz_size": p.oz_size,
                    "best_size": p.best_size,
                    "best_pipeline": p.best_pipeline,
                    "function_lists": p.function_lists.to_json() if p.function_lists is not None else None,
                    "compiles": p.compiles,
                    "validation": p.validation if p.ok else p.detail,
                    "why_not_better": p.why_not_better if p.ok else "",
                }
                for p in self.programs
            ],
        }


class TuneProgress:
    """Hooks the tuner calls as it goes (the CLI shows them with rich)."""

    def phase(self, name: str, total: int) -> None:
        """A phase starts with ``total`` units of work (compiles or programs)."""

    def advance(self, units: int, note: str = "") -> None:
        """``units`` more units are done; ``note`` says how the run stands."""


class Tuner:
    """Drives a tuning run over programs with a store and an executor.

    Args:
        settings: What to do (seed, budget, phases...).
        store: Where evaluations and results are written.
        executor: Where jobs run.
        compiler: This process's compiler, for loading programs and final objects.
        progress: Progress hooks.
    """

    def __init__(
        self,
        settings: TuneSettings,
        store: Store,
        executor: Executor,
        compiler: Compiler,
        progress: TuneProgress | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.executor = executor
        self.compiler = compiler
        self.progress = progress or TuneProgress()
        self.llvm_version = compiler.llvm_version
        self.programs: list[Program] = []
        self._oz_sizes: dict[str, int] = {}
        self._best_sizes: dict[str, int] = {}
        #: Units a job stopped on in this run, with the reason (left out of later phases).
        self.failed: dict[str, str] = {}

    # Loading -----------------------------------------------------------------------

    def load(
        self, specs: Sequence[ProgramSource], loaded: Mapping[str, Program] | None = None
    ) -> list[Program]:
        """Compiles the targets; those that fail are recorded and left out.

        Args:
            specs: The targets.
            loaded: Programs already through the front end, by :meth:`ProgramSource.key`.
        """
        programs = []
        loaded = loaded or {}
        for spec in specs:
            try:
                program = loaded.get(spec.key()) or spec.load(self.compiler)
            except LlmCompilerError as error:
                failed_id = "load:" + hashlib.sha256(str(spec.path).encode()).hexdigest()[:12]
                self.store.add_program(failed_id, str(spec.path), str(spec.path), "load-failed", str(error))
                continue
            self.store.add_program(program.id, program.name, program.source, "ok", ir=program.ir)
            programs.append(program)
        return programs

    # Phases ---------------------------------------------------------------------------

    def _run_jobs(
        self,
        phase: str,
        jobs: list[tuple[str, Job, int]],
        on_done: Callable[[JobOutput], None],
        on_failed: Callable[[str, str], None] | None = None,
    ) -> None:
        """Runs jobs (name, job, units) not done yet; records each as it completes.

        A job that stops on its unit (:class:`JobFailed`) is not marked done (``--resume``
        tries it again); ``on_failed(program_id, reason)`` records it, by default as the
        unit's ``error`` (:meth:`_fail_unit`).
        """
        pending = [(name, job, units) for name, job, units in jobs if not self.store.job_done(name)]
        self.progress.phase(phase, sum(units for _, _, units in jobs))
        self.progress.advance(sum(units for _, _, units in jobs) - sum(units for _, _, units in pending))
        if not pending:
            return
        tagged: list[Job] = [(_tagged, (name, job)) for name, job, _ in pending]
        units_of = {name: units for name, _, units in pending}
        for name, output in self.executor.run(tagged):
            if isinstance(output, JobFailed):
                program_id = name.split(":")[1]  # job names are phase:program_id[:chunk]
                logger.debug("%s job %s stopped: %s", phase, name, output.full)
                (on_failed or self._fail_unit)(program_id, f"{phase} stopped on this unit: {output.reason}")
                self.progress.advance(units_of[name], self._note())
                continue
            self.store.record(output.rows, self.llvm_version, job=name)
            self._follow(output.rows)
            on_done(output)
            self.progress.advance(units_of[name], self._note())

    def _fail_unit(self, program_id: str, reason: str) -> None:
        """Records a unit a job stopped on as ``error`` with ``reason``; later phases leave it out."""
        program = next((p for p in self.programs if p.id == program_id), None)
        name = program.name if program is not None else program_id
        self.failed[program_id] = reason
        self.store.add_program(program_id, name, program.source if program else None, "error", reason)

    def _standing(self, programs: list[Program]) -> list[Program]:
        """``programs`` less the units a job stopped on."""
        return [program for program in programs if program.id not in self.failed]

    def _known(self, program: Program) -> dict[tuple[str, str], EvaluationRow]:
        return self.store.evaluations(program.id, self.llvm_version)

    def _follow(self, rows: Sequence[EvaluationRow]) -> None:
        for row in rows:
            value = self._value(row)
            if row.mode == "exact" and row.pipeline and value != float("inf"):
                if row.pipeline == OZ_PIPELINE:
                    self._oz_sizes[row.program_id] = int(value)
                best = self._best_sizes.get(row.program_id)
                self._best_sizes[row.program_id] = int(value) if best is None else min(best, int(value))

    def _value(self, row: EvaluationRow) -> float:
        """A row's value in the run's objective (infinity for a failure)."""
        return row.cost(self.settings.objective)

    def _note(self) -> str:
        pairs = [(oz, min(oz, self._best_sizes[p])) for p, oz in self._oz_sizes.items()]
        return f"best so far vs -Oz: {geometric_mean_improvement(pairs):.2%}" if pairs else ""

    def run(self, specs: Sequence[ProgramSource], loaded: Mapping[str, Program] | None = None) -> TuneReport:
        """Tunes every target and returns the report.

        Args:
            specs: The targets.
            loaded: Programs already through the front end, by :meth:`ProgramSource.key`
                (``tune --model`` loads them to ask the model first).
        """
        programs = self.programs = self.load(specs, loaded)
        for program in programs:
            self._follow(list(self._known(program).values()))
        self._search_phase(programs)
        minimized = self._minimize_phase(self._standing(programs))
        minimized = {key: pipeline for key, pipeline in minimized.items() if key not in self.failed}
        before, after = self._broadcast_phase(self._standing(programs), minimized)
        self._validate_phase(self._standing(programs))
        if self.settings.per_function > 0 and self.settings.objective is DEFAULT_OBJECTIVE:
            self._function_lists_phase(self._standing(programs))
        return self.report(before, after)

    def _search_phase(self, programs: list[Program]) -> None:
        """Asks the run's proposer for ``budget`` lists per program, in chunks.

        The store names the phase and its jobs ``random`` whoever proposes (stores
        written before proposers existed resume); progress shows the proposer's name.
        """
        settings, jobs = self.settings, []
        for program in programs:
            known = self._known(program)
            # An adaptive proposer's search of one program is one job (see proposer.py).
            chunk = settings.budget if settings.search.adaptive else settings.chunk_size
            for start in range(0, settings.budget, chunk):
                stop = min(settings.budget, start + chunk)
                job: Job = (search_chunk_job, (settings, program, start, stop, known))
                jobs.append((f"random:{program.id}:{start}", job, stop - start))
        self._run_jobs(settings.search.name, jobs, lambda output: None)
        for program in programs:
            rows = list(self._known(program).values())
            best = best_row([r for r in rows if r.phase == "random"], self.settings.objective)
            if best is not None:
                self.store.set_result(program.id, "random", best.pipeline, int(self._value(best)))

    def _oz(self, program: Program) -> EvaluationRow:
        return self._known(program)[(OZ_PIPELINE, "exact")]

    def _minimize_phase(self, programs: list[Program]) -> dict[str, str]:
        jobs = []
        for program in programs:
            random_best = self.store.result(program.id, "random")
            oz = self._oz(program)
            if (
                random_best is None
                or not oz.ok
                or random_best[1] >= self._value(oz)
                or not self.settings.minimize
            ):
                continue
            job: Job = (minimize_job, (self.settings, program, random_best[0], self._known(program)))
            jobs.append((f"minimize:{program.id}", job, 1))

        def done(output: JobOutput) -> None:
            self.store.set_result(output.program_id, "minimize", output.pipeline, output.size)

        self._run_jobs("minimization", jobs, done)
        minimized = {}
        for program in programs:
            result = self.store.result(program.id, "minimize") or self.store.result(program.id, "random")
            oz = self._oz(program)
            if result is not None and oz.ok and result[1] < self._value(oz):
                minimized[program.id] = result[0]
        return minimized

    def _broadcast_phase(self, programs: list[Program], minimized: dict[str, str]) -> tuple[int, int]:
        before = len(set(minimized.values()))
        if self.settings.broadcast <= 0 or not minimized:
            for program_id, pipeline in minimized.items():
                row = self.store.evaluations(program_id, self.llvm_version)[(pipeline, "exact")]
                self.store.set_result(program_id, "broadcast", pipeline, int(self._value(row)))
            return before, before
        counts = Counter(minimized.values())
        common = [p for p, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
        common = common[: self.settings.broadcast]
        jobs = []
        for program in programs:
            if not self._oz(program).ok:
                continue
            current = minimized.get(program.id, OZ_PIPELINE)
            job: Job = (broadcast_job, (self.settings, program, current, common, self._known(program)))
            jobs.append((f"broadcast:{program.id}", job, 1))

        def done(output: JobOutput) -> None:
            self.store.set_result(output.program_id, "broadcast", output.pipeline, output.size)

        self._run_jobs("broadcast", jobs, done)
        final = set()
        for program in programs:
            result = self.store.result(program.id, "broadcast")
            if result is not None and result[0] != OZ_PIPELINE:
                final.add(result[0])
        return before, len(final)

    def _ranked(self, program: Program) -> list[Candidate]:
        """Every measured list of the program, smallest first; the minimized or
        broadcast choice first among equals of its size."""
        rows = [
            r
            for r in self._known(program).values()
            if r.mode == "exact" and r.pipeline and self._value(r) != float("inf")
        ]
        chosen = self.store.result(program.id, "broadcast") or self.store.result(program.id, "minimize")
        preferred = chosen[0] if chosen is not None else ""
        rows.sort(key=lambda r: (self._value(r), r.pipeline != preferred, len(r.pipeline), r.pipeline))
        return [Candidate.measured(r.pipeline, int(self._value(r)), r.output_hash or "") for r in rows]

    def _validate_phase(self, programs: list[Program]) -> None:
        jobs = []
        for program in programs:
            oz = self._oz(program)
            if not oz.ok:
                continue
            arguments = (
                self.settings,
                program,
                self._ranked(program),
                int(self._value(oz)),
                self._known(program),
            )
            job: Job = (validate_job, arguments)
            jobs.append((f"validate:{program.id}", job, 1))

        def done(output: JobOutput) -> None:
            detail = json.dumps(
                {
                    "validation": output.detail,
                    "verdict": output.verdict.value,
                    "rejected": output.extra.get("rejected", []),
                }
            )
            self.store.set_result(
                output.program_id, "final", output.pipeline, output.size, detail, validated=output.validated
            )

        self._run_jobs("validation", jobs, done)

    def _function_lists_phase(self, programs: list[Program]) -> None:
        jobs = []
        for program in programs:
            final = self.store.result(program.id, "final")
            if final is not None:
                job: Job = (function_lists_job, (self.settings, program, final[0]))
                jobs.append((f"functions:{program.id}", job, 1))

        def done(output: JobOutput) -> None:
            outcome = output.extra["function_lists"]
            validated = self.settings.validate if outcome["record"] else None
            self.store.set_result(
                output.program_id, "functions", json.dumps(outcome), output.size, output.detail, validated
            )

        def failed(program_id: str, reason: str) -> None:
            final = self.store.result(program_id, "final")
            size = final[1] if final is not None else 0
            outcome = FunctionListsOutcome(None, size, size, 0, f"the base list stands: {reason}")
            self.store.set_result(program_id, "functions", json.dumps(outcome.to_json()), size, reason, None)

        self._run_jobs("per-function lists", jobs, done, failed)

    # Report ----------------------------------------------------------------------------

    def report(self, distinct_before: int = 0, distinct_after: int = 0) -> TuneReport:
        """The results as stored (also for a finished run read back)."""
        results, lengths = [], []
        for entry in self.store.programs():
            if entry["status"] != "ok":
                results.append(
                    ProgramResult(
                        program=entry["name"],
                        program_id=entry["program_id"],
                        llvm_version=self.llvm_version,
                        status=entry["status"],
                        detail=entry["detail"],
                    )
                )
                continue
            results.append(self._program_result(entry))
            minimized = self.store.result(entry["program_id"], "minimize")
            if minimized is not None:
                lengths.append(len(parse_pipeline(minimized[0])))
        return TuneReport(
            llvm_version=self.llvm_version,
            engine=self.compiler.engine,
            programs=results,
            distinct_before_broadcast=distinct_before,
            distinct_after_broadcast=distinct_after,
            minimized_lengths=lengths,
            objective=self.settings.objective,
        )

    def _program_result(self, entry: dict[str, Any]) -> ProgramResult:
        program_id = entry["program_id"]
        rows = self.store.evaluations(program_id, self.llvm_version)
        oz = rows.get((OZ_PIPELINE, "exact"))
        if oz is None or self._value(oz) == float("inf"):
            detail = oz.detail if oz is not None else "not measured"
            return ProgramResult(
                program=entry["name"],
                program_id=program_id,
                llvm_version=self.llvm_version,
                status="oz-failed",
                detail=detail,
            )

        def size(phase: str, default: int) -> int:
            result = self.store.result(program_id, phase)
            return result[1] if result is not None else default

        final = self.store.result(program_id, "final")
        verdict: dict[str, Any] = {"validation": "not validated", "rejected": []}
        if final is not None:
            verdict = json.loads(final[2])
        kept = final[0] if final is not None else OZ_PIPELINE
        label = _final_verdict(verdict, kept, self.settings.validate)
        unoptimized = rows.get(("", "exact"))
        oz_size = int(self._value(oz))
        best_size = final[1] if final is not None else oz_size
        functions, extra_compiles = None, 0
        stored = self.store.result(program_id, "functions")
        if stored is not None:
            outcome = FunctionListsOutcome.from_json(json.loads(stored[0]))
            extra_compiles = outcome.compiles
            if outcome.record is not None and outcome.size < best_size:
                functions, best_size = outcome.record, outcome.size
                verdict["validation"] = outcome.detail
                label = outcome.verdict
        return ProgramResult(
            program=entry["name"],
            program_id=program_id,
            llvm_version=self.llvm_version,
            status="ok",
            unoptimized_size=int(self._value(unoptimized))
            if unoptimized is not None and self._value(unoptimized) != float("inf")
            else 0,
            oz_size=oz_size,
            random_size=size("random", oz_size),
            minimized_size=size("minimize", size("random", oz_size)),
            broadcast_size=size("broadcast", oz_size),
            best_size=best_size,
            best_pipeline=final[0] if final is not None else OZ_PIPELINE,
            compiles=len(rows) + extra_compiles,
            failures=sum(1 for r in rows.values() if not r.ok),
            validation=verdict["validation"],
            rejected=tuple(verdict["rejected"]),
            objective=self.settings.objective,
            function_lists=functions,
            validated=self.settings.validate and label is not Verdict.NOT_CHECKED,
            verdict=label,
        )


def _final_verdict(stored: Mapping[str, Any], pipeline: str, validate: bool) -> Verdict:
    """The verdict of a unit's final result as the validation phase stored it; for a
    store written before verdicts were, read from what it says in words."""
    if "verdict" in stored:
        return Verdict.parse(str(stored["verdict"]))
    words = str(stored.get("validation", ""))
    if not validate or words.startswith(("unchecked", "not validated")):
        return Verdict.NOT_CHECKED if pipeline != OZ_PIPELINE else Verdict.NOT_SMALLER
    if pipeline != OZ_PIPELINE:
        return Verdict.VALIDATED
    return Verdict.NOT_SMALLER if words.startswith("nothing beat") else Verdict.VALIDATION_FAILURE


def _tagged(name: str, job: Job) -> tuple[str, Any]:
    """Runs a job and returns its result tagged with the job's name (picklable); a job
    that stops on its unit with an llm-compiler error returns :class:`JobFailed`, so the
    run goes on with the other units."""
    function, arguments = job
    try:
        return name, function(*arguments)
    except LlmCompilerError as error:
        return name, JobFailed(reason=reason_of(error, 2000), full=str(error))
