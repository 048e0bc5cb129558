"""``--objective`` through the real commands: tune, measure, optimize, evaluate, cc, predictor."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.llvm import Toolchain
from tests.conftest import EXAMPLES, run_cli

CRC32 = str(EXAMPLES / "crc32.c")
QSORT = str(EXAMPLES / "qsort_ints.c")


def test_an_ir_count_search_generates_no_code_and_keeps_fewer_instructions(
    tmp_path: Path, toolchain: Toolchain
) -> None:
    out = tmp_path / "run"
    args = [CRC32, QSORT, "--budget", "30", "--broadcast", "0", "--objective", "ir-instructions"]
    result = run_cli("tune", *args, "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "geomean ir-instructions reduction vs -Oz" in result.stdout
    assert "total instructions:" in result.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["objective"], summary["unit"]) == ("ir-instructions", "instructions")
    assert "oz_bytes" not in summary and summary["oz_instructions"] >= summary["best_instructions"]
    with sqlite3.connect(out / "tune.sqlite") as db:
        # Every list the search measured was counted, none lowered to an object.
        assert db.execute("SELECT COUNT(*) FROM measurements").fetchone() == (0,)
        assert db.execute("SELECT COUNT(*) FROM ir_counts").fetchone()[0] > 10
    with Compiler(toolchain, engine="subprocess") as compiler:
        for entry in summary["programs"]:
            program = compiler.load(Path(entry["program"]))
            counted = compiler.count(program, compiler.passes(entry["best_pipeline"]))
            oz = compiler.measure_oz(program)
            assert counted.ir_instructions == entry["best_size"] <= oz.ir_instructions == entry["oz_size"]
    assert summary["programs_improved"] >= 1
    # The objective is part of the run's identity: resuming it as a binary-size run is refused.
    again = run_cli("tune", CRC32, QSORT, "--budget", "30", "--broadcast", "0", "--out", str(out), "--resume")
    assert again.returncode != 0 and "objective" in again.stderr


def test_a_text_size_search_keeps_text_no_larger_than_oz(tmp_path: Path, toolchain: Toolchain) -> None:
    out = tmp_path / "run"
    args = [QSORT, "--budget", "20", "--broadcast", "0", "--objective", "text-size", "--json"]
    result = run_cli("tune", *args, "--out", str(out))
    assert result.returncode == 0, result.stderr
    [entry] = json.loads(result.stdout)["programs"]
    with Compiler(toolchain, engine="subprocess") as compiler:
        program = compiler.load(Path(QSORT))
        kept = compiler.measure(program, compiler.passes(entry["best_pipeline"]))
        assert kept.text == entry["best_size"] <= compiler.measure_oz(program).text == entry["oz_size"]


def test_measure_counts_without_code_and_says_so() -> None:
    result = run_cli("measure", CRC32, "--objective", "ir-instructions", "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["objective"] == "ir-instructions"
    assert record["oz"]["binary_size"] is None and record["oz"]["ir_instructions"] > 0
    wrong = run_cli("measure", CRC32, "--objective", "bytes")
    assert wrong.returncode != 0 and "Unknown objective 'bytes'" in wrong.stderr


def test_optimize_and_evaluate_name_the_objective(tmp_path: Path) -> None:
    result = run_cli("optimize", CRC32, "--objective", "text-size", "--json", "--model", "common:3")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout.splitlines()[0])
    assert record["objective"] == "text-size" and record["binary_size"] <= record["oz_size"]
    out = tmp_path / "evaluation"
    args = ["evaluate", "flag-tuning", CRC32, "--system", "oz", "--system", "common:3"]
    result = run_cli(*args, "--objective", "ir-instructions", "--out", str(out))
    assert result.returncode == 0, result.stderr
    report = (out / "report.md").read_text()
    assert "objective: IR instruction count" in report and "sizes and totals in instructions" in report
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(row["size"] <= row["oz_size"] for row in rows)


def test_cc_compares_objects_in_text_bytes_and_refuses_an_ir_objective(tmp_path: Path) -> None:
    (tmp_path / "crc32.c").write_text(Path(CRC32).read_text())
    log = tmp_path / "cc.jsonl"
    env = {"LLM_COMPILER_CC_LOG": str(log), "LLM_COMPILER_OBJECTIVE": "text-size"}
    result = run_cli("cc", "-c", "crc32.c", "-o", "crc32.o", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    [line] = [json.loads(text) for text in log.read_text().splitlines()]
    assert line["objective"] == "text-size"
    assert line["size"] == berkeley_size((tmp_path / "crc32.o").read_bytes()).text <= line["oz_size"]
    refused = run_cli("cc", "--objective", "ir-instructions", "-c", "crc32.c", cwd=tmp_path)
    assert refused.returncode == 2 and "binary-size or text-size" in refused.stderr
