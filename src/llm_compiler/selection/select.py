"""From proposed lists to one kept result: measure, validate smallest first, salvage, choose.

:meth:`Selector.select` is the one way a pass list leaves the tool, whoever proposed
it (``tune``'s search, ``optimize``'s predictor or model, ``evaluate``'s systems, the
``cc`` driver, a fixed list):

1. every candidate the pass-list grammar accepted is measured once (lists with the
   same text share one measurement; ``tune`` hands over sizes it measured already);
2. those smaller than -Oz are validated smallest first by the
   :class:`~llm_compiler.validation.gate.Gate`, after a **determinism check**: a second,
   independent compile must give the size and optimized IR the measurement gave
   (LLVM 19.1.7's ``opt`` does not on some lists), else the verdict is
   ``nondeterministic`` and the list is not kept, so every kept record replays exactly;
3. a rejected list is **salvaged**: the passes to blame are found
   (:class:`~llm_compiler.validation.salvage.Salvager`) and dropped, and the repaired
   list, measured, is checked like any other (up to ``max_repairs`` times);
4. candidates whose optimized IR equals that of a rejected list are not checked again
   (``same-ir-as-rejected``); after ``max_rejections`` distinct rejections -Oz is kept;
5. the first list to pass wins; else -Oz, with the verdict that stopped the best
   candidate (:data:`~llm_compiler.selection.outcomes.FALLBACK_ORDER`).

The gate's checks share the object the determinism check compiled (the compiler's
object cache), so validating a list compiles the target once (with
``Policy.second_beside``, that second compile starts beside the first). An object made
by other means than one list (a joined unit) is checked by :meth:`Selector.check_object`.

Sizes are in the policy's objective (:mod:`llm_compiler.core.objective`): bytes of
text + data by default, text bytes, or IR instructions, in which case candidates are
measured by counting their IR and only the lists the gate checks are lowered. The
``binary_size`` fields of :class:`Candidate` and :class:`Selection` then hold that
objective's value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from functools import partial
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import OZ_PIPELINE, Measurement, Program
from llm_compiler.errors import CommandFailed, InvalidPassList
from llm_compiler.passes.pipeline import PassList
from llm_compiler.selection.outcomes import FALLBACK_ORDER, Verdict
from llm_compiler.validation.gate import Gate, GateResult
from llm_compiler.validation.salvage import Salvager

#: Distinct rejected lists (by the target's optimized IR) before -Oz is kept.
MAX_REJECTIONS = 10

#: Times a rejected list is repaired (culprits dropped) and checked again.
MAX_REPAIRS = 3


@dataclass(frozen=True)
class Candidate:
    """One proposed list and what became of it.

    Attributes:
        answer: The raw answer text, for a model ("" otherwise).
        finish_reason: ``stop`` or ``length`` (the token limit cut the answer).
        pipeline: The list as proposed (None when none could be read).
        run: The list actually run, after the grammar check and any respelling for
            the installed LLVM (None: it may not be run).
        changes: Each rewrite of the proposed list (old, new, reason).
        predicted_before: A model's predicted size of the input.
        predicted_after: A model's predicted size after its list.
        binary_size: The measured size of the list's result in the selection's objective
            (text + data bytes by default).
        verdict: What became of it.
        detail: Why, in words (the parse error, the failing check, the sizes).
        replay: A command that replays a compile or validation failure.
        output_hash: The hash of the optimized IR (what "the same list" means).
        repaired_from: For a salvaged list, the rejected list it was made from.
        transient: Its rejection rests on a timeout alone (a busy machine): it holds
            for this run only, and nothing decided by it may be cached or stored.
    """

    answer: str = ""
    finish_reason: str = "stop"
    pipeline: str | None = None
    run: str | None = None
    changes: tuple[tuple[str, str, str], ...] = ()
    predicted_before: int | None = None
    predicted_after: int | None = None
    binary_size: int | None = None
    verdict: Verdict = Verdict.NOT_CHECKED
    detail: str = ""
    replay: str = ""
    output_hash: str = ""
    repaired_from: str = ""
    transient: bool = False

    @classmethod
    def measured(cls, pipeline: str, size: int, output_hash: str = "") -> Candidate:
        """A list measured already (by a search), ready to be validated."""
        return cls(pipeline=pipeline, run=pipeline, binary_size=size, output_hash=output_hash)

    def but(self, **changes: Any) -> Candidate:
        """This candidate with ``changes``."""
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        record["verdict"] = self.verdict.value
        return record


@dataclass(frozen=True)
class Rejection:
    """One list the gate rejected, with what salvage made of it."""

    pipeline: str
    size: int
    outcome: str
    check: str
    detail: str
    command: str
    culprits: tuple[str, ...] = ()
    repair: str = ""

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "culprits": list(self.culprits)}


@dataclass(frozen=True)
class Policy:
    """How candidates are chosen.

    Attributes:
        validate: Check lists before keeping them (off: the smallest is kept unchecked,
            and said to be).
        salvage: Repair rejected lists by dropping the passes to blame.
        max_rejections: Distinct rejected lists (by optimized IR) before -Oz is kept.
        max_repairs: Repairs of one rejected list.
        determinism: Compile a list again before validating it and reject it when the
            two compiles differ.
        jobs: Candidates measured at once.
        objective: What "smaller" means (:mod:`llm_compiler.core.objective`).
        second_beside: Start each measured list's second compile (the determinism
            check's) beside its measurement and -Oz's, not after: for one candidate whose
            check is certain (``cc``'s confirmation); a list not smaller costs it too.
    """

    validate: bool = True
    salvage: bool = True
    max_rejections: int = MAX_REJECTIONS
    max_repairs: int = MAX_REPAIRS
    determinism: bool = True
    jobs: int = 1
    objective: Objective = DEFAULT_OBJECTIVE
    second_beside: bool = False


@dataclass(frozen=True)
class Selection:
    """The kept result for one unit.

    Attributes:
        oz_size: -Oz's size (in the policy's objective, as every size here).
        chosen: The kept list (``default<Oz>`` when -Oz was kept).
        binary_size: The kept result's size (never above ``oz_size``).
        fallback: Why -Oz was kept (None when a proposed list was).
        detail: What was checked for the kept list, or why -Oz was kept.
        candidates: Every candidate with its verdict, repaired lists after the proposed ones.
        rejections: Every rejection, with its replay command and repair.
        position: How many lists were checked before the kept one (-1: none kept).
        repair: What salvage did to the kept list ("" when kept as proposed).
        validated: Whether the kept list passed the gate (False when validation was off).
        rejected_lists: Distinct proposed lists (by optimized IR) the gate rejected.
    """

    oz_size: int
    chosen: str
    binary_size: int
    fallback: Verdict | None
    detail: str = ""
    candidates: tuple[Candidate, ...] = ()
    rejections: tuple[Rejection, ...] = ()
    position: int = -1
    repair: str = ""
    validated: bool = False
    rejected_lists: int = 0

    @property
    def improved(self) -> bool:
        """Whether a list smaller than -Oz was kept."""
        return self.fallback is None and self.binary_size < self.oz_size

    @property
    def transient(self) -> bool:
        """Whether a list checked before the kept result was rejected by a timeout alone:
        a quiet machine may choose otherwise, so the choice must not be cached."""
        return any(candidate.transient for candidate in self.candidates)


@dataclass(frozen=True)
class ObjectCheck:
    """What :meth:`Selector.check_object` made of an object.

    Attributes:
        verdict: ``validated``, ``nondeterministic``, ``compile-failure``,
            ``validation-failure`` or ``not-checked`` (validation turned off).
        detail: What was checked, or what failed.
        obj: The object built (b"" when it could not be).
        result: The gate's result (None when the gate was not reached).
    """

    verdict: Verdict
    detail: str
    obj: bytes = b""
    result: GateResult | None = None


#: Measures one list: (size or None, optimized-IR hash, error text).
Measurer = Callable[[PassList], tuple[int | None, str, str]]

#: A second compile of a list started beside its measurement: (object, measurement).
_Second = Future[tuple[bytes, Measurement]]


class Selector:
    """The module docstring's steps for one compiler, gate and policy.

    Args:
        compiler: Measures lists and compiles the objects the gate checks.
        gate: Validates lists (None only with ``policy.validate`` off).
        policy: How candidates are chosen.
    """

    def __init__(self, compiler: Compiler, gate: Gate | None, policy: Policy | None = None) -> None:
        self.compiler = compiler
        self.gate = gate
        self.policy = policy or Policy()
        if self.policy.validate and gate is None:
            raise ValueError("a Selector that validates needs a gate")
        self.salvager = Salvager(gate) if gate is not None else None

    def measure(self, program: Program, *, fresh: bool = False) -> Measurer:
        """The default measurer: one exact compile of ``program`` with the list (its IR
        counted, not lowered, when the objective needs no object).

        With ``fresh``, an independent compile (lowered whatever the objective) even when
        the compiler's object cache holds the list's object, as a second compile beside
        it needs.
        """

        def measure(passes: PassList) -> tuple[int | None, str, str]:
            try:
                if fresh:
                    measured = self.compiler.object_code(program, passes, fresh=True)[1]
                    value, digest = self.policy.objective.of(measured), measured.ir_hash
                else:
                    value, digest = self.compiler.value(program, passes, self.policy.objective)
            except (CommandFailed, InvalidPassList) as error:
                return None, "", _first_line(error)
            return value, digest, ""

        return measure

    def oz_size(self, program: Program) -> int:
        """-Oz's size in the objective, its object kept for the link check's reference."""
        measurement = self.compiler.object_code(program, self.compiler.passes(OZ_PIPELINE))[1]
        return self.policy.objective.of(measurement)

    def select(
        self,
        program: Program,
        candidates: Sequence[Candidate],
        *,
        oz_size: int | None = None,
        measure: Measurer | None = None,
    ) -> Selection:
        """Measures, validates, salvages and chooses (module docstring).

        Args:
            program: The unit.
            candidates: The proposed lists, in the proposer's order (ties in size go
                to the earlier one).
            oz_size: -Oz's size when known, measured by the caller in the policy's
                objective (else measured beside the candidates); never a made-up bound.
            measure: How lists are measured (default: :meth:`measure`); ``tune``
                passes one that records every evaluation in its store.
        """
        measure = measure or self.measure(program, fresh=self._beside)
        oz, listed, seconds = self._measured(program, list(candidates), oz_size, measure)
        order = sorted(
            (
                i
                for i, c in enumerate(listed)
                if c.binary_size is not None and c.verdict is Verdict.NOT_CHECKED
            ),
            key=lambda i: (listed[i].binary_size, i),
        )
        if not order:
            return self._fallback(oz, listed, ())
        if not self.policy.validate:
            best = listed[order[0]]
            assert best.run is not None and best.binary_size is not None
            detail = "unchecked: validation was turned off"
            return Selection(oz, best.run, best.binary_size, None, detail, tuple(listed), position=0)
        return self._validate_in_order(program, listed, order, oz, measure, seconds)

    @property
    def _beside(self) -> bool:
        """Whether second compiles start beside the measurements (and will be used)."""
        return self.policy.second_beside and self.policy.validate and self.policy.determinism

    def _second_compile(self, program: Program, pipeline: str) -> tuple[bytes, Measurement]:
        """An independent compile of ``pipeline`` (the determinism check's second)."""
        return self.compiler.object_code(program, self.compiler.passes(pipeline), fresh=True)

    def _measured(
        self, program: Program, listed: list[Candidate], oz_size: int | None, measure: Measurer
    ) -> tuple[int, list[Candidate], dict[str, _Second]]:
        """Measures each candidate that may be measured (in parallel, each list once) and,
        unless ``oz_size`` is given, -Oz in the same pool (first, as the slowest to compile
        is usually -Oz), each list's second compile after it with ``second_beside``.
        Returns -Oz's size, the candidates and the (finished) second compiles by list."""
        wanted = [i for i, c in enumerate(listed) if c.run is not None and c.verdict is Verdict.NOT_CHECKED]
        unique = sorted({run for i in wanted if listed[i].binary_size is None and (run := listed[i].run)})

        def one(pipeline: str) -> tuple[int | None, str, str]:
            try:
                return measure(self.compiler.passes(pipeline))
            except InvalidPassList as error:
                return None, "", _first_line(error)

        workers = max(1, self.policy.jobs)
        if self._beside:  # each measurement with its second compile, and -Oz beside them
            workers = 2 * workers + (oz_size is None)
        seconds: dict[str, _Second] = {}
        with ThreadPoolExecutor(max_workers=workers) as pool:
            oz_future = pool.submit(self.oz_size, program) if oz_size is None else None
            firsts = {}
            for pipeline in unique:  # a measurement, then its second: they start together
                firsts[pipeline] = pool.submit(one, pipeline)
                if self._beside:
                    seconds[pipeline] = pool.submit(self._second_compile, program, pipeline)
            sizes = {pipeline: future.result() for pipeline, future in firsts.items()}
            oz = oz_future.result() if oz_future is not None else oz_size
        assert oz is not None
        for i in wanted:
            candidate = listed[i]
            assert candidate.run is not None
            if candidate.binary_size is None:
                size, output_hash, error = sizes[candidate.run]
                if size is None:
                    listed[i] = candidate.but(verdict=Verdict.COMPILE_FAILURE, detail=error)
                    continue
                candidate = listed[i] = candidate.but(binary_size=size, output_hash=output_hash)
            assert candidate.binary_size is not None
            if candidate.binary_size >= oz:
                detail = f"{candidate.binary_size} {self.policy.objective.unit}, -Oz {oz}"
                listed[i] = candidate.but(verdict=Verdict.NOT_SMALLER, detail=detail)
        return oz, listed, seconds

    def _validate_in_order(
        self,
        program: Program,
        listed: list[Candidate],
        order: list[int],
        oz: int,
        measure: Measurer,
        seconds: Mapping[str, _Second],
    ) -> Selection:
        checked: dict[str, Candidate] = {}
        rejected_outputs: dict[str, str] = {}
        rejections: list[Rejection] = []
        repaired: list[Candidate] = []
        distinct_rejections = 0
        for position, i in enumerate(order):
            candidate = listed[i]
            assert candidate.run is not None
            if candidate.run in checked:
                done = checked[candidate.run]
                listed[i] = candidate.but(verdict=done.verdict, detail=done.detail, replay=done.replay)
                continue
            if candidate.output_hash and candidate.output_hash in rejected_outputs:
                detail = f"the same optimized IR as the rejected {rejected_outputs[candidate.output_hash]}"
                listed[i] = candidate.but(verdict=Verdict.SAME_AS_REJECTED, detail=detail)
                continue
            kept, chain = self._check_and_salvage(program, candidate, oz, measure, rejections, seconds)
            listed[i] = chain[0]
            repaired += chain[1:]
            for done in chain:
                if done.run is not None:
                    checked.setdefault(done.run, done)
            if kept is not None:
                _share_verdicts(listed, checked)
                assert kept.run is not None and kept.binary_size is not None
                repair = ""
                if kept.repaired_from:
                    repair = f"dropped {', '.join(rejections[-1].culprits)} from a rejected list"
                return Selection(
                    oz,
                    kept.run,
                    kept.binary_size,
                    None,
                    kept.detail + (f" (repaired: {repair})" if repair else ""),
                    tuple(listed + repaired),
                    tuple(rejections),
                    position,
                    repair,
                    validated=True,
                )
            if candidate.output_hash:
                rejected_outputs[candidate.output_hash] = candidate.run
            distinct_rejections += 1
            if distinct_rejections >= self.policy.max_rejections:
                break
        _share_verdicts(listed, checked)
        selection = self._fallback(oz, listed + repaired, rejections)
        return replace(selection, rejected_lists=distinct_rejections)

    def _check_and_salvage(
        self,
        program: Program,
        candidate: Candidate,
        oz: int,
        measure: Measurer,
        rejections: list[Rejection],
        seconds: Mapping[str, _Second],
    ) -> tuple[Candidate | None, list[Candidate]]:
        """Checks one candidate, repairing it while it fails; a list whose second compile
        was started beside its measurement (``seconds``) is checked with it.

        Returns the kept candidate (None when nothing passed) and the chain checked:
        the candidate with its verdict, then each repaired list with its own.
        """
        chain: list[Candidate] = []
        current = candidate
        for _ in range(self.policy.max_repairs + 1):
            run, size = current.run, current.binary_size
            assert run is not None and size is not None
            passes = self.compiler.passes(run)
            started = seconds.get(run)
            second = None if started is None else partial(_measurement_of, started)
            verdict, detail, command, result = self.check(
                program, passes, size, current.output_hash, second=second
            )
            transient = result is not None and result.transient
            current = current.but(verdict=verdict, detail=detail, replay=command, transient=transient)
            chain.append(current)
            if verdict is Verdict.VALIDATED:
                return current, chain
            rejection = Rejection(
                run,
                size,
                verdict.value if result is None else str(result.outcome),
                "determinism" if result is None else result.check,
                detail[:500],
                command,
            )
            if not self.policy.salvage or result is None or self.salvager is None or transient:
                rejections.append(rejection)
                return None, chain
            culprits = self.salvager.culprits(program, passes, result)
            best: tuple[int, str, str] | None = None
            for variant in self.salvager.repairs(passes, culprits):
                size, output_hash, _ = measure(variant)
                if size is not None and size < oz and (best is None or (size, variant.pipeline) < best[:2]):
                    best = (size, variant.pipeline, output_hash)
            if best is None:
                why = "no repair beats -Oz" if culprits else "the failure could not be narrowed down"
                rejections.append(replace(rejection, culprits=culprits, repair=why))
                return None, chain
            rejections.append(replace(rejection, culprits=culprits, repair=best[1]))
            current = Candidate(
                pipeline=best[1],
                run=best[1],
                binary_size=best[0],
                output_hash=best[2],
                repaired_from=run,
            )
        return None, chain

    def check(
        self,
        program: Program,
        passes: PassList,
        size: int,
        output_hash: str = "",
        *,
        second: Callable[[], Measurement] | None = None,
    ) -> tuple[Verdict, str, str, GateResult | None]:
        """The determinism check, then the gate, for one list measured at ``size``.

        Args:
            program: The unit.
            passes: The list.
            size: Its measured size.
            output_hash: The hash of the optimized IR the measurement gave.
            second: Gives the second, independent compile's measurement when the caller
                started it already (beside the first); by default it is compiled here.

        Returns the verdict, its description, a replay command, and the gate's result
        (None when the gate was not reached).
        """
        if self.policy.determinism:
            try:
                if second is not None:
                    again = second()
                else:
                    _, again = self.compiler.object_code(program, passes, fresh=True)
            except CommandFailed as error:
                return Verdict.COMPILE_FAILURE, _first_line(error), "", None
            value = self.policy.objective.of(again)
            if value != size or (output_hash and again.ir_hash and again.ir_hash != output_hash):
                detail = (
                    f"two compiles of the same list differ: {size} then {value} {self.policy.objective.unit}"
                    + (", different optimized IR" if again.ir_hash != output_hash else "")
                    + "; the size could not be reproduced"
                )
                return Verdict.NONDETERMINISTIC, detail, f"opt -passes={passes.pipeline!r} (run twice)", None
        assert self.gate is not None
        result = self.gate.check(program, passes)
        verdict = Verdict.VALIDATED if result.passed else Verdict.VALIDATION_FAILURE
        return verdict, result.description, result.command, result

    def check_object(
        self,
        program: Program,
        build: Callable[[], bytes],
        label: str,
        *,
        again: Callable[[], bytes] | None = None,
    ) -> ObjectCheck:
        """The determinism check and the gate for an object made from ``program`` by other
        means than one list (a unit joined from per-function lists): built twice at once,
        the same bytes (else ``nondeterministic``), then the gate's object checks
        (:meth:`~llm_compiler.validation.gate.Gate.check_object`). Built once with
        ``determinism`` off; ``not-checked`` with validation off.

        Args:
            program: The unit the object was made from.
            build: Makes the object (raises :class:`~llm_compiler.errors.CommandFailed`
                when LLVM fails).
            label: How it was made, for the gate's messages.
            again: Makes it a second time by another road (a replay from the record).
        """
        try:
            if self.policy.determinism:
                with ThreadPoolExecutor(max_workers=2) as pool:
                    first, second = pool.submit(build), pool.submit(again or build)
                    obj, other = first.result(), second.result()
                if obj != other:
                    detail = f"two builds of {label} differ ({len(obj)} then {len(other)} bytes of object)"
                    return ObjectCheck(Verdict.NONDETERMINISTIC, detail, obj)
            else:
                obj = build()
        except CommandFailed as error:
            return ObjectCheck(Verdict.COMPILE_FAILURE, _first_line(error))
        if self.gate is None:
            return ObjectCheck(Verdict.NOT_CHECKED, "unchecked: validation was turned off", obj)
        result = self.gate.check_object(program, obj, label)
        verdict = Verdict.VALIDATED if result.passed else Verdict.VALIDATION_FAILURE
        return ObjectCheck(verdict, result.description, obj, result)

    @staticmethod
    def _fallback(oz: int, listed: Sequence[Candidate], rejections: Sequence[Rejection]) -> Selection:
        verdict, detail = fallback_reason(listed)
        return Selection(oz, OZ_PIPELINE, oz, verdict, detail, tuple(listed), tuple(rejections))


def _measurement_of(second: _Second) -> Measurement:
    """The measurement of a second compile started beside the first (waits for it)."""
    return second.result()[1]


def _first_line(error: Exception) -> str:
    """An error as a candidate's detail: its first line, or its type when it says nothing."""
    lines = str(error).strip().splitlines()
    return lines[0][:300] if lines else type(error).__name__


def _share_verdicts(listed: list[Candidate], checked: dict[str, Candidate]) -> None:
    """Gives each candidate not reached the verdict of a list checked with the same text."""
    for i, candidate in enumerate(listed):
        done = checked.get(candidate.run or "")
        if (
            done is not None
            and candidate.verdict is Verdict.NOT_CHECKED
            and candidate.binary_size is not None
        ):
            listed[i] = candidate.but(verdict=done.verdict, detail=done.detail, replay=done.replay)


def fallback_reason(candidates: Sequence[Candidate]) -> tuple[Verdict, str]:
    """Why -Oz was kept: the furthest stage any candidate reached."""
    if not candidates:
        # A proposer that offers nothing (the predictor where no list is predicted to gain)
        # says -Oz is as good as it expects, as a model answering "already optimal" does.
        return Verdict.ALREADY_OPTIMAL, "no list was proposed: none is expected to beat -Oz"
    for stage in FALLBACK_ORDER:
        hit = next((c for c in candidates if c.verdict is stage), None)
        if hit is not None:
            return stage, hit.detail
    return Verdict.NOT_SMALLER, "no candidate was smaller than -Oz"


__all__ = [
    "Candidate",
    "Measurer",
    "ObjectCheck",
    "Policy",
    "Rejection",
    "Selection",
    "Selector",
    "fallback_reason",
]
