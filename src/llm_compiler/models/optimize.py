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
import functools
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.objective import DEFAULT_OBJECTIVE
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.errors import InvalidPassList
from llm_compiler.models.backends.replay import prompt_key
from llm_compiler.models.base import GenerationRequest, Model
from llm_compiler.models.request import PROMPT_BUDGET, Refused, ask
from llm_compiler.passes.versions import MODEL_LLVM, adapt_pass_list
from llm_compiler.selection import Candidate, Gate, Policy, Selection, Selector, Verdict
from llm_compiler.tasks.answers import AnswerParseError, parse_flag_tuning_head
from llm_compiler.tasks.prompts import flag_tuning_prompt

#: Prompt budget of flag tuning, in the model's tokens (the paper's 15k).
FLAG_TUNING_BUDGET = PROMPT_BUDGET


@dataclass(frozen=True)
class UnitResult:
    """The outcome for one unit (a JSON record of ``optimize --out``).

    Attributes:
        unit: The unit's name. program_id: Its stable id.
        model: The model spec. llvm_version: The LLVM that measured.
        prompt_sha256: The prompt's hash (what ``replay:`` files key answers by).
        prompt_tokens: The prompt's length in the model's tokens.
        oz_size: -Oz's size in ``objective`` (as every size of the record).
        chosen: The list whose result is kept (``default<Oz>`` on fallback).
        binary_size: The kept result's size (never above ``oz_size``).
        fallback: Why -Oz was kept (None when a model's list was used).
        candidates: Every answer, in the order generated.
        seconds: Wall time for the unit's compile side.
        unoptimized_size: The input's size (what a model's "from N bytes" predicts).
        objective: What sizes measure (:mod:`llm_compiler.core.objective`).
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
    objective: str = DEFAULT_OBJECTIVE.value

    @property
    def transient(self) -> bool:
        """Whether a candidate was rejected by a timeout alone (the choice holds for this
        run only: see :attr:`~llm_compiler.selection.select.Selection.transient`)."""
        return any(candidate.transient for candidate in self.candidates)

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
    #: How the selection layer chooses (None: its default, with ``jobs``).
    policy: Policy | None
    #: Whether results carry the unoptimized input's size (one more compile per unit;
    #: 0 when off, as for the ``cc`` driver, which does not report it).
    measure_unoptimized: bool = True

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
        self,
        sources: Iterable[ProgramSource],
        on_result: Callable[[UnitResult], None] | None = None,
        loaded: dict[str, Program] | None = None,
    ) -> Iterator[UnitResult]:
        """Optimizes each unit; results come in order, as each batch is done.

        ``loaded``, when given, holds units already through the front end by name (they are
        not loaded again) and receives the others, so a caller that writes the kept result
        compiles it from the same program (its object is then the one validation compiled,
        from the compiler's cache).

        Raises:
            InvalidInput: A unit cannot be read or compiled to IR.
            ModelError: A model's backend failed (answers already written are kept by callers).
        """
        pending: list[tuple[ProgramSource, Program]] = []
        for source in sources:
            program = loaded.get(source.name) if loaded is not None else None
            if program is None:
                program = source.load(self.compiler)
                if loaded is not None:
                    loaded[source.name] = program
            pending.append((source, program))
            if len(pending) >= self.batch_size:
                yield from self._batch(pending, on_result)
                pending = []
        if pending:
            yield from self._batch(pending, on_result)

    def decide(self, name: str, program: Program, proposal: Proposal) -> UnitResult:
        """Measures, validates and chooses for one unit named ``name`` (what :meth:`run` does
        per unit), through the selection layer."""
        start = time.monotonic()
        selector = self.selector
        objective = selector.policy.objective
        # The unoptimized size is only recorded: it is measured beside the selection,
        # which measures -Oz among the candidates.
        with ThreadPoolExecutor(max_workers=1) as side:
            unoptimized = None
            if self.measure_unoptimized:
                unoptimized = side.submit(self.compiler.value, program, None, objective)
            if proposal.refusal is None:
                selection = selector.select(program, proposal.candidates)
            else:
                oz_size = selector.oz_size(program)
                selection = Selection(oz_size, OZ_PIPELINE, oz_size, *proposal.refusal)
            unit = _Unit(
                name,
                program,
                proposal.prompt_sha256,
                proposal.tokens,
                selection.oz_size,
                unoptimized.result()[0] if unoptimized is not None else 0,
                start,
            )
        return self._result(unit, selection)

    @functools.cached_property
    def selector(self) -> Selector:
        """The selection layer this optimizer hands its candidates to (made once)."""
        return Selector(self.compiler, self.gate, self.policy or Policy(jobs=self.jobs))

    def _batch(
        self, units: Sequence[tuple[ProgramSource, Program]], on_result: Callable[[UnitResult], None] | None
    ) -> Iterator[UnitResult]:
        proposals = self.propose([program for _, program in units])
        for (source, program), proposal in zip(units, proposals, strict=True):
            result = self.decide(source.name, program, proposal)
            if on_result is not None:
                on_result(result)
            yield result

    def _result(self, unit: _Unit, selection: Selection) -> UnitResult:
        return UnitResult(
            unit.name,
            unit.program.id,
            self.spec,
            self.compiler.llvm_version,
            unit.prompt_sha256,
            unit.tokens,
            unit.oz_size,
            selection.chosen,
            selection.binary_size,
            selection.fallback,
            selection.detail if selection.fallback is not None else "",
            selection.candidates,
            time.monotonic() - unit.start,
            unit.unoptimized_size,
            self.selector.policy.objective.value,
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
        policy: How candidates are chosen (default: salvage on, ``jobs`` at once).
    """

    compiler: Compiler
    model: Model
    gate: Gate
    settings: OptimizeSettings = field(default_factory=OptimizeSettings)
    jobs: int = 1
    policy: Policy | None = None

    @property
    def spec(self) -> str:
        return self.model.spec

    @property
    def batch_size(self) -> int:
        return self.settings.batch

    def propose(self, programs: Sequence[Program]) -> list[Proposal]:
        """Steps 1 to 3: the prompts, the answers (one batch to the backend), each read."""
        prompts = [flag_tuning_prompt(program.ir) for program in programs]
        # The answer limit is lowered to what the context leaves by the model itself.
        requests = [self.settings.request(prompt, self.model.context_length) for prompt in prompts]
        hint = "split the unit per function to give the model a chance"
        proposals = []
        for prompt, outcome in zip(
            prompts, ask(self.model, requests, self.settings.budget, hint), strict=True
        ):
            key = prompt_key(prompt)
            if isinstance(outcome, Refused):
                proposals.append(Proposal((), (Verdict.OVER_BUDGET, outcome.reason), key, outcome.tokens))
                continue
            read = tuple(
                read_answer(self.compiler, c.text, c.finish_reason, self.settings.source_llvm)
                for c in outcome.generation.completions
            )
            proposals.append(Proposal(read, None, key, outcome.tokens))
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
