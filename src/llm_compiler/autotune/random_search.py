"""Random search over the searchable pass set, and the paper's summary metric.

LLM Compiler's autotuner starts with random search (system notes, section 5): for
each program, independent random lists of 1..50 passes (length uniform, passes drawn
uniformly from the searchable set), keeping the list that gives the smallest binary.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from llm_compiler.passes.pipeline import PassList
from llm_compiler.passes.searchable import PassSet

#: LLM Compiler's longest random list.
MAX_LIST_LENGTH = 50


def random_pass_list(rng: random.Random, pass_set: PassSet, max_length: int = MAX_LIST_LENGTH) -> PassList:
    """A list of 1..``max_length`` passes drawn uniformly from ``pass_set``."""
    length = rng.randint(1, max_length)
    return PassList.concat(rng.choice(pass_set.member_lists) for _ in range(length))


def geometric_mean_improvement(pairs: Sequence[tuple[int, int]]) -> float:
    """Geometric-mean binary-size reduction over -Oz (LLM Compiler's headline metric).

    Args:
        pairs: (-Oz size, best size) per program.

    Example:
        >>> round(geometric_mean_improvement([(100, 90), (100, 100)]), 4)
        0.0513
    """
    ratios = [best / oz for oz, best in pairs if oz > 0]
    if not ratios:
        return 0.0
    return 1.0 - math.exp(sum(math.log(ratio) for ratio in ratios) / len(ratios))
