"""The selection layer with the real compiler and gate: what it keeps, what it compiles."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import OZ_PIPELINE, Measurement, Program
from llm_compiler.errors import CommandFailed
from llm_compiler.passes.pipeline import PassList
from llm_compiler.selection import Candidate, Gate, Policy, Selector, Verdict, fallback_reason, make_gate
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.validation.gate import GateResult
from llm_compiler.validation.outcomes import Outcome
from tests.conftest import EXAMPLES
from tests.passes.test_versions import NO_FIXPOINT_IR

GOOD = "function(gvn),function(loop(loop-reduce)),module(scc-oz-module-inliner)"
BROKEN = f"module(attributor),{GOOD}"

#: A unit with no main: nothing to run, so only its link and the suites can check it.
LIBRARY = """
static int table[16];
int sum(int n) { int s = 0; for (int i = 0; i < n && i < 16; i++) s += table[i] * i; return s; }
void fill(int v) { for (int i = 0; i < 16; i++) table[i] = v + i; }
"""
#: A list that beats -Oz on LIBRARY (120 bytes against 126 with LLVM 19).
LIBRARY_GOOD = (
    "function(sroa),function(instcombine<no-verify-fixpoint>),function(simplifycfg),module(globalopt)"
)


def _target_compiles(compiler: Compiler, program_id: str) -> int:
    return compiler.counts[f"compiles:{program_id}"]


@pytest.fixture(params=["subprocess", "inprocess"])
def fresh_compiler(toolchain: Toolchain, request: pytest.FixtureRequest) -> Iterator[Compiler]:
    """A compiler of its own: counts start from an empty object cache (the shared one's
    holds what earlier tests compiled)."""
    with Compiler(toolchain, timeout=120, engine=request.param, workers=2) as compiler:
        yield compiler


def test_validating_a_list_compiles_the_target_once(fresh_compiler: Compiler, tmp_path: Path) -> None:
    compiler = fresh_compiler
    source = tmp_path / "library.c"
    source.write_text(LIBRARY)
    program = compiler.load(source)
    selector = Selector(compiler, make_gate(compiler, ["builtin"]))
    before = _target_compiles(compiler, program.id)
    selection = selector.select(program, [Candidate(pipeline=LIBRARY_GOOD, run=LIBRARY_GOOD)])
    assert selection.chosen == LIBRARY_GOOD and selection.validated
    # -Oz (its object kept for the link check), the list's measurement, and one more
    # compile of the list: the determinism check, whose object the link check reuses.
    assert _target_compiles(compiler, program.id) - before == 3


def test_a_runnable_unit_adds_only_its_reference_build(fresh_compiler: Compiler) -> None:
    compiler = fresh_compiler
    program = compiler.load(EXAMPLES / "crc32.c")
    selector = Selector(compiler, make_gate(compiler, ["builtin"]))
    before = _target_compiles(compiler, program.id)
    selection = selector.select(program, [Candidate(pipeline=GOOD, run=GOOD)])
    assert selection.chosen == GOOD and selection.validated and selection.binary_size < selection.oz_size
    # As above, plus the -O0 build whose output the candidate's run is compared with.
    assert _target_compiles(compiler, program.id) - before == 4
    again = selector.select(program, [Candidate(pipeline=GOOD, run=GOOD)])
    assert again.chosen == GOOD  # the gate's verdicts are cached; determinism is checked anew


def test_a_second_compile_started_by_the_caller_is_the_determinism_check(compiler: Compiler) -> None:
    # What Selector.select does with Policy(second_beside=True), at the level of one check.
    program = compiler.load(EXAMPLES / "crc32.c")
    passes = compiler.passes(GOOD)
    selector = Selector(compiler, make_gate(compiler, ["builtin"]))
    _, first = compiler.object_code(program, passes, fresh=True)
    _, second = compiler.object_code(program, passes, fresh=True)
    size, digest = first.binary_size, first.ir_hash
    verdict, _, _, _ = selector.check(program, passes, size, digest, second=lambda: second)
    assert verdict is Verdict.VALIDATED
    # A second compile that gave another object (as opt does on some lists) is not kept.
    other = compiler.measure(program, compiler.passes(OZ_PIPELINE))
    verdict, detail, _, result = selector.check(program, passes, size, digest, second=lambda: other)
    assert verdict is Verdict.NONDETERMINISTIC and result is None and "differ" in detail

    def failed() -> Measurement:
        raise CommandFailed("opt crashed", command=["opt"], returncode=-11, stderr="")

    verdict, _, _, _ = selector.check(program, passes, size, digest, second=failed)
    assert verdict is Verdict.COMPILE_FAILURE


#: How ``cc`` confirms a list chosen for another form of a unit: one candidate, its
#: second compile started beside its measurement and -Oz's, no salvage.
BESIDE = Policy(salvage=False, second_beside=True)


def test_one_candidate_with_its_second_compile_started_beside(
    fresh_compiler: Compiler, tmp_path: Path
) -> None:
    compiler = fresh_compiler
    program = compiler.load(EXAMPLES / "crc32.c")
    gate = make_gate(compiler, [])  # the target's link and its own run
    confirmer = Selector(compiler, gate, BESIDE)
    before = _target_compiles(compiler, program.id)
    selection = confirmer.select(program, [Candidate(pipeline=GOOD, run=GOOD)])
    assert (selection.chosen, selection.fallback, selection.validated) == (GOOD, None, True)
    assert [c.verdict for c in selection.candidates] == [Verdict.VALIDATED]
    assert selection.binary_size < selection.oz_size and "own output" in selection.detail
    # -Oz, the measurement, the second compile (whose object the gate reuses), the -O0 reference.
    assert _target_compiles(compiler, program.id) - before == 4
    # The second compile starts with the measurement, before its size is known: a list
    # that is not smaller than -Oz costs it too, one compile more than without the option.
    for name, policy, compiles in (("plain", Policy(salvage=False), 2), ("beside", BESIDE, 3)):
        (tmp_path / f"{name}.c").write_text(LIBRARY)
        unit = compiler.load(tmp_path / f"{name}.c")
        selection = Selector(compiler, gate, policy).select(
            unit, [Candidate(pipeline="function(sroa)", run="function(sroa)")]
        )
        assert selection.fallback is Verdict.NOT_SMALLER and selection.chosen == OZ_PIPELINE
        assert _target_compiles(compiler, unit.id) == compiles, name


def test_a_second_compile_beside_that_differs_or_fails_keeps_oz(compiler: Compiler, tmp_path: Path) -> None:
    program = compiler.load(EXAMPLES / "crc32.c")
    confirmer = Selector(compiler, make_gate(compiler, []), BESIDE)
    real = compiler.measure(program, compiler.passes(GOOD))

    def misreported(passes: PassList) -> tuple[int | None, str, str]:
        return real.binary_size - 1, real.ir_hash, ""  # a first compile the second cannot repeat

    selection = confirmer.select(program, [Candidate(pipeline=GOOD, run=GOOD)], measure=misreported)
    assert selection.fallback is Verdict.NONDETERMINISTIC and selection.chosen == OZ_PIPELINE
    assert f"{real.binary_size - 1} then {real.binary_size}" in selection.detail
    # opt aborts on this unit with this list: the second compile fails (the first "did not").
    unit = tmp_path / "no_fixpoint.ll"
    unit.write_text(NO_FIXPOINT_IR)
    aborts = "function(instcombine<verify-fixpoint>)"
    selection = confirmer.select(
        compiler.load(unit), [Candidate(pipeline=aborts, run=aborts)], measure=lambda passes: (1, "", "")
    )
    assert selection.fallback is Verdict.COMPILE_FAILURE and "fixpoint" in selection.detail
    assert selection.chosen == OZ_PIPELINE and not selection.validated


def test_an_object_made_by_other_means_is_built_twice_then_gated(compiler: Compiler, tmp_path: Path) -> None:
    source = tmp_path / "library.c"
    source.write_text(LIBRARY)
    program = compiler.load(source)
    selector = Selector(compiler, make_gate(compiler, []), Policy(salvage=False))
    good = compiler.object_code(program, compiler.passes(LIBRARY_GOOD))[0]
    oz = compiler.object_code(program, compiler.passes(OZ_PIPELINE))[0]
    checked = selector.check_object(program, lambda: good, "a joined unit")
    assert (checked.verdict, checked.obj) == (Verdict.VALIDATED, good) and "own link" in checked.detail
    differs = selector.check_object(program, lambda: good, "a joined unit", again=lambda: oz)
    assert (
        differs.verdict is Verdict.NONDETERMINISTIC and "two builds of a joined unit differ" in differs.detail
    )
    calls = program.ir.replace("ret void", "call void @nowhere_defined()\n  ret void", 1)
    unlinkable = compiler.lower(calls + "\ndeclare void @nowhere_defined()\n")
    rejected = selector.check_object(program, lambda: unlinkable, "a joined unit")
    assert rejected.verdict is Verdict.VALIDATION_FAILURE and "nowhere_defined" in rejected.detail
    assert rejected.result is not None and rejected.result.check == "linkage"
    failed = selector.check_object(program, lambda: compiler.lower("not IR"), "a joined unit")
    assert failed.verdict is Verdict.COMPILE_FAILURE and failed.obj == b""
    unchecked = Selector(compiler, None, Policy(validate=False)).check_object(program, lambda: good, "x")
    assert unchecked.verdict is Verdict.NOT_CHECKED and "unchecked" in unchecked.detail


def test_lists_with_the_optimized_ir_of_a_rejected_one_are_not_checked(compiler: Compiler) -> None:
    program = compiler.load(EXAMPLES / "crc32.c")
    broken = compiler.measure(program, compiler.passes(BROKEN))
    selector = Selector(compiler, make_gate(compiler, ["builtin"]), Policy(salvage=False))
    candidates = [
        Candidate.measured(BROKEN, broken.binary_size, broken.ir_hash),
        # Another spelling whose optimized IR a search measured as the same.
        Candidate.measured(f"{BROKEN},function(gvn)", broken.binary_size, broken.ir_hash),
    ]
    selection = selector.select(program, candidates, oz_size=broken.binary_size + 1)
    first, second = selection.candidates
    assert first.verdict is Verdict.VALIDATION_FAILURE
    assert second.verdict is Verdict.SAME_AS_REJECTED and BROKEN in second.detail
    assert selection.chosen == OZ_PIPELINE and selection.fallback is Verdict.VALIDATION_FAILURE
    assert selection.rejected_lists == 1


def test_a_larger_list_keeps_oz_and_says_so(compiler: Compiler) -> None:
    program = compiler.load(EXAMPLES / "crc32.c")
    selector = Selector(compiler, make_gate(compiler, ["builtin"]))
    selection = selector.select(program, [Candidate(pipeline="function(sroa)", run="function(sroa)")])
    assert selection.chosen == OZ_PIPELINE and selection.binary_size == selection.oz_size
    assert selection.fallback is Verdict.NOT_SMALLER and "-Oz" in selection.detail


def test_validation_off_keeps_the_smallest_and_says_it_is_unchecked(compiler: Compiler) -> None:
    program = compiler.load(EXAMPLES / "crc32.c")
    selector = Selector(compiler, None, Policy(validate=False))
    selection = selector.select(program, [Candidate(pipeline=BROKEN, run=BROKEN)])
    assert selection.chosen == BROKEN and not selection.validated and "unchecked" in selection.detail
    with pytest.raises(ValueError, match="needs a gate"):
        Selector(compiler, None)


def test_verdict_labels_are_closed_and_old_spellings_read() -> None:
    assert Verdict.parse("compile-fail") is Verdict.COMPILE_FAILURE
    assert Verdict.parse("parse-failure") is Verdict.PARSE_ERROR
    assert Verdict.NONDETERMINISTIC.is_failure and not Verdict.VALIDATED.is_failure
    with pytest.raises(ValueError, match="unknown verdict 'maybe'"):
        Verdict.parse("maybe")
    assert fallback_reason([]) == (
        Verdict.ALREADY_OPTIMAL,
        "no list was proposed: none is expected to beat -Oz",
    )


class _BusyGate:
    """The real gate, but every suite check times out twice (a machine too busy to run it)."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self.checked: list[str] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.gate, name)

    def check(self, program: Program, passes: PassList) -> GateResult:
        self.checked.append(passes.pipeline)
        return GateResult(False, Outcome.TIMEOUT, "ran past its time limit twice", "suite", transient=True)


def test_a_rejection_by_a_timeout_is_not_salvaged_and_marks_the_selection_transient(
    fresh_compiler: Compiler, tmp_path: Path
) -> None:
    compiler = fresh_compiler
    source = tmp_path / "library.c"
    source.write_text(LIBRARY)
    program = compiler.load(source)
    busy = _BusyGate(make_gate(compiler, ["builtin"]))
    selector = Selector(compiler, cast(Gate, busy))
    selection = selector.select(program, [Candidate(pipeline=LIBRARY_GOOD, run=LIBRARY_GOOD)])
    assert selection.fallback is Verdict.VALIDATION_FAILURE and selection.chosen == OZ_PIPELINE
    assert selection.transient and selection.candidates[0].transient
    assert busy.checked == [LIBRARY_GOOD]  # no pass blamed, no repaired list checked
    quiet = Selector(compiler, make_gate(compiler, ["builtin"])).select(
        program, [Candidate(pipeline=LIBRARY_GOOD, run=LIBRARY_GOOD)]
    )
    assert quiet.validated and not quiet.transient
