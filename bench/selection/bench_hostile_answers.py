"""1,000 hostile model answers through the one path: crashes, results above -Oz, verdicts.

Run: ``.venv/bin/python bench/selection/bench_hostile_answers.py [--answers 1000]``.
Answers are drawn by ``tests/selection/hostile.py`` (malformed, over-long, unknown and
renamed passes, option and shell injection, nested junk, another LLVM's names, empty,
binary), one to three per unit decision, and replayed through ``ModelOptimizer`` (what
``optimize`` and ``evaluate`` run) on ``examples/crc32.c`` with the full gate (the
bundled suites). It prints how many answers were fed, how many raised, how many results
were larger than -Oz (both must be 0) and the verdicts.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.selection.hostile import hostile_answers  # noqa: E402

from llm_compiler.core.compiler import Compiler  # noqa: E402
from llm_compiler.models.optimize import ModelOptimizer, OptimizeSettings  # noqa: E402
from llm_compiler.models.registry import load_model  # noqa: E402
from llm_compiler.selection import make_gate  # noqa: E402
from llm_compiler.tasks.prompts import flag_tuning_prompt  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--answers", type=int, default=1000, help="answers to feed (default: 1000)")
    args = parser.parse_args(argv)
    stats: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    failures: list[str] = []
    start = time.monotonic()
    with Compiler() as compiler, tempfile.TemporaryDirectory() as scratch:
        program = compiler.load(ROOT / "examples" / "crc32.c")
        prompt = flag_tuning_prompt(program.ir)
        oz = compiler.measure_oz(program).binary_size
        gate = make_gate(compiler, ["builtin"])

        @settings(
            max_examples=args.answers * 4,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(answers=st.lists(hostile_answers(), min_size=1, max_size=3))
        def feed(answers: list[str]) -> None:
            if stats["answers"] >= args.answers:
                return
            answers = answers[: args.answers - stats["answers"]]
            replay = Path(scratch) / "answers.jsonl"
            replay.write_text(json.dumps({"prompt": prompt, "completions": answers}) + "\n")
            temperature = 0.8 if len(answers) > 1 else 0.0
            optimizer = ModelOptimizer(
                compiler,
                load_model(f"replay:{replay}"),
                gate,
                OptimizeSettings(samples=len(answers), temperature=temperature),
            )
            stats["answers"] += len(answers)
            stats["decisions"] += 1
            try:
                [proposal] = optimizer.propose([program])
                result = optimizer.decide(program.name, program, proposal)
            except Exception as error:
                stats["crashes"] += 1
                failures.append(f"{type(error).__name__}: {error}"[:300])
                return
            if result.binary_size > oz:
                stats["larger-than-oz"] += 1
            stats["kept"] += result.fallback is None
            for candidate in result.candidates[: len(answers)]:
                verdicts[candidate.verdict.value] += 1

        feed()
    seconds = time.monotonic() - start
    print(f"LLVM {compiler.llvm_version}; examples/crc32.c, -Oz {oz} bytes; gate: builtin suites")
    print(f"answers fed: {stats['answers']} in {stats['decisions']} decisions, {seconds:.0f} s")
    print(f"crashes: {stats['crashes']}; results larger than -Oz: {stats['larger-than-oz']}")
    print(f"units where a list was kept (validated): {stats['kept']}")
    print("verdicts of the answers: " + ", ".join(f"{k} {v}" for k, v in verdicts.most_common()))
    for failure in failures[:10]:
        print("  crash:", failure)
    return 1 if stats["crashes"] or stats["larger-than-oz"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
