"""Size-reduction figures over many programs, as LLM Compiler reports them."""

from __future__ import annotations

import math
from collections.abc import Sequence

from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective


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


def total_improvement(pairs: Sequence[tuple[int, int]]) -> float:
    """Total-bytes reduction over -Oz: ``1 - sum(sizes) / sum(-Oz sizes)``.

    What a user's binary loses when every unit is built with its kept list: large units
    weigh as much as their bytes, where the geometric mean weighs every unit alike.

    Args:
        pairs: (-Oz size, size) per program.

    Example:
        >>> round(total_improvement([(1000, 990), (100, 50)]), 4)
        0.0545
    """
    counted = [(oz, size) for oz, size in pairs if oz > 0]
    total_oz = sum(oz for oz, _ in counted)
    return 1.0 - sum(size for _, size in counted) / total_oz if total_oz else 0.0


def gains_text(pairs: Sequence[tuple[int, int]], objective: Objective = DEFAULT_OBJECTIVE) -> str:
    """The two headline figures as one line of text: the geomean, then the total bytes
    (or the total of ``objective``'s unit).

    Example:
        >>> gains_text([(1000, 990), (100, 50)])
        'geomean binary-size reduction vs -Oz: 29.64%; total bytes: 1,040 vs 1,100 at -Oz (5.45% smaller)'
    """
    counted = [(oz, size) for oz, size in pairs if oz > 0]
    total = total_improvement(counted)
    direction = "smaller" if total >= 0 else "larger"
    return (
        f"geomean {objective.value} reduction vs -Oz: {geometric_mean_improvement(counted):.2%}; "
        f"total {objective.unit}: "
        f"{sum(size for _, size in counted):,} vs {sum(oz for oz, _ in counted):,} at -Oz "
        f"({abs(total):.2%} {direction})"
    )
