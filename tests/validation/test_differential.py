"""The differential run check on real programs: passes, miscompiles, link and compile failures."""

from __future__ import annotations

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.validation.checker import INLINE_ONLY_NOTE
from llm_compiler.validation.differential import DifferentialChecker, is_runnable
from llm_compiler.validation.outcomes import Outcome


def test_outcomes_know_whether_they_fail() -> None:
    assert not Outcome.PASS.is_failure and not Outcome.UNSUPPORTED.is_failure
    failures = {o for o in Outcome if o.is_failure}
    assert failures == {
        Outcome.COMPILE_FAIL,
        Outcome.LINK_FAIL,
        Outcome.RUNTIME_FAIL,
        Outcome.OUTPUT_MISMATCH,
        Outcome.TIMEOUT,
    }
    assert str(Outcome.LINK_FAIL) == "link-fail"


def test_sound_lists_pass(compiler: Compiler, example_programs: dict[str, Program]) -> None:
    checker = DifferentialChecker(compiler)
    for name in ("crc32.c", "shapes.cpp"):
        result = checker.check(example_programs[name], compiler.passes("module(default<Oz>)"))
        assert result.outcome is Outcome.PASS, result.detail


def test_known_llvm_19_miscompile_is_caught(compiler: Compiler, example_programs: dict[str, Program]) -> None:
    # attributor-cgscc alone makes shapes.cpp crash at run time with LLVM 19.1.7.
    if not compiler.llvm_version.startswith("19."):
        pytest.skip("the miscompile was observed with LLVM 19")
    result = DifferentialChecker(compiler).check(
        example_programs["shapes.cpp"], compiler.passes("cgscc(attributor-cgscc)")
    )
    assert result.outcome is Outcome.RUNTIME_FAIL
    assert "killed by signal 11 (SIGSEGV)" in result.detail and result.program.endswith("shapes.cpp")


def test_missing_inline_only_bodies_are_a_link_failure(
    compiler: Compiler, example_programs: dict[str, Program]
) -> None:
    # elim-avail-extern without an inliner drops libstdc++'s inline-only bodies.
    result = DifferentialChecker(compiler).check(
        example_programs["word_count.cpp"], compiler.passes("module(elim-avail-extern)")
    )
    assert result.outcome is Outcome.LINK_FAIL
    assert "_M_use_local_data" in result.detail and result.detail.endswith(INLINE_ONLY_NOTE)


def test_compiler_crash_is_a_compile_failure(
    toolchain: Toolchain, example_programs: dict[str, Program]
) -> None:
    crashing = Compiler(toolchain, allow_extra=["trigger-crash-module"])
    result = DifferentialChecker(crashing).check(
        example_programs["crc32.c"], crashing.passes("module(trigger-crash-module)")
    )
    assert result.outcome is Outcome.COMPILE_FAIL and "crashed" in result.detail


def test_changed_output_is_a_mismatch(compiler: Compiler, write) -> None:  # type: ignore[no-untyped-def]
    # Signed overflow is undefined: the -O0 build wraps and prints 0, while instcombine
    # folds `x + 1 > x` to true under nsw and the optimized build prints 1.
    source = write(
        "overflow.c",
        "#include <limits.h>\n#include <stdio.h>\n"
        "static int grows(int x) { return x + 1 > x; }\n"
        'int main(void) { volatile int big = INT_MAX; printf("%d\\n", grows(big)); return 0; }\n',
    )
    result = DifferentialChecker(compiler).check(
        compiler.load(source), compiler.passes("module(default<Oz>)")
    )
    assert result.outcome is Outcome.OUTPUT_MISMATCH
    assert "b'1\\n'" in result.detail and "reference b'0\\n'" in result.detail


def test_programs_without_main_are_unsupported(compiler: Compiler, write) -> None:  # type: ignore[no-untyped-def]
    program = compiler.load(write("lib.c", "int twice(int v) { return 2 * v; }\n"))
    assert not is_runnable(program)
    result = DifferentialChecker(compiler).check(program, compiler.passes("module(default<Oz>)"))
    assert result.outcome is Outcome.UNSUPPORTED and not result.outcome.is_failure


def test_a_nonzero_exit_unlike_the_reference_is_a_runtime_failure(compiler: Compiler, write) -> None:  # type: ignore[no-untyped-def]
    # Signed overflow is undefined: the -O0 build wraps and exits 0; the optimized build
    # folds `x + 1 > x` to true and exits 1, a plain exit (not a signal).
    source = write(
        "status.c",
        "#include <limits.h>\nstatic int grows(int x) { return x + 1 > x; }\n"
        "int main(void) { volatile int big = INT_MAX; return grows(big); }\n",
    )
    program = compiler.load(source)
    result = DifferentialChecker(compiler).check(program, compiler.passes("module(default<Oz>)"))
    assert result.outcome is Outcome.RUNTIME_FAIL
    assert result.detail == "exit status 1, reference 0"


def test_a_hanging_reference_makes_the_program_unsupported(compiler: Compiler, write) -> None:  # type: ignore[no-untyped-def]
    source = write("spin.c", "int main(void) { volatile unsigned x = 0; for (;;) x++; }\n")
    checker = DifferentialChecker(compiler, run_timeout=1.0)
    result = checker.check(compiler.load(source), compiler.passes("module(default<Oz>)"))
    assert result.outcome is Outcome.UNSUPPORTED
    assert result.detail.startswith("reference build failed: the program ran past its limits")
