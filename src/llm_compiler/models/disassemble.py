"""Disassembly with a model, verified: assembly in, IR out, checked by compiling it back.

The model lifts assembly to LLVM-IR (the disassembly prompt; 8,192 prompt tokens at
most). Each candidate IR is parsed and verified by LLVM, then lowered with ``llc`` (the
IR names its own target; ``target`` insists on one). A candidate whose assembly equals
the input after :func:`normalize_assembly` is a **round trip**: the lift is correct
(the paper's lower bound on correctness), and the first such candidate is returned.
Otherwise the candidate whose assembly is closest to the input by BLEU (sacrebleu's
corpus BLEU on the normalized text, 0 to 1) is returned, marked ``verified: false``;
when no candidate even parses, none is returned.

:func:`normalize_assembly` compares what the assembler turns into bytes, not how it
is written down: it drops comments (``#`` to the end of a line, and ``//`` and ``;``
on AArch64-style input), blank lines, and the directives that carry only names, versions
or tool metadata (``.file``, ``.ident``, ``.addrsig``, ``.addrsig_sym``, ``.note.GNU-stack``
section lines); it trims each line and squeezes its blanks to one space. Everything
else (instructions, labels, data, alignment, CFI) must match.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import CommandFailed, InvalidInput
from llm_compiler.models.backends.replay import prompt_key
from llm_compiler.models.base import GenerationRequest, Model
from llm_compiler.models.request import Answered, Refused, ask
from llm_compiler.tasks.answers import AnswerParseError, parse_disassembly_answer
from llm_compiler.tasks.disassembly import target_of
from llm_compiler.tasks.prompts import disassembly_prompt

#: Prompt budget of disassembly, in the model's tokens (the paper's 8k).
DISASSEMBLY_BUDGET = 8192

_DROPPED_DIRECTIVES = re.compile(r"^\.(file|ident|addrsig|addrsig_sym)\b|^\.section\s+\"?\.note\.GNU-stack")
_COMMENT = re.compile(r"\s(#|//|;).*$|^\s*(#|//|;).*$")


def normalize_assembly(text: str) -> str:
    """The assembly with comments, blank lines and name-only directives gone (module docstring).

    Example:
        >>> normalize_assembly('\\t.file\\t"a.c"\\nf:   # @f\\n\\tretq\\n\\n\\t.ident\\t"clang"\\n')
        'f:\\nretq'
    """
    lines = []
    for raw in text.splitlines():
        line = _COMMENT.sub("", raw).strip()
        line = re.sub(r"\s+", " ", line)
        if line and not _DROPPED_DIRECTIVES.search(line):
            lines.append(line)
    return "\n".join(lines)


def bleu(hypothesis: str, reference: str) -> float:
    """BLEU of ``hypothesis`` against ``reference``, 0 to 1 (sacrebleu, its default tokenizer)."""
    import sacrebleu

    return min(1.0, float(sacrebleu.corpus_bleu([hypothesis], [[reference]]).score) / 100.0)


@dataclass(frozen=True)
class LiftCandidate:
    """One answer: the IR it holds and how its assembly compares with the input.

    Attributes:
        answer: The raw answer.
        ir: The lifted IR (None when the answer has no complete code block).
        error: Why the IR could not be read, verified or lowered ("" when it could).
        round_trip: Whether its assembly equals the input's (normalized).
        bleu: BLEU of its assembly against the input's (0 when it has none).
    """

    answer: str
    ir: str | None = None
    error: str = ""
    round_trip: bool = False
    bleu: float = 0.0


@dataclass(frozen=True)
class LiftResult:
    """The outcome for one assembly file (the JSON record of ``disassemble``).

    Attributes:
        file: The input's path (or the name given to :func:`lift_texts`).
        model: The model spec. prompt_sha256, prompt_tokens: The prompt.
        ir: The chosen IR (None when no candidate parsed, or the prompt was over budget).
        verified: Whether the chosen IR is a round trip.
        bleu: The chosen candidate's BLEU.
        candidates: Every answer, in order.
        error: Why nothing was chosen.
    """

    file: str
    model: str
    prompt_sha256: str
    prompt_tokens: int
    ir: str | None
    verified: bool
    bleu: float
    candidates: tuple[LiftCandidate, ...] = ()
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        record["round_trip"] = self.verified
        record["completions"] = [candidate.answer for candidate in self.candidates]
        return record


def lift(
    compiler: Compiler,
    model: Model,
    files: Sequence[Path],
    *,
    samples: int = 1,
    temperature: float = 0.0,
    seed: int = 0,
    target: str | None = None,
    budget: int = DISASSEMBLY_BUDGET,
    max_tokens: int = 8192,
) -> list[LiftResult]:
    """Lifts each assembly file with ``model`` and verifies the candidates.

    As :func:`lift_texts`, each result named by its file's path.

    Raises:
        InvalidInput: A file is missing or holds ``</code>``.
        ModelError: The backend failed.
    """
    named = []
    for path in files:
        if not path.is_file():
            raise InvalidInput(f"{path}: no such file.")
        named.append((str(path), path.read_text()))
    return lift_texts(
        compiler,
        model,
        named,
        samples=samples,
        temperature=temperature,
        seed=seed,
        target=target,
        budget=budget,
        max_tokens=max_tokens,
    )


def lift_texts(
    compiler: Compiler,
    model: Model,
    named_texts: Sequence[tuple[str, str]],
    *,
    samples: int = 1,
    temperature: float = 0.0,
    seed: int = 0,
    target: str | None = None,
    budget: int = DISASSEMBLY_BUDGET,
    max_tokens: int = 8192,
) -> list[LiftResult]:
    """Lifts assembly texts with ``model`` and verifies the candidates (module docstring).

    All prompts that fit go to the model in one batch. A prompt over ``budget`` tokens,
    or leaving no room for an answer in the model's context, is not sent: its result
    has no IR and says why.

    Args:
        compiler: Parses, verifies and lowers the candidates.
        model: Answers the disassembly prompts.
        named_texts: (name, assembly) pairs; the name becomes the result's ``file``.
        samples: Answers per prompt (more than 1 needs a temperature above 0).
        temperature: 0 for greedy decoding.
        seed: Seeds sampling.
        target: When given, a candidate IR must name this target triple.
        budget: The longest prompt sent, in the model's tokens.
        max_tokens: New tokens per answer (lowered to what the context leaves).

    Returns:
        One :class:`LiftResult` per text, in order.

    Raises:
        InvalidInput: An assembly text holds ``</code>``.
        ModelError: The backend failed.
    """
    prompts = [disassembly_prompt(text) for _, text in named_texts]
    requests = [GenerationRequest(prompt, samples, temperature, max_tokens, seed=seed) for prompt in prompts]
    outcomes = ask(model, requests, budget)
    tokens = [outcome.tokens for outcome in outcomes]
    refused = {i: outcome.reason for i, outcome in enumerate(outcomes) if isinstance(outcome, Refused)}
    answers = {
        i: outcome.generation.texts for i, outcome in enumerate(outcomes) if isinstance(outcome, Answered)
    }
    results = []
    for index, (name, text) in enumerate(named_texts):
        key = prompt_key(prompts[index])
        if index in refused:
            results.append(
                LiftResult(name, model.spec, key, tokens[index], None, False, 0.0, (), refused[index])
            )
            continue
        reference = normalize_assembly(text)
        candidates = [_check(compiler, answer, reference, target) for answer in answers[index]]
        best = next((c for c in candidates if c.round_trip), None)
        if best is None:
            readable = [c for c in candidates if c.ir is not None and not c.error]
            best = max(readable, key=lambda c: c.bleu, default=None)
        why = "" if best is not None else "no answer held IR that LLVM reads, verifies and lowers"
        results.append(
            LiftResult(
                name,
                model.spec,
                key,
                tokens[index],
                best.ir if best else None,
                bool(best and best.round_trip),
                best.bleu if best else 0.0,
                tuple(candidates),
                why,
            )
        )
    return results


def _check(compiler: Compiler, text: str, reference: str, target: str | None) -> LiftCandidate:
    try:
        ir = parse_disassembly_answer(text).ir
    except AnswerParseError as error:
        return LiftCandidate(text, None, error.reason)
    try:
        program = compiler.load_ir(ir, name="lifted")
        if target and target_of(program.ir) != target:
            return LiftCandidate(text, ir, f"the IR's target is {target_of(program.ir)!r}, not {target!r}")
        assembly = compiler.lower(program.ir, filetype="asm", name="lifted").decode(errors="replace")
    except (InvalidInput, CommandFailed) as error:
        return LiftCandidate(text, ir, str(error).splitlines()[0][:300])
    mine = normalize_assembly(assembly)
    return LiftCandidate(text, ir, "", mine == reference, bleu(mine, reference))
