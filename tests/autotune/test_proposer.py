"""Any proposer plugs into the tuner; random search proposes exactly the paper's lists."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.autotune.jobs import TuneSettings
from llm_compiler.autotune.proposer import Evaluated, ProposalRequest, Proposer
from llm_compiler.autotune.random_search import RandomSearch
from llm_compiler.autotune.store import Store
from llm_compiler.autotune.tuner import Tuner
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.executors import InlineExecutor
from llm_compiler.core.program import Program
from llm_compiler.corpus.program_set import ProgramSet
from llm_compiler.passes.pipeline import PassList
from llm_compiler.passes.sampling import random_pass_list
from tests.conftest import EXAMPLES

FIXED = (
    "function(sroa)",
    "module(default<Oz>),function(instcombine<no-verify-fixpoint>)",
    "module(default<O2>)",
    "function(simplifycfg)",
    "module(globaldce)",
    "module(default<Oz>),module(globaldce)",
    "function(early-cse)",
    "module(default<Os>)",
    "function(mem2reg)",
    "module(default<O1>)",
)

TOLD: list[tuple[str, tuple[Evaluated, ...]]] = []


@dataclass(frozen=True)
class TenLists(Proposer):
    """A toy proposer: ten fixed lists, whatever the program."""

    name: str = "ten fixed lists"

    def ask(self, request: ProposalRequest) -> list[PassList]:
        chosen = FIXED[request.start : request.start + request.count]
        return [request.pass_set.parse(text) for text in chosen]

    def tell(self, program: Program, outcomes: Sequence[Evaluated]) -> None:
        TOLD.append((program.id, tuple(outcomes)))


def test_a_toy_proposer_plugs_into_the_tuner_unchanged(tmp_path: Path, compiler: Compiler) -> None:
    TOLD.clear()
    settings = TuneSettings(
        budget=len(FIXED), chunk_size=4, broadcast=0, validate=False, engine=compiler.engine,
        proposer=TenLists(),
    )  # fmt: skip
    store = Store(tmp_path / "tune.sqlite")
    try:
        report = Tuner(settings, store, InlineExecutor(), compiler).run(
            list(ProgramSet([EXAMPLES / "crc32.c"]))
        )
        evaluated = {row["pipeline"] for row in store.iter_evaluations() if row["phase"] == "random"}
    finally:
        store.close()
    # The search phase evaluated exactly the proposed lists, the unoptimized input and -Oz.
    assert evaluated == {"", "default<Oz>", *FIXED}
    # The proposer heard each chunk's outcomes: all ten lists, with their sizes.
    told = [outcome for _, outcomes in TOLD for outcome in outcomes]
    assert [outcome.pipeline for outcome in told] == list(FIXED)
    assert all(outcome.outcome == "ok" and outcome.binary_size for outcome in told)
    (result,) = report.programs
    sizes = {outcome.pipeline: outcome.binary_size for outcome in told}
    assert result.random_size == min(size for size in [*sizes.values(), result.oz_size] if size is not None)
    assert "ten fixed lists" in str(settings.identity()["proposer"])


def test_random_search_proposes_the_papers_lists(compiler: Compiler) -> None:
    program = compiler.load(EXAMPLES / "crc32.c")
    request = ProposalRequest(program, compiler.pass_set, start=0, count=30)
    proposed = RandomSearch(seed=7, max_length=20).ask(request)
    assert proposed[0].pipeline == "default<Oz>"
    for index in range(1, 30):
        expected = random_pass_list(random.Random(f"7:{program.id}:{index}"), compiler.pass_set, 20)
        assert proposed[index] == expected
    # A chunk is the same lists as the whole: resumed and distributed runs agree.
    chunk = RandomSearch(seed=7, max_length=20).ask(ProposalRequest(program, compiler.pass_set, 10, 5))
    assert chunk == proposed[10:15]
    # The default search of a run is this random search, so stores stay compatible.
    assert TuneSettings(seed=7, max_length=20).search == RandomSearch(7, 20)
    assert "proposer" not in TuneSettings(seed=7).identity()
