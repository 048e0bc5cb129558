"""Evaluations per second with and without code generation (``--objective ir-instructions``).

Run, on the corpus's larger test units::

    LLVM_BIN=/usr/lib/llvm-19/bin .venv/bin/python bench/engine/bench_ir_count.py \\
        --programs 'corpus:/work/corpus?split=test&kind=unit' --min-oz-size 1001 --units 30 --lists 20

For each unit, ``--lists`` lists of random search (seeded, as ``tune --search random``
draws them) are evaluated twice, side by side: a full measurement (``opt``, then code
generation and the object's sizes, what a ``binary-size`` search pays for each new
list) and an IR count (``opt``, then counting the optimized IR, what an
``ir-instructions`` search pays). Both go through the same in-process workers, one
list at a time, alternating, so both see the same machine. Printed: lists per second of
each, their ratio, and how often the two orderings agree (the fraction of list pairs of a
unit that IR count and binary size rank the same way), and how many lists gave two
different IR counts in their two runs (``opt`` is not deterministic on every list).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
import time
from pathlib import Path

from llm_compiler.autotune.random_search import RandomSearch
from llm_compiler.core.compiler import Compiler
from llm_compiler.corpus.program_set import ProgramSet
from llm_compiler.errors import CommandFailed
from llm_compiler.passes.safety import search_pass_set
from llm_compiler.selection.proposer import ProposalRequest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "autotune"))
from bench_autotune import oz_sizes


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--programs", nargs="+", required=True, help="program-set specs")
    parser.add_argument("--min-oz-size", type=int, default=1, help="only units whose -Oz size is at least N")
    parser.add_argument("--units", type=int, default=30)
    parser.add_argument("--lists", type=int, default=20, help="random lists per unit")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    sources = list(ProgramSet(args.programs))
    sizes = oz_sizes(args.programs)
    sources = [s for s in sources if sizes.get(s.unit_id or "", 0) >= args.min_oz_size]
    sources.sort(key=lambda s: hashlib.sha256(s.key().encode()).hexdigest())
    sources = sources[: args.units]
    measure_seconds = count_seconds = 0.0
    evaluated = agree = pairs = differing = 0
    with Compiler(workers=1) as compiler:
        pass_set = search_pass_set(compiler.toolchain)
        search = RandomSearch(args.seed)
        for source in sources:
            program = source.load(compiler)
            lists = search.ask(ProposalRequest(program, pass_set, 1, args.lists))
            figures = []
            for passes in lists:
                try:
                    started = time.perf_counter()
                    measured = compiler.compile(program, passes, fresh=True).measurement
                    middle = time.perf_counter()
                    counted = compiler.count(program, passes)
                    ended = time.perf_counter()
                except CommandFailed:
                    continue
                # opt itself is not deterministic on some lists (attributor-light, mergefunc,
                # iroutliner...): two runs of one list may differ; counted, not compared.
                differing += counted.ir_instructions != measured.ir_instructions
                measure_seconds += middle - started
                count_seconds += ended - middle
                evaluated += 1
                figures.append((measured.binary_size, counted.ir_instructions))
            for (bytes_a, count_a), (bytes_b, count_b) in itertools.combinations(figures, 2):
                if bytes_a != bytes_b and count_a != count_b:
                    pairs += 1
                    agree += (bytes_a < bytes_b) == (count_a < count_b)
        print(
            json.dumps(
                {
                    "llvm": compiler.llvm_version,
                    "engine": compiler.engine_note,
                    "units": len(sources),
                    "lists": evaluated,
                    "measure_per_second": evaluated / measure_seconds,
                    "count_per_second": evaluated / count_seconds,
                    "speedup": measure_seconds / count_seconds,
                    "same_order": agree / pairs if pairs else None,
                    "pairs": pairs,
                    "lists_whose_two_runs_differed": differing,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
