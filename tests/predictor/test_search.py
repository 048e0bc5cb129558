"""The predicted search: the shipped predictor's lists first, then local search from them."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.autotune.jobs import TuneSettings
from llm_compiler.autotune.local_search import LocalSearch
from llm_compiler.autotune.tuner import Tuner
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.executors import InlineExecutor
from llm_compiler.core.program import OZ_PIPELINE
from llm_compiler.core.store import Store
from llm_compiler.corpus.program_set import ProgramSet
from llm_compiler.errors import InvalidInput
from llm_compiler.predictor import search as predicted
from llm_compiler.predictor.ranker import load
from llm_compiler.predictor.search import PredictedSearch, make_search, predicted_search
from llm_compiler.predictor.shipped import ranker_file
from llm_compiler.selection.proposer import Evaluated, ProposalRequest
from tests.conftest import EXAMPLES


def _request(
    compiler: Compiler, start: int, count: int, history: tuple[Evaluated, ...] = ()
) -> ProposalRequest:
    program = compiler.load(EXAMPLES / "crc32.c")
    return ProposalRequest(program, compiler.pass_set, start, count, history)


def test_the_ranked_lists_come_first_then_local_search_goes_on_from_them(compiler: Compiler) -> None:
    search = predicted_search(compiler, seed=4, first=6, warmup=2)
    assert isinstance(search, PredictedSearch)
    ranked = load(ranker_file(compiler), compiler).rank(compiler.load(EXAMPLES / "crc32.c").ir)
    first = search.ask(_request(compiler, 0, 10))
    assert [str(passes) for passes in first[:6]] == ranked[:6]
    # After the predictor's lists, the local search's own list 0 (-Oz) and random warm-up.
    assert first[6:] == LocalSearch(4, warmup=2).ask(_request(compiler, 0, 4))
    # Asked in pieces, the same lists.
    assert search.ask(_request(compiler, 0, 4)) + search.ask(_request(compiler, 4, 6)) == first
    # Once warm, children of the best measured lists, the predictor's among them.
    best = ranked[0]
    history = (Evaluated(OZ_PIPELINE, "ok", 527), Evaluated(best, "ok", 500))
    later = [str(passes) for passes in search.ask(_request(compiler, 10, 20, history))]
    assert later == [str(p) for p in search.ask(_request(compiler, 10, 20, history))]
    assert best not in later and OZ_PIPELINE not in later
    shared = [text for text in later if set(text.split(",")) & set(best.split(","))]
    assert len(shared) >= 10, later


def test_the_search_names_and_their_settings(compiler: Compiler) -> None:
    assert make_search("predicted", compiler, 3) == predicted_search(compiler, 3)
    assert make_search("predicted:first=48,warmup=0", compiler).first == 48
    assert make_search("local", compiler, 3) == LocalSearch(3)
    assert isinstance(make_search(None, compiler), PredictedSearch)
    assert make_search("builtin", compiler, 3) == predicted_search(compiler, 3)  # one name everywhere
    with pytest.raises(
        InvalidInput, match=r"Unknown source of lists 'annealing'.*Known: builtin, common, local"
    ):
        make_search("annealing", compiler)
    with pytest.raises(InvalidInput, match="first must be a whole number"):
        make_search("predicted:first=x", compiler)
    with pytest.raises(InvalidInput, match="unknown option 'depth' for builtin"):
        make_search("predicted:depth=3", compiler)
    identity = predicted_search(compiler).identity()
    assert identity["ranker"] and identity["then"]["proposer"] == "LocalSearch"


def test_a_ranker_for_another_llvm_is_refused_by_name_and_the_default_falls_back(
    compiler: Compiler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    record: dict[str, Any] = json.loads(ranker_file(compiler).read_text())
    record["manifest"]["llvm_major"] = 7
    other = tmp_path / "ranker.json"
    other.write_text(json.dumps(record))
    with pytest.raises(InvalidInput, match="trained for LLVM 7"):
        predicted_search(compiler, ranker_path=other)
    monkeypatch.setattr(predicted, "ranker_file", lambda compiler: other)
    with pytest.raises(InvalidInput, match="trained for LLVM 7"):
        make_search("predicted", compiler)
    with caplog.at_level(logging.WARNING):
        assert make_search(None, compiler, 2) == LocalSearch(2)
    assert "local search" in caplog.text and "trained for LLVM 7" in caplog.text


def test_a_tuning_run_with_the_predicted_search_measures_the_predictor_lists(
    compiler: Compiler, tmp_path: Path
) -> None:
    settings = TuneSettings(
        budget=30,
        engine=compiler.engine,
        llvm_bin=str(compiler.toolchain.bin_dir),
        proposer=predicted_search(compiler, first=8),
        minimize=False,
        broadcast=0,
        validate=False,
    )
    store = Store(tmp_path / "tune.sqlite")
    report = Tuner(settings, store, InlineExecutor(), compiler).run(list(ProgramSet([EXAMPLES / "crc32.c"])))
    measured = {row["pipeline"] for row in store.iter_evaluations()}
    store.close()
    ranked = load(ranker_file(compiler), compiler).rank(compiler.load(EXAMPLES / "crc32.c").ir)
    assert set(ranked[:8]) <= measured
    [result] = report.tuned
    assert result.best_size <= result.oz_size
