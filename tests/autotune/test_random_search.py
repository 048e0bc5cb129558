"""Random search: never worse than -Oz, reproducible, and every reported size is real."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from llm_compiler.autotune.random_search import (
    TuningResult,
    geometric_mean_improvement,
    random_pass_list,
    tune_program,
)
from llm_compiler.toolchain.measure import Compiler, Measurement, Program
from llm_compiler.validation.differential import DifferentialChecker
from tests.conftest import EXAMPLES, run_cli
from tests.test_measure_by_hand import by_hand


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


def test_tune_program_is_never_worse_than_oz_and_reproducible(
    compiler: Compiler, example_programs: dict[str, Program]
) -> None:
    program = example_programs["matmul.c"]
    checker = DifferentialChecker(compiler)
    first = tune_program(compiler, program, budget=15, seed=7, checker=checker)
    second = tune_program(compiler, program, budget=15, seed=7, checker=checker)
    assert first == second
    assert first.best.binary_size <= first.oz.binary_size
    assert first.compiles == 15 and first.oz.pipeline == "default<Oz>"
    assert first.validation


def test_geometric_mean() -> None:
    def result(oz: int, best: int) -> TuningResult:
        def m(size: int) -> Measurement:
            return Measurement("default<Oz>", size, size, 0, 1, "19.1.7")

        return TuningResult("p", "id", "19.1.7", m(oz), m(oz), m(best), 1, 0)

    assert geometric_mean_improvement([result(100, 90), result(100, 100)]) == pytest.approx(1 - 0.9**0.5)
    assert geometric_mean_improvement([]) == 0.0


@pytest.mark.slow
def test_tune_cli_sizes_are_reproduced_by_hand(compiler: Compiler, tmp_path: Path) -> None:
    out = tmp_path / "out"
    targets = [str(EXAMPLES / "crc32.c"), str(EXAMPLES / "qsort_ints.c")]
    result = run_cli("tune", *targets, "--budget", "40", "--seed", "1", "--out", str(out), "--jobs", "2")
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["llvm_version"] == compiler.llvm_version
    assert len(summary["programs"]) == 2
    for entry in summary["programs"]:
        assert entry["best_size"] <= entry["oz_size"]
        assert entry["compiles"] == 40
        source = Path(entry["program"])
        assert by_hand(compiler.toolchain, source, entry["best_pipeline"], tmp_path) == entry["best_size"]
        assert by_hand(compiler.toolchain, source, "default<Oz>", tmp_path) == entry["oz_size"]
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 2
    assert "geomean binary-size reduction vs -Oz" in result.stdout
