"""The gate judges the target: link failures count where they can happen; salvage; reused checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.validation.checker import LinkFailure
from llm_compiler.validation.gate import Gate
from llm_compiler.validation.linkage import (
    LinkageCheck,
    declared_symbols,
    runtime_exports,
    target_language,
)
from llm_compiler.validation.outcomes import Outcome
from llm_compiler.validation.passlisteval import PassListEval
from llm_compiler.validation.salvage import Salvager
from llm_compiler.validation.suites import Suite, builtin_suite
from tests.conftest import EXAMPLES

#: Without an inliner, libstdc++'s inline-only string bodies are dropped and their
#: calls kept: C++ programs that use std::string fail to link.
NO_INLINER = "module(globaldce)"
#: The libstdc++ function the link then misses (GCC 12's headers).
INLINE_ONLY = "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE17_M_use_local_dataEv"


def _suite(*names: str) -> Suite:
    return Suite("builtin", tuple(p for p in builtin_suite().programs if p.name in names))


@pytest.fixture(scope="module")
def inprocess(toolchain: Toolchain) -> Iterator[Compiler]:
    with Compiler(toolchain, engine="inprocess", workers=2) as compiler:
        yield compiler


def test_the_runtime_libraries_are_read_from_elf_files(toolchain: Toolchain) -> None:
    c_exports = runtime_exports(toolchain, "c")
    cxx_exports = runtime_exports(toolchain, "c++")
    assert {"printf", "memmove", "sqrt", "__udivti3"} <= c_exports  # libc (an IFUNC), libm, libgcc
    assert "_ZSt9terminatev" in cxx_exports and "_ZSt9terminatev" not in c_exports
    assert INLINE_ONLY not in cxx_exports


def test_the_runtime_exports_are_remembered_until_a_library_changes(
    toolchain: Toolchain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    runtime_exports.cache_clear()
    real = runtime_exports(toolchain, "c")
    (memo,) = (tmp_path / "llm-compiler" / "runtime-exports").iterdir()
    record = json.loads(memo.read_text())
    assert set(record["exports"]) == real and any("libc.so" in entry[0] for entry in record["libraries"])
    memo.write_text(json.dumps({**record, "exports": ["only_this"]}))
    runtime_exports.cache_clear()
    assert runtime_exports(toolchain, "c") == {"only_this"}  # read from the memo, not the libraries
    record["libraries"][0][2] += 1  # a library's modification time: an upgraded C library
    memo.write_text(json.dumps({**record, "exports": ["only_this"]}))
    runtime_exports.cache_clear()
    assert runtime_exports(toolchain, "c") == real
    runtime_exports.cache_clear()


def test_declarations_are_the_targets_own_references(inprocess: Compiler) -> None:
    program = inprocess.load(EXAMPLES / "word_count.cpp")
    declared = declared_symbols(program.ir)
    assert INLINE_ONLY not in declared  # an available_externally body, not a declaration
    assert not any(name.startswith("llvm.") for name in declared)
    assert target_language(inprocess.load_ir(program.ir)) == "c++"
    assert target_language(inprocess.load_ir(inprocess.load(EXAMPLES / "crc32.c").ir)) == "c"


def test_a_c_target_is_not_rejected_for_a_cxx_only_link_failure(inprocess: Compiler) -> None:
    suite = _suite("cpp_exc_std", "c_core_rec_tail", "c_core_loop_prefix")
    passes = inprocess.passes(NO_INLINER)
    # What rejected the list before: the suite's C++ program does not link with it...
    verdict = PassListEval(inprocess, [suite]).check(passes)
    assert [f.program for f in verdict.failures] == ["cpp_exc_std"]
    assert verdict.failures[0].outcome is Outcome.LINK_FAIL and not verdict.miscompiles
    gate = Gate(inprocess, [suite])
    # ...which cannot happen to a C unit: the list passes for it,
    c_result = gate.check(inprocess.load(EXAMPLES / "crc32.c"), passes)
    assert c_result.passed, c_result.description
    assert "link failures of cpp_exc_std do not apply" in c_result.description
    # and is still rejected for a C++ target that would fail to link, naming the symbol.
    cxx_result = gate.check(inprocess.load(EXAMPLES / "word_count.cpp"), passes)
    assert not cxx_result.passed
    assert cxx_result.check == "linkage" and cxx_result.outcome is Outcome.LINK_FAIL
    assert INLINE_ONLY in cxx_result.description
    assert "llvm-nm" in cxx_result.command and NO_INLINER in cxx_result.command


def test_the_linkage_rule_agrees_with_the_real_link(inprocess: Compiler) -> None:
    """What the check says of a runnable target matches what the real link does."""
    check = LinkageCheck(inprocess)
    checker = Gate(inprocess, [_suite("c_core_loop_prefix")]).differential.checker
    verdicts = []
    for name in ("word_count.cpp", "shapes.cpp", "strings.c"):
        program = inprocess.load(EXAMPLES / name)
        for pipeline in (NO_INLINER, "default<Oz>", "function(sroa),cgscc(inline)"):
            passes = inprocess.passes(pipeline)
            obj, _ = inprocess.object_code(program, passes)
            linked = not isinstance(checker.link_and_run(obj, subject=name), LinkFailure)
            assert check.check(program, passes).passed == linked, (name, pipeline)
            verdicts.append(linked)
    assert not all(verdicts) and any(verdicts)


def test_a_miscompile_still_rejects_a_list_for_every_target(inprocess: Compiler) -> None:
    gate = Gate(inprocess, [_suite("c_core_rec_tail")])
    result = gate.check(inprocess.load(EXAMPLES / "crc32.c"), inprocess.passes("module(attributor)"))
    assert not result.passed and result.check == "suite"
    assert result.failure is not None and result.failure.program == "c_core_rec_tail"
    assert "opt" in result.command


def test_salvage_blames_the_breaking_pass_and_repairs_the_list(inprocess: Compiler) -> None:
    gate = Gate(inprocess, [_suite("c_core_rec_tail")])
    salvager = Salvager(gate)
    program = inprocess.load(EXAMPLES / "crc32.c")
    passes = inprocess.passes("function(sroa),module(attributor),function(instcombine<no-verify-fixpoint>)")
    result = gate.check(program, passes)
    assert not result.passed
    culprits = salvager.culprits(program, passes, result)
    assert culprits == ("module(attributor)",)
    repairs = salvager.repairs(passes, culprits)
    assert [str(r) for r in repairs] == ["function(sroa),function(instcombine<no-verify-fixpoint>)"]
    assert gate.check(program, repairs[0]).passed
    # Blame found on a suite program is the list's: reused for another target.
    other = inprocess.load(EXAMPLES / "bitops.c")
    assert salvager.culprits(other, passes, gate.check(other, passes)) == culprits


def test_a_rejection_by_a_timeout_blames_no_pass(inprocess: Compiler) -> None:
    gate = Gate(inprocess, [_suite("c_core_rec_tail")])
    program = inprocess.load(EXAMPLES / "crc32.c")
    passes = inprocess.passes("function(sroa),module(attributor),function(instcombine<no-verify-fixpoint>)")
    failed = gate.check(program, passes)
    assert not failed.passed and Salvager(gate).culprits(program, passes, failed)  # a real miscompile
    # The same list rejected by a timeout alone (a busy machine): nothing is narrowed down.
    timed_out = replace(failed, outcome=Outcome.TIMEOUT, transient=True)
    assert Salvager(gate).culprits(program, passes, timed_out) == ()


def test_linkage_failures_are_narrowed_down_too(inprocess: Compiler) -> None:
    gate = Gate(inprocess, [_suite("c_core_loop_prefix")])
    program = inprocess.load(EXAMPLES / "word_count.cpp")
    passes = inprocess.passes(f"function(sroa),{NO_INLINER},cgscc(inline)")
    assert gate.check(program, passes).passed  # the inliner runs: nothing is left to resolve
    passes = inprocess.passes(f"function(sroa),{NO_INLINER},function(early-cse)")
    result = gate.check(program, passes)
    assert result.check == "linkage"
    culprits = Salvager(gate).culprits(program, passes, result)
    # Any list without an inliner leaves the call: one pass alone is enough to fail.
    assert len(culprits) == 1 and not gate.linkage.check(program, inprocess.passes(culprits[0])).passed


def test_checks_are_reused_by_optimized_ir(toolchain: Toolchain, tmp_path: Path) -> None:
    with Compiler(toolchain, engine="inprocess", workers=2) as fresh:
        _check_reuse(fresh, tmp_path)


def _check_reuse(inprocess: Compiler, tmp_path: Path) -> None:
    # A fresh compiler: in one that compiled other lists before, the IR of a program after
    # the second list has been seen to differ (in some clones), which defeats the reuse.
    suite = _suite("c_core_rec_tail", "c_core_loop_prefix", "cpp_exc_std")
    evaluator = PassListEval(inprocess, [suite], cache_dir=tmp_path)
    first = evaluator.check(inprocess.passes(NO_INLINER))
    assert evaluator.stats.checks == 3 and evaluator.stats.reused == 0
    # The same IR for every program (globaldce then a pass with nothing to do):
    # no link, no run, and the link failure is remembered too.
    second = evaluator.check(inprocess.passes(f"{NO_INLINER},module(globaldce)"))
    assert evaluator.stats.checks == 6 and evaluator.stats.reused == 3
    assert second.outcomes == first.outcomes
    assert second.failures[0].command and "module(globaldce),module(globaldce)" in second.failures[0].command
    # Across runs: a new evaluator reads the same cache.
    again = PassListEval(inprocess, [suite], cache_dir=tmp_path)
    again.check(inprocess.passes(f"{NO_INLINER},module(globaldce),module(globaldce)"))
    assert again.stats.reused == 3
