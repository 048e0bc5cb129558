"""Any proposer plugs into the tuner; random search proposes exactly the paper's lists."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pytest

from llm_compiler.autotune.jobs import TuneSettings
from llm_compiler.autotune.random_search import RandomSearch
from llm_compiler.autotune.tuner import Tuner
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.executors import InlineExecutor
from llm_compiler.core.program import Program
from llm_compiler.core.store import Store
from llm_compiler.corpus.program_set import ProgramSet
from llm_compiler.passes.pipeline import PassList
from llm_compiler.passes.sampling import random_pass_list
from llm_compiler.passes.searchable import PassSet
from llm_compiler.selection.proposer import Evaluated, ProposalRequest, Proposer
from tests.conftest import EXAMPLES

#: Ten fixed lists; on crc32.c with LLVM 19 only the gvn one beats -Oz (526 < 527 bytes).
FIXED = (
    "function(sroa)",
    "module(default<Oz>),function(instcombine<no-verify-fixpoint>)",
    "module(default<O2>)",
    "function(simplifycfg)",
    "module(globaldce)",
    "function(gvn),function(loop(loop-reduce)),module(scc-oz-module-inliner)",
    "module(default<Oz>),module(globaldce)",
    "function(early-cse)",
    "module(default<Os>)",
    "module(default<O1>)",
)


@dataclass(frozen=True)
class TenLists(Proposer):
    """A toy proposer: ten fixed lists, whatever the program; it keeps what it is told."""

    name: str = "ten fixed lists"
    heard: list[tuple[str, tuple[Evaluated, ...]]] = field(default_factory=list, compare=False, hash=False)

    def ask(self, request: ProposalRequest) -> list[PassList]:
        chosen = FIXED[request.start : request.start + request.count]
        return [request.pass_set.parse(text) for text in chosen]

    def tell(self, program: Program, outcomes: Sequence[Evaluated]) -> None:
        self.heard.append((program.id, tuple(outcomes)))


def test_a_toy_proposer_plugs_into_the_tuner_unchanged(tmp_path: Path, compiler: Compiler) -> None:
    proposer = TenLists()
    settings = TuneSettings(
        budget=len(FIXED), chunk_size=4, broadcast=0, validate=False, engine=compiler.engine,
        proposer=proposer,
    )  # fmt: skip
    store = Store(tmp_path / "tune.sqlite")
    try:
        # Jobs run in this process (InlineExecutor), so ``proposer`` itself is told.
        report = Tuner(settings, store, InlineExecutor(), compiler).run(
            list(ProgramSet([EXAMPLES / "crc32.c"]))
        )
        rows = [row for row in store.iter_evaluations() if row["phase"] == "random"]
    finally:
        store.close()
    # The search phase evaluated exactly the proposed lists, the unoptimized input and -Oz.
    assert sorted(row["pipeline"] for row in rows) == sorted(["", "default<Oz>", *FIXED])
    stored = {row["pipeline"]: row["binary_size"] for row in rows}
    # The report's best list is the smallest of them (ties: the shorter text).
    (result,) = report.programs
    smallest = min((*FIXED, "default<Oz>"), key=lambda pipeline: (stored[pipeline], len(pipeline)))
    assert result.best_pipeline == smallest == FIXED[5]
    assert result.best_size == result.random_size == stored[smallest] < result.oz_size
    # The proposer heard each chunk's outcomes (chunks of 4, 4 and 2 lists), in order,
    # with the sizes the store holds.
    assert [program_id for program_id, _ in proposer.heard] == [result.program_id] * 3
    assert [len(outcomes) for _, outcomes in proposer.heard] == [4, 4, 2]
    told = [outcome for _, outcomes in proposer.heard for outcome in outcomes]
    assert [outcome.pipeline for outcome in told] == list(FIXED)
    assert all(outcome.ok for outcome in told)
    assert {outcome.pipeline: outcome.size for outcome in told} == {p: stored[p] for p in FIXED}
    assert settings.identity()["proposer"] == {"proposer": "TenLists", "name": "ten fixed lists"}


def test_random_search_proposes_the_papers_lists(compiler: Compiler) -> None:
    program = compiler.load(EXAMPLES / "crc32.c")
    request = ProposalRequest(program, compiler.pass_set, start=0, count=30)
    proposed = RandomSearch(seed=7, max_length=20).ask(request)
    assert len(proposed) == 30 and proposed[0].pipeline == "default<Oz>"
    for index in range(1, 30):
        expected = random_pass_list(random.Random(f"7:{program.id}:{index}"), compiler.pass_set, 20)
        assert proposed[index] == expected
    assert len({passes.pipeline for passes in proposed}) == 30
    # A chunk is the same lists as the whole: resumed and distributed runs agree.
    chunk = RandomSearch(seed=7, max_length=20).ask(ProposalRequest(program, compiler.pass_set, 10, 5))
    assert chunk == proposed[10:15]


def test_random_search_settings_are_named_in_a_runs_identity() -> None:
    # Random search with the settings' own seed is not named: stores written before
    # proposers existed hold no "proposer" setting.
    assert "proposer" not in TuneSettings(seed=7, proposer=RandomSearch(7, 50)).identity()
    # A random search other than the settings' own is named by its own seed.
    other = TuneSettings(seed=7, proposer=RandomSearch(8, 50)).identity()["proposer"]
    assert other == {"proposer": "RandomSearch", "seed": 8, "max_length": 50}
    # The default search (local search) is named, with its settings.
    assert TuneSettings(seed=7).identity()["proposer"]["proposer"] == "LocalSearch"


def test_requests_and_outcomes_check_themselves() -> None:
    with pytest.raises(ValueError, match="count"):
        ProposalRequest(cast(Program, None), cast(PassSet, None), start=0, count=-1)
    with pytest.raises(ValueError, match="outcome ok only"):
        Evaluated(pipeline="function(sroa)", outcome="timeout", size=12)
    assert not Evaluated(pipeline="function(sroa)", outcome="timeout", size=None).ok
