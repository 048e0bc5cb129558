"""Random search, LLM Compiler's own proposer (system notes, section 5).

List 0 of every program is ``default<Oz>``, the baseline; list ``i`` > 0 is 1 to
``max_length`` passes (length uniform) drawn uniformly from the searchable set, with a
generator seeded by (seed, program id, i) alone, so any chunk of the lists can be made
in any process and a resumed run proposes the same ones.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from llm_compiler.core.program import OZ_PIPELINE
from llm_compiler.passes.pipeline import PassList
from llm_compiler.passes.sampling import MAX_LIST_LENGTH, random_pass_list
from llm_compiler.selection.proposer import ProposalRequest, Proposer


@dataclass(frozen=True)
class RandomSearch(Proposer):
    """Independent random lists, -Oz first.

    Args:
        seed: The run's seed.
        max_length: The longest list (the paper: 50).
    """

    seed: int = 0
    max_length: int = MAX_LIST_LENGTH
    name: str = field(default="random search", init=False)

    def candidate(self, request: ProposalRequest, index: int) -> PassList:
        """List ``index`` of the request's program."""
        if index == 0:
            return request.pass_set.parse(OZ_PIPELINE)
        rng = random.Random(f"{self.seed}:{request.program.id}:{index}")
        return random_pass_list(rng, request.pass_set, self.max_length)

    def ask(self, request: ProposalRequest) -> list[PassList]:
        return [self.candidate(request, index) for index in request.indices]

    def identity(self) -> dict[str, Any]:
        return {"proposer": type(self).__qualname__, "seed": self.seed, "max_length": self.max_length}
