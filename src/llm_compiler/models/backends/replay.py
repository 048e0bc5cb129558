"""``replay:FILE``: answers read from a JSONL file instead of a model.

For tests, and for scoring answers produced elsewhere (another machine, another tool,
the paper's released outputs) with the same measurement and validation as a live model.
Each line is one prompt's answers::

    {"prompt": "[INST] Tell me how ... [/INST]", "completions": ["Run opt -p ...", "..."]}

``prompt_sha256`` (the SHA-256 of the prompt text, hex) may stand in for ``prompt``;
``completion`` (one string) for ``completions``. The records ``optimize``,
``disassemble`` and ``emulate`` write (``--out``) carry both fields, so a run's answers
can be replayed. Prompts are counted with ``tokenizer`` (a tokenizer.json or model
folder) when given, else with the calibrated estimate of Llama's tokenizer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from llm_compiler.corpus.tokens import TokenCounter, get_token_counter
from llm_compiler.errors import InvalidInput
from llm_compiler.models.base import Completion, Generation, GenerationRequest, Model, ModelError, cut_at_stop

DEFAULT_CONTEXT = 16384


def prompt_key(prompt: str) -> str:
    """The SHA-256 of a prompt, hex: how replay files name prompts without repeating them."""
    return hashlib.sha256(prompt.encode()).hexdigest()


@dataclass
class ReplayModel(Model):
    """Answers from a JSONL file (see the module docstring)."""

    answers: dict[str, list[str]] = field(default_factory=dict)
    counter: TokenCounter | None = None
    context: int = DEFAULT_CONTEXT
    OPTIONS: ClassVar[frozenset[str]] = frozenset({"tokenizer", "context"})

    @classmethod
    def load(
        cls, spec: str, where: str, tokenizer: str | None = None, context: int | None = None
    ) -> ReplayModel:
        """Reads the file.

        Raises:
            InvalidInput: The file is missing or a line is not a record.
        """
        path = Path(where).expanduser()
        if not path.is_file():
            raise InvalidInput(f"{spec}: no such file {str(path)!r}.")
        answers: dict[str, list[str]] = {}
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                key = record["prompt_sha256"] if "prompt_sha256" in record else prompt_key(record["prompt"])
                texts = record["completions"] if "completions" in record else [record["completion"]]
                if not all(isinstance(text, str) for text in texts):
                    raise TypeError("completions must be strings")
            except (json.JSONDecodeError, KeyError, TypeError) as error:
                raise InvalidInput(
                    f"{path}:{number}: not a replay record ({error}); each line is "
                    '{"prompt" or "prompt_sha256": ..., "completions": [...] or "completion": ...}.'
                ) from error
            answers.setdefault(key, []).extend(texts)
        options = {"tokenizer": tokenizer} if tokenizer else {}
        return cls(
            spec,
            options,
            answers=answers,
            counter=get_token_counter(tokenizer),
            context=context or DEFAULT_CONTEXT,
        )

    @property
    def context_length(self) -> int:
        return self.context

    def count_tokens(self, text: str) -> int:
        assert self.counter is not None
        return self.counter.count(text) + 1  # BOS

    def _generate(self, requests: Sequence[GenerationRequest], limits: Sequence[int]) -> list[Generation]:
        generations = []
        for request in requests:
            texts = self.answers.get(prompt_key(request.prompt))
            if texts is None:
                first = request.prompt.splitlines()[0][:80] if request.prompt else ""
                raise ModelError(
                    f"{self.spec} has no answer for the prompt {prompt_key(request.prompt)[:16]} "
                    f"({first!r}...): replay files answer only the prompts they were written for."
                )
            if len(texts) < request.samples:
                raise ModelError(
                    f"{self.spec} has {len(texts)} answers for a prompt and {request.samples} were "
                    "asked for; ask for fewer samples."
                )
            completions = []
            for text in texts[: request.samples]:
                cut, stopped = cut_at_stop(text, request.stop)
                completions.append(Completion(cut, "stop" if stopped or cut == text else "length"))
            generations.append(Generation(tuple(completions), self.count_tokens(request.prompt)))
        return generations

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "prompts": len(self.answers)}
