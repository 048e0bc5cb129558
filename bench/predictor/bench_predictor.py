"""The shipped predictor's costs, side by side: loading, features, ranking, and one compile.

Run: ``.venv/bin/python bench/predictor/bench_predictor.py [--repeats 20]``

Measured in one run on the bundled examples:

* the shipped ranker file's size;
* loading it in a fresh interpreter (``python -c``: importing the predictor, numpy
  included, and reading the file), beside a fresh interpreter that only imports
  ``llm_compiler`` (the floor every command pays);
* computing a unit's IR features, ranking the candidates from them, and measuring one
  pass list on the same unit (what each of the k candidates costs afterwards; each
  timed compile uses another candidate, so none repeats an earlier one).

Printed as milliseconds and as ratios: ranking is to be a small fraction of one compile.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from llm_compiler.core.compiler import Compiler  # noqa: E402
from llm_compiler.predictor.features import ir_features  # noqa: E402
from llm_compiler.predictor.ranker import load  # noqa: E402
from llm_compiler.predictor.shipped import ranker_file  # noqa: E402

LOAD = (
    "import time; t = time.perf_counter(); from pathlib import Path; "
    "from llm_compiler.predictor.ranker import load; "
    "from llm_compiler.predictor.shipped import shipped_ranker; "
    "load(shipped_ranker(19)); print(time.perf_counter() - t)"
)
FLOOR = "import time; t = time.perf_counter(); import llm_compiler; print(time.perf_counter() - t)"


def _in_fresh_interpreter(code: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        times.append(float(output.stdout))
    return statistics.median(times)


def _median_ms(function: object, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    compiler = Compiler(workers=1)
    path = ranker_file(compiler)
    load_s = _in_fresh_interpreter(LOAD, max(3, args.repeats // 4))
    floor_s = _in_fresh_interpreter(FLOOR, max(3, args.repeats // 4))
    ranker = load(path, compiler)
    print(
        f"shipped ranker: {path.stat().st_size:,} bytes, {len(ranker.pipelines)} candidates, "
        f"{ranker.manifest.get('training', {}).get('units')} training units, model "
        f"{type(ranker.model).__name__}"
    )
    print(
        f"load in a fresh interpreter: {1000 * load_s:.0f} ms (import llm_compiler alone: "
        f"{1000 * floor_s:.0f} ms)"
    )
    print("| unit | IR lines | features ms | rank ms | one compile ms | rank / compile |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for source in sorted((ROOT / "examples").glob("*.c*")):
        program = compiler.load(source)
        features = ir_features(program.ir)
        lists = iter([compiler.passes(pipeline) for pipeline in ranker.pipelines])
        feature_ms = _median_ms(lambda: ir_features(program.ir), args.repeats)  # noqa: B023
        rank_ms = _median_ms(lambda: ranker.order(features), args.repeats)  # noqa: B023
        # Each compile with another candidate: none is a repeat the engine could have kept.
        compile_ms = _median_ms(lambda: compiler.measure(program, next(lists)), args.repeats)  # noqa: B023
        ratio = (feature_ms + rank_ms) / compile_ms
        print(
            f"| {source.name} | {program.ir.count(chr(10)):,} | {feature_ms:.2f} | {rank_ms:.2f} | "
            f"{compile_ms:.1f} | {ratio:.3f} |"
        )
    compiler.close()


if __name__ == "__main__":
    main()
