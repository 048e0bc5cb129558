"""The units of work of a tuning run, run on a local process pool or a Dask cluster.

Each job is a plain function of picklable values (settings, a program, the program's
evaluations already stored) that returns what it evaluated. It never touches the
store: the driving process writes results as jobs complete, so jobs run the same in
a local process, a pool worker or a Dask worker on another machine. A job knows what
was evaluated before (``known``) and never evaluates a pair twice, which is what
makes a resumed run finish with the same results as an uninterrupted one.

Jobs, in the order a run uses them:

* :func:`search_chunk_job`: lists ``start..stop`` of a program proposed by the run's
  proposer (:mod:`llm_compiler.selection.proposer`; by default local search,
  :data:`~llm_compiler.autotune.strategies.DEFAULT_SEARCH`), with the unoptimized
  input and ``default<Oz>``, the baseline, measured in the first chunk;
* :func:`minimize_job`: minimization of the best list to a fixed point, stepwise with
  prefix states, then confirmed with whole-pipeline measurements;
* :func:`broadcast_job`: the most common best lists tried on one program;
* :func:`validate_job`: the best lists handed to the selection layer
  (:mod:`llm_compiler.selection`), which checks them best first until one passes;
* :func:`function_lists_job` (``per_function`` > 0): per-function lists after the
  validated best list (:mod:`llm_compiler.autotune.function_lists`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from llm_compiler.autotune.function_lists import (
    FunctionListsOutcome,
    draw_function_lists,
    function_level_members,
    tune_function_lists,
)
from llm_compiler.autotune.minimize import eliminate_redundant, minimize
from llm_compiler.autotune.random_search import RandomSearch
from llm_compiler.autotune.strategies import default_search
from llm_compiler.core.compiler import Compiler, process_compiler
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.core.store import EvaluationRow
from llm_compiler.errors import CommandFailed, CompileTimeout, InvalidPassList
from llm_compiler.passes.pipeline import PassList, PassNode, parse_pipeline
from llm_compiler.passes.safety import search_pass_set
from llm_compiler.passes.searchable import PassSet
from llm_compiler.passes.space import DEFAULT_SPACE
from llm_compiler.selection import Candidate, Measurer, Policy, Selector, Verdict, make_gate
from llm_compiler.selection.proposer import Evaluated, ProposalRequest, Proposer
from llm_compiler.selection.select import MAX_REJECTIONS

Known = dict[tuple[str, str], EvaluationRow]


@dataclass(frozen=True)
class TuneSettings:
    """What a tuning run does; the same settings and seed give the same results.

    Attributes:
        seed: Seed of the search.
        budget: Pass lists asked of the proposer per program.
        max_length: Longest random list (the paper: 50).
        chunk_size: Proposed lists per job (the unit of resumption).
        time_budget: Optional wall-clock seconds per program for the search (makes
            results depend on the machine's speed).
        minimize: Minimize the best lists to a fixed point.
        insertion: Include insertion search in minimization (about 130 evaluations
            per position).
        broadcast: How many of the most common best lists to try on every program.
        validate: Check the best lists by running the program before reporting them.
        llvm_bin: LLVM bin directory (None: found as usual).
        timeout: Seconds per compiler process.
        engine: ``auto``, ``inprocess`` or ``subprocess``.
        allow_extra: Passes allowed beyond the searchable set.
        extra_lists: Pass lists evaluated on every program besides the proposed ones
            (known good lists, a build's current flags...).
        suites: Suites of PassListEval that best lists must pass (see
            :func:`llm_compiler.validation.gate.load_suites`).
        user_check: A shell command that must pass with the candidate's object file.
        proposer: What proposes the lists of the search phase (None: local search,
            :data:`~llm_compiler.autotune.strategies.DEFAULT_SEARCH`, with ``seed``
            and ``max_length``; ``tune``'s default, which starts from the built-in
            predictor, is :func:`llm_compiler.predictor.search.make_search` with None).
        max_rejections: Distinct lists (by output IR) validation may reject for a
            program before it keeps -Oz.
        pass_set: What the search draws from: ``"safe"`` (the searchable set without
            the passes ``llm-compiler passes --audit`` saw break a program) or
            ``"full"`` (the paper's set).
        objective: What the search minimizes (:mod:`llm_compiler.core.objective`); with
            ``ir-instructions`` the search generates no code.
        space: The search space (:mod:`llm_compiler.passes.space`): ``paper`` (flat lists
            of the pass set's members), ``params``, ``nested`` or ``rich``.
        per_function: Function-level lists tried on each unit after its validated
            best list (:mod:`llm_compiler.autotune.function_lists`); 0 turns the phase off.
    """

    seed: int = 0
    budget: int = 100
    max_length: int = 50
    chunk_size: int = 50
    time_budget: float | None = None
    minimize: bool = True
    insertion: bool = False
    broadcast: int = 100
    validate: bool = True
    llvm_bin: str | None = None
    timeout: float = 120.0
    engine: str = "auto"
    allow_extra: tuple[str, ...] = ()
    extra_lists: tuple[str, ...] = ()
    suites: tuple[str, ...] = ("builtin",)
    user_check: str | None = None
    proposer: Proposer | None = None
    max_rejections: int = MAX_REJECTIONS
    pass_set: str = "safe"
    objective: Objective = DEFAULT_OBJECTIVE
    space: str = DEFAULT_SPACE
    per_function: int = 0

    def search_pass_set(self, compiler: Compiler) -> PassSet:
        """The passes the search draws from (see ``pass_set``), as the search space ``space``."""
        return search_pass_set(compiler.toolchain, self.pass_set, self.space)

    @property
    def search(self) -> Proposer:
        """The proposer of the search phase (default:
        :data:`~llm_compiler.autotune.strategies.DEFAULT_SEARCH`)."""
        if self.proposer is not None:
            return self.proposer
        return default_search(self.seed, self.max_length)

    def identity(self) -> dict[str, Any]:
        """The settings a resumed run must share with the original."""
        identity: dict[str, Any] = {
            "seed": self.seed,
            "budget": self.budget,
            "max_length": self.max_length,
            "chunk_size": self.chunk_size,
            "minimize": self.minimize,
            "insertion": self.insertion,
            "broadcast": self.broadcast,
            "validate": self.validate,
            "allow_extra": list(self.allow_extra),
            "extra_lists": list(self.extra_lists),
            "suites": list(self.suites),
            "user_check": self.user_check,
            "pass_set": self.pass_set,
        }
        if self.max_rejections != MAX_REJECTIONS:
            identity["max_rejections"] = self.max_rejections
        if self.space != DEFAULT_SPACE:
            identity["space"] = self.space
        if self.per_function:
            identity["per_function"] = self.per_function
        if self.objective is not DEFAULT_OBJECTIVE:
            # Only another objective is named, so stores written before objectives resume.
            identity["objective"] = self.objective.value
        if self.search != RandomSearch(self.seed, self.max_length):
            # Only another search is named, so stores written before proposers resume.
            identity["proposer"] = self.search.identity()
        return identity


@dataclass
class JobOutput:
    """What a job evaluated and decided."""

    program_id: str
    rows: list[EvaluationRow] = field(default_factory=list)
    pipeline: str = ""
    size: int = 0
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: False only when a list was kept with validation turned off.
    validated: bool = True
    #: What became of the kept list (``validated``, ``not-checked``), or why -Oz was kept.
    verdict: Verdict = Verdict.NOT_CHECKED


class JobEvaluator:
    """Measures pass lists for one program in one objective, reusing and recording
    evaluations. With an objective that needs no object the IR is counted, not lowered."""

    def __init__(
        self,
        compiler: Compiler,
        program: Program,
        known: Known,
        phase: str,
        objective: Objective = DEFAULT_OBJECTIVE,
    ) -> None:
        self.compiler = compiler
        self.program = program
        self.known = dict(known)
        self.phase = phase
        self.objective = objective
        self.new: list[EvaluationRow] = []

    def value(self, row: EvaluationRow) -> float:
        """The row's value in the objective (infinity for a failure)."""
        return row.cost(self.objective)

    def evaluate(self, passes: PassList | None, mode: str = "exact") -> EvaluationRow:
        pipeline = passes.pipeline if passes is not None else ""
        key = (pipeline, mode)
        if key in self.known:
            return self.known[key]
        started = time.monotonic()
        try:
            if not self.objective.needs_object:
                # Counting is cheap: no prefix states needed, and the count is exact.
                counted = self.compiler.count(self.program, passes)
                measurement = None
            elif mode == "stepwise" and passes is not None:
                measurement = self.compiler.measure_stepwise(self.program, passes)
            else:
                measurement = self.compiler.measure(self.program, passes)
        except InvalidPassList as error:
            row = self._failure(pipeline, mode, "invalid", str(error), started)
        except CompileTimeout as error:
            row = self._failure(pipeline, mode, "timeout", str(error), started)
        except CommandFailed as error:
            row = self._failure(pipeline, mode, "compile-fail", str(error), started)
        else:
            found = measurement or counted
            row = EvaluationRow(
                program_id=self.program.id,
                pipeline=pipeline,
                mode=mode,
                outcome="ok",
                binary_size=found.binary_size,
                text=found.text,
                data=found.data,
                ir_instructions=found.ir_instructions,
                output_hash=found.ir_hash,
                seconds=time.monotonic() - started,
                detail="",
                phase=self.phase,
            )
        self.known[key] = row
        self.new.append(row)
        return row

    def _failure(self, pipeline: str, mode: str, outcome: str, detail: str, started: float) -> EvaluationRow:
        return EvaluationRow(
            program_id=self.program.id,
            pipeline=pipeline,
            mode=mode,
            outcome=outcome,
            seconds=time.monotonic() - started,
            detail=detail[:2000],
            phase=self.phase,
        )

    def cost(self, mode: str) -> Any:
        """A cost function over lists of pipeline elements for the minimizers."""

        def cost(nodes: Sequence[PassNode]) -> float:
            return self.value(self.evaluate(PassList(nodes) if nodes else None, mode))

        return cost


def search_chunk_job(
    settings: TuneSettings, program: Program, start: int, stop: int, known: Known
) -> JobOutput:
    """Evaluates the search proposer's lists ``start..stop-1`` (and, in the first chunk,
    the unoptimized input, -Oz and the ``extra_lists``), then tells the proposer how they did."""
    compiler = process_compiler(settings)
    evaluator = JobEvaluator(compiler, program, known, "random", settings.objective)
    if start == 0:
        evaluator.evaluate(None)
        evaluator.evaluate(compiler.passes(OZ_PIPELINE))  # the baseline, whoever proposes
        for pipeline in settings.extra_lists:
            evaluator.evaluate(compiler.passes(pipeline))
    deadline = None
    if settings.time_budget is not None:
        deadline = time.monotonic() + settings.time_budget * (stop - start) / settings.budget
    proposer = settings.search
    pass_set = settings.search_pass_set(compiler)
    # A non-adaptive proposer is asked once for the chunk; an adaptive one in batches,
    # hearing every measurement so far (see proposer.py).
    batch = proposer.batch_size if proposer.adaptive else stop - start
    history: list[Evaluated] = []
    if proposer.adaptive:
        history = [
            _evaluated(row, settings.objective)
            for row in evaluator.known.values()
            if row.mode == "exact" and row.pipeline
        ]
    index = start
    while index < stop:
        count = min(batch, stop - index)
        lists = proposer.ask(ProposalRequest(program, pass_set, index, count, tuple(history)))[:count]
        outcomes = []
        for passes in lists:
            if deadline is not None and index > 0 and time.monotonic() > deadline:
                break
            outcomes.append(_evaluated(evaluator.evaluate(passes), settings.objective))
            index += 1
        proposer.tell(program, outcomes)
        if len(outcomes) < count:
            break  # the proposer ran dry, or the time budget ran out
        history += outcomes if proposer.adaptive else []
    return JobOutput(program_id=program.id, rows=evaluator.new)


def _evaluated(row: EvaluationRow, objective: Objective) -> Evaluated:
    """What a proposer is told of one evaluation (its value in the run's objective)."""
    cost = row.cost(objective)
    ok = row.ok and cost != float("inf")
    return Evaluated(
        pipeline=row.pipeline, outcome=row.outcome if ok else "invalid", size=int(cost) if ok else None
    )


def best_row(rows: Sequence[EvaluationRow], objective: Objective = DEFAULT_OBJECTIVE) -> EvaluationRow | None:
    """The smallest successful exact evaluation in ``objective``; ties go to the shorter
    pipeline text."""
    ok = [r for r in rows if r.ok and r.mode == "exact" and r.pipeline and r.cost(objective) != float("inf")]
    return min(ok, key=lambda r: (r.cost(objective), len(r.pipeline), r.pipeline)) if ok else None


def _exact_minimum(evaluator: JobEvaluator, pipeline: str) -> tuple[list[PassNode], float]:
    nodes = list(parse_pipeline(pipeline))
    return eliminate_redundant(nodes, evaluator.cost("exact"))


def minimize_job(settings: TuneSettings, program: Program, pipeline: str, known: Known) -> JobOutput:
    """Minimizes ``pipeline`` on ``program`` to a fixed point.

    The search runs stepwise (prefix states make candidates that share a prefix
    cheap); the result is then confirmed with whole-pipeline measurements, so that
    removing any single pass from the returned list makes the program larger.
    """
    compiler = process_compiler(settings)
    evaluator = JobEvaluator(compiler, program, known, "minimize", settings.objective)
    start = evaluator.evaluate(compiler.passes(pipeline))
    vocabulary = [member[0] for member in compiler.pass_set.member_lists] if settings.insertion else []
    reduced, _ = minimize(list(parse_pipeline(pipeline)), evaluator.cost("stepwise"), vocabulary=vocabulary)
    confirmed, size = eliminate_redundant(reduced, evaluator.cost("exact")) if reduced else ([], float("inf"))
    if not confirmed or size > evaluator.value(start):
        # Stepwise and whole-pipeline results disagreed; minimize exactly instead.
        confirmed, size = _exact_minimum(evaluator, pipeline)
    final = str(PassList(confirmed)) if confirmed else pipeline
    final_row = evaluator.evaluate(compiler.passes(final))
    return JobOutput(
        program_id=program.id,
        rows=evaluator.new,
        pipeline=final,
        size=int(evaluator.value(final_row)),
        extra={"length": len(confirmed)},
    )


def broadcast_job(
    settings: TuneSettings, program: Program, current: str, lists: Sequence[str], known: Known
) -> JobOutput:
    """Tries the most common best lists on ``program``; keeps (and minimizes) an improvement."""
    compiler = process_compiler(settings)
    evaluator = JobEvaluator(compiler, program, known, "broadcast", settings.objective)
    best = evaluator.evaluate(compiler.passes(current))
    for pipeline in lists:
        row = evaluator.evaluate(compiler.passes(pipeline))
        value, best_value = evaluator.value(row), evaluator.value(best)
        if value < best_value or (value == best_value and len(pipeline) < len(best.pipeline)):
            best = row
    chosen = best.pipeline
    if chosen != current:
        nodes, _ = _exact_minimum(evaluator, chosen)
        if nodes:
            chosen = str(PassList(nodes))
    row = evaluator.evaluate(compiler.passes(chosen))
    return JobOutput(
        program_id=program.id, rows=evaluator.new, pipeline=chosen, size=int(evaluator.value(row))
    )


_SELECTORS: dict[TuneSettings, Selector] = {}


def selector_for(settings: TuneSettings) -> Selector:
    """The selection layer of this process for ``settings`` (made once per process, so
    verdicts and blame are shared by the programs a process checks)."""
    if settings not in _SELECTORS:
        compiler = process_compiler(settings)
        gate = make_gate(compiler, settings.suites, settings.user_check) if settings.validate else None
        policy = Policy(
            validate=settings.validate, max_rejections=settings.max_rejections, objective=settings.objective
        )
        _SELECTORS[settings] = Selector(compiler, gate, policy)
    return _SELECTORS[settings]


def validate_job(
    settings: TuneSettings, program: Program, ranked: Sequence[Candidate], oz: int, known: Known
) -> JobOutput:
    """Hands the best lists (best first) to the selection layer; the first that passes wins.

    :meth:`~llm_compiler.selection.select.Selector.select` checks determinism, validates,
    salvages rejected lists and skips lists whose output IR equals a rejected one's
    (module :mod:`llm_compiler.selection.select`); every list it measures is recorded
    here. A list reached by falling back past the first, or by repair, is minimized too
    (exactly), and the minimized list is kept when it also passes. Every rejection and
    repair is in ``extra["rejected"]`` with its replay command.
    """
    evaluator = JobEvaluator(process_compiler(settings), program, known, "validate", settings.objective)
    output = JobOutput(program_id=program.id, pipeline=OZ_PIPELINE, size=oz, verdict=Verdict.NOT_SMALLER)
    if not any(candidate.binary_size is not None and candidate.binary_size < oz for candidate in ranked):
        output.detail = "nothing beat -Oz; -Oz kept"
        return output
    selector = selector_for(settings)
    selection = selector.select(program, ranked, oz_size=oz, measure=_measurer(evaluator))
    output.extra["rejected"] = [rejection.to_json() for rejection in selection.rejections]
    if selection.fallback is None:
        output.pipeline, output.size, output.detail = (
            selection.chosen,
            selection.binary_size,
            selection.detail,
        )
        output.verdict = Verdict.VALIDATED if selection.validated else Verdict.NOT_CHECKED
        if not selection.validated:
            output.detail = "unchecked: validation was turned off"
            output.validated = False
        elif selection.position > 0 or selection.repair:
            _keep_shorter_if_it_passes(evaluator, selector, output, oz)
    else:
        output.verdict = selection.fallback
        rejected = selection.rejected_lists
        output.detail = f"{rejected} lists better than -Oz (distinct output IR) failed validation; -Oz kept"
    output.rows = evaluator.new
    return output


def _measurer(evaluator: JobEvaluator) -> Measurer:
    """Measures through the job's evaluator, so every list the selection measures is stored."""

    def measure(passes: PassList) -> tuple[int | None, str, str]:
        row = evaluator.evaluate(passes)
        value = evaluator.value(row)
        if value == float("inf"):
            return None, "", row.detail[:300] or f"no {evaluator.objective.value} value"
        return int(value), row.output_hash or "", ""

    return measure


def _keep_shorter_if_it_passes(
    evaluator: JobEvaluator, selector: Selector, output: JobOutput, oz: int
) -> None:
    """Minimizes ``output``'s list exactly; keeps the shorter list if no larger and it
    passes too. ``oz`` is -Oz's size as the run measured it (the selection's baseline)."""
    nodes, reduced_size = _exact_minimum(evaluator, output.pipeline)
    shorter = str(PassList(nodes)) if nodes else output.pipeline
    if shorter != output.pipeline and reduced_size <= output.size:
        row = evaluator.evaluate(evaluator.compiler.passes(shorter))
        size = evaluator.value(row)
        if size > output.size:  # the minimizer's size did not hold on an exact measurement
            return
        candidate = Candidate.measured(shorter, int(size), row.output_hash or "")
        again = selector.select(evaluator.program, [candidate], oz_size=oz, measure=_measurer(evaluator))
        if again.fallback is None and again.validated and again.binary_size <= output.size:
            output.pipeline, output.size, output.detail = again.chosen, again.binary_size, again.detail


def function_lists_job(settings: TuneSettings, program: Program, base: str) -> JobOutput:
    """Per-function lists after ``base``, the program's validated best list
    (:func:`~llm_compiler.autotune.function_lists.tune_function_lists`); the outcome is
    in ``extra["function_lists"]``."""
    compiler = process_compiler(settings)
    members = function_level_members(settings.search_pass_set(compiler))
    candidates = draw_function_lists(members, settings.per_function, f"{settings.seed}:{program.id}")
    try:
        outcome = tune_function_lists(compiler, program, base, candidates, selector_for(settings))
    except (CommandFailed, InvalidPassList) as error:
        why = f"the base list does not build: {str(error)[:300]}"
        outcome = FunctionListsOutcome(None, 0, 0, 0, why, verdict=Verdict.COMPILE_FAILURE)
    output = JobOutput(program_id=program.id, pipeline=base, size=outcome.size, detail=outcome.detail)
    output.extra["function_lists"] = outcome.to_json()
    return output
