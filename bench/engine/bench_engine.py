"""Compiles per second of the ways to evaluate a pass list, measured side by side.

Run: ``.venv/bin/python bench/engine/bench_engine.py [--lists N] [--functions N]``.

All figures come from one run on the same inputs and pass lists, one evaluation at
a time (one worker), so they are ratios of per-compile cost:

(a) the paper's command-line pipeline: ``opt -passes=P in.ll -o out.bc``, then
    ``clang -c -O2 -Xclang -disable-llvm-passes out.bc`` (the code generator, no IR
    passes), then ``llvm-size``, through files;
(b) llm-compiler's subprocess engine (``opt | llc`` through pipes, sizes read from the
    ELF in memory);
(c) the in-process engine (LLVM-C in a worker), without its memo of measured IR, so
    that every evaluation does the whole work;
(d) redundant pass elimination of random 30-pass lists run stepwise in-process, with
    and without the prefix states and the measurement memo (the results must be
    identical), on function modules and two of the units.

The physical limit is the time LLVM itself spends running the passes and generating
the object inside the worker; the in-process overhead is wall time over that time.

Inputs: function-sized modules (``llvm-extract`` of the bundled examples) and the
largest bundled translation units.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from llm_compiler.autotune.minimize import eliminate_redundant
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.corpus.functions import extract_function
from llm_compiler.errors import CommandFailed
from llm_compiler.passes.pipeline import PassList
from llm_compiler.passes.sampling import random_pass_list
from llm_compiler.toolchain.ir import defined_functions
from llm_compiler.toolchain.runner import run_command

ROOT = Path(__file__).resolve().parents[2]
LARGE_UNITS = ("shapes.cpp", "word_count.cpp", "fixed_point.c", "strings.c")


def command_line(compiler: Compiler, program: Program, pipeline: str, scratch: Path) -> None:
    source, bitcode, obj = scratch / "in.ll", scratch / "out.bc", scratch / "out.o"
    source.write_text(program.ir)
    tool = compiler.toolchain.tool
    run_command([tool("opt"), f"-passes={pipeline}", source, "-o", bitcode], timeout=300)
    run_command(
        [tool("clang"), "-c", "-O2", "-Xclang", "-disable-llvm-passes", bitcode, "-o", obj], timeout=300
    )
    run_command([tool("llvm-size"), obj], timeout=60)


def timed(work: Callable[[], object], repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        work()
    return time.perf_counter() - started


def rates(
    label: str, programs: list[Program], lists: list[PassList], subprocess: Compiler, inprocess: Compiler
) -> dict[str, float]:
    jobs = [(program, passes) for program in programs for passes in lists]
    ok_jobs = []
    for program, passes in jobs:
        try:
            subprocess.measure(program, passes)
            ok_jobs.append((program, passes))
        except CommandFailed:
            pass
    for program in programs:  # warm the workers: programs parsed, library loaded
        inprocess.measure(program)
    llvm_seconds = 0.0
    with tempfile.TemporaryDirectory() as scratch:
        a = timed(lambda: [command_line(subprocess, p, str(ps), Path(scratch)) for p, ps in ok_jobs], 1)
    b = timed(lambda: [subprocess.measure(p, ps) for p, ps in ok_jobs], 1)
    started = time.perf_counter()
    for program, passes in ok_jobs:
        evaluation = inprocess.pool.evaluate(
            program.id, program.ir, str(passes), subject=program.name, replay=[], use_cache=False
        )
        llvm_seconds += evaluation.llvm_seconds
    c = time.perf_counter() - started
    n = len(ok_jobs)
    print(f"\n{label}: {len(programs)} modules x {len(lists)} lists = {n} compiles")
    print(f"  (a) command line (opt, clang -c, llvm-size): {n / a:8.1f} compiles/s")
    print(f"  (b) subprocess engine:                        {n / b:8.1f} compiles/s  ({a / b:.2f}x of a)")
    print(f"  (c) in-process engine:                        {n / c:8.1f} compiles/s  ({a / c:.2f}x of a)")
    print(f"  LLVM's own pass + codegen time:               {n / llvm_seconds:8.1f} compiles/s")
    print(f"  in-process overhead over LLVM's own time:     {c / llvm_seconds:.2f}x")
    return {"a": n / a, "b": n / b, "c": n / c, "overhead": c / llvm_seconds}


def minimization(programs: list[Program], inprocess: Compiler, seed: int, length: int) -> None:
    rng = random.Random(seed)
    totals = {True: 0.0, False: 0.0}
    evaluations = {True: 0, False: 0}
    for program in programs:
        start = list(random_pass_list(rng, inprocess.pass_set, length))
        results = {}
        for use_cache in (False, True):

            def cost(nodes, use_cache=use_cache, program=program):  # type: ignore[no-untyped-def]
                evaluations[use_cache] += 1
                if not nodes:
                    return inprocess.measure(program).binary_size
                try:
                    return inprocess.measure_stepwise(
                        program, PassList(nodes), use_cache=use_cache
                    ).binary_size
                except CommandFailed:
                    return float("inf")

            started = time.perf_counter()
            results[use_cache] = eliminate_redundant(start, cost)
            totals[use_cache] += time.perf_counter() - started
        assert results[True] == results[False], f"prefix states changed the result on {program.name}"
    print(f"\n(d) redundant pass elimination of random {length}-pass lists on {len(programs)} modules")
    print(f"  without prefix states: {totals[False]:7.1f} s ({evaluations[False]} evaluations)")
    print(f"  with prefix states:    {totals[True]:7.1f} s ({evaluations[True]} evaluations)")
    print(f"  speed-up: {totals[False] / totals[True]:.2f}x, identical minimized lists: yes")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lists", type=int, default=6, help="random pass lists per module (plus -Oz)")
    parser.add_argument("--functions", type=int, default=24, help="function-sized modules")
    parser.add_argument("--minimize", type=int, default=10, help="function modules minimized in (d)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    with (
        Compiler(engine="subprocess") as subprocess,
        Compiler(engine="inprocess", workers=1) as inprocess,
    ):
        print(f"LLVM {subprocess.llvm_version}; {inprocess.engine_note}")
        units = [subprocess.load(ROOT / "examples" / name) for name in LARGE_UNITS]
        functions = [extract_function(subprocess, unit, name)
                     for unit in [subprocess.load(p) for p in sorted((ROOT / "examples").glob("*.c*"))]
                     for name in defined_functions(unit.ir)]  # fmt: skip
        functions = rng.sample(functions, min(args.functions, len(functions)))
        lists = [subprocess.passes("module(default<Oz>)")]
        lists += [random_pass_list(rng, subprocess.pass_set) for _ in range(args.lists)]
        sizes = [p.ir.count("\n") for p in functions]
        print(f"function modules: median {statistics.median(sizes):.0f} IR lines; large units: "
              + ", ".join(f"{Path(u.name).name} {u.ir.count(chr(10))} lines" for u in units))  # fmt: skip
        rates("function-sized modules", functions, lists, subprocess, inprocess)
        rates("large translation units", units, lists, subprocess, inprocess)
        minimization([*functions[: args.minimize], *units[2:]], inprocess, args.seed, 30)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
