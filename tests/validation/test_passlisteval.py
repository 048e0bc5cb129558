"""PassListEval on the real toolchain: verdicts, unsafe lists, replays, reproducers, suites."""

from __future__ import annotations

import gzip
import json
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.validation.gate import Gate, load_suites
from llm_compiler.validation.outcomes import Outcome
from llm_compiler.validation.passlisteval import CACHE_FORMAT, PassListEval
from llm_compiler.validation.reduce import write_reproducer
from llm_compiler.validation.sandbox import Limits
from llm_compiler.validation.suites import Suite, TestProgram, builtin_suite, humaneval_x_suite
from tests.conftest import run_cli

UNSAFE = "module(internalize),module(globaldce)"


def test_the_builtin_suite_is_large_and_says_what_it_exercises() -> None:
    suite = builtin_suite()
    assert len(suite.programs) >= 120
    assert {program.language for program in suite.programs} == {"c", "c++"}
    assert all(program.exercises for program in suite.programs), "every program states what it exercises"
    assert all("abort" in program.source and "main" in program.source for program in suite.programs)
    assert len({program.name for program in suite.programs}) == len(suite.programs)


@pytest.mark.slow
@pytest.mark.parametrize("pipeline", ["default<Oz>", "default<O2>"])
def test_default_pipelines_pass_every_program(pipeline: str) -> None:
    result = run_cli("validate", "--passes", pipeline, "--json")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    verdict = json.loads(result.stdout)
    assert verdict["passed"] and verdict["failures"] == []
    assert verdict["outcomes"] == {"pass": len(builtin_suite().programs)}
    assert set(verdict) >= {"pipeline", "passed", "outcomes", "failures"}


@pytest.mark.slow
def test_an_unsafe_list_is_rejected_naming_the_program(tmp_path: Path) -> None:
    refused = run_cli("validate", "--passes", UNSAFE)
    assert refused.returncode == 2 and "internalize" in refused.stderr
    result = run_cli("validate", "--passes", UNSAFE, "--allow-unsafe-passes", "--json", "--first-failure")
    assert result.returncode == 1, result.stderr
    verdict = json.loads(result.stdout)
    assert not verdict["passed"]
    failure = verdict["failures"][0]
    assert failure["outcome"] == "link-fail" and failure["program"] in {
        p.name for p in builtin_suite().programs
    }
    replay = subprocess.run(failure["command"], shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert replay.returncode != 0 and "undefined symbol: main" in replay.stderr


def test_outcomes_and_cached_verdicts(unsafe_compiler: Compiler, tmp_path: Path) -> None:
    suite = Suite("few", builtin_suite().programs[:4])
    evaluator = PassListEval(unsafe_compiler, [suite], cache_dir=tmp_path)
    try:
        good = evaluator.check(unsafe_compiler.passes("module(default<Oz>)"))
        assert good.passed and good.outcomes == {"pass": 4} and not good.cached
        again = evaluator.check(unsafe_compiler.passes("module(default<Oz>)"))
        assert again.cached and again.passed == good.passed and again.outcomes == good.outcomes
        crash = evaluator.check(unsafe_compiler.passes("module(trigger-crash-module)"))
        assert crash.outcomes == {"compile-fail": 4}
        assert "crashed" in crash.failures[0].detail and crash.failures[0].command
    finally:
        evaluator.close()


def test_a_reproducer_is_minimal_and_replays(unsafe_compiler: Compiler, tmp_path: Path) -> None:
    suite = Suite("one", builtin_suite().programs[:1])
    evaluator = PassListEval(unsafe_compiler, [suite], cache_dir=tmp_path / "cache")
    try:
        passes = unsafe_compiler.passes("function(sroa),module(trigger-crash-module),function(instsimplify)")
        verdict = evaluator.check(passes)
        folder = write_reproducer(evaluator, verdict.failures[0], passes, tmp_path / "repro")
    finally:
        evaluator.close()
    assert (folder / "passes.txt").read_text().strip() == "module(trigger-crash-module)"
    original = (folder / "program.ll").read_text()
    reduced = (folder / "reduced.ll").read_text()
    assert len(reduced) < len(original) / 2
    replay = subprocess.run(["sh", str(folder / "replay.sh")], cwd=folder, capture_output=True, text=True)
    assert replay.returncode != 0 and "trigger-crash-module" in replay.stderr
    assert "compile-fail" in (folder / "README.md").read_text()


def test_miscompiles_are_caught_as_runtime_or_output_failures(compiler: Compiler, tmp_path: Path) -> None:
    overflow = TestProgram(
        "overflow",
        "c",
        "// exercises: signed overflow folded under nsw\n#include <limits.h>\n#include <stdio.h>\n"
        "static int grows(int x) { return x + 1 > x; }\n"
        'int main(void) { volatile int big = INT_MAX; printf("%d\\n", grows(big)); return 0; }\n',
        "signed overflow",
        "made",
    )
    evaluator = PassListEval(compiler, [Suite("made", (overflow,))], cache_dir=tmp_path)
    try:
        # The -O2 reference folds the comparison to 1; without optimization it wraps to 0.
        verdict = evaluator.check(compiler.passes("module(default<O0>)"))
    finally:
        evaluator.close()
    assert verdict.outcomes == {"output-mismatch": 1}
    assert "reference b'1\\n'" in verdict.failures[0].detail


def test_humaneval_x_files_load_as_a_suite(compiler: Compiler, tmp_path: Path) -> None:
    records = [
        {
            "task_id": "CPP/0",
            "prompt": "#include <vector>\nusing namespace std;\nint total(vector<int> v){\n",
            "canonical_solution": "    int s = 0;\n    for (int x : v) s += x;\n    return s;\n}\n",
            "test": "#undef NDEBUG\n#include <assert.h>\nint main(){ assert(total({1,2,3}) == 6); }\n",
        },
        {
            "task_id": "CPP/1",
            "declaration": "#include <string>\nusing namespace std;\nbool odd(int n){\n",
            "canonical_solution": "    return n % 2 != 0;\n}\n",
            "test": "#undef NDEBUG\n#include <assert.h>\nint main(){ assert(odd(3)); assert(!odd(4)); }\n",
        },
    ]
    path = tmp_path / "humaneval_cpp.jsonl.gz"
    with gzip.open(path, "wt") as stream:
        stream.write("\n".join(json.dumps(record) for record in records) + "\n")
    suite = humaneval_x_suite(path)
    assert [p.name for p in suite.programs] == ["CPP_0", "CPP_1"]
    evaluator = PassListEval(compiler, [suite], cache_dir=tmp_path / "cache")
    try:
        assert evaluator.check(compiler.passes("module(default<Oz>)")).outcomes == {"pass": 2}
    finally:
        evaluator.close()
    (tmp_path / "bad.jsonl").write_text('{"task_id": "x"}\n')
    with pytest.raises(Exception, match="canonical_solution"):
        humaneval_x_suite(tmp_path / "bad.jsonl")


@pytest.mark.slow
def test_csmith_programs_are_generated_once_and_pass_oz(compiler: Compiler, tmp_path: Path) -> None:
    suites = load_suites(["csmith:3"], compiler, cache_dir=tmp_path)
    assert 1 <= len(suites[0].programs) <= 3
    again = load_suites(["csmith:3"], compiler, cache_dir=tmp_path)
    assert again[0].version == suites[0].version
    evaluator = PassListEval(compiler, suites, cache_dir=tmp_path)
    try:
        verdict = evaluator.check(compiler.passes("module(default<Oz>)"))
    finally:
        evaluator.close()
    assert verdict.passed, verdict.failures


def test_the_gate_says_when_only_the_suites_could_check(compiler: Compiler, write, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    library = compiler.load(write("lib.c", "int twice(int v) { return 2 * v; }\n"))
    gate = Gate(compiler, [Suite("few", builtin_suite().programs[:3])], cache_dir=tmp_path)
    result = gate.check(library, compiler.passes("module(default<Oz>)"))
    assert result.passed and result.outcome is Outcome.PASS
    assert "only the bundled suites" in result.description
    checked = Gate(
        compiler, [], user_check='test -s "$LLM_COMPILER_OBJECT" && test -n "$LLM_COMPILER_PASSES"'
    )
    assert checked.check(library, compiler.passes("module(default<Oz>)")).passed
    failing = Gate(compiler, [], user_check="exit 3")
    assert not failing.check(library, compiler.passes("module(default<Oz>)")).passed


def test_the_verdict_store_waits_for_another_process_switching_it_to_wal(tmp_path: Path) -> None:
    import sqlite3
    import threading

    from llm_compiler.files import enable_wal

    path = tmp_path / "store.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("CREATE TABLE held (x)")
    waiting = sqlite3.connect(path, isolation_level=None, timeout=0.01)
    timer = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    timer.start()
    try:
        enable_wal(waiting, seconds=30)
    finally:
        timer.join()
    assert waiting.execute("PRAGMA journal_mode").fetchone() == ("wal",)


# Timeouts: a busy machine must not decide a verdict that is kept ---------------------

#: Sleeps 1.5 s only where signed overflow wraps (``default<O0>``); the -O2 reference
#: folds the comparison and does not sleep. Both print the same line.
SLOW_UNOPTIMIZED = TestProgram(
    "slow_unoptimized",
    "c",
    "// exercises: a run slower than its limit only when not optimized\n#include <limits.h>\n"
    "#include <stdio.h>\n#include <time.h>\nstatic int grows(int x) { return x + 1 > x; }\n"
    "int main(void) {\n  volatile int big = INT_MAX;\n"
    "  if (!grows(big)) { struct timespec t = {1, 500000000}; nanosleep(&t, 0); }\n"
    '  puts("done");\n  return 0;\n}\n',
    "a slow run",
    "slow",
)
#: Sleeps 1.5 s however it is built, the -O2 reference included.
SLOW_ALWAYS = TestProgram(
    "slow_always",
    "c",
    "// exercises: a run slower than its limit\n#include <stdio.h>\n#include <time.h>\n"
    'int main(void) {\n  struct timespec t = {1, 500000000};\n  nanosleep(&t, 0);\n  puts("done");\n'
    "  return 0;\n}\n",
    "a slow run",
    "slow",
)
#: Second tries get 3 times these (0.9 s): still too short for a 1.5 s sleep.
TIGHT = Limits(timeout=0.3, cpu_seconds=1)
GENEROUS_RETRY = Limits(timeout=30.0, cpu_seconds=30)


def stored(cache_dir: Path, compiler: Compiler) -> dict[str, list[tuple[object, ...]]]:
    """The rows of the verdict store's tables."""
    database = sqlite3.connect(cache_dir / compiler.llvm_version / f"cache-{CACHE_FORMAT}.sqlite")
    try:
        return {
            "runs": database.execute("SELECT key, ir_hash, returncode, timed_out FROM runs").fetchall(),
            "verdicts": database.execute("SELECT key FROM verdicts").fetchall(),
        }
    finally:
        database.close()


def test_a_list_that_times_out_twice_is_rejected_and_stored_nowhere(
    unsafe_compiler: Compiler, tmp_path: Path
) -> None:
    o0 = unsafe_compiler.passes("module(default<O0>)")
    evaluator = PassListEval(
        unsafe_compiler, [Suite("slow", (SLOW_UNOPTIMIZED,))], limits=TIGHT, cache_dir=tmp_path
    )
    try:
        verdict = evaluator.check(o0)
        again = evaluator.check(o0)  # the same evaluator checks again: nothing kept in memory either
    finally:
        evaluator.close()
    assert not verdict.passed and verdict.outcomes == {"timeout": 1}
    rows = stored(tmp_path, unsafe_compiler)
    assert rows["verdicts"] == [], "a verdict resting on a timeout is stored nowhere"
    # only the quick -O2 reference run is kept, never the timed-out one
    assert len(rows["runs"]) == 1 and rows["runs"][0][2:] == (0, 0)
    assert not again.cached and again.outcomes == {"timeout": 1}
    assert verdict.transient and "twice (0.3 s, then 0.9 s)" in verdict.failures[0].detail


def test_a_later_check_on_the_same_store_does_not_recall_a_timeout(
    unsafe_compiler: Compiler, tmp_path: Path
) -> None:
    o0 = unsafe_compiler.passes("module(default<O0>)")
    suite = Suite("slow", (SLOW_UNOPTIMIZED,))
    busy = PassListEval(unsafe_compiler, [suite], limits=TIGHT, cache_dir=tmp_path)
    try:
        assert busy.check(o0).outcomes == {"timeout": 1}
    finally:
        busy.close()
    quiet = PassListEval(unsafe_compiler, [suite], cache_dir=tmp_path)  # the default limits (10 s)
    try:
        later = quiet.check(o0)
    finally:
        quiet.close()
    assert later.passed and not later.cached and later.outcomes == {"pass": 1}


def test_a_run_that_times_out_once_passes_on_its_longer_second_try(
    unsafe_compiler: Compiler, tmp_path: Path
) -> None:
    suite = Suite("slow", (SLOW_UNOPTIMIZED,))
    evaluator = PassListEval(
        unsafe_compiler, [suite], limits=TIGHT, retry_limits=GENEROUS_RETRY, cache_dir=tmp_path
    )
    try:
        verdict = evaluator.check(unsafe_compiler.passes("module(default<O0>)"))
    finally:
        evaluator.close()
    assert verdict.passed and verdict.outcomes == {"pass": 1} and not verdict.transient
    rows = stored(tmp_path, unsafe_compiler)
    # a pass on the second try is a real pass, stored as one: the reference's run and this one
    assert len(rows["verdicts"]) == 1
    assert sorted(row[2:] for row in rows["runs"]) == [(0, 0), (0, 0)]


def test_a_reference_run_that_times_out_is_a_timeout_kept_nowhere(
    unsafe_compiler: Compiler, tmp_path: Path
) -> None:
    suite = Suite("slow", (SLOW_ALWAYS,))
    oz = unsafe_compiler.passes("module(default<Oz>)")
    evaluator = PassListEval(unsafe_compiler, [suite], limits=TIGHT, cache_dir=tmp_path)
    try:
        verdict = evaluator.check(oz)
    finally:
        evaluator.close()
    # not "unsupported" (which would pass the list unchecked), and not kept
    assert verdict.outcomes == {"timeout": 1} and verdict.transient
    assert "reference" in verdict.failures[0].detail
    rows = stored(tmp_path, unsafe_compiler)
    assert rows["runs"] == [] and rows["verdicts"] == []
    quiet = PassListEval(unsafe_compiler, [suite], cache_dir=tmp_path)
    try:
        assert quiet.check(oz).outcomes == {"pass": 1}
    finally:
        quiet.close()


def test_the_gate_says_a_rejection_rests_on_a_timeout(
    unsafe_compiler: Compiler, write: Callable[[str, str], Path], tmp_path: Path
) -> None:
    library = unsafe_compiler.load(write("lib.c", "int twice(int v) { return 2 * v; }\n"))
    o0 = unsafe_compiler.passes("module(default<O0>)")

    def gate_of(*programs: TestProgram) -> Gate:
        gate = Gate(unsafe_compiler, [Suite("slow", programs)], cache_dir=tmp_path)
        assert gate.evaluator is not None
        gate.evaluator.close()
        gate.evaluator = PassListEval(
            unsafe_compiler,
            [Suite("slow", programs)],
            limits=TIGHT,
            cache_dir=tmp_path,
            stop_on_link_failure=False,
        )
        return gate

    timed_out = gate_of(SLOW_UNOPTIMIZED).check(library, o0)
    assert not timed_out.passed and timed_out.check == "suite" and timed_out.transient
    assert timed_out.outcome is Outcome.TIMEOUT and "not kept" in timed_out.description
    # a real miscompile beside the timeout decides: the rejection is not transient
    overflow = TestProgram(
        "overflow",
        "c",
        "// exercises: signed overflow folded under nsw\n#include <limits.h>\n#include <stdio.h>\n"
        "static int grows(int x) { return x + 1 > x; }\n"
        'int main(void) { volatile int big = INT_MAX; printf("%d\\n", grows(big)); return 0; }\n',
        "signed overflow",
        "slow",
    )
    both = gate_of(SLOW_UNOPTIMIZED, overflow).check(library, o0)
    assert not both.passed and not both.transient and both.outcome is Outcome.OUTPUT_MISMATCH
