"""Minimization steps on toy costs (the real compiler is exercised by the autotuner tests)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from llm_compiler.autotune.minimize import canonical_order, eliminate_redundant, insertion_search, minimize


def distinct_cost(items: Sequence[str]) -> float:
    """Smaller with more distinct letters; a list holding 'x' fails."""
    return math.inf if "x" in items else 100 - 10 * len(set(items)) + len(items)


@given(st.lists(st.sampled_from("abcde"), max_size=12))
@settings(max_examples=200)
def test_elimination_reaches_a_fixed_point(items: list[str]) -> None:
    reduced, cost = eliminate_redundant(items, distinct_cost)
    assert cost <= distinct_cost(items) and cost == distinct_cost(reduced)
    assert sorted(set(reduced)) == sorted(set(items)) and len(reduced) == len(set(reduced))
    for index in range(len(reduced)):
        assert distinct_cost(reduced[:index] + reduced[index + 1 :]) > cost


def test_order_is_canonical_only_where_the_cost_allows() -> None:
    # 'b' must stay right after 'c'; the other swaps are free.
    def cost(items: Sequence[str]) -> float:
        return 1.0 if "cb" in "".join(items) else 2.0

    ordered, value = canonical_order(["a", "c", "b", "e", "d"], cost, key=str)
    assert (ordered, value) == (["a", "c", "b", "d", "e"], 1.0)


def test_insertion_search_keeps_only_improvements() -> None:
    def cost(items: Sequence[str]) -> float:
        return 5.0 - ("q" in items) - ("r" in items and items.index("r") == 0) + 0.01 * len(items)

    result, value = insertion_search(["a"], cost, ["q", "r", "z"])
    assert result[0] == "r" and "q" in result and "z" not in result
    assert value < cost(["a"])


def test_failures_are_never_chosen() -> None:
    result, value = minimize(["a", "b"], distinct_cost, vocabulary=["x", "c"])
    assert "x" not in result and math.isfinite(value)
    assert set(result) == {"a", "b", "c"}
