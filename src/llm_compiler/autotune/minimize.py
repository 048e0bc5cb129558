"""Pass-list minimization, to a fixed point, as generic functions of a list and a cost.

LLM Compiler minimized every best list found by random search (system notes,
section 5) with three steps, repeated until nothing changes:

* **redundant pass elimination** (:func:`eliminate_redundant`): drop one pass at a
  time; if the cost does not get worse, keep it dropped;
* **bubble sort** (:func:`canonical_order`): adjacent passes out of a fixed key order
  are swapped when the cost is unchanged, giving commuting sub-sequences one order;
* **insertion search** (:func:`insertion_search`): try inserting each candidate pass
  before each position; keep an insertion that lowers the cost.

The functions know nothing of LLVM: ``cost`` maps a sequence to a number (a binary
size; ``math.inf`` for a list that fails), so they are tested on toy costs as well
as on the real compiler. Each call of ``cost`` is one evaluation; the functions
evaluate candidates in an order that keeps long prefixes shared (later positions
first), which the compiler's prefix states turn into saved work.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
Cost = Callable[[Sequence[T]], float]


def eliminate_redundant(items: Sequence[T], cost: Cost[T]) -> tuple[list[T], float]:
    """Drops items whose removal does not raise the cost, until none can be dropped.

    Returns:
        The reduced list and its cost. Removing any single item from it raises the cost.

    Example:
        >>> eliminate_redundant([1, 2, 3, 2], lambda xs: 10 - len(set(xs)))
        ([1, 2, 3], 7)
    """
    current = list(items)
    best = cost(current)
    changed = True
    while changed:
        changed = False
        index = len(current) - 1
        while index >= 0:
            candidate = current[:index] + current[index + 1 :]
            value = cost(candidate)
            if value <= best:
                current, best, changed = candidate, value, True
            index -= 1
    return current, best


def canonical_order(
    items: Sequence[T], cost: Cost[T], key: Callable[[T], object], best: float | None = None
) -> tuple[list[T], float]:
    """Bubble-sorts adjacent items into ``key`` order wherever the cost stays the same.

    A swap is kept when the cost does not rise (a lower cost is kept too).

    Example:
        >>> canonical_order(["b", "a", "c"], lambda xs: 1.0, key=str)
        (['a', 'b', 'c'], 1.0)
    """
    current = list(items)
    best = cost(current) if best is None else best
    changed = True
    while changed:
        changed = False
        for index in range(len(current) - 2, -1, -1):
            if key(current[index]) > key(current[index + 1]):  # type: ignore[operator]
                candidate = [*current[:index], current[index + 1], current[index], *current[index + 2 :]]
                value = cost(candidate)
                if value <= best:
                    current, best, changed = candidate, value, True
    return current, best


def insertion_search(
    items: Sequence[T], cost: Cost[T], vocabulary: Sequence[T], best: float | None = None
) -> tuple[list[T], float]:
    """Tries every item of ``vocabulary`` before every position; keeps what lowers the cost.

    Positions are visited from the end; after an accepted insertion the search goes on
    from the same position of the new list.

    Example:
        >>> insertion_search([1], lambda xs: -sum(xs) if len(xs) < 3 else 0.0, [1, 5])
        ([1, 1], -2)
    """
    current = list(items)
    best = cost(current) if best is None else best
    position = len(current)
    while position >= 0:
        improved = False
        for item in vocabulary:
            candidate = [*current[:position], item, *current[position:]]
            value = cost(candidate)
            if value < best:
                current, best, improved = candidate, value, True
                break
        if not improved:
            position -= 1
    return current, best


def minimize(
    items: Sequence[T],
    cost: Cost[T],
    *,
    vocabulary: Sequence[T] = (),
    key: Callable[[T], object] = str,
    max_rounds: int = 10,
) -> tuple[list[T], float]:
    """Elimination, canonical order and insertion search, repeated to a fixed point.

    Args:
        items: The list to minimize.
        cost: Cost of a list (lower is better; ``math.inf`` for failures).
        vocabulary: Items insertion search may add (empty: no insertion search).
        key: The canonical order of :func:`canonical_order`.
        max_rounds: Upper bound on rounds, in case costs are not monotone.

    Returns:
        The minimized list and its cost; the cost is never above the input's.
    """
    current, best = eliminate_redundant(items, cost)
    for _ in range(max_rounds):
        before = (list(current), best)
        current, best = canonical_order(current, cost, key, best)
        if vocabulary:
            current, best = insertion_search(current, cost, vocabulary, best)
        current, best = eliminate_redundant(current, cost)
        if (current, best) == before:
            break
    return current, best
