"""The interface every model backend implements: batch text generation with token budgets.

A model answers :class:`GenerationRequest`\\ s: a prompt, how many samples, the
temperature (0 is greedy, the released models' default use), a limit on new tokens and
stop strings. :meth:`Model.generate` takes a batch and returns one :class:`Generation`
per request, in order, each holding ``samples`` :class:`Completion`\\ s. Backends are
free to batch, stream or parallelise; callers see only this.

Prompts are raw text: the released LLM Compiler models take ``[INST] ... [/INST]``
exactly as :mod:`llm_compiler.tasks.prompts` writes it, with no chat template, and the
tokenizer adds the BOS token. A prompt that does not fit the backend's context with
room for at least one new token is refused with :class:`PromptTooLong`, carrying the
token counts, never truncated; when a prompt fits but prompt plus ``max_tokens`` does
not, the answer's limit is lowered to what fits and the completion says so
(``finish_reason`` ``"length"`` when it ran out).

:meth:`Model.count_tokens` counts a prompt as the model will see it (BOS included), so
callers can hold a task's prompt budget (15,000 tokens for flag tuning and emulation,
8,192 for disassembly) before anything is sent.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from llm_compiler.errors import InvalidInput, LlmCompilerError


class ModelError(LlmCompilerError, RuntimeError):
    """A backend could not be loaded or could not answer (server down, bad file, missing extra)."""


class BackendNotInstalled(ModelError, ImportError):
    """The Python packages of a backend are not installed; the message names the extra."""


class PromptTooLong(InvalidInput):
    """A prompt does not fit a model's context (or a task's budget); it was not sent.

    Attributes:
        prompt_tokens: The prompt's length in the model's tokens.
        limit: The most prompt tokens allowed.
    """

    def __init__(self, message: str, *, prompt_tokens: int, limit: int) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.limit = limit


@dataclass(frozen=True)
class GenerationRequest:
    """One prompt to complete.

    Attributes:
        prompt: The raw prompt text (no chat template; the tokenizer adds BOS).
        samples: How many completions to return.
        temperature: 0 for greedy decoding, else the sampling temperature.
        max_tokens: The most new tokens per completion.
        stop: Strings that end a completion; the text returned stops before them.
        seed: Seeds sampling, so that a rerun samples the same answers where the
            backend allows it.
    """

    prompt: str
    samples: int = 1
    temperature: float = 0.0
    max_tokens: int = 4096
    stop: tuple[str, ...] = ()
    seed: int = 0

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise InvalidInput(f"samples must be at least 1 (got {self.samples}).")
        if self.temperature < 0:
            raise InvalidInput(f"temperature cannot be negative (got {self.temperature}).")
        if self.max_tokens < 1:
            raise InvalidInput(f"max_tokens must be at least 1 (got {self.max_tokens}).")
        if self.samples > 1 and self.temperature == 0:
            raise InvalidInput(
                f"{self.samples} samples at temperature 0 would be {self.samples} copies of the "
                "greedy answer; give --temperature (e.g. 0.8) with --samples."
            )


@dataclass(frozen=True)
class Completion:
    """One completion of a prompt.

    Attributes:
        text: The generated text, without the prompt and without the stop string.
        finish_reason: ``"stop"`` (end of sequence or a stop string) or ``"length"``
            (the token limit was reached).
        tokens: New tokens generated (0 when the backend does not say).
    """

    text: str
    finish_reason: str = "stop"
    tokens: int = 0


@dataclass(frozen=True)
class Generation:
    """A request's completions, with the prompt's length.

    Attributes:
        completions: ``samples`` completions, in order.
        prompt_tokens: The prompt's length in the model's tokens (BOS included).
    """

    completions: tuple[Completion, ...]
    prompt_tokens: int = 0

    @property
    def texts(self) -> list[str]:
        """The completions' texts."""
        return [completion.text for completion in self.completions]


def without_leading_space(text: str) -> str:
    """The answer without the space Llama's tokenizer writes before its first word.

    The answer's first token is ``▁Run``: detokenized with the prompt before it (llama.cpp,
    servers) it reads `` Run``, alone (transformers) ``Run``. Every backend returns the
    latter, so that answers compare equal whichever backend made them.
    """
    return text[1:] if text.startswith(" ") else text


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to the first stop string, and whether one was found.

    Example:
        >>> cut_at_stop("Run opt -p 'x':\\n\\n<code>IR", ["<code>"])
        ("Run opt -p 'x':\\n\\n", True)
    """
    cut = min((index for index in (text.find(s) for s in stop if s) if index >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


@dataclass
class Model(abc.ABC):
    """A text-generation backend (see the module docstring).

    Attributes:
        spec: The spec it was loaded from (``hf:PATH``, ``gguf:FILE``, ...).
    """

    spec: str
    options: dict[str, Any] = field(default_factory=dict)

    @property
    @abc.abstractmethod
    def context_length(self) -> int:
        """The most tokens (prompt and answer together) the model reads."""

    @abc.abstractmethod
    def count_tokens(self, text: str) -> int:
        """The length of ``text`` as a prompt, in the model's tokens (BOS included)."""

    @abc.abstractmethod
    def _generate(self, requests: Sequence[GenerationRequest], limits: Sequence[int]) -> list[Generation]:
        """Generates for requests that fit, with ``limits`` (new tokens) already lowered to fit."""

    def generate(
        self, requests: Sequence[GenerationRequest], prompt_tokens: Sequence[int] | None = None
    ) -> list[Generation]:
        """Completes each request; the result has one :class:`Generation` per request, in order.

        Args:
            requests: What to ask.
            prompt_tokens: Each prompt's length when the caller counted it already.

        Raises:
            PromptTooLong: A prompt leaves no room for an answer in the context.
            ModelError: The backend failed.
        """
        counts = list(prompt_tokens) if prompt_tokens is not None else [None] * len(requests)
        limits = [self.answer_limit(request, count) for request, count in zip(requests, counts, strict=True)]
        return self._generate(list(requests), limits) if requests else []

    def answer_limit(self, request: GenerationRequest, prompt_tokens: int | None = None) -> int:
        """The new tokens ``request`` may have: its ``max_tokens``, lowered to what fits.

        Args:
            request: The request.
            prompt_tokens: Its prompt's length when counted already (else counted here).

        Raises:
            PromptTooLong: The prompt leaves no room for an answer.
        """
        if prompt_tokens is None:
            prompt_tokens = self.count_tokens(request.prompt)
        room = self.context_length - prompt_tokens
        if room < 1:
            raise PromptTooLong(
                f"The prompt is {prompt_tokens} tokens and {self.spec}'s context is "
                f"{self.context_length}: it leaves no room for an answer. It was not sent "
                "(prompts are never truncated); split the unit per function or use a model "
                "with a longer context.",
                prompt_tokens=prompt_tokens,
                limit=self.context_length - 1,
            )
        return min(request.max_tokens, room)

    def close(self) -> None:  # noqa: B027
        """Frees what the backend holds (a server connection, GPU memory); default: nothing."""

    def __enter__(self) -> Model:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> dict[str, Any]:
        """The spec and settings, for records."""
        return {"spec": self.spec, "context_length": self.context_length, **self.options}
