"""One way to ask a model: count the prompt, check the budget and the context, generate.

Every task asks a model the same way (the paper's rule: a prompt over the budget is not
sent and scores as the task's baseline; prompts are never truncated). :func:`ask` does
it for a batch: each prompt is counted with the model's tokenizer, refused when it is
over ``budget`` or leaves no room for an answer in the model's context, and the rest
are sent in one call to the backend, each answer limited to what the context leaves.
The answer for each request, in order, is an :class:`Answered` or a :class:`Refused`
with the reason in words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from llm_compiler.corpus.tokens import PROMPT_TOKEN_BUDGET
from llm_compiler.models.base import Generation, GenerationRequest, Model, PromptTooLong

#: The longest flag-tuning or emulation prompt sent, in the model's tokens (the paper's 15k).
PROMPT_BUDGET = PROMPT_TOKEN_BUDGET


@dataclass(frozen=True)
class Answered:
    """A request that was sent: its answers and its prompt's length in tokens."""

    generation: Generation
    tokens: int


@dataclass(frozen=True)
class Refused:
    """A request that was not sent, and why."""

    reason: str
    tokens: int


def ask(
    model: Model, requests: Sequence[GenerationRequest], budget: int = PROMPT_BUDGET, hint: str = ""
) -> list[Answered | Refused]:
    """Sends the requests that fit (module docstring); one outcome per request, in order.

    Args:
        model: The model.
        requests: What to ask.
        budget: The longest prompt sent, in the model's tokens.
        hint: Words added to an over-budget refusal (what the user can do about it).

    Raises:
        ModelError: The backend failed.
    """
    tokens = [model.count_tokens(request.prompt) for request in requests]
    outcomes: list[Answered | Refused | None] = []
    sendable: list[int] = []
    for index, request in enumerate(requests):
        if tokens[index] > budget:
            reason = f"the prompt is {tokens[index]} tokens, over the budget of {budget}; it was not sent"
            outcomes.append(Refused(reason + (f" ({hint})" if hint else ""), tokens[index]))
            continue
        try:
            model.answer_limit(request, tokens[index])
        except PromptTooLong as error:
            outcomes.append(Refused(str(error), tokens[index]))
            continue
        outcomes.append(None)
        sendable.append(index)
    # Each prompt is counted once, here: tokenizing a 15,000-token prompt is not free.
    generations = model.generate([requests[index] for index in sendable], [tokens[i] for i in sendable])
    for index, generation in zip(sendable, generations, strict=True):
        outcomes[index] = Answered(generation, tokens[index])
    return [outcome for outcome in outcomes if outcome is not None]
