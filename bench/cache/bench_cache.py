"""The driver's object cache, before and after, at 1 MB, 100 MB and 1 GB: a miss's store and a hit's read.

Run::

    .venv/bin/python bench/cache/bench_cache.py --before HEAD [--sizes 1M,100M,1G] [--samples 50]

``--before`` names the commit whose ``src/llm_compiler/driver/cache.py`` is the "before"
implementation: ``git show REV:...`` is loaded as a module of its own beside the
installed one, so both run in the same process on the same machine. For each size, each
implementation gets a new store in a temporary folder (under ``--scratch``, ``/tmp`` by
default; removed after) bounded at that size and filled up to it with objects of
``--object`` bytes (100K by default) of random bytes; then, alternately, ``--samples``
stores of new objects (each a miss's ``put`` at the bound, so eviction runs) and
``--samples`` reads of entries the store holds (a hit's ``get``, which also marks the
entry used) are timed one by one.

The "after" store is filled through its ``put``, which is what a build does, and the
fill's seconds per store are printed too. The "before" store is filled with the same rows
written straight into its table in one transaction: its ``put`` sums every entry's size,
which at 1 GB would make the fill take most of an hour.

Printed: one Markdown table, per size and implementation the entries, the median and
the slowest of the stores, and the median of the reads, in milliseconds; and the load
average before and after, since the timings are only as quiet as the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from llm_compiler.driver import cache as after_module
from llm_compiler.driver.cache import parse_size
from llm_compiler.toolchain.runner import run_command

#: What a cached unit's log record looks like (its size is what matters here).
RECORD = {
    "source": "src/module/unit.c",
    "output": "build/module/unit.o",
    "cwd": "/home/user/project",
    "llvm": "19.1.7 (/usr/lib/llvm-19/bin)",
    "objective": "binary-size",
    "pipeline": "function(sroa,early-cse,simplifycfg,instcombine),globaldce,default<Oz>",
    "origin": "predicted",
    "reason": "",
    "kept": "chosen",
    "size": 102400,
    "seconds": 1.25,
}


@dataclass(frozen=True)
class Timings:
    """One implementation at one size: what the table shows."""

    entries: int
    put_median: float
    put_slowest: float
    get_median: float
    fill_per_put: float | None


def load_before(revision: str, folder: Path) -> ModuleType:
    """The cache module of ``revision``, as the module ``llm_compiler_cache_before``."""
    text = run_command(["git", "show", f"{revision}:src/llm_compiler/driver/cache.py"], timeout=60).stdout
    path = folder / "llm_compiler_cache_before.py"
    path.write_bytes(text)
    spec = importlib.util.spec_from_file_location("llm_compiler_cache_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def fill_before(module: ModuleType, cache: Any, count: int, size: int) -> list[str]:
    """The first layout's rows written in one transaction (what ``count`` puts would leave)."""
    db = cache._connection()
    keys = [f"fill{number}" for number in range(count)]
    with module._transaction(db):
        for key in keys:
            now = time.time()
            db.execute(
                "INSERT INTO objects VALUES (?, ?, ?, ?, ?, ?)",
                (key, os.urandom(size), size, json.dumps(RECORD), now, now),
            )
    return keys


def measure(module: ModuleType, folder: Path, bound: int, size: int, samples: int, seed: int) -> Timings:
    """Fills a store of ``module`` to ``bound`` and times stores and reads (module docstring)."""
    cache = module.ObjectCache(folder, max_bytes=bound, warn=lambda text: sys.exit(f"the cache: {text}"))
    count = bound // size
    fill_per_put = None
    if module is after_module:
        started = time.perf_counter()
        for number in range(count):
            cache.put(f"fill{number}", os.urandom(size), RECORD)
        fill_per_put = (time.perf_counter() - started) / max(count, 1)
    else:
        fill_before(module, cache, count, size)
    rng = random.Random(seed)
    puts, gets = [], []
    for number in range(samples):
        data = os.urandom(size)
        started = time.perf_counter()
        cache.put(f"new{number}", data, RECORD)
        puts.append(time.perf_counter() - started)
        db = cache._connection()
        held = [key for (key,) in db.execute("SELECT key FROM objects")]
        key = rng.choice(held)
        started = time.perf_counter()
        entry = cache.get(key)
        gets.append(time.perf_counter() - started)
        if entry is None or len(entry.object) != size:
            sys.exit(f"the store lost {key}: its entry is {entry!r:.80}")
    shown = cache.stats()
    if shown.bytes > bound:
        sys.exit(f"the store holds {shown.bytes} bytes, past its bound {bound}")
    cache.close()
    return Timings(shown.entries, statistics.median(puts), max(puts), statistics.median(gets), fill_per_put)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", default="HEAD", help="commit of the implementation before (HEAD)")
    parser.add_argument("--sizes", default="1M,100M,1G", help="the stores' bounds (1M,100M,1G)")
    parser.add_argument("--object", default="100K", help="bytes of each object (100K)")
    parser.add_argument("--samples", type=int, default=50, help="timed stores and reads per store (50)")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp"), help="where the stores are made")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    size = parse_size(args.object)
    bounds = [parse_size(text) for text in args.sizes.split(",")]
    print(f"load average before: {' '.join(f'{load:.2f}' for load in os.getloadavg())}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(dir=args.scratch, prefix="bench-cache-") as scratch:
        before = load_before(args.before, Path(scratch))
        for bound in bounds:
            for name, module in (("before", before), ("after", after_module)):
                folder = Path(scratch) / f"{name}-{bound}"
                started = time.perf_counter()
                timings = measure(module, folder, bound, size, args.samples, args.seed)
                with contextlib.suppress(OSError):
                    shutil.rmtree(folder)
                print(
                    f"  {bound:,} bytes, {name}: {timings} ({time.perf_counter() - started:.0f} s)",
                    flush=True,
                )
                rows.append((bound, name, timings))
    print(f"load average after: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    print()
    print("| bound | code | entries | store, median (ms) | store, slowest (ms) | read, median (ms) |")
    print("| ---: | --- | ---: | ---: | ---: | ---: |")
    for bound, name, timings in rows:
        print(
            f"| {bound / (1 << 20):,.0f} MiB | {name} | {timings.entries:,} | {timings.put_median * 1e3:.2f} "
            f"| {timings.put_slowest * 1e3:.1f} | {timings.get_median * 1e3:.2f} |"
        )
    for bound, _name, timings in rows:
        if timings.fill_per_put is not None:
            per_store = timings.fill_per_put * 1e3
            print(f"fill of {bound / (1 << 20):,.0f} MiB through put: {per_store:.2f} ms per store")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
