"""Compiler emulation evaluated as the paper does: the model's predicted code beside the compiler's.

Each sample of an emulation dataset (``llm-compiler data emulation``; fields in
``docs/datasets.md``) holds a prompt (unoptimized IR, a pass list, the input's size;
IR or assembly out) and the reference answer: the compiler's output and its
instruction count and binary size. The model answers the prompt (greedily by default)
and its answer is scored against the reference:

* **parsed**: the answer is in the emulation format
  (:func:`~llm_compiler.tasks.answers.parse_emulation_answer`). An answer that is not
  counts as not compiling and not matching, with BLEU 0 and no size error;
* **compiles**: predicted IR that LLVM parses, verifies and lowers, or predicted
  assembly that ``llvm-mc`` assembles for the prompt IR's target
  (:func:`~llm_compiler.models.emulate.measure_code`; the paper's 95.6%);
* **exact match**: the predicted code equals the reference after
  :func:`~llm_compiler.models.emulate.comparable` (the paper's 20%);
* **BLEU** of the predicted code against the reference code (both through
  ``comparable``; sacrebleu, 0 to 1);
* the predicted instruction count and binary size against the reference answer's, as
  absolute percentage errors (``|predicted - reference| / reference``; None when the
  reference is 0).

Each sample gives a row whose ``outcome`` is ``exact-match``, ``compiles`` (compiles,
differs), ``compile-failure``, ``parse-failure`` or ``over-budget`` (the prompt is over
the budget of 15,000 tokens or leaves no room in the model's context, and was not
sent). Per system, and per target (``ir``, ``asm``), the summary gives over the
prompts sent: ``parse_failure_rate``, ``compile_rate``, ``exact_match_rate``, ``bleu``
(mean), ``ir_count_mape`` and ``binary_size_mape`` (mean absolute percentage error as a
fraction, over the parsed answers), and the counts ``samples``, ``over_budget``,
``prompts``, ``parse_failures``, ``compiles``, ``exact_matches``. A rate over nothing
is None. :data:`PAPER` holds the paper's figures under the same keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import CommandFailed, InvalidInput
from llm_compiler.evaluation.figures import by_system_and_target, mape
from llm_compiler.evaluation.perplexity import dataset_samples
from llm_compiler.models.backends.replay import prompt_key
from llm_compiler.models.base import GenerationRequest, Model
from llm_compiler.models.disassemble import bleu
from llm_compiler.models.emulate import EMULATION_BUDGET, comparable, measure_code
from llm_compiler.models.request import Answered, Refused, ask
from llm_compiler.tasks.answers import AnswerParseError, EmulationAnswer, parse_emulation_answer
from llm_compiler.tasks.disassembly import target_of
from llm_compiler.tasks.prompts import EmulationTarget, PromptParseError, parse_emulation_prompt

#: The paper's emulation figures: LLM Compiler 13B right after emulation instruction tuning.
PAPER: dict[str, dict[str, float]] = {
    "facebook/llm-compiler-13b": {"compile_rate": 0.956, "exact_match_rate": 0.20},
}

#: The outcomes of a sample (module docstring).
OUTCOMES = ("exact-match", "compiles", "compile-failure", "parse-failure", "over-budget")
_TARGET_NAMES = {EmulationTarget.IR: "ir", EmulationTarget.ASSEMBLY: "asm"}


@dataclass(frozen=True)
class EmulationRow:
    """One sample answered by one system (a line of ``results.jsonl``).

    Attributes:
        sample: The sample's id, ``program:index:target`` (unique in a dataset).
        unit: The program's name. system: The model spec. program, split, pipeline,
            index: From the sample. target: ``ir`` or ``asm``.
        outcome: One of :data:`OUTCOMES`.
        parsed, compiles, exact_match, bleu: The scores (module docstring).
        predicted_ir_count, predicted_binary_size: What the model said (None unparsed).
        reference_ir_count, reference_binary_size: What the reference answer says.
        ir_count_error, binary_size_error: Absolute percentage errors, as fractions.
        measured_binary_size: The size of the predicted code itself, when it compiles.
        error: Why the answer was not read, or its code not compiled.
        prompt_sha256, prompt_tokens: The prompt.
        completions: The answer (a list, so that ``replay:`` can score it again).
    """

    sample: str
    unit: str
    system: str
    program: str
    split: str
    pipeline: str
    index: int
    target: str
    outcome: str
    parsed: bool = False
    compiles: bool = False
    exact_match: bool = False
    bleu: float = 0.0
    predicted_ir_count: int | None = None
    predicted_binary_size: int | None = None
    reference_ir_count: int = 0
    reference_binary_size: int = 0
    ir_count_error: float | None = None
    binary_size_error: float | None = None
    measured_binary_size: int | None = None
    error: str = ""
    prompt_sha256: str = ""
    prompt_tokens: int = 0
    completions: tuple[str, ...] = ()
    task: str = "emulation"

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        record["completions"] = list(self.completions)
        return record


@dataclass(frozen=True)
class _Sample:
    """A dataset sample, checked: its prompt, reference answer and target."""

    record: Mapping[str, Any]
    prompt: str
    reference: EmulationAnswer
    target: str
    triple: str

    @property
    def id(self) -> str:
        return f"{self.record.get('program', '-')}:{self.record.get('index', 0)}:{self.target}"


def _check_sample(record: Mapping[str, Any], position: int) -> _Sample:
    name = f"emulation sample {position} ({record.get('program_name') or record.get('program') or '?'})"
    if record.get("task") != "emulation":
        raise InvalidInput(
            f"{name} is of task {record.get('task')!r}: give samples of `llm-compiler data emulation`."
        )
    try:
        prompt = parse_emulation_prompt(str(record["prompt"]))
        reference = parse_emulation_answer(str(record["answer"]))
    except KeyError as error:
        raise InvalidInput(f"{name} has no {error.args[0]!r} field (docs/datasets.md).") from error
    except (PromptParseError, AnswerParseError) as error:
        raise InvalidInput(f"{name} is not an emulation sample as the dataset writes it: {error}") from error
    return _Sample(
        record, str(record["prompt"]), reference, _TARGET_NAMES[prompt.target], target_of(prompt.ir)
    )


def _records(
    source: str | Path | Iterable[Mapping[str, Any]], split: str | None, limit: int | None
) -> Iterator[Mapping[str, Any]]:
    if isinstance(source, str | Path):
        yield from dataset_samples(source, split, task="emulation", limit=limit)
        return
    count = 0
    for record in source:
        if split is not None and record.get("split") != split:
            continue
        if limit is not None and count >= limit:
            return
        yield record
        count += 1


def evaluate_emulation(
    compiler: Compiler,
    model: Model,
    samples_path_or_records: str | Path | Iterable[Mapping[str, Any]],
    *,
    limit: int | None = None,
    split: str | None = None,
    temperature: float = 0.0,
    seed: int = 0,
    budget: int = EMULATION_BUDGET,
    max_tokens: int | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Answers every emulation sample with ``model`` and scores the answers (module docstring).

    Args:
        compiler: Compiles the predicted code.
        model: The system evaluated.
        samples_path_or_records: A dataset folder, one of its split folders, a JSONL
            shard, or the sample records themselves.
        limit: Score at most this many samples.
        split: Only samples of this split (None: all given; a dataset folder holds
            every split, so name the one held out, e.g. ``"test"``).
        temperature: 0 for greedy decoding, as the paper's figures.
        seed: Seeds sampling.
        budget: The longest prompt sent, in the model's tokens.
        max_tokens: New tokens per answer (default: what the context leaves).

    Returns:
        The rows (:class:`EmulationRow` as JSON, one per sample) and
        :func:`summarize_emulation` of them.

    Raises:
        InvalidInput: No dataset there, or a record is not an emulation sample.
        ModelError: The backend failed.
    """
    rows = list(
        emulation_rows(
            compiler,
            model,
            samples_path_or_records,
            limit=limit,
            split=split,
            temperature=temperature,
            seed=seed,
            budget=budget,
            max_tokens=max_tokens,
        )
    )
    return rows, summarize_emulation(rows)


def emulation_rows(
    compiler: Compiler,
    model: Model,
    samples_path_or_records: str | Path | Iterable[Mapping[str, Any]],
    *,
    limit: int | None = None,
    split: str | None = None,
    temperature: float = 0.0,
    seed: int = 0,
    budget: int = EMULATION_BUDGET,
    max_tokens: int | None = None,
    batch_size: int = 16,
) -> Iterator[dict[str, Any]]:
    """The rows of :func:`evaluate_emulation`, yielded as each batch of samples is done.

    ``batch_size`` prompts go to the model together; callers that write rows as they
    come (to resume a killed run) lose at most one batch.
    """
    batch: list[_Sample] = []
    for position, record in enumerate(_records(samples_path_or_records, split, limit)):
        batch.append(_check_sample(record, position))
        if len(batch) >= batch_size:
            yield from _batch_rows(compiler, model, batch, temperature, seed, budget, max_tokens)
            batch = []
    if batch:
        yield from _batch_rows(compiler, model, batch, temperature, seed, budget, max_tokens)


def _batch_rows(
    compiler: Compiler,
    model: Model,
    samples: Sequence[_Sample],
    temperature: float,
    seed: int,
    budget: int,
    max_tokens: int | None,
) -> Iterator[dict[str, Any]]:
    requests = [
        GenerationRequest(s.prompt, 1, temperature, max_tokens or model.context_length, seed=seed)
        for s in samples
    ]
    outcomes = ask(model, requests, budget)
    tokens = [outcome.tokens for outcome in outcomes]
    refused = {i: outcome.reason for i, outcome in enumerate(outcomes) if isinstance(outcome, Refused)}
    answers = {
        i: outcome.generation.texts[0] for i, outcome in enumerate(outcomes) if isinstance(outcome, Answered)
    }
    for index, sample in enumerate(samples):
        record = sample.record
        common: dict[str, Any] = {
            "sample": sample.id,
            "unit": str(record.get("program_name") or record.get("program") or "-"),
            "system": model.spec,
            "program": str(record.get("program", "")),
            "split": str(record.get("split", "")),
            "pipeline": str(record.get("pipeline", "")),
            "index": int(record.get("index", 0)),
            "target": sample.target,
            "reference_ir_count": sample.reference.ir_count,
            "reference_binary_size": sample.reference.bin_size,
            "prompt_sha256": prompt_key(sample.prompt),
            "prompt_tokens": tokens[index],
        }
        if index in refused:
            yield EmulationRow(**common, outcome="over-budget", error=refused[index]).to_json()
        else:
            yield _score(compiler, sample, answers[index], common).to_json()


def _error(predicted: int, reference: int) -> float | None:
    return abs(predicted - reference) / reference if reference > 0 else None


def _score(compiler: Compiler, sample: _Sample, text: str, common: dict[str, Any]) -> EmulationRow:
    try:
        answer = parse_emulation_answer(text)
    except AnswerParseError as error:
        return EmulationRow(**common, outcome="parse-failure", error=error.reason, completions=(text,))
    reference = comparable(sample.reference.code)
    predicted = comparable(answer.code)
    measured, error_text = None, ""
    try:
        measured = measure_code(compiler, answer.code, sample.target, triple=sample.triple or None)
    except (InvalidInput, CommandFailed) as error:
        error_text = str(error).splitlines()[0][:300]
    exact = predicted == reference
    outcome = (
        "exact-match"
        if exact and measured is not None
        else "compiles"
        if measured is not None
        else ("compile-failure")
    )
    return EmulationRow(
        **common,
        outcome=outcome,
        parsed=True,
        compiles=measured is not None,
        exact_match=exact,
        bleu=bleu(predicted, reference),
        predicted_ir_count=answer.ir_count,
        predicted_binary_size=answer.bin_size,
        ir_count_error=_error(answer.ir_count, sample.reference.ir_count),
        binary_size_error=_error(answer.bin_size, sample.reference.bin_size),
        measured_binary_size=measured,
        error=error_text,
        completions=(text,),
    )


def _rate(count: int, total: int) -> float | None:
    return count / total if total else None


def metrics(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The figures of one system over ``rows`` (the keys are in the module docstring)."""
    sent = [row for row in rows if row["outcome"] != "over-budget"]
    parsed = [row for row in sent if row["parsed"]]
    prompts = len(sent)
    compiles = sum(bool(row["compiles"]) for row in sent)
    exact = sum(bool(row["exact_match"]) for row in sent)
    return {
        "samples": len(rows),
        "over_budget": len(rows) - prompts,
        "prompts": prompts,
        "parse_failures": prompts - len(parsed),
        "parse_failure_rate": _rate(prompts - len(parsed), prompts),
        "compiles": compiles,
        "compile_rate": _rate(compiles, prompts),
        "exact_matches": exact,
        "exact_match_rate": _rate(exact, prompts),
        "bleu": sum(float(row["bleu"]) for row in sent) / prompts if prompts else None,
        "ir_count_mape": mape((row["predicted_ir_count"], row["reference_ir_count"]) for row in parsed),
        "binary_size_mape": mape(
            (row["predicted_binary_size"], row["reference_binary_size"]) for row in parsed
        ),
    }


def summarize_emulation(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The summary of emulation rows, of one system or several (``report.json``).

    Returns:
        ``{"task": "emulation", "samples": distinct samples, "systems": {spec: metrics
        and "by_target": {"ir"/"asm": metrics}}, "paper": PAPER}``.
    """
    rows = list(rows)
    systems = by_system_and_target(rows, metrics)
    samples = {row["sample"] for row in rows}
    return {"task": "emulation", "samples": len(samples), "systems": systems, "paper": PAPER}
