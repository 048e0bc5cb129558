"""The command line: outputs, and one-paragraph errors (no traceback unless --debug)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_compiler.passes.searchable import PassSet
from llm_compiler.toolchain.elf import berkeley_size
from tests.conftest import EXAMPLES, run_cli

CRC = str(EXAMPLES / "crc32.c")


def assert_one_paragraph_error(result, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    text = result.stderr.strip()
    assert text.startswith("error:"), text
    assert "\n\n" not in text, "the error must be one paragraph"
    for needle in needles:
        assert needle in " ".join(text.split()), (needle, text)


def test_invalid_ir(write) -> None:  # type: ignore[no-untyped-def]
    bad = write("broken.ll", "define i32 @f() {\n  ret i64 0\n}\n")
    assert_one_paragraph_error(run_cli("measure", str(bad)), "broken.ll", "not valid LLVM-IR")


def test_missing_file() -> None:
    assert_one_paragraph_error(run_cli("measure", "no/such/file.c"), "no/such/file.c", "no such file")


@pytest.mark.parametrize("engine", ["subprocess", "inprocess"])
def test_crashing_opt(engine: str) -> None:
    result = run_cli(
        "measure", CRC, "--engine", engine, "--allow-pass", "trigger-crash-module",
        "--passes", "module(trigger-crash-module)",
    )  # fmt: skip
    assert_one_paragraph_error(result, "crashed with SIGABRT", "crc32.c", "trigger-crash-module")


def test_compile_past_its_timeout() -> None:
    assert_one_paragraph_error(
        run_cli("measure", CRC, "--timeout", "0.001"), "crc32.c", "did not finish within 0.001 s"
    )


def test_invalid_pass_list() -> None:
    assert_one_paragraph_error(run_cli("measure", CRC, "--passes", "sroa;reboot"), "';'", "character 5")


def test_debug_shows_the_traceback() -> None:
    result = run_cli("measure", "no/such/file.c", "--debug")
    assert result.returncode != 0 and "Traceback" in result.stderr


def test_measure_table_and_json() -> None:
    table = run_cli("measure", CRC, "--passes", "module(default<Oz>)", env={"COLUMNS": "200"})
    assert table.returncode == 0 and "crc32.c" in table.stdout and "LLVM" in table.stdout
    record = json.loads(run_cli("measure", CRC, "--json").stdout)
    assert set(record) == {"program", "file", "llvm_version", "objective", "unoptimized", "oz", "passes"}
    assert record["objective"] == "binary-size"
    assert set(record["oz"]) == {"pipeline", "binary_size", "text", "data", "ir_instructions"}
    assert record["oz"]["binary_size"] < record["unoptimized"]["binary_size"]


@pytest.mark.parametrize("suffix", [".ll", ".bc", ".o", ".s"])
def test_compile_outputs(tmp_path: Path, suffix: str) -> None:
    output = tmp_path / f"crc32{suffix}"
    result = run_cli("compile", CRC, "--passes", "module(default<Oz>)", "-o", str(output))
    assert result.returncode == 0, result.stderr
    data = output.read_bytes()
    if suffix == ".ll":
        assert b"define" in data and b"minsize" in data
    elif suffix == ".bc":
        assert data[:4] == b"BC\xc0\xde"
    elif suffix == ".o":
        oz = json.loads(run_cli("measure", CRC, "--json").stdout)["oz"]["binary_size"]
        assert berkeley_size(data).binary_size == oz
    else:
        assert b"crc32_update" in data and b".text" in data


def test_compile_writes_an_object_of_a_list_only_once_it_is_checked(tmp_path: Path) -> None:
    output = tmp_path / "crc32.o"
    listed = ("compile", CRC, "--passes", "module(default<Oz>),function(sroa)", "-o", str(output))
    refused = run_cli(*listed, "--check", "exit 3")
    assert refused.returncode == 2 and not output.exists()
    assert "validation-failure" in refused.stderr and "--unchecked" in refused.stderr
    checked = run_cli(*listed, "--check", "true")
    assert checked.returncode == 0 and "(validated:" in checked.stderr and output.exists()
    output.unlink()
    unchecked = run_cli(*listed, "--check", "exit 3", "--unchecked")
    assert unchecked.returncode == 0 and "unchecked" in unchecked.stderr and output.exists()


def test_compile_rejects_unknown_output_kind(tmp_path: Path) -> None:
    assert_one_paragraph_error(
        run_cli("compile", CRC, "-o", str(tmp_path / "x.exe")), "x.exe", ".ll, .bc, .o or .s"
    )


def test_passes_listing_and_exclusions() -> None:
    listing = run_cli("passes", "--json")
    assert listing.returncode == 0
    data = json.loads(listing.stdout)
    assert data["count"] == len(data["passes"]) and data["paper_count"] == 167
    assert sum(data["counts_by_level"].values()) == data["count"]
    table = run_cli("passes")
    assert "searchable passes" in table.stdout and "167" in table.stdout
    excluded = run_cli("passes", "--excluded")
    assert excluded.returncode == 0
    assert "structurizecfg" in excluded.stdout and "gpu-structurization" in excluded.stdout
    assert "internalize" in excluded.stdout and "not-separate-compilation-safe" in excluded.stdout


def test_regenerate_writes_a_set(tmp_path: Path) -> None:
    output = tmp_path / "set.txt"
    result = run_cli("passes", "--regenerate", "--output", str(output), "--json")
    assert result.returncode == 0, result.stderr
    written = PassSet.from_text(output.read_text())
    assert json.loads(result.stdout)["count"] == len(written)
    assert [entry["pass"] for entry in json.loads(result.stdout)["passes"]] == list(written.members)


def test_tune_fails_when_every_program_fails(write) -> None:  # type: ignore[no-untyped-def]
    bad = write("bad.c", "int f(void) { return undeclared; }\n")
    result = run_cli("tune", str(bad), "--budget", "2", "--no-validate", "--jobs", "1")
    assert result.returncode == 1, result.stderr
    assert "load-failed" in result.stdout and "no program could be tuned" in result.stderr


def test_tune_json_and_a_table_that_fits_80_columns(tmp_path: Path) -> None:
    args = ("tune", CRC, "--budget", "4", "--seed", "1", "--no-validate", "--broadcast", "0", "--jobs", "1")
    summary = json.loads(run_cli(*args, "--json", "--store", str(tmp_path / "a.sqlite")).stdout)
    assert summary["programs"][0]["program"] == CRC and summary["programs"][0]["status"] == "ok"
    best = summary["programs"][0]["best_pipeline"]
    table = run_cli(*args, "--store", str(tmp_path / "b.sqlite"), env={"COLUMNS": "80"})
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines if "│" in line or "┃" in line), table.stdout
    # The figures keep their columns however narrow the terminal.
    oz, size = summary["programs"][0]["oz_size"], summary["programs"][0]["best_size"]
    [row] = [line for line in lines if line.startswith("│")]
    assert [cell.strip() for cell in row.split("│")[2:4]] == [str(oz), str(size)], table.stdout
    # The whole list is printed once, on a line of its own, not folded into the table.
    assert f"  {CRC}: {best}" in table.stdout
    assert "programs improved:" in table.stdout and "/1" in table.stdout


def test_tune_repairs_a_rejected_list_and_says_so(tmp_path: Path) -> None:
    broken = "module(attributor),function(gvn),function(loop(loop-reduce)),module(scc-oz-module-inliner)"
    args = ("tune", CRC, "--budget", "1", "--search", "random", "--passes", broken, "--no-minimize",
            "--broadcast", "0", "--jobs", "1", "--out", str(tmp_path))  # fmt: skip
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    assert "repaired: dropped module(attributor)" in result.stdout
    [record] = [json.loads(line) for line in (tmp_path / "best.jsonl").read_text().splitlines()]
    [rejection] = record["rejected"]
    assert rejection["pipeline"] == broken and rejection["culprits"] == ["module(attributor)"]
    assert rejection["check"] == "suite" and "c_core_rec_tail" in rejection["detail"]
    assert "attributor" not in record["best_pipeline"] and record["best_size"] < record["oz_size"]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "why_not_better" in summary["programs"][0]


def test_a_killed_worker_is_named_with_what_to_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from concurrent.futures.process import BrokenProcessPool

    from llm_compiler.cli import main as cli_main
    from llm_compiler.cli import predictor

    def killed(args: object) -> int:
        raise BrokenProcessPool("A process in the process pool was terminated abruptly")

    monkeypatch.setattr(predictor, "run_show", killed)
    assert cli_main.main(["predictor", "show"]) == 2
    error = capsys.readouterr().err
    assert "a worker process was killed" in error and "run the same command again" in error


def test_the_help_lists_the_compiler_commands() -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    for command in ("cc", "c++", "measure", "gym"):
        assert f"\n    {command} " in result.stdout
