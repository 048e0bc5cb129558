"""What every task sample shares: settings, common fields and the token budget.

A sample is a flat JSON object; the fields every task writes are documented in
``docs/datasets.md``: ``task``, ``program`` (the program's id: the hash of its IR),
``program_name``, ``split``, ``prompt``, ``answer``, ``pipeline``, ``target``,
sizes and instruction counts, ``prompt_tokens``/``answer_tokens`` and the counter
that measured them, ``llvm_version``, ``seed``, ``index`` and ``provenance``.

Token budgets are the paper's: emulation and flag tuning prompts at most 15,000
tokens, with prompt and answer within the 16,384-token context; disassembly at most
8,192 tokens in and 8,192 out. A sample over its budget is dropped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llm_compiler.core.program import Program
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.corpus.tokens import PROMPT_TOKEN_BUDGET, TokenCounter

TASKS = ("emulation", "flag-tuning", "disassembly")

#: (prompt limit, answer limit, prompt + answer limit) per task, in tokens.
TOKEN_BUDGETS: dict[str, tuple[int, int, int]] = {
    "emulation": (PROMPT_TOKEN_BUDGET, 16_384, 16_384),
    "flag-tuning": (PROMPT_TOKEN_BUDGET, 16_384, 16_384),
    "disassembly": (8_192, 8_192, 16_384),
}


@dataclass(frozen=True)
class DataSettings:
    """How samples are made (recorded in the report; a resumed run must match).

    Attributes:
        task: ``"emulation"``, ``"flag-tuning"`` or ``"disassembly"``.
        seed: Seed of the random pass lists (emulation).
        samples_per_program: Random lists per program (emulation).
        targets: Emulation outputs: ``"ir"`` and/or ``"asm"``.
        tokenizer: A Hugging Face tokenizer path, or None for the estimator.
        prompt_limit: Maximum prompt tokens (None: the task's default).
        answer_limit: Maximum answer tokens (None: the task's default).
        llvm_bin, timeout, engine, allow_extra: The compiler of each worker.
        require_validation: Flag tuning labels must have passed validation.
        extra_lists: Pass lists emulated for every program besides the random ones
            (emulation; sample indices after the random ones).
        tuning: The tuning run whose best lists label flag tuning samples (its
            ``--out`` folder or tune.sqlite; workers read it, so it must be reachable
            from them).
    """

    task: str
    seed: int = 0
    samples_per_program: int = 4
    targets: tuple[str, ...] = ("ir", "asm")
    tokenizer: str | None = None
    prompt_limit: int | None = None
    answer_limit: int | None = None
    llvm_bin: str | None = None
    timeout: float = 120.0
    engine: str = "auto"
    allow_extra: tuple[str, ...] = ()
    require_validation: bool = True
    tuning: str | None = None
    extra_lists: tuple[str, ...] = ()

    def budgets(self) -> tuple[int, int, int]:
        prompt, answer, total = TOKEN_BUDGETS[self.task]
        return self.prompt_limit or prompt, self.answer_limit or answer, total

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "seed": self.seed,
            "samples_per_program": self.samples_per_program,
            "targets": list(self.targets),
            "tokenizer": self.tokenizer,
            "prompt_limit": self.prompt_limit,
            "answer_limit": self.answer_limit,
            "timeout": self.timeout,
            "require_validation": self.require_validation,
            "tuning": self.tuning,
            "extra_lists": list(self.extra_lists),
            "allow_extra": list(self.allow_extra),
        }


@dataclass(frozen=True)
class SampleContext:
    """Makes the sample records of one program: common fields and the token budget."""

    settings: DataSettings
    record: ProgramSource
    program: Program
    counter: TokenCounter
    llvm_version: str

    def sample(self, prompt: str, answer: str, **fields: Any) -> dict[str, Any] | None:
        """A sample record, or None when it exceeds the task's token budget."""
        prompt_limit, answer_limit, total_limit = self.settings.budgets()
        prompt_tokens = self.counter.count(prompt)
        if prompt_tokens > prompt_limit:
            return None
        answer_tokens = self.counter.count(answer)
        if answer_tokens > answer_limit or prompt_tokens + answer_tokens > total_limit:
            return None
        return {
            "task": self.settings.task,
            "program": self.program.id,
            "program_name": self.record.name,
            "split": self.record.split,
            "prompt": prompt,
            "answer": answer,
            "pipeline": None,
            "target": None,
            "prompt_tokens": prompt_tokens,
            "answer_tokens": answer_tokens,
            "token_counter": self.counter.name,
            "llvm_version": self.llvm_version,
            "seed": self.settings.seed,
            "index": 0,
            "provenance": dict(self.record.provenance),
            **fields,
        }
