"""Verdicts reused by optimized-IR hash: hit rate and lists checked per minute, side by side.

Run: ``.venv/bin/python bench/validation/bench_verdict_reuse.py [--lists 200] [--seed 1]``.

The same stream of lists is checked by two PassListEval evaluators on the bundled
suite, alternately, each with its own empty cache, the way ``tune``'s gate checks them
(stop at the first miscompile, go on past link failures):

* **before**: every program is linked and run unless the very same optimized IR was
  run before (the run cache of earlier versions); link failures are linked again;
  programs are checked in suite order;
* **after**: link failures are kept by the hash of the optimized IR beside the runs,
  so any later list that builds the same IR is judged without a link or a run;
  programs that failed before go first.

The lists are what validation sees: half short lists of 1 to 5 passes (minimized
lists are 3 to 4 passes long), half random lists of 1 to 50 passes, drawn from the
safe search set. Reported per mode: lists per minute, and for "after" the share of
program checks answered from earlier verdicts. Both modes must reach the same
verdicts; the script says so.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.passes.safety import search_pass_set
from llm_compiler.passes.sampling import random_pass_list
from llm_compiler.validation.passlisteval import PassListEval
from llm_compiler.validation.suites import builtin_suite


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lists", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    suite = builtin_suite()
    with Compiler() as compiler, tempfile.TemporaryDirectory() as scratch:
        pass_set = search_pass_set(compiler.toolchain)
        lists = [random_pass_list(rng, pass_set, 5 if index % 2 else 50) for index in range(args.lists)]
        modes = {}
        for name, reuse in (("before", False), ("after", True)):
            modes[name] = PassListEval(
                compiler,
                [suite],
                cache_dir=Path(scratch) / name,
                stop_at_first_failure=True,
                stop_on_link_failure=False,
                reuse_checks=reuse,
            )
        for evaluator in modes.values():  # references and front-end IR, outside the timing
            evaluator.check(compiler.passes("default<Oz>"))
            evaluator.stats.checks = evaluator.stats.reused = 0
        seconds = dict.fromkeys(modes, 0.0)
        agree = 0
        print(
            f"LLVM {compiler.llvm_version}, {compiler.engine_note}; {len(suite.programs)} programs",
            flush=True,
        )
        for index, passes in enumerate(lists, 1):
            verdicts = {}
            for name, evaluator in modes.items():
                started = time.perf_counter()
                verdicts[name] = evaluator.check(passes)
                seconds[name] += time.perf_counter() - started
            agree += bool(verdicts["before"].miscompiles) == bool(verdicts["after"].miscompiles)
            if index % 50 == 0:
                print(
                    f"  {index} lists: " + ", ".join(f"{n} {s:.0f} s" for n, s in seconds.items()), flush=True
                )
        print("| mode | lists per minute | program checks | reused by IR hash |")
        print("| --- | ---: | ---: | ---: |")
        for name, evaluator in modes.items():
            stats = evaluator.stats
            print(
                f"| {name} | {len(lists) / seconds[name] * 60:.1f} | {stats.checks} | {stats.hit_rate:.1%} |"
            )
        speedup = seconds["before"] / seconds["after"]
        print(f"speed-up: {speedup:.2f}x; same miscompile verdict: {agree}/{len(lists)}")
        for evaluator in modes.values():
            evaluator.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
