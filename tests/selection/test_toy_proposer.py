"""A toy proposer plugged in by the registry route is used by tune, optimize and evaluate as is."""

from __future__ import annotations

import json
from pathlib import Path

from llm_compiler.core.store import Store
from tests.conftest import EXAMPLES, run_cli
from tests.selection.toy_proposer import TOY_LISTS

PLUGIN = {"LLM_COMPILER_PROPOSERS": "toy=tests.selection.toy_proposer:make"}
UNIT = str(EXAMPLES / "qsort_ints.c")  # the toy's second list beats -Oz on it


def test_tune_searches_with_the_toy(tmp_path: Path) -> None:
    out = tmp_path / "tune"
    result = run_cli("tune", UNIT, "--search", "toy", "--budget", "3", "--out", str(out), env=PLUGIN)
    assert result.returncode == 0, result.stderr
    store = Store(out / "tune.sqlite")
    searched = {row["pipeline"] for row in store.iter_evaluations() if row["phase"] == "random"}
    store.close()
    assert set(TOY_LISTS) <= searched
    [program] = json.loads((out / "summary.json").read_text())["programs"]
    assert program["best_size"] < program["oz_size"]


def test_optimize_and_evaluate_use_the_toy_first_lists(tmp_path: Path) -> None:
    result = run_cli("optimize", UNIT, "--model", "toy,k=2", "--json", env=PLUGIN)
    assert result.returncode == 0, result.stderr
    [record] = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [c["run"] for c in record["candidates"][:2]] == list(TOY_LISTS[:2])
    assert record["model"] == "toy,k=2" and record["chosen"] == TOY_LISTS[1]
    assert record["binary_size"] < record["oz_size"]
    out = tmp_path / "evaluate"
    result = run_cli("evaluate", "flag-tuning", UNIT, "--system", "toy,k=2", "--out", str(out), env=PLUGIN)
    assert result.returncode == 0, result.stderr
    [row] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert row["system"] == "toy,k=2" and row["size"] < row["oz_size"] and row["compiles"] >= 3


def test_an_unknown_or_broken_plugin_is_named(tmp_path: Path) -> None:
    result = run_cli("optimize", UNIT, "--model", "toi", env=PLUGIN)
    assert result.returncode == 2 and "Did you mean toy" in result.stderr
    broken = {"LLM_COMPILER_PROPOSERS": "toy=tests.selection.no_such_module:make"}
    result = run_cli("optimize", UNIT, "--model", "toy", env=broken)
    assert result.returncode == 2 and "tests.selection.no_such_module:make cannot be loaded" in result.stderr
