"""Writes the verdicts shipped for one LLVM build (``llm_compiler.validation.shipped``).

Run on a machine with the LLVM build the file is for (Debian 12's ``clang-19`` or
``clang-22`` packages), from the checkout::

    .venv/bin/python scripts/ship-verdicts.py --llvm-bin /usr/lib/llvm-19/bin
    .venv/bin/python scripts/ship-verdicts.py --llvm-bin /usr/lib/llvm-22/bin

Every list of that major's shipped ranker is checked by the gate's PassListEval on the
built-in suite (never from a cache), and the file is written after each list, so a run
stopped midway goes on where it stopped. A verdict that rests on a timeout is left out:
run the script again (on a quieter machine) to check those lists again.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from llm_compiler.core.compiler import Compiler
from llm_compiler.predictor.shipped import shipped_ranker
from llm_compiler.toolchain.llvm import find_toolchain
from llm_compiler.validation import shipped
from llm_compiler.validation.gate import Gate, load_suites


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--llvm-bin", help="the LLVM's bin folder (default: the newest found)")
    parser.add_argument("--jobs", type=int, default=2, help="suite programs checked at once (default 2)")
    parser.add_argument("--redo", action="store_true", help="check every list again")
    args = parser.parse_args(argv)
    toolchain = find_toolchain(args.llvm_bin)
    pipelines = json.loads(shipped_ranker(toolchain.major).read_text())["pipelines"]
    path = shipped.shipped_file(toolchain.major)
    with Compiler(toolchain, workers=args.jobs) as compiler:
        gate = Gate(compiler, load_suites(["builtin"], compiler))
        assert gate.evaluator is not None
        started = time.monotonic()
        counts = shipped.write(gate.evaluator, pipelines, path, redo=args.redo)
        gate.evaluator.close()
    print(
        f"LLVM {toolchain.version}: {len(pipelines)} lists, {counts} in {time.monotonic() - started:.0f} s "
        f"-> {path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
