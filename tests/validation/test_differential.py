"""The differential run check on real programs: passes, miscompiles, link and compile failures."""

from __future__ import annotations

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.validation.checker import INLINE_ONLY_NOTE
from llm_compiler.validation.differential import DifferentialChecker, is_runnable
from llm_compiler.validation.outcomes import Outcome
from llm_compiler.validation.sandbox import Limits


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


SLEEPS_A_SECOND = (
    "#include <stdio.h>\n#include <time.h>\nint main(void) {\n"
    '  struct timespec t = {1, 0};\n  nanosleep(&t, 0);\n  puts("woke");\n  return 0;\n}\n'
)
#: Second tries get RETRY_FACTOR times these (0.6 s): still too short for a 1 s sleep.
TIGHT = Limits(timeout=0.2, cpu_seconds=1)
ROOMY = Limits(timeout=30.0, cpu_seconds=30)


def test_a_reference_that_times_out_is_a_timeout_and_not_remembered(compiler: Compiler, write) -> None:  # type: ignore[no-untyped-def]
    program = compiler.load(write("sleepy.c", SLEEPS_A_SECOND))
    oz = compiler.passes("module(default<Oz>)")
    checker = DifferentialChecker(compiler, limits=TIGHT)
    busy = checker.check(program, oz)
    # not UNSUPPORTED, which would let the list pass without its run being checked
    assert busy.outcome is Outcome.TIMEOUT and busy.transient, busy.detail
    assert busy.detail.startswith(
        "the -O0 reference: the program ran past its limits twice (0.2 s, then 0.6 s)"
    )
    # the same checker, with room to run (a quieter machine): the reference is run again
    checker.checker.limits = checker.checker.retry_limits = ROOMY
    quiet = checker.check(program, oz)
    assert quiet.outcome is Outcome.PASS and not quiet.transient, quiet.detail


def test_a_link_past_its_time_limit_is_a_timeout_not_a_link_failure(
    compiler: Compiler, example_programs: dict[str, Program]
) -> None:
    program, oz = example_programs["crc32.c"], compiler.passes("module(default<Oz>)")
    checker = DifferentialChecker(compiler)
    checker.checker.link_timeout = 0.001  # too short twice, however quiet the machine
    reference = checker.check(program, oz)
    assert reference.outcome is Outcome.TIMEOUT and reference.transient, reference.detail
    assert reference.detail.startswith("the -O0 reference: the link ran past its time limit twice")
    checker.checker.link_timeout = compiler.timeout
    assert checker.check(program, oz).outcome is Outcome.PASS  # the reference was not remembered
    checker.checker.link_timeout = 0.001
    candidate = checker.check(program, oz)
    assert candidate.outcome is Outcome.TIMEOUT and candidate.transient, candidate.detail
    assert candidate.detail.startswith("the link ran past its time limit twice (0.001 s, then 0.003 s)")
    # a link that fails within its limit is still a link failure, and no timeout
    checker.checker.link_timeout = compiler.timeout
    unlinkable = checker.check(
        example_programs["word_count.cpp"], compiler.passes("module(elim-avail-extern)")
    )
    assert unlinkable.outcome is Outcome.LINK_FAIL and not unlinkable.transient
