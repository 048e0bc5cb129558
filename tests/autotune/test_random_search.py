"""Random lists follow the paper's distribution; the summary metric."""

from __future__ import annotations

import random

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.metrics import geometric_mean_improvement
from llm_compiler.passes.sampling import random_pass_list


def test_random_lists_follow_the_papers_distribution(compiler: Compiler) -> None:
    rng = random.Random(3)
    lists = [random_pass_list(rng, compiler.pass_set) for _ in range(400)]
    lengths = [len(passes) for passes in lists]
    assert min(lengths) == 1 and max(lengths) == 50
    assert 20 < sum(lengths) / len(lengths) < 31  # uniform 1..50: mean 25.5
    members = set(compiler.pass_set.members)
    assert all(str(node) in members for passes in lists for node in passes)
    for passes in lists[:20]:
        compiler.pass_set.validate(passes)


def test_geometric_mean() -> None:
    assert geometric_mean_improvement([(100, 90), (100, 100)]) == pytest.approx(1 - 0.9**0.5)
    assert geometric_mean_improvement([]) == 0.0
