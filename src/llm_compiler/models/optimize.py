"""Flag tuning with a model, made safe: the model proposes, the compiler and the gate decide.

For each unit, :class:`ModelOptimizer` does what the paper does at evaluation, and more:

1. the flag-tuning prompt (:func:`~llm_compiler.tasks.prompts.flag_tuning_prompt`); a
   unit whose prompt is over the budget (15,000 tokens of the model's tokenizer) is not
   sent and keeps -Oz, as the paper scores it;
2. ``samples`` answers, batched to the backend; by default generation stops at the
   first ``<code>``: the list and the predicted sizes come before it, and the
   optimized IR the model would write after it is not needed (``full_answer`` keeps it);
3. each answer read leniently (:func:`~llm_compiler.tasks.answers.parse_flag_tuning_head`),
   its list mapped from the model's LLVM 17 to the installed LLVM where a mapping is
   sound (:mod:`llm_compiler.passes.versions`) and checked by the pass-list gate;
4. every candidate and -Oz measured exactly;
5. candidates smaller than -Oz checked, smallest first, by the gate ``tune`` uses
   (:class:`~llm_compiler.validation.gate.Gate`);
6. the smallest validated list wins; when none does, -Oz ("-Oz backup"), with the
   reason: a closed vocabulary, :class:`Verdict`.

The result is never larger than -Oz and never unchecked. Each unit gives one
:class:`UnitResult`, a JSON record that also carries the prompt's hash and the raw
answers, so a results file can be replayed (``replay:FILE``) and re-scored.
"""

from __future__ import annotations

import abc
import enum
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.errors import CommandFailed, InvalidInput, InvalidPassList
from llm_compiler.models.backends.replay import prompt_key
from llm_compiler.models.base import GenerationRequest, Model, PromptTooLong
from llm_compiler.passes.versions import MODEL_LLVM, adapt_pass_list
from llm_compiler.tasks.answers import AnswerParseError, parse_flag_tuning_head
from llm_compiler.tasks.prompts import flag_tuning_prompt
from llm_compiler.validation.gate import Gate

#: Prompt budget of flag tuning and emulation, in the model's tokens (the paper's 15k).
FLAG_TUNING_BUDGET = 15_000


class Verdict(enum.StrEnum):
    """What became of one answer, or why a unit kept -Oz."""

    VALIDATED = "validated"
    PARSE_ERROR = "parse-error"
    UNKNOWN_PASS = "unknown-pass"
    ALREADY_OPTIMAL = "model-says-optimal"
    COMPILE_FAILURE = "compile-failure"
    NOT_SMALLER = "not-smaller-than-oz"
    VALIDATION_FAILURE = "validation-failure"
    NOT_CHECKED = "not-checked"
    OVER_BUDGET = "over-budget"

    @property
    def is_failure(self) -> bool:
        """Whether the answer could not be used (everything but validated and not-checked)."""
        return self not in (Verdict.VALIDATED, Verdict.NOT_CHECKED)


@dataclass(frozen=True)
class Candidate:
    """One answer and what the tool made of it.

    Attributes:
        answer: The raw answer text.
        finish_reason: ``stop`` or ``length`` (the token limit cut it).
        pipeline: The list the model named (None when it named none or was unreadable).
        run: The list actually run, after mapping to the installed LLVM.
        changes: Each rewrite of the model's list (old, new, reason).
        predicted_before: The model's predicted size of the input.
        predicted_after: The model's predicted size after its list.
        binary_size: The measured size (text + data) of the list's result.
        verdict: What became of it.
        detail: Why, in words (the parse error, the failing check, the sizes).
        replay: A command that replays a compile or validation failure.
    """

    answer: str
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


@dataclass(frozen=True)
class UnitResult:
    """The outcome for one unit (a JSON record of ``optimize --out``).

    Attributes:
        unit: The unit's name. program_id: Its stable id.
        model: The model spec. llvm_version: The LLVM that measured.
        prompt_sha256: The prompt's hash (what ``replay:`` files key answers by).
        prompt_tokens: The prompt's length in the model's tokens.
        oz_size: -Oz's binary size.
        chosen: The list whose result is kept (``default<Oz>`` on fallback).
        binary_size: The kept result's size (never above ``oz_size``).
        fallback: Why -Oz was kept (None when a model's list was used).
        candidates: Every answer, in the order generated.
        seconds: Wall time for the unit's compile side.
        unoptimized_size: The input's binary size (what a model's "from N bytes" predicts).
    """

    unit: str
    program_id: str
    model: str
    llvm_version: str
    prompt_sha256: str
    prompt_tokens: int
    oz_size: int
    chosen: str
    binary_size: int
    fallback: Verdict | None
    fallback_detail: str = ""
    candidates: tuple[Candidate, ...] = ()
    seconds: float = 0.0
    unoptimized_size: int = 0

    @property
    def improvement(self) -> float:
        """The fraction of -Oz's size saved (0 on fallback)."""
        return (self.oz_size - self.binary_size) / self.oz_size if self.oz_size else 0.0

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        record["fallback"] = self.fallback.value if self.fallback else None
        record["improvement"] = self.improvement
        record["completions"] = [candidate.answer for candidate in self.candidates]
        for candidate in record["candidates"]:
            candidate["verdict"] = Verdict(candidate["verdict"]).value
        return record


@dataclass(frozen=True)
class OptimizeSettings:
    """How answers are asked for.

    Attributes:
        samples: Answers per unit (greedy when 1 and the temperature is 0).
        temperature: Sampling temperature (0: greedy).
        max_tokens: The most new tokens per answer.
        full_answer: Generate the optimized IR after the list too (else stop at ``<code>``).
        budget: The most prompt tokens sent (larger units keep -Oz).
        seed: Seeds sampling.
        source_llvm: The LLVM whose pass names answers use (the released models: 17).
        batch: Units sent to the backend at once.
    """

    samples: int = 1
    temperature: float = 0.0
    max_tokens: int = 512
    full_answer: bool = False
    budget: int = FLAG_TUNING_BUDGET
    seed: int = 0
    source_llvm: int = MODEL_LLVM
    batch: int = 8

    def request(self, prompt: str, context_left: int) -> GenerationRequest:
        max_tokens = context_left if self.full_answer else self.max_tokens
        return GenerationRequest(
            prompt,
            samples=self.samples,
            temperature=self.temperature,
            max_tokens=max(1, max_tokens),
            stop=() if self.full_answer else ("<code>",),
            seed=self.seed,
        )


@dataclass(frozen=True)
class Proposal:
    """What a source of lists said for one unit, before anything was measured.

    Attributes:
        candidates: The lists proposed, read and checked by the pass-list gate (those
            with verdict ``not-checked`` are measured).
        refusal: Why the unit was not asked (over the prompt budget...), if it was not.
        prompt_sha256: The prompt's hash, for a model ("" otherwise).
        tokens: The prompt's length in the model's tokens (0 otherwise).
    """

    candidates: tuple[Candidate, ...] = ()
    refusal: tuple[Verdict, str] | None = None
    prompt_sha256: str = ""
    tokens: int = 0


class ListOptimizer(abc.ABC):
    """Steps 4 to 6 of the module docstring, for any source of lists.

    A subclass says what it proposes for a batch of units (:meth:`propose`); this class
    measures every candidate and -Oz, validates the smaller ones smallest first and
    keeps the first to pass, or -Oz with the reason. A model (:class:`ModelOptimizer`),
    the built-in predictor and any search proposer
    (:class:`~llm_compiler.models.proposed.ProposerOptimizer`) share it.
    """

    compiler: Compiler
    gate: Gate
    jobs: int

    @property
    @abc.abstractmethod
    def spec(self) -> str:
        """The name records carry (a model spec, ``builtin``, ``random:10``...)."""

    @property
    def batch_size(self) -> int:
        """Units proposed for at once."""
        return 8

    @abc.abstractmethod
    def propose(self, programs: Sequence[Program]) -> list[Proposal]:
        """One proposal per program, in order."""

    def run(
        self, sources: Iterable[ProgramSource], on_result: Callable[[UnitResult], None] | None = None
    ) -> Iterator[UnitResult]:
        """Optimizes each unit; results come in order, as each batch is done.

        Raises:
            InvalidInput: A unit cannot be read or compiled to IR.
            ModelError: A model's backend failed (answers already written are kept by callers).
        """
        pending: list[tuple[ProgramSource, Program]] = []
        for source in sources:
            pending.append((source, source.load(self.compiler)))
            if len(pending) >= self.batch_size:
                yield from self._batch(pending, on_result)
                pending = []
        if pending:
            yield from self._batch(pending, on_result)

    def decide(self, name: str, program: Program, proposal: Proposal) -> UnitResult:
        """Measures, validates and chooses for one unit named ``name`` (what :meth:`run` does
        per unit)."""
        unit = _Unit(
            name,
            program,
            proposal.prompt_sha256,
            proposal.tokens,
            self.compiler.measure_oz(program).binary_size,
            self.compiler.measure(program).binary_size,
            time.monotonic(),
        )
        if proposal.refusal is not None:
            verdict, reason = proposal.refusal
            return self._result(unit, OZ_PIPELINE, unit.oz_size, verdict, reason, [])
        candidates = self._measured(program, proposal.candidates, unit.oz_size)
        return self._choose(unit, candidates)

    def _batch(
        self, units: Sequence[tuple[ProgramSource, Program]], on_result: Callable[[UnitResult], None] | None
    ) -> Iterator[UnitResult]:
        proposals = self.propose([program for _, program in units])
        for (source, program), proposal in zip(units, proposals, strict=True):
            result = self.decide(source.name, program, proposal)
            if on_result is not None:
                on_result(result)
            yield result

    def _measured(self, program: Program, proposed: Sequence[Candidate], oz_size: int) -> list[Candidate]:
        """Measures each candidate that may be measured (in parallel, each list once)."""
        parsed = list(proposed)
        to_measure = [
            i for i, c in enumerate(parsed) if c.run is not None and c.verdict is Verdict.NOT_CHECKED
        ]
        unique = sorted({run for i in to_measure if (run := parsed[i].run) is not None})

        def measure(pipeline: str) -> tuple[str, int | None, str]:
            try:
                return (
                    pipeline,
                    self.compiler.measure(program, self.compiler.passes(pipeline)).binary_size,
                    "",
                )
            except (CommandFailed, InvalidPassList) as error:
                return pipeline, None, str(error).splitlines()[0][:300]

        with ThreadPoolExecutor(max_workers=max(1, self.jobs)) as pool:
            sizes = {pipeline: (size, error) for pipeline, size, error in pool.map(measure, unique)}
        for i in to_measure:
            candidate = parsed[i]
            assert candidate.run is not None
            size, error = sizes[candidate.run]
            if size is None:
                parsed[i] = _with(candidate, verdict=Verdict.COMPILE_FAILURE, detail=error)
            elif size >= oz_size:
                parsed[i] = _with(
                    candidate,
                    binary_size=size,
                    verdict=Verdict.NOT_SMALLER,
                    detail=f"{size} bytes, -Oz {oz_size}",
                )
            else:
                parsed[i] = _with(candidate, binary_size=size)
        return parsed

    def _choose(self, unit: _Unit, candidates: list[Candidate]) -> UnitResult:
        """Validates the smaller candidates, smallest first; the first to pass wins."""
        order = sorted(
            (
                i
                for i, c in enumerate(candidates)
                if c.binary_size is not None and c.verdict is Verdict.NOT_CHECKED
            ),
            key=lambda i: (candidates[i].binary_size, i),
        )
        verdicts: dict[str, Candidate] = {}
        chosen: Candidate | None = None
        for i in order:
            candidate = candidates[i]
            assert candidate.run is not None
            if candidate.run not in verdicts:
                result = self.gate.check(unit.program, self.compiler.passes(candidate.run))
                verdict = Verdict.VALIDATED if result.passed else Verdict.VALIDATION_FAILURE
                verdicts[candidate.run] = _with(
                    candidate, verdict=verdict, detail=result.description, replay=result.command
                )
            checked = verdicts[candidate.run]
            candidates[i] = _with(
                candidate, verdict=checked.verdict, detail=checked.detail, replay=checked.replay
            )
            if checked.verdict is Verdict.VALIDATED:
                chosen = candidates[i]
                break
        if chosen is not None and chosen.run is not None and chosen.binary_size is not None:
            return self._result(unit, chosen.run, chosen.binary_size, None, "", candidates)
        verdict, detail = _why_not(candidates)
        return self._result(unit, OZ_PIPELINE, unit.oz_size, verdict, detail, candidates)

    def _result(
        self,
        unit: _Unit,
        chosen: str,
        size: int,
        fallback: Verdict | None,
        detail: str,
        candidates: Sequence[Candidate],
    ) -> UnitResult:
        return UnitResult(
            unit.name,
            unit.program.id,
            self.spec,
            self.compiler.llvm_version,
            unit.prompt_sha256,
            unit.tokens,
            unit.oz_size,
            chosen,
            size,
            fallback,
            detail,
            tuple(candidates),
            time.monotonic() - unit.start,
            unit.unoptimized_size,
        )


@dataclass
class ModelOptimizer(ListOptimizer):
    """The pipeline of the module docstring, for one model, compiler and gate.

    Args:
        compiler: Measures every list.
        model: Proposes lists.
        gate: Validates lists smaller than -Oz (the one ``tune`` uses).
        settings: How answers are asked for.
        jobs: Candidates measured at once.
    """

    compiler: Compiler
    model: Model
    gate: Gate
    settings: OptimizeSettings = field(default_factory=OptimizeSettings)
    jobs: int = 1

    @property
    def spec(self) -> str:
        return self.model.spec

    @property
    def batch_size(self) -> int:
        return self.settings.batch

    def propose(self, programs: Sequence[Program]) -> list[Proposal]:
        """Steps 1 to 3: the prompts, the answers (one batch to the backend), each read."""
        prompts = [flag_tuning_prompt(program.ir) for program in programs]
        tokens = [self.model.count_tokens(prompt) for prompt in prompts]
        fits = [i for i, count in enumerate(tokens) if count <= self.settings.budget]
        requests = [self.settings.request(prompts[i], self.model.context_length - tokens[i]) for i in fits]
        refused: dict[int, str] = {}
        for index, request in zip(fits, requests, strict=True):
            try:
                self.model.answer_limit(request)
            except PromptTooLong as error:
                refused[index] = str(error)
        sendable = [(i, r) for i, r in zip(fits, requests, strict=True) if i not in refused]
        generations = self.model.generate([request for _, request in sendable])
        answers: dict[int, list[tuple[str, str]]] = {}
        for (index, _), generation in zip(sendable, generations, strict=True):
            answers[index] = [(c.text, c.finish_reason) for c in generation.completions]
        proposals = []
        for index, prompt in enumerate(prompts):
            key, count = prompt_key(prompt), tokens[index]
            if index not in answers:
                reason = refused.get(index) or (
                    f"the prompt is {tokens[index]} tokens, over the budget of {self.settings.budget}; "
                    "the unit was not sent (split it per function to give the model a chance)"
                )
                proposals.append(Proposal((), (Verdict.OVER_BUDGET, reason), key, count))
            else:
                read = tuple(
                    read_answer(self.compiler, text, finish, self.settings.source_llvm)
                    for text, finish in answers[index]
                )
                proposals.append(Proposal(read, None, key, count))
        return proposals


@dataclass(frozen=True)
class _Unit:
    """A unit being decided: what every result record repeats."""

    name: str
    program: Program
    prompt_sha256: str
    tokens: int
    oz_size: int
    unoptimized_size: int
    start: float


def read_answer(
    compiler: Compiler, text: str, finish: str = "stop", source_llvm: int = MODEL_LLVM
) -> Candidate:
    """A flag tuning answer's list, mapped to the installed LLVM and checked by the pass-list gate.

    The candidate's ``run`` is the list to measure; its verdict is ``not-checked`` when
    it may be measured, else the reason it may not (parse error, unknown pass, the
    model saying the input is already optimal).
    """
    try:
        head = parse_flag_tuning_head(text)
    except AnswerParseError as error:
        verdict = Verdict.UNKNOWN_PASS if error.pass_list_error else Verdict.PARSE_ERROR
        cut = " (the answer hit the token limit)" if finish == "length" else ""
        return Candidate(text, finish, verdict=verdict, detail=error.reason + cut)
    if head.passes is None:
        return Candidate(
            text,
            finish,
            predicted_before=head.size_before,
            verdict=Verdict.ALREADY_OPTIMAL,
            detail="the model says the input is already optimal",
        )
    pipeline = head.passes.pipeline
    try:
        adapted = adapt_pass_list(head.passes, compiler.pass_set, source_llvm=source_llvm)
        run = compiler.check(adapted.passes)
    except InvalidPassList as error:
        return Candidate(
            text,
            finish,
            pipeline,
            predicted_before=head.size_before,
            predicted_after=head.size_after,
            verdict=Verdict.UNKNOWN_PASS,
            detail=str(error),
        )
    changes = tuple((change.old, change.new, change.reason) for change in adapted.changes)
    return Candidate(text, finish, pipeline, run, changes, head.size_before, head.size_after)


def _with(candidate: Candidate, **changes: Any) -> Candidate:
    values = {**asdict(candidate), **changes}
    values["changes"] = tuple(tuple(change) for change in values["changes"])
    return Candidate(**values)


def _why_not(candidates: Sequence[Candidate]) -> tuple[Verdict, str]:
    """The reason -Oz was kept: the most advanced stage any answer reached."""
    if not candidates:
        return Verdict.PARSE_ERROR, "no list was proposed"
    stages = [
        Verdict.VALIDATION_FAILURE,
        Verdict.NOT_SMALLER,
        Verdict.COMPILE_FAILURE,
        Verdict.ALREADY_OPTIMAL,
        Verdict.UNKNOWN_PASS,
        Verdict.PARSE_ERROR,
    ]
    for stage in stages:
        hit = next((c for c in candidates if c.verdict is stage), None)
        if hit is not None:
            return stage, hit.detail
    raise InvalidInput("no answer reached a verdict")  # unreachable: every candidate has one
