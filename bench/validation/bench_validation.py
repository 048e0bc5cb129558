"""PassListEval over random pass lists: rejection rate, outcome mix, lists per minute.

Run: ``.venv/bin/python bench/validation/bench_validation.py [--lists 500] [--seed 1]``.

Draws random lists as the autotuner does (1..50 passes, uniform), checks each on the
bundled suite the way LLM Compiler rejected lists (at the first failing program),
and reports the share rejected (the paper: 9.85% of 1,704,443 distinct lists), the
outcome of each rejection, lists checked per minute on all cores, the time of a
cached verdict, and whether each rejected list's replay command reproduces its
failure.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.passes.sampling import random_pass_list
from llm_compiler.validation.outcomes import Outcome
from llm_compiler.validation.passlisteval import PassListEval, ProgramCheck
from llm_compiler.validation.suites import builtin_suite


def replay_reproduces(evaluator: PassListEval, failure: ProgramCheck) -> bool:
    """Runs the failure's replay command; True when it fails the same way."""
    with tempfile.TemporaryDirectory() as scratch:
        try:
            result = subprocess.run(
                failure.command, shell=True, cwd=scratch, capture_output=True, timeout=600
            )
        except subprocess.TimeoutExpired:
            return False  # the replay command itself must end: it bounds the test run
    if failure.outcome is Outcome.OUTPUT_MISMATCH:
        test = next(t for t in evaluator.programs if t.name == failure.program)
        reference = evaluator._references.get(test.key)
        return reference is not None and result.stdout != reference.stdout
    if failure.outcome is Outcome.TIMEOUT:
        return True  # replaying a hang would hang; the command is still printed
    return result.returncode != 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lists", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    suite = builtin_suite()
    with Compiler() as compiler, tempfile.TemporaryDirectory() as cache:
        evaluator = PassListEval(compiler, [suite], cache_dir=Path(cache), stop_at_first_failure=True)
        warm = time.perf_counter()
        evaluator.check(compiler.passes("module(default<Oz>)"))
        first = time.perf_counter() - warm
        print(f"LLVM {compiler.llvm_version}, {compiler.engine_note}", flush=True)
        print(f"suite builtin: {len(suite.programs)} programs; first check {first:.1f} s", flush=True)
        lists = [random_pass_list(rng, compiler.pass_set) for _ in range(args.lists)]
        started = time.perf_counter()
        rejected = []
        for index, passes in enumerate(lists, 1):
            verdict = evaluator.check(passes)
            if not verdict.passed:
                rejected.append((passes, verdict.failures[0]))
            if index % 50 == 0:
                print(
                    f"  {index} lists, {len(rejected)} rejected, {time.perf_counter() - started:.0f} s",
                    flush=True,
                )
        seconds = time.perf_counter() - started
        cached_start = time.perf_counter()
        evaluator.check(lists[0])
        cached = time.perf_counter() - cached_start
        outcomes = Counter(str(failure.outcome) for _, failure in rejected)
        print(f"lists checked: {len(lists)}; rejected: {len(rejected)} ({len(rejected) / len(lists):.2%}; "
              "LLM Compiler: 9.85%)")  # fmt: skip
        print("outcomes of rejections: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
        print(f"lists per minute: {len(lists) / seconds * 60:.1f}; cached verdict: {cached * 1000:.1f} ms")
        passes_in_rejected = Counter(str(node) for passes, _ in rejected for node in set(passes))
        common = passes_in_rejected.most_common(8)
        print("passes most often in rejected lists: " + ", ".join(f"{name} ({n})" for name, n in common))
        print("replaying the rejections...", flush=True)
        reproduced = sum(replay_reproduces(evaluator, failure) for _, failure in rejected)
        print(f"replay commands that reproduce their failure: {reproduced}/{len(rejected)}")
        evaluator.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
