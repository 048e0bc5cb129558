"""Size-reduction figures over many programs, as LLM Compiler reports them."""

from __future__ import annotations

import math
from collections.abc import Sequence


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
