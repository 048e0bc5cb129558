"""How the evaluation's reports write a figure: percentages, decimals, gains over -Oz.

Every gain is a fraction of the -Oz size, positive when smaller than -Oz
(:func:`gain`); a figure that is missing or not finite is written as :data:`DASH`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: A row or a summary as read from a run's records.
Record = Mapping[str, Any]

#: What stands for a missing figure.
DASH = "–"


def percent(value: float | None) -> str:
    """A fraction as a percentage with 2 decimals; a missing figure as a dash.

    Example:
        >>> percent(0.0477), percent(-0.125), percent(-0.00001), percent(None)
        ('4.77%', '-12.50%', '0.00%', '–')
    """
    if value is None or not math.isfinite(value):
        return DASH
    text = f"{100 * value:.2f}"
    return ("0.00" if text == "-0.00" else text) + "%"


def decimal(value: float | None, digits: int = 3) -> str:
    """A number with ``digits`` decimals (thousands separated); a missing one as a dash.

    Example:
        >>> decimal(0.0825), decimal(4900, 0), decimal(None)
        ('0.083', '4,900', '–')
    """
    if value is None or not math.isfinite(value):
        return DASH
    return f"{value:,.{digits}f}"


def gain(row: Record, key: str = "size") -> float | None:
    """A row's gain over -Oz, ``(oz_size - row[key]) / oz_size``; None when it has no -Oz size.

    Example:
        >>> row = {"oz_size": 200, "size": 190, "zero_shot_size": 210}
        >>> gain(row), gain(row, "zero_shot_size")
        (0.05, -0.05)
    """
    oz, size = row.get("oz_size"), row.get(key)
    if not isinstance(oz, int | float) or oz <= 0 or not isinstance(size, int | float):
        return None
    return float((oz - size) / oz)
