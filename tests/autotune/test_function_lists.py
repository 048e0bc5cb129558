"""Per-function lists on the real LLVM: the join, its checks, the tuner's phase."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_compiler.autotune.export import export_run, safe_name
from llm_compiler.autotune.function_lists import (
    FunctionLists,
    FunctionListsOutcome,
    build_function_lists,
    public_names,
    search_function_lists,
    tunable_functions,
    tune_function_lists,
)
from llm_compiler.autotune.jobs import TuneSettings
from llm_compiler.autotune.tuner import Tuner
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.executors import InlineExecutor
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.core.store import Store
from llm_compiler.corpus.program_set import ProgramSet
from llm_compiler.passes.pipeline import PassList, parse_pipeline
from llm_compiler.selection import Policy, Selector, Verdict, make_gate
from llm_compiler.selection.proposer import ProposalRequest, Proposer
from llm_compiler.toolchain.elf import berkeley_size, function_sizes
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.validation.differential import DifferentialChecker
from llm_compiler.validation.outcomes import Outcome
from tests.conftest import EXAMPLES, run_cli

#: A weak base list, so that function-level lists after it differ by function.
BASE = "function(sroa)"
#: Three lists after it: on strings.c each one grows some function another shrinks.
CANDIDATES = (
    "function(instcombine<no-verify-fixpoint>),function(loop(loop-rotate))",
    "function(instcombine<no-verify-fixpoint>),function(simplifycfg)",
    "function(simplifycfg),function(loop(loop-rotate))",
)
#: A list smaller than -Oz on fixed_point.c after which CANDIDATES shrink it further.
FIXED_BASE = "function(dse),cgscc(inline),function(simplifycfg)"
#: A user check that passes every list but refuses a joined unit (its label names it).
REFUSES_JOINS = 'case "$LLM_COMPILER_PASSES" in *per-function*) exit 4;; esac'


def _linkage(ir: str) -> dict[str, bool]:
    """Whether each defined function and global of ``ir`` is local (internal/private)."""
    local = {}
    for line in ir.splitlines():
        match = re.match(r"^define\b([^@]*)@([-\w$.]+)", line) or re.match(r"^@([-\w$.]+) = (\w+)", line)
        if match is None:
            continue
        if line.startswith("define"):
            local[match.group(2)] = any(w in match.group(1).split() for w in ("internal", "private"))
        else:
            local[match.group(1)] = match.group(2) in ("internal", "private")
    return local


@pytest.fixture(scope="module")
def compiler(toolchain: Toolchain) -> Iterator[Compiler]:
    """One engine: the join and its checks run LLVM's tools either way, and the phase's
    compiles go through the engine as every other phase's (tested on both elsewhere)."""
    with Compiler(toolchain, timeout=120, engine="inprocess", workers=2) as compiler:
        yield compiler


@pytest.fixture(scope="module")
def strings(compiler: Compiler) -> Program:
    return compiler.load(EXAMPLES / "strings.c")


def test_functions_take_their_own_lists_and_the_join_beats_every_single_list(
    compiler: Compiler, strings: Program
) -> None:
    base_ir = compiler.optimize(strings, compiler.passes(BASE))
    optimized = compiler.load_ir(base_ir, "strings after its list")
    candidates = [compiler.passes(text) for text in CANDIDATES]
    search = search_function_lists(compiler, optimized, candidates)
    assert search.chosen and search.saving > 0
    singles = {c.pipeline: compiler.object_code(optimized, c)[0] for c in candidates}

    def outside_functions(obj: bytes) -> int:
        return berkeley_size(obj).binary_size - sum(function_sizes(obj).values())

    base_outside = outside_functions(compiler.object_code(optimized, None)[0])
    for function, pipeline in search.chosen.items():
        # each function took the list under which it is smallest, bytes a list adds
        # outside functions (constant pools) charged to it
        sizes = {
            p: function_sizes(obj)[function] + max(0, outside_functions(obj) - base_outside)
            for p, obj in singles.items()
        }
        assert sizes[pipeline] == min(sizes.values())
    record = FunctionLists(BASE, tuple(sorted(search.chosen.items())))
    joined = build_function_lists(compiler, strings, record)
    obj = compiler.lower(joined, name="strings")
    size = berkeley_size(obj).binary_size
    assert size < search.base_size
    assert size < min(berkeley_size(o).binary_size for o in singles.values())
    # the split costs nothing: every symbol keeps the linkage it had
    assert _linkage(joined) == {k: v for k, v in _linkage(base_ir).items() if k in _linkage(joined)}
    assert set(_linkage(base_ir)) <= set(_linkage(joined))
    assert DifferentialChecker(compiler).check_object(strings, obj, "joined").outcome is Outcome.PASS
    # replaying the record gives the same module
    assert build_function_lists(compiler, strings, record) == joined


@pytest.fixture(scope="module")
def fixed_point(compiler: Compiler) -> Program:
    return compiler.load(EXAMPLES / "fixed_point.c")


def _oz(compiler: Compiler, program: Program) -> int:
    """-Oz's bytes, measured here independently of the selection layer."""
    size = compiler.measure(program, compiler.passes(OZ_PIPELINE)).binary_size
    assert size is not None
    return size


def test_the_gate_checks_every_list_and_the_join(compiler: Compiler, fixed_point: Program) -> None:
    candidates = [compiler.passes(text) for text in CANDIDATES]
    selector = Selector(compiler, make_gate(compiler, ("builtin",), None))
    outcome = tune_function_lists(compiler, fixed_point, FIXED_BASE, candidates, selector)
    assert outcome.record is not None, outcome.detail
    assert outcome.verdict is Verdict.VALIDATED
    # never larger than its baseline: -Oz as the Selector measured it, which is -Oz's size
    assert outcome.oz_size == _oz(compiler, fixed_point)
    assert outcome.size < outcome.base_size < outcome.oz_size
    assert "passed the gate" in outcome.detail and "program's own output" in outcome.detail
    lowered = compiler.lower(build_function_lists(compiler, fixed_point, outcome.record), name="fixed_point")
    assert berkeley_size(lowered).binary_size == outcome.size
    assert FunctionListsOutcome.from_json(json.loads(json.dumps(outcome.to_json()))) == outcome
    # a user check that fails rejects every list: the base list stands
    refusing = Selector(compiler, make_gate(compiler, ("builtin",), "exit 3"))
    refused = tune_function_lists(compiler, fixed_point, FIXED_BASE, candidates, refusing)
    assert refused.record is None and refused.size == refused.base_size
    assert refused.verdict is Verdict.VALIDATION_FAILURE
    assert refused.detail == "every function-level list was rejected"
    assert refused.rejected
    assert all(why.startswith("validation-failure: --check failed") for _, why in refused.rejected)


def test_a_joined_unit_the_gate_rejects_is_not_kept(compiler: Compiler, fixed_point: Program) -> None:
    candidates = [compiler.passes(text) for text in CANDIDATES]
    selector = Selector(compiler, make_gate(compiler, (), REFUSES_JOINS))
    outcome = tune_function_lists(compiler, fixed_point, FIXED_BASE, candidates, selector)
    # every list passed the gate; only the joined object failed it, so the whole-unit list stands
    assert outcome.rejected == ()
    assert outcome.record is None, outcome.detail
    assert outcome.verdict is Verdict.VALIDATION_FAILURE
    assert outcome.size == outcome.base_size
    assert outcome.detail.startswith(
        "the joined unit failed (validation-failure): --check failed: exit status 4"
    )


def test_a_join_is_kept_only_below_the_selectors_oz(
    compiler: Compiler, strings: Program, fixed_point: Program
) -> None:
    unchecked = Selector(compiler, None, Policy(validate=False))
    # After a weak base list the join shrinks the unit, but not below -Oz: not kept.
    candidates = [compiler.passes(text) for text in CANDIDATES]
    outcome = tune_function_lists(compiler, strings, BASE, candidates, unchecked)
    assert outcome.record is None, outcome.detail
    assert outcome.verdict is Verdict.NOT_SMALLER
    assert outcome.oz_size == _oz(compiler, strings) < outcome.base_size
    assert "not smaller than -Oz" in outcome.detail
    # Below -Oz it is kept, built twice to the same bytes but said to be unchecked.
    kept = tune_function_lists(compiler, fixed_point, FIXED_BASE, candidates, unchecked)
    assert kept.record is not None, kept.detail
    assert kept.verdict is Verdict.NOT_CHECKED
    assert kept.detail.startswith("unchecked: validation was turned off")
    assert kept.oz_size is not None and kept.size < kept.base_size < kept.oz_size


def test_a_kept_outcome_passed_and_is_smaller() -> None:
    record = FunctionLists("default<Oz>", (("f", "function(sroa)"),))
    with pytest.raises(ValueError, match="passing verdict"):
        FunctionListsOutcome(record, 90, 100, 3, "", verdict=Verdict.VALIDATION_FAILURE, oz_size=100)
    with pytest.raises(ValueError, match="smaller than"):
        FunctionListsOutcome(record, 95, 100, 3, "", verdict=Verdict.VALIDATED, oz_size=95)
    # a record written before verdicts were says in words whether it was checked
    old = {"record": record.to_json(), "size": 90, "base_size": 100, "compiles": 3, "rejected": []}
    assert FunctionListsOutcome.from_json({**old, "detail": "each ... passed"}).verdict is Verdict.VALIDATED
    unchecked = FunctionListsOutcome.from_json({**old, "detail": "unchecked: validation was turned off"})
    assert unchecked.verdict is Verdict.NOT_CHECKED


def test_which_functions_are_tunable_and_which_names_are_public() -> None:
    ir = "\n".join(
        [
            "@g = global i32 0",
            "@s = internal global i32 0",
            '@.str = private unnamed_addr constant [2 x i8] c"a\\00"',
            "@ext = external global i32",
            "define i32 @f() {",
            "define internal fastcc void @local() {",
            "define linkonce_odr i32 @inline_only() comdat {",
            "define weak void @w() {",
            'define dso_local void @"quoted.name"() {',
        ]
    )
    assert tunable_functions(ir) == ["f", "local", "quoted.name"]
    assert public_names(ir) == ["g", "f", "inline_only", "w", "quoted.name"]


def test_the_record_reads_back() -> None:
    record = FunctionLists("default<Oz>", (("a", "function(sroa)"), ("b", "function(sroa)")))
    assert FunctionLists.from_json(json.loads(json.dumps(record.to_json()))) == record
    assert record.lists == {"function(sroa)": ["a", "b"]}


class OneList(Proposer):
    """Proposes one fixed list: the unit's best list is then known in advance."""

    name = "one list"

    def __init__(self, pipeline: str) -> None:
        self.pipeline = pipeline

    def ask(self, request: ProposalRequest) -> list[PassList]:
        return [parse_pipeline(self.pipeline)] if request.start == 0 else []


def test_the_tuner_reports_and_exports_the_joined_unit(tmp_path: Path, compiler: Compiler) -> None:
    # A list smaller than -Oz on fixed_point.c that leaves room for per-function lists.
    base = "function(dse),cgscc(inline),function(simplifycfg)"
    settings = TuneSettings(
        seed=2, budget=1, minimize=False, broadcast=0, per_function=10, proposer=OneList(base),
        engine=compiler.engine,
    )  # fmt: skip
    specs = list(ProgramSet([str(EXAMPLES / "fixed_point.c")]))
    store = Store(tmp_path / "tune.sqlite")
    try:
        report = Tuner(settings, store, InlineExecutor(), compiler).run(specs)
        (result,) = report.tuned
        final = store.result(result.program_id, "final")
        assert final is not None and final[0] == base == result.best_pipeline
        stored = json.loads(store.result(result.program_id, "functions")[0])  # type: ignore[index]
        assert result.function_lists is not None, stored["detail"]
        assert result.best_size == stored["size"] < final[1]
        assert result.compiles > stored["compiles"] > 10
        assert "passed the gate" in result.validation
        assert stored["verdict"] == "validated" and result.verdict is Verdict.VALIDATED
        assert stored["oz_size"] == result.oz_size
        summary = json.loads(json.dumps(report.summary()))["programs"][0]
        assert summary["function_lists"] == result.function_lists.to_json()
        program = specs[0].load(compiler)
        export_run(tmp_path / "out", report, store, compiler, [program])
        exported = (tmp_path / "out" / "objects" / f"{safe_name(result.program)}.o").read_bytes()
        assert berkeley_size(exported).binary_size == result.best_size
    finally:
        store.close()


def test_the_command_line_refuses_per_function_lists_for_ir_instructions() -> None:
    result = run_cli(
        "tune", str(EXAMPLES / "crc32.c"), "--budget", "2", "--per-function", "4",
        "--objective", "ir-instructions",
    )  # fmt: skip
    assert result.returncode != 0
    assert "--per-function measures functions in bytes" in result.stderr
