"""The results the tool produces, as files to diff: a check that a change altered none.

Run: ``.venv/bin/python bench/results/fingerprint.py OUT`` before and after a change,
then ``diff -r OUT_BEFORE/fingerprint OUT_AFTER/fingerprint``: an empty diff means the
change left every result alone.

It uses the command line only, so it runs on any version of the tool:

* ``tune --seed 1 --budget 100`` on the bundled examples and on up to 24 function modules
  (each defined function but ``main`` of the examples, extracted with ``llvm-extract``,
  every k-th one kept); per program the best list, its size and the phase sizes;
* ``data emulation`` (2 lists per program), ``data disassembly`` and ``data flag-tuning``
  (labelled by the examples' tuning run) on the examples; the samples byte for byte.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "llm_compiler"]
FUNCTIONS = 24


def _run(command: list[str], cwd: Path) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def _llvm_bin() -> Path:
    for candidate in [os.environ.get("LLVM_BIN", ""), *sorted(Path("/usr/lib").glob("llvm-*/bin"))[::-1]]:
        if candidate and (Path(candidate) / "llvm-extract").exists():
            return Path(candidate)
    raise SystemExit("fingerprint: no llvm-extract found; set LLVM_BIN")


def function_modules(work: Path) -> Path:
    """Writes the 24 function modules to ``work/fmods`` and returns that folder."""
    units, modules = work / "units", work / "fmods"
    units.mkdir(parents=True, exist_ok=True)
    modules.mkdir(exist_ok=True)
    extract = str(_llvm_bin() / "llvm-extract")
    found: list[str] = []
    # Relative paths: the IR names its source file, and program ids hash the IR.
    for source in sorted((work / "examples").glob("*.c*")):
        unit = units / f"{source.name}.ll"
        _run([*CLI, "compile", f"examples/{source.name}", "-o", str(unit.relative_to(work))], work)
        for name in re.findall(r'^define [^@]*@("?[^"(]+"?)\(', unit.read_text(), flags=re.MULTILINE):
            name = name.strip('"')
            if name == "main":
                continue
            target = units / f"{source.name}.{len(found):03d}.ll"
            subprocess.run([extract, f"--func={name}", "-S", str(unit), "-o", str(target)], check=True)
            found.append(str(target))
    step = max(1, len(found) // FUNCTIONS)
    for index, path in enumerate(found[::step][:FUNCTIONS]):
        shutil.copy(path, modules / f"{index:03d}.ll")
    return modules


def tune_fingerprint(out: Path) -> list[dict[str, object]]:
    keys = ("program", "status", "oz_size", "random_search_size", "minimized_size", "broadcast_size")
    rows = []
    for line in (out / "best.jsonl").read_text().splitlines():
        record = json.loads(line)
        rows.append({key: record[key] for key in keys} | {
            "best_size": record["best_size"], "best_pipeline": record["best_pipeline"],
        })  # fmt: skip
    return sorted(rows, key=lambda row: str(row["program"]))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path, help="an empty folder for the runs and the fingerprint")
    args = parser.parse_args(argv)
    work = args.out.resolve()
    work.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "examples", work / "examples", dirs_exist_ok=True)
    fingerprint = work / "fingerprint"
    fingerprint.mkdir(exist_ok=True)
    function_modules(work)
    for name, programs in (("examples", "examples"), ("fmods", "fmods")):
        _run([*CLI, "tune", programs, "--seed", "1", "--budget", "100", "--out", f"tune-{name}"], work)
        rows = tune_fingerprint(work / f"tune-{name}")
        (fingerprint / f"tune-{name}.json").write_text(json.dumps(rows, indent=1) + "\n")
    data = [
        ["emulation", "--samples-per-program", "2", "--seed", "1"],
        ["disassembly"],
        ["flag-tuning", "--tuning", "tune-examples"],
    ]
    for options in data:
        _run(
            [*CLI, "data", options[0], "--programs", "examples", "--out", f"data-{options[0]}", *options[1:]],
            work,
        )
        for shard in sorted((work / f"data-{options[0]}").glob("*/*.jsonl")):
            target = fingerprint / f"data-{options[0]}-{shard.parent.name}-{shard.name}"
            shutil.copy(shard, target)
    print(f"fingerprint in {fingerprint}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
