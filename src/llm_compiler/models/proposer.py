"""A model as a proposer of pass lists: its answers first, then a search goes on from them.

``tune --model SPEC`` asks the model for each program's lists once, in the main process
(:func:`model_lists`: the flag-tuning prompt, ``samples`` answers, each read and mapped
as ``optimize`` reads them), and gives the tuner a :class:`SeededSearch`: a proposer
whose first lists for a program are the model's, and whose later lists come from
another proposer (the default search). A local search thus starts from the model's
lists as parents. The lists are data inside the proposer, so it is picklable and
deterministic like every other proposer, and a resumed run proposes the same lists.
Every list is measured, minimized, broadcast and validated like any other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.models.base import GenerationRequest, Model
from llm_compiler.models.optimize import FLAG_TUNING_BUDGET, read_answer
from llm_compiler.models.request import Answered, ask
from llm_compiler.passes.pipeline import PassList
from llm_compiler.passes.versions import MODEL_LLVM
from llm_compiler.selection import Verdict
from llm_compiler.selection.proposer import ProposalRequest, Proposer, first_then
from llm_compiler.tasks.prompts import flag_tuning_prompt


def model_lists(
    compiler: Compiler,
    model: Model,
    programs: Iterable[Program],
    *,
    samples: int = 1,
    temperature: float = 0.0,
    seed: int = 0,
    budget: int = FLAG_TUNING_BUDGET,
    source_llvm: int = MODEL_LLVM,
) -> dict[str, tuple[str, ...]]:
    """The distinct usable lists the model answers for each program, by program id.

    Programs whose prompt is over ``budget`` or the model's context get none.
    """
    listed = list(programs)
    requests = [
        GenerationRequest(flag_tuning_prompt(p.ir), samples, temperature, 512, stop=("<code>",), seed=seed)
        for p in listed
    ]
    answered = [
        (program.id, outcome.generation)
        for program, outcome in zip(listed, ask(model, requests, budget), strict=True)
        if isinstance(outcome, Answered)
    ]
    lists: dict[str, tuple[str, ...]] = {}
    for program_id, generation in answered:
        found: list[str] = []
        for completion in generation.completions:
            candidate = read_answer(compiler, completion.text, completion.finish_reason, source_llvm)
            if (
                candidate.run is not None
                and candidate.verdict is Verdict.NOT_CHECKED
                and candidate.run not in found
            ):
                found.append(candidate.run)
        lists[program_id] = tuple(found)
    return lists


@dataclass(frozen=True)
class SeededSearch(Proposer):
    """The model's lists for a program first, then ``then``'s (module docstring).

    Args:
        lists: ``(program id, pipelines)`` pairs: what the model proposed.
        then: The proposer that goes on (asked with its own indices from 0).
        model: The model spec, for records.
    """

    lists: tuple[tuple[str, tuple[str, ...]], ...]
    then: Proposer
    model: str = ""
    name: str = field(default="model, then search", init=False)
    adaptive: ClassVar[bool] = True

    def ask(self, request: ProposalRequest) -> list[PassList]:
        seeded = dict(self.lists).get(request.program.id, ())
        return first_then(request, len(seeded), lambda: seeded, self.then)

    def tell(self, program: Program, outcomes: Any) -> None:
        self.then.tell(program, outcomes)

    def identity(self) -> dict[str, Any]:
        digest = hashlib.sha256(repr(sorted(self.lists)).encode()).hexdigest()[:16]
        return {
            "proposer": "SeededSearch",
            "model": self.model,
            "lists": digest,
            "then": self.then.identity(),
        }
