"""How many times validation compiles the target per checked list, counted.

Run: ``.venv/bin/python bench/selection/bench_validation_compiles.py [--units N]``.
It optimizes the bundled examples (runnable) and function modules extracted from them
(not runnable) with the built-in predictor, as ``optimize`` does, and counts every
compile the engine makes, by program: those of the unit itself made while one list is
being validated (the determinism check and the gate: link check, the unit's own run,
the user's check), those of suite programs, and all of the unit's compiles.

It uses only APIs older versions have too, so the same file measures a checkout before
the selection layer (``PYTHONPATH=OLD/src``) and after it, side by side.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.corpus.program_set import ProgramSource

try:  # the selection layer's registry
    from llm_compiler.models.proposed import proposer_optimizer as make_optimizer
except ImportError:  # before it
    from llm_compiler.predictor.proposer import predictor_optimizer as make_optimizer  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[2]


def function_modules(compiler: Compiler, work: Path, count: int) -> list[Path]:
    """Up to ``count`` single-function modules (no main) from the examples."""
    extract = str(compiler.toolchain.tool("llvm-extract"))
    found: list[Path] = []
    for source in sorted((ROOT / "examples").glob("*.c*")):
        ir = compiler.load(source).ir
        unit = work / f"{source.name}.ll"
        unit.write_text(ir)
        for name in re.findall(r'^define [^@]*@("?[^"(]+"?)\(', ir, flags=re.MULTILINE):
            name = name.strip('"')
            if name == "main" or len(found) >= count:
                continue
            target = work / f"{source.name}.{len(found):02d}.ll"
            subprocess.run([extract, f"--func={name}", "-S", str(unit), "-o", str(target)], check=True)
            found.append(target)
    return found


def instrument(compiler: Compiler) -> dict[str, Any]:
    """Counts the engine's compiles by program id, and which happen inside validation."""
    state: dict[str, Any] = {"all": Counter(), "validating": None, "in_validation": Counter(), "checks": 0}
    engine = compiler._engine  # a bench counts what the engine does
    compile_one = engine.compile

    def counting(program: Any, pipeline: Any, outputs: Any, replay: Any) -> Any:
        state["all"][program.id] += 1
        if state["validating"] is not None:
            own = "target" if program.id == state["validating"] else "suite"
            state["in_validation"][own] += 1
        return compile_one(program, pipeline, outputs, replay)

    engine.compile = counting  # type: ignore[method-assign]
    try:  # the selection layer: determinism check and gate
        from llm_compiler.selection.select import Selector as Checked

        method = "check"
    except ImportError:  # before it: the gate alone
        from llm_compiler.validation.gate import Gate as Checked  # type: ignore[assignment]

        method = "check"
    original = getattr(Checked, method)

    def checking(self: Any, program: Any, passes: Any, *rest: Any, **named: Any) -> Any:
        outer = state["validating"]
        if outer is None:
            state["checks"] += 1
            state["validating"] = program.id
        try:
            return original(self, program, passes, *rest, **named)
        finally:
            state["validating"] = outer

    setattr(Checked, method, checking)
    return state


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--functions", type=int, default=8, help="function modules besides the examples")
    args = parser.parse_args(argv)
    with Compiler() as compiler, tempfile.TemporaryDirectory() as scratch:
        from llm_compiler.validation.gate import Gate, load_suites

        units = sorted((ROOT / "examples").glob("*.c*")) + function_modules(
            compiler, Path(scratch), args.functions
        )
        sources = [ProgramSource(str(path.relative_to(path.parent.parent)), path, "") for path in units]
        state = instrument(compiler)
        gate = Gate(compiler, load_suites(["builtin"], compiler))
        optimizer = make_optimizer(compiler, gate, "builtin", 1)
        start = time.monotonic()
        results = list(optimizer.run(sources))
        seconds = time.monotonic() - start
    kept = sum(r.fallback is None for r in results)
    target = state["in_validation"]["target"]
    checks = state["checks"]
    unit_compiles = sum(state["all"][r.program_id] for r in results)
    print(
        f"LLVM {compiler.llvm_version}, {compiler.engine}, {len(results)} units "
        f"({args.functions} not runnable)"
    )
    print(f"lists validated (gate or determinism+gate calls): {checks}; kept: {kept}")
    print(f"unit compiles inside validation: {target} ({target / max(1, checks):.2f} per validated list)")
    print(f"suite compiles inside validation: {state['in_validation']['suite']}")
    print(f"all compiles of the units: {unit_compiles} ({unit_compiles / len(results):.2f} per unit)")
    print(
        f"total: {sum(r.binary_size for r in results)} bytes kept, "
        f"-Oz {sum(r.oz_size for r in results)} bytes"
    )
    print(f"wall time: {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
