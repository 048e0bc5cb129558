"""The build-and-run checker on the real toolchain: runs, link failures, hangs, one link line."""

from __future__ import annotations

import shlex
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.validation.checker import INLINE_ONLY_NOTE, RETRY_FACTOR, Checker, LinkFailure
from llm_compiler.validation.differential import DifferentialChecker
from llm_compiler.validation.passlisteval import PassListEval
from llm_compiler.validation.sandbox import Limits, RunResult
from llm_compiler.validation.suites import Suite, builtin_suite


def object_of(compiler: Compiler, source: Path) -> bytes:
    obj = compiler.compile(compiler.load(source), compiler.passes("module(default<O2>)"), ("obj",)).obj
    assert obj is not None
    return obj


def checker_of(compiler: Compiler, limits: Limits | None = None) -> Checker:
    return Checker(compiler.toolchain, link_timeout=compiler.timeout, limits=limits)


def test_a_good_object_links_and_runs(compiler: Compiler, write) -> None:  # type: ignore[no-untyped-def]
    source = write(
        "hello.c",
        "#include <math.h>\n#include <stdio.h>\nint main(int argc, char **argv) {\n"
        '  volatile double two = 2.0;\n  printf("hello %d\\n", (int)sqrt(two * 8.0) * 10 + argc);\n'
        "  return 3;\n}\n",
    )
    result = checker_of(compiler).link_and_run(object_of(compiler, source), subject="hello.c")
    assert isinstance(result, RunResult), result
    assert result.stdout == b"hello 41\n"
    assert result.returncode == 3 and not result.timed_out and result.killed_by is None


def test_an_undefined_symbol_is_a_link_failure_naming_it(compiler: Compiler, write) -> None:  # type: ignore[no-untyped-def]
    source = write(
        "missing.c",
        "extern int not_defined_anywhere(int);\nint main(void) { return not_defined_anywhere(1); }\n",
    )
    checker = checker_of(compiler)
    result = checker.link_and_run(object_of(compiler, source), subject="missing.c")
    assert isinstance(result, LinkFailure), result
    assert result.undefined_symbols == ("not_defined_anywhere",)
    assert "not_defined_anywhere" in result.detail
    # the failure names the link line that ran, which is the one the checker exposes
    assert checker.link_line in result.detail
    # a C function missing is not the inline-only library case
    assert INLINE_ONLY_NOTE not in result.detail


def test_dropped_inline_only_library_bodies_say_so(compiler: Compiler, example_programs) -> None:  # type: ignore[no-untyped-def]
    # elim-avail-extern without an inliner drops libstdc++'s inline-only bodies.
    program = example_programs["word_count.cpp"]
    obj = compiler.compile(program, compiler.passes("module(elim-avail-extern)"), ("obj",)).obj
    assert obj is not None
    result = checker_of(compiler).link_and_run(obj, subject=program.name)
    assert isinstance(result, LinkFailure), result
    assert any("_M_use_local_data" in symbol for symbol in result.undefined_symbols)
    assert result.detail.endswith(INLINE_ONLY_NOTE)


def test_a_program_that_loops_forever_times_out(compiler: Compiler, write) -> None:  # type: ignore[no-untyped-def]
    source = write("spin.c", "int main(void) { volatile unsigned x = 0; for (;;) x++; }\n")
    checker = checker_of(compiler, Limits(timeout=1.0, cpu_seconds=30))
    result = checker.link_and_run(object_of(compiler, source), subject="spin.c")
    assert isinstance(result, RunResult), result
    assert result.timed_out and result.returncode != 0


def test_the_link_line_is_one_and_the_same_for_both_callers(compiler: Compiler, tmp_path: Path) -> None:
    differential = DifferentialChecker(compiler)
    command = differential.checker.link_command
    assert Path(command[0]).name == "clang++"
    assert "-no-pie" in command and command[-3:] == ("-lm", "-o", "program")
    assert ("-fuse-ld=lld" in command) == (compiler.toolchain.bin_dir / "ld.lld").exists()
    test = builtin_suite().programs[0]
    evaluator = PassListEval(compiler, [Suite("one", (test,))], cache_dir=tmp_path)
    try:
        steps = evaluator.replay_command(test, "default<Oz>").split(" && ")
    finally:
        evaluator.close()
    assert steps[3] == differential.checker.link_line == shlex.join(command)
    assert evaluator.checker.link_command == command
    # the replay links the object its llc step wrote and runs what the link made
    assert shlex.split(steps[2])[-1] == "program.o" and "program.o" in command
    assert steps[4].endswith("./program")


SLEEPS_HALF_A_SECOND = (
    "#include <stdio.h>\n#include <time.h>\nint main(void) {\n"
    '  struct timespec t = {0, 500000000};\n  nanosleep(&t, 0);\n  puts("woke");\n  return 0;\n}\n'
)


def test_a_run_past_its_limits_is_tried_once_more_with_longer_ones(compiler: Compiler, write) -> None:  # type: ignore[no-untyped-def]
    obj = object_of(compiler, write("sleepy.c", SLEEPS_HALF_A_SECOND))
    tight = Limits(timeout=0.2, cpu_seconds=1)
    roomy = Checker(
        compiler.toolchain, link_timeout=compiler.timeout, limits=tight, retry_limits=Limits(timeout=30.0)
    )
    result = roomy.link_and_run(obj, subject="sleepy.c")
    assert isinstance(result, RunResult), result
    assert not result.timed_out and result.returncode == 0 and result.stdout == b"woke\n"
    short = Checker(
        compiler.toolchain, link_timeout=compiler.timeout, limits=tight, retry_limits=Limits(timeout=0.25)
    )
    again = short.link_and_run(obj, subject="sleepy.c")
    assert isinstance(again, RunResult) and again.timed_out
    # by default the second try has RETRY_FACTOR times the wall-clock and CPU time
    default = checker_of(compiler, Limits(timeout=2.0, cpu_seconds=4)).retry_limits
    assert (default.timeout, default.cpu_seconds) == (2.0 * RETRY_FACTOR, 4 * RETRY_FACTOR)


def test_a_link_past_its_time_limit_twice_says_it_timed_out(compiler: Compiler, write) -> None:  # type: ignore[no-untyped-def]
    obj = object_of(compiler, write("sleepy.c", SLEEPS_HALF_A_SECOND))
    result = Checker(compiler.toolchain, link_timeout=0.001).link_and_run(obj, subject="sleepy.c")
    assert isinstance(result, LinkFailure), result
    assert result.timed_out and result.undefined_symbols == ()
    # an ordinary link failure is no timeout
    missing = object_of(
        compiler, write("missing.c", "extern int gone(void);\nint main(void) { return gone(); }\n")
    )
    failure = checker_of(compiler).link_and_run(missing, subject="missing.c")
    assert isinstance(failure, LinkFailure) and not failure.timed_out
