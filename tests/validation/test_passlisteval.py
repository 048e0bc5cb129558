"""PassListEval on the real toolchain: verdicts, unsafe lists, replays, reproducers, suites."""

from __future__ import annotations

import gzip
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.passes.registry import load_registry
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.validation.gate import Gate, load_suites
from llm_compiler.validation.outcomes import Outcome
from llm_compiler.validation.passlisteval import PassListEval
from llm_compiler.validation.reduce import write_reproducer
from llm_compiler.validation.suites import Suite, TestProgram, builtin_suite, humaneval_x_suite
from tests.conftest import run_cli

UNSAFE = "module(internalize),module(globaldce)"


@pytest.fixture(scope="module")
def unsafe_compiler(toolchain: Toolchain) -> Iterator[Compiler]:
    names = sorted({entry.name for entry in load_registry(toolchain).entries if entry.kind == "pass"})
    with Compiler(toolchain, allow_extra=names, workers=2) as compiler:
        yield compiler


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

    from llm_compiler.validation.passlisteval import _enable_wal

    path = tmp_path / "store.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("CREATE TABLE held (x)")
    waiting = sqlite3.connect(path, isolation_level=None, timeout=0.01)
    timer = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    timer.start()
    try:
        _enable_wal(waiting, seconds=30)
    finally:
        timer.join()
    assert waiting.execute("PRAGMA journal_mode").fetchone() == ("wal",)
