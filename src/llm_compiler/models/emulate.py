"""Compiler emulation with a model: its prediction of ``opt``'s output beside the real one.

The emulation prompt gives the unoptimized IR, a pass list and the input's size; the
model answers with the code after the passes (IR, or assembly when ``target`` is
``asm``) and its predicted instruction count and binary size. :func:`emulate` runs
the real compiler on the same input and reports, per answer: whether the predicted code
is usable (IR that LLVM parses, verifies and lowers; assembly that ``llvm-mc``
assembles), whether it matches the compiler's output exactly (after dropping the
``; ModuleID`` and ``source_filename`` lines, which name files, and trailing blanks),
the predicted and real instruction count and binary size, and the measured size of
the predicted code itself.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.errors import CommandFailed, InvalidInput
from llm_compiler.models.backends.replay import prompt_key
from llm_compiler.models.base import GenerationRequest, Model, PromptTooLong
from llm_compiler.models.request import PROMPT_BUDGET, Refused, ask
from llm_compiler.passes.pipeline import PassList
from llm_compiler.tasks.answers import AnswerParseError, parse_emulation_answer
from llm_compiler.tasks.emulation import TARGETS
from llm_compiler.tasks.prompts import emulation_prompt
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.runner import run_command

#: Prompt budget of emulation, in the model's tokens (the paper's 15k).
EMULATION_BUDGET = PROMPT_BUDGET


def comparable(code: str) -> str:
    """Code without the lines that name files, and without trailing blanks, for exact match."""
    lines = [
        line.rstrip()
        for line in code.strip().splitlines()
        if not line.startswith(("; ModuleID", "source_filename", "\t.file"))
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class EmulationResult:
    """One answer of the model beside the compiler's output (a JSON record of ``emulate``).

    Attributes:
        file, passes, target, model: What was asked of whom.
        prompt_sha256, prompt_tokens: The prompt.
        answer: The raw answer.
        error: Why the answer could not be read, or its code not compiled ("" when fine).
        compiles: Whether the predicted code could be parsed and lowered.
        exact_match: Whether it equals the compiler's output (see :func:`comparable`).
        predicted_ir_count, predicted_binary_size: What the model said.
        real_ir_count, real_binary_size: What the compiler made.
        measured_binary_size: The size of the predicted code itself, lowered.
    """

    file: str
    passes: str
    target: str
    model: str
    prompt_sha256: str
    prompt_tokens: int
    answer: str
    error: str
    compiles: bool
    exact_match: bool
    predicted_ir_count: int | None
    predicted_binary_size: int | None
    real_ir_count: int
    real_binary_size: int
    measured_binary_size: int | None

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        record["completions"] = [self.answer]
        return record


def emulate(
    compiler: Compiler,
    model: Model,
    program: Program,
    passes: PassList,
    *,
    target: str = "ir",
    samples: int = 1,
    temperature: float = 0.0,
    seed: int = 0,
    budget: int = EMULATION_BUDGET,
    max_tokens: int | None = None,
) -> list[EmulationResult]:
    """The model's answers for ``program`` after ``passes``, each beside the real output.

    Raises:
        PromptTooLong: The prompt is over the budget or the model's context.
        InvalidPassList, CommandFailed: The compiler cannot apply ``passes``.
        ModelError: The backend failed.
    """
    source = compiler.measure(program)
    prompt = emulation_prompt(
        program.ir,
        passes,
        ir_count=source.ir_instructions,
        bin_size=source.binary_size,
        target=TARGETS[target],
    )
    compiled = compiler.compile(program, passes, ("ir", "asm"))
    real = compiled.ir if target == "ir" else compiled.assembly
    assert real is not None
    request = GenerationRequest(prompt, samples, temperature, max_tokens or model.context_length, seed=seed)
    [outcome] = ask(model, [request], budget)
    if isinstance(outcome, Refused):
        raise PromptTooLong(
            f"{program.name}: its emulation {outcome.reason}.", prompt_tokens=outcome.tokens, limit=budget
        )
    generation = outcome.generation
    results = []
    for text in generation.texts:
        predicted: tuple[int | None, int | None] = (None, None)
        error, measured = "", None
        exact = False
        try:
            answer = parse_emulation_answer(text)
            predicted = (answer.ir_count, answer.bin_size)
            exact = comparable(answer.code) == comparable(real)
            measured = measure_code(compiler, answer.code, target)
        except AnswerParseError as parse_error:
            error = parse_error.reason
        except (InvalidInput, CommandFailed) as compile_error:
            error = str(compile_error).splitlines()[0][:300]
        results.append(
            EmulationResult(
                program.name,
                passes.pipeline,
                target,
                model.spec,
                prompt_key(prompt),
                outcome.tokens,
                text,
                error,
                measured is not None,
                exact,
                predicted[0],
                predicted[1],
                compiled.measurement.ir_instructions,
                compiled.measurement.binary_size,
                measured,
            )
        )
    return results


def measure_code(compiler: Compiler, code: str, target: str, *, triple: str | None = None) -> int:
    """The binary size of predicted code: IR lowered with ``llc``, assembly with ``llvm-mc``.

    Args:
        compiler: The toolchain.
        code: The code the model wrote.
        target: ``"ir"`` (LLVM parses and verifies it, then lowers it) or ``"asm"``
            (``llvm-mc`` assembles it).
        triple: The target triple to assemble for (assembly only; default: the
            toolchain's host triple). IR names its own.

    Raises:
        InvalidInput: The IR does not parse or verify.
        CommandFailed: ``llc`` or ``llvm-mc`` refused the code.
    """
    if target == "ir":
        program = compiler.load_ir(code, name="predicted")
        return compiler.measure_ir(program.ir, None, name="predicted").binary_size
    command: list[str | Path] = [compiler.toolchain.tool("llvm-mc"), "-filetype=obj", "-o", "-"]
    if triple:
        command.append(f"-triple={triple}")
    result = run_command(command, timeout=compiler.timeout, input=code.encode(), subject="predicted assembly")
    return berkeley_size(result.stdout).binary_size
