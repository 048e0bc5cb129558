"""A unit the tool cannot measure is a recorded outcome, never the end of a run.

The issue's reproduction, made small: a folder of outside IR in which one unit carries a
Mach-O triple (``x86_64-apple-macosx10.15.0``) among ELF ones. ``tune`` (both
objectives), ``optimize`` and ``measure`` finish and report every unit: the ELF ones
with their normal results, the Mach-O one measured as llvm-size measures it, or
recorded with its reason and the fix where a check cannot read it. Then IR that LLVM
cannot read among good units, and a unit whose objects no reader here knows
(WebAssembly), which an in-process worker meets.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command
from tests.conftest import EXAMPLES, run_cli

ELF_UNITS = ("crc32", "fixed_point")
MACHO_UNIT = "fixed_point_mac"
MACHO_TRIPLE = "x86_64-apple-macosx10.15.0"
#: One HumanEval-X problem: validation checks a list on it in a second, not on 126 programs.
ONE_PROBLEM = {
    "task_id": "t/0",
    "prompt": "int add(int a, int b) {",
    "canonical_solution": " return a + b; }",
    "test": "int main() { return add(1, 2) == 3 ? 0 : 1; }",
}
#: A C unit without headers, for targets whose C library is not installed (wasm).
NO_HEADERS_C = "int table[64];\nint counter = 3;\nint bump(int x) { table[x & 63] += x; return ++counter; }\n"


@pytest.fixture(scope="module")
def mixed(toolchain: Toolchain, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two ELF units and the second of them retargeted to Mach-O (triple and datalayout)."""
    folder = tmp_path_factory.mktemp("mixed")
    for name in ELF_UNITS:
        command: list[str | Path] = [toolchain.tool("clang"), "-Oz", "-Xclang", "-disable-llvm-passes"]
        command += ["-emit-llvm", "-S"]
        run_command([*command, EXAMPLES / f"{name}.c", "-o", folder / f"{name}.ll"], timeout=120)
    ir = (folder / f"{ELF_UNITS[1]}.ll").read_text()
    triple = re.search(r'target triple = "([^"]+)"', ir)
    assert triple is not None and "linux" in triple.group(1)
    macho = ir.replace(triple.group(1), MACHO_TRIPLE).replace(
        'target datalayout = "e-m:e-', 'target datalayout = "e-m:o-'
    )
    assert "e-m:o-" in macho
    (folder / f"{MACHO_UNIT}.ll").write_text(macho)
    return folder


@pytest.fixture(scope="module")
def one_problem(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("suite") / "one.jsonl"
    path.write_text(json.dumps(ONE_PROBLEM) + "\n")
    return f"humaneval-x:{path}"


def size_by_hand(toolchain: Toolchain, ir: Path, pipeline: str, scratch: Path) -> int:
    """text + data of ``opt -passes=PIPELINE | llc -filetype=obj``, read with llvm-size:
    for Mach-O, whose columns are ``__TEXT __DATA __OBJC others``, the zero-fill sections
    (type BSS in ``llvm-objdump -h``) are taken off ``__DATA``."""
    optimized, obj = scratch / f"{ir.stem}.opt.ll", scratch / f"{ir.stem}.o"
    run_command([toolchain.tool("opt"), f"-passes={pipeline}", ir, "-S", "-o", optimized], timeout=120)
    run_command([toolchain.tool("llc"), "-filetype=obj", optimized, "-o", obj], timeout=120)
    header, row = run_command([toolchain.tool("llvm-size"), obj], timeout=30).stdout_text.splitlines()[:2]
    columns = dict(zip(header.split(), map(int, row.split()[:4]), strict=False))
    if "text" in columns:
        return columns["text"] + columns["data"]
    sections = run_command([toolchain.tool("llvm-objdump"), "-h", obj], timeout=30).stdout_text
    zero_fill = sum(
        int(m.group(1), 16) for m in re.finditer(r"^\s*\d+ \S+\s+([0-9a-f]+) [0-9a-f]+ BSS", sections, re.M)
    )
    return columns["__TEXT"] + columns["__DATA"] + columns["__OBJC"] - zero_fill


def ir_count(folder: Path) -> dict[str, int]:
    """Each unit's -Oz instruction count as ``measure`` gives it."""
    result = run_cli("measure", str(folder), "--objective", "ir-instructions", "--json")
    assert result.returncode == 0, result.stderr
    return {
        Path(r["file"]).stem: r["oz"]["ir_instructions"] for r in map(json.loads, result.stdout.splitlines())
    }


def by_stem(records: list[dict[str, Any]], key: str = "program") -> dict[str, dict[str, Any]]:
    return {Path(record[key]).stem: record for record in records}


def assert_reported_with_the_fix(reason: str) -> None:
    assert "Mach-O" in reason and "--target x86_64-linux-gnu" in reason, reason


def test_measure_reads_the_macho_unit_as_llvm_size_does(
    mixed: Path, toolchain: Toolchain, tmp_path: Path
) -> None:
    result = run_cli("measure", str(mixed), "--json")
    assert result.returncode == 0, result.stderr
    records = by_stem([json.loads(line) for line in result.stdout.splitlines()])
    assert set(records) == {*ELF_UNITS, MACHO_UNIT}
    for stem, record in records.items():
        assert "error" not in record, record
        assert record["oz"]["binary_size"] == size_by_hand(
            toolchain, mixed / f"{stem}.ll", "default<Oz>", tmp_path
        )
    # Retargeting changes the object format, not what the unit is: sizes differ, counts do not.
    assert records[MACHO_UNIT]["oz"]["ir_instructions"] == records[ELF_UNITS[1]]["oz"]["ir_instructions"]
    assert records[MACHO_UNIT]["oz"]["binary_size"] != records[ELF_UNITS[1]]["oz"]["binary_size"]


def test_tune_ir_instructions_finishes_and_reports_every_unit(
    mixed: Path, one_problem: str, toolchain: Toolchain, tmp_path: Path
) -> None:
    """The issue's reproduction: validation builds the Mach-O unit's objects."""
    out = tmp_path / "run"
    result = run_cli(
        "tune", str(mixed), "--objective", "ir-instructions", "--budget", "4", "--seed", "1",
        "--broadcast", "0", "--jobs", "1", "--suite", one_problem, "--out", str(out), env={"COLUMNS": "400"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    programs = by_stem(summary["programs"])
    best = by_stem([json.loads(line) for line in (out / "best.jsonl").read_text().splitlines()])
    assert set(programs) == set(best) == {*ELF_UNITS, MACHO_UNIT}
    oz = ir_count(mixed)
    for stem in ELF_UNITS:
        assert programs[stem]["status"] == "ok", programs[stem]
        assert programs[stem]["oz_size"] == oz[stem] and programs[stem]["best_size"] <= oz[stem]
        kept_oz = programs[stem]["best_size"] == oz[stem]
        assert programs[stem]["validation"].startswith("nothing beat" if kept_oz else "passed"), programs[
            stem
        ]
    assert summary["programs_tuned"] == len(ELF_UNITS)
    macho = programs[MACHO_UNIT]
    # Its search found lists below -Oz, so validation reached its object's symbols.
    assert macho["status"] == "error" and best[MACHO_UNIT]["status"] == "error", macho
    assert "validation" in macho["validation"]
    assert_reported_with_the_fix(macho["validation"])
    [row] = [line for line in result.stdout.splitlines() if f"{mixed / MACHO_UNIT}.ll" in line]
    assert "error: validation stopped on this unit" in row and "(1 could not be tuned)" in result.stdout


def test_tune_binary_size_measures_the_macho_unit(mixed: Path, toolchain: Toolchain, tmp_path: Path) -> None:
    args = ("--budget", "4", "--seed", "1", "--broadcast", "0", "--jobs", "1", "--no-validate", "--json")
    result = run_cli("tune", str(mixed), *args, "--store", str(tmp_path / "run.sqlite"))
    assert result.returncode == 0, result.stderr
    programs = by_stem(json.loads(result.stdout)["programs"])
    assert set(programs) == {*ELF_UNITS, MACHO_UNIT}
    for stem, entry in programs.items():
        assert entry["status"] == "ok", entry
        assert entry["oz_size"] == size_by_hand(toolchain, mixed / f"{stem}.ll", "default<Oz>", tmp_path)
        assert entry["best_size"] == size_by_hand(
            toolchain, mixed / f"{stem}.ll", entry["best_pipeline"], tmp_path
        )


def test_optimize_reports_every_unit(
    mixed: Path, one_problem: str, toolchain: Toolchain, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    result = run_cli("optimize", str(mixed), "--suite", one_problem, "--out", str(out), "--jobs", "1")
    assert result.returncode == 0, result.stderr
    results = by_stem([json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()], "unit")
    errors_file = out / "errors.jsonl"
    errors = by_stem(
        [json.loads(line) for line in errors_file.read_text().splitlines()] if errors_file.is_file() else [],
        "unit",
    )
    assert set(results) | set(errors) == {*ELF_UNITS, MACHO_UNIT} and not set(results) & set(errors)
    for stem in ELF_UNITS:
        assert results[stem]["oz_size"] == size_by_hand(
            toolchain, mixed / f"{stem}.ll", "default<Oz>", tmp_path
        )
        assert results[stem]["binary_size"] <= results[stem]["oz_size"]
    if MACHO_UNIT in results:  # nothing beat -Oz: its -Oz object was measured as llvm-size does
        expected = size_by_hand(toolchain, mixed / f"{MACHO_UNIT}.ll", "default<Oz>", tmp_path)
        assert results[MACHO_UNIT]["oz_size"] == expected and results[MACHO_UNIT]["fallback"]
    else:  # a list beat -Oz and validation could not read its object's symbols
        assert errors[MACHO_UNIT]["status"] == "error"
        assert_reported_with_the_fix(errors[MACHO_UNIT]["error"])
        assert f"{mixed / MACHO_UNIT}.ll: Cannot read the symbols" in result.stdout


@pytest.mark.parametrize("command", ["measure", "optimize"])
def test_unreadable_ir_among_good_units(mixed: Path, tmp_path: Path, command: str) -> None:
    garbage = tmp_path / "garbage.ll"
    garbage.write_text("define i32 @f( {\n  this is not IR\n")
    good = mixed / f"{ELF_UNITS[0]}.ll"
    extra = ("--out", str(tmp_path / "run")) if command == "optimize" else ()
    result = run_cli(command, str(good), str(garbage), "--json", *extra)
    assert result.returncode == 0, result.stderr
    records = by_stem(
        [json.loads(line) for line in result.stdout.splitlines()],
        "program" if command == "measure" else "unit",
    )
    assert set(records) == {ELF_UNITS[0], "garbage"}
    assert "not valid LLVM-IR" in records["garbage"]["error"] and str(garbage) in records["garbage"]["error"]
    assert not records[ELF_UNITS[0]].get("error")
    assert records[ELF_UNITS[0]]["oz" if command == "measure" else "oz_size"]
    if command == "optimize":
        [written] = (tmp_path / "run" / "errors.jsonl").read_text().splitlines()
        assert json.loads(written)["unit"] == str(garbage)


def test_every_unit_unreadable_is_an_error(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.ll"
    garbage.write_text("not IR\n")
    other = tmp_path / "other.ll"
    other.write_text("still not IR\n")
    result = run_cli("measure", str(garbage), str(other))
    assert result.returncode == 2
    assert "None of the 2 units could be measured" in result.stderr and "garbage.ll" in result.stderr


def test_tune_records_a_unit_whose_objects_no_reader_knows(
    mixed: Path, toolchain: Toolchain, tmp_path: Path
) -> None:
    """A WebAssembly unit fails where its object is read (in an in-process worker with
    the default engine): the unit is an error naming the format and the fix; the run goes on."""
    source = tmp_path / "bump.c"
    source.write_text(NO_HEADERS_C)
    wasm = tmp_path / "bump_wasm.ll"
    command: list[str | Path] = [
        toolchain.tool("clang"),
        "--target=wasm32-unknown-unknown",
        "-Oz",
        "-Xclang",
        "-disable-llvm-passes",
    ]
    run_command([*command, "-emit-llvm", "-S", source, "-o", wasm], timeout=120)
    good = mixed / f"{ELF_UNITS[0]}.ll"
    args = ("--budget", "3", "--seed", "1", "--broadcast", "0", "--jobs", "1", "--no-validate", "--json")
    result = run_cli("tune", str(good), str(wasm), *args, "--store", str(tmp_path / "run.sqlite"))
    assert result.returncode == 0, result.stderr
    programs = by_stem(json.loads(result.stdout)["programs"])
    assert programs[ELF_UNITS[0]]["status"] == "ok"
    failed = programs["bump_wasm"]
    assert failed["status"] == "error", failed
    assert "(WebAssembly)" in failed["validation"] and "--objective ir-instructions" in failed["validation"]
    assert "Traceback" not in failed["validation"]


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def garbage_among_good(mixed: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The two ELF units, the Mach-O one and an IR file LLVM cannot read."""
    garbage = tmp_path_factory.mktemp("unreadable") / "garbage.ll"
    garbage.write_text("define i32 @f( {\n  this is not IR\n")
    return [*(mixed / f"{stem}.ll" for stem in (*ELF_UNITS, MACHO_UNIT)), garbage]


def test_evaluate_flag_tuning_reports_every_unit(
    garbage_among_good: list[Path], one_problem: str, toolchain: Toolchain, tmp_path: Path
) -> None:
    """A fixed system, a list source and the autotuner over good units, the Mach-O one and
    unreadable IR: every other unit has its row, the bad one its reason; --resume tries it again."""
    *good, garbage = garbage_among_good
    out = tmp_path / "run"
    systems = ("oz", "random:2", "tune:4")
    command = ["evaluate", "flag-tuning", *map(str, garbage_among_good), "--suite", one_problem]
    command += [arg for system in systems for arg in ("--system", system)]
    command += ["--seed", "1", "--jobs", "1", "--out", str(out)]
    result = run_cli(*command, env={"COLUMNS": "400"})
    assert result.returncode == 0, result.stderr
    rows = {(Path(r["unit"]).stem, r["system"]): r for r in jsonl(out / "results.jsonl")}
    errors = {(Path(e["unit"]).stem, e["system"]): e for e in jsonl(out / "errors.jsonl")}
    assert not set(rows) & set(errors)
    assert set(rows) | set(errors) == {(Path(p).stem, s) for p in garbage_among_good for s in systems}
    for system in systems:
        failed = errors[("garbage", system)]
        assert "not valid LLVM-IR" in failed["error"] and str(garbage) in failed["error"], failed
        assert failed["status"] == "error" and "Traceback" not in failed["error"]
        for stem in ELF_UNITS:
            row = rows[(stem, system)]
            assert row["size"] <= row["oz_size"] == rows[(stem, "oz")]["oz_size"], row
    # The Mach-O unit is measured as llvm-size measures it ...
    macho = rows[(MACHO_UNIT, "oz")]
    assert macho["size"] == macho["oz_size"] == size_by_hand(toolchain, good[2], "default<Oz>", tmp_path)
    # ... and where validation had to read its object's symbols (the case: the
    # autotuner's search beat -Oz on it), reported with the fix; the other units stand.
    assert_reported_with_the_fix(errors[(MACHO_UNIT, "tune:4")]["error"])
    if (MACHO_UNIT, "random:2") in errors:
        assert_reported_with_the_fix(errors[(MACHO_UNIT, "random:2")]["error"])
    report = json.loads((out / "report.json").read_text())
    assert report["units"] == 3 and set(report["systems"]) == set(systems)
    assert report["systems"]["oz"]["units"] == 3
    assert {(Path(e["unit"]).stem, e["system"]) for e in report["errors"]} == set(errors)
    assert "## Units that could not be evaluated" in result.stdout and str(garbage) in result.stdout
    assert "<h2>Units that could not be evaluated</h2>" in (out / "report.html").read_text()
    assert f"{garbage} (tune:4): " in result.stderr
    # Not a row: a resumed run tries the unit again, and says how it fares.
    again = run_cli(*command, "--resume")
    assert again.returncode == 0, again.stderr
    assert jsonl(out / "results.jsonl") == list(rows.values())
    retried = jsonl(out / "errors.jsonl")
    assert {Path(e["unit"]).stem for e in retried} == {"garbage"} | {
        stem for stem, _ in errors if stem == MACHO_UNIT
    }


def test_evaluate_with_no_unit_evaluated_is_an_error(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.ll"
    garbage.write_text("not IR\n")
    other = tmp_path / "other.ll"
    other.write_text("still not IR\n")
    both = run_cli("evaluate", "flag-tuning", str(garbage), str(other), "--system", "oz", "--system", "o3")
    assert both.returncode == 2
    assert "None of the 2 units could be evaluated; the first:" in both.stderr and str(garbage) in both.stderr
    alone = run_cli("evaluate", "flag-tuning", str(garbage), "--system", "oz", "--system", "o3")
    assert alone.returncode == 2 and "not valid LLVM-IR" in alone.stderr and "None of" not in alone.stderr
