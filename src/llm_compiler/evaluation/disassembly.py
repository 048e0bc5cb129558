"""Disassembly evaluated as the paper does: lift -Oz assembly to IR, compile it back, compare.

For each unit the **reference** is what the disassembly dataset holds (system notes,
section 7): the unit's IR after ``default<Oz>`` and the assembly ``llc`` makes of it,
from one compile. The model gets the assembly (the disassembly prompt; at most 8,192
prompt tokens, the paper's limit) and each answer goes through
:func:`~llm_compiler.models.disassemble.lift_texts`: its IR is parsed, verified and
lowered again, and the round-trip candidate (else the closest by BLEU) is chosen.

Each unit gives a row whose ``outcome`` is one of:

* ``round-trip``: the chosen IR lowers to the input assembly (normalized): a correct lift;
* ``lifted``: valid IR whose assembly differs;
* ``failure``: no answer held IR that LLVM parses, verifies and lowers;
* ``over-budget``: the prompt was over the budget or the model's context, and not sent;
* ``reference-error``: the unit itself could not be compiled to a reference.

Per system, and per target triple of the units, the summary gives the paper's figures
over the prompts sent (the paper's 2,015 MiBench prompts are those within 8k tokens):
``round_trip_rate``; ``bleu``, the mean round-trip BLEU (the chosen candidate's
assembly against the input, sacrebleu, 0 to 1; 0 for a failure); ``exact_match_rate``,
the chosen IR equal to the reference IR (after
:func:`~llm_compiler.models.emulate.comparable`); ``failure_rate``; and the counts
(``units``, ``reference_errors``, ``over_budget``, ``prompts``, ``round_trips``,
``exact_matches``, ``failures``). A rate over no prompt is None. :data:`PAPER` holds
the paper's figures under the same keys, for orientation.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import OZ_PIPELINE
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.errors import CommandFailed, InvalidInput, reason_of
from llm_compiler.evaluation.figures import by_system_and_target
from llm_compiler.models.base import Model
from llm_compiler.models.disassemble import DISASSEMBLY_BUDGET, LiftResult, lift_texts
from llm_compiler.models.emulate import comparable
from llm_compiler.tasks.disassembly import target_of
from llm_compiler.tasks.prompts import CODE_END

#: The paper's disassembly figures on MiBench (2,015 prompts within 8k tokens), per released model.
PAPER: dict[str, dict[str, float | int]] = {
    "facebook/llm-compiler-13b-ftd": {
        "prompts": 2015,
        "round_trips": 905,
        "round_trip_rate": round(905 / 2015, 4),
        "bleu": 0.960,
        "exact_match_rate": 0.138,
    },
    "facebook/llm-compiler-7b-ftd": {
        "prompts": 2015,
        "round_trips": 936,
        "round_trip_rate": round(936 / 2015, 4),
        "bleu": 0.951,
        "exact_match_rate": 0.127,
    },
}

#: The outcomes of a unit (module docstring).
OUTCOMES = ("round-trip", "lifted", "failure", "over-budget", "reference-error")
_NOT_SENT = ("over-budget", "reference-error")


@dataclass(frozen=True)
class DisassemblyRow:
    """One unit lifted by one system (a line of ``results.jsonl``).

    Attributes:
        unit: The unit's name. system: The model spec. split, package: Where it comes from.
        target: The reference IR's target triple (``"unknown"`` when it names none).
        outcome: One of :data:`OUTCOMES`.
        round_trip: Whether the chosen IR lowers to the input assembly.
        exact_match: Whether the chosen IR equals the reference IR.
        bleu: The chosen candidate's round-trip BLEU (0 when none was chosen).
        error: Why nothing was chosen (or the reference failed).
        chosen: The index of the chosen answer, if any.
        prompt_sha256, prompt_tokens: The prompt.
        completions: Every answer, in order (so that ``replay:`` can score them again).
        candidate_errors: Per answer, why its IR was unusable ("" when it was usable).
    """

    unit: str
    system: str
    split: str
    package: str
    target: str
    outcome: str
    round_trip: bool = False
    exact_match: bool = False
    bleu: float = 0.0
    error: str = ""
    chosen: int | None = None
    prompt_sha256: str = ""
    prompt_tokens: int = 0
    completions: tuple[str, ...] = ()
    candidate_errors: tuple[str, ...] = ()
    task: str = "disassembly"

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        record["completions"] = list(self.completions)
        record["candidate_errors"] = list(self.candidate_errors)
        return record


@dataclass(frozen=True)
class _Reference:
    source: ProgramSource
    ir: str | None
    assembly: str | None
    error: str = ""


def evaluate_disassembly(
    compiler: Compiler,
    model: Model,
    sources: Iterable[ProgramSource],
    *,
    samples: int = 1,
    temperature: float = 0.0,
    seed: int = 0,
    budget: int = DISASSEMBLY_BUDGET,
    max_tokens: int = 8192,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Lifts every unit's -Oz assembly with ``model`` and scores the lifts (module docstring).

    Args:
        compiler: Makes the references and checks the lifts.
        model: The system evaluated.
        sources: The units (a :class:`~llm_compiler.corpus.program_set.ProgramSet` or a list).
        samples: Answers per prompt (more than 1 needs a temperature above 0); a round
            trip among them counts.
        temperature: 0 for greedy decoding, as the paper's figures.
        seed: Seeds sampling.
        budget: The longest prompt sent, in the model's tokens.
        max_tokens: New tokens per answer.

    Returns:
        The rows (:class:`DisassemblyRow` as JSON, one per unit) and
        :func:`summarize_disassembly` of them.

    Raises:
        ModelError: The backend failed.
    """
    rows = list(
        disassembly_rows(
            compiler,
            model,
            sources,
            samples=samples,
            temperature=temperature,
            seed=seed,
            budget=budget,
            max_tokens=max_tokens,
        )
    )
    return rows, summarize_disassembly(rows)


def disassembly_rows(
    compiler: Compiler,
    model: Model,
    sources: Iterable[ProgramSource],
    *,
    samples: int = 1,
    temperature: float = 0.0,
    seed: int = 0,
    budget: int = DISASSEMBLY_BUDGET,
    max_tokens: int = 8192,
    batch_size: int = 16,
) -> Iterator[dict[str, Any]]:
    """The rows of :func:`evaluate_disassembly`, yielded as each batch of units is done.

    ``batch_size`` units' prompts go to the model together; callers that write rows as
    they come (to resume a killed run) lose at most one batch.
    """
    batch: list[ProgramSource] = []
    for source in sources:
        batch.append(source)
        if len(batch) >= batch_size:
            yield from _batch_rows(compiler, model, batch, samples, temperature, seed, budget, max_tokens)
            batch = []
    if batch:
        yield from _batch_rows(compiler, model, batch, samples, temperature, seed, budget, max_tokens)


def _reference(compiler: Compiler, source: ProgramSource) -> _Reference:
    try:
        program = source.load(compiler)
        compiled = compiler.compile(program, compiler.passes(OZ_PIPELINE), ("ir", "asm"))
    except (InvalidInput, CommandFailed) as error:
        return _Reference(source, None, None, reason_of(error, 2000))  # the reason and its fix, on one line
    assert compiled.ir is not None and compiled.assembly is not None  # asked for above
    if CODE_END in compiled.assembly:
        return _Reference(source, None, None, f"its assembly holds {CODE_END!r}, which no prompt can carry")
    return _Reference(source, compiled.ir, compiled.assembly)


def _batch_rows(
    compiler: Compiler,
    model: Model,
    sources: Sequence[ProgramSource],
    samples: int,
    temperature: float,
    seed: int,
    budget: int,
    max_tokens: int,
) -> Iterator[dict[str, Any]]:
    references = [_reference(compiler, source) for source in sources]
    ready = [ref for ref in references if ref.assembly is not None]
    lifted = lift_texts(
        compiler,
        model,
        [(ref.source.name, ref.assembly or "") for ref in ready],
        samples=samples,
        temperature=temperature,
        seed=seed,
        budget=budget,
        max_tokens=max_tokens,
    )
    results = iter(lifted)
    for ref in references:
        yield _row(ref, next(results) if ref.assembly is not None else None, model.spec).to_json()


def _row(ref: _Reference, result: LiftResult | None, system: str) -> DisassemblyRow:
    source = ref.source
    common: dict[str, Any] = {
        "unit": source.name,
        "system": system,
        "split": source.split,
        "package": str(source.provenance.get("package") or Path(source.name).parent.name or "-"),
        "target": target_of(ref.ir or "") or "unknown",
    }
    if result is None or ref.ir is None:
        return DisassemblyRow(**common, outcome="reference-error", error=ref.error)
    answered: dict[str, Any] = {
        "prompt_sha256": result.prompt_sha256,
        "prompt_tokens": result.prompt_tokens,
        "completions": tuple(c.answer for c in result.candidates),
        "candidate_errors": tuple(c.error for c in result.candidates),
    }
    if not result.candidates:
        return DisassemblyRow(**common, **answered, outcome="over-budget", error=result.error)
    if result.ir is None:
        return DisassemblyRow(**common, **answered, outcome="failure", error=result.error)
    chosen = next(
        (
            index
            for index, c in enumerate(result.candidates)
            if c.ir == result.ir and not c.error and c.round_trip == result.verified
        ),
        None,
    )
    return DisassemblyRow(
        **common,
        **answered,
        outcome="round-trip" if result.verified else "lifted",
        round_trip=result.verified,
        exact_match=comparable(result.ir) == comparable(ref.ir),
        bleu=result.bleu,
        chosen=chosen,
    )


def _rate(count: int, total: int) -> float | None:
    return count / total if total else None


def metrics(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The figures of one system over ``rows`` (the keys are in the module docstring)."""
    sent = [row for row in rows if row["outcome"] not in _NOT_SENT]
    prompts = len(sent)
    round_trips = sum(bool(row["round_trip"]) for row in sent)
    exact = sum(bool(row["exact_match"]) for row in sent)
    failures = sum(row["outcome"] == "failure" for row in sent)
    return {
        "units": len(rows),
        "reference_errors": sum(row["outcome"] == "reference-error" for row in rows),
        "over_budget": sum(row["outcome"] == "over-budget" for row in rows),
        "prompts": prompts,
        "round_trips": round_trips,
        "round_trip_rate": _rate(round_trips, prompts),
        "bleu": sum(float(row["bleu"]) for row in sent) / prompts if prompts else None,
        "exact_matches": exact,
        "exact_match_rate": _rate(exact, prompts),
        "failures": failures,
        "failure_rate": _rate(failures, prompts),
    }


def summarize_disassembly(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The summary of disassembly rows, of one system or several (``report.json``).

    Returns:
        ``{"task": "disassembly", "units": distinct units, "systems": {spec: metrics and
        "by_target": {triple: metrics}}, "paper": PAPER}``.
    """
    rows = list(rows)
    systems = by_system_and_target(rows, metrics)
    units = {row["unit"] for row in rows}
    return {"task": "disassembly", "units": len(units), "systems": systems, "paper": PAPER}
