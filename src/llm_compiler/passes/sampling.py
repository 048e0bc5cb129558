"""Random pass lists drawn from the searchable set, as LLM Compiler draws them.

Its autotuner's random search and its compiler-emulation data both use lists of
1..50 passes (length uniform, passes drawn uniformly from the searchable set; system
notes, sections 3 and 5).
"""

from __future__ import annotations

import random

from llm_compiler.passes.pipeline import PassList
from llm_compiler.passes.searchable import PassSet

#: LLM Compiler's longest random list.
MAX_LIST_LENGTH = 50


def random_pass_list(rng: random.Random, pass_set: PassSet, max_length: int = MAX_LIST_LENGTH) -> PassList:
    """A list of 1..``max_length`` passes drawn uniformly from ``pass_set``."""
    length = rng.randint(1, max_length)
    return PassList.concat(rng.choice(pass_set.member_lists) for _ in range(length))
