"""``SYSTEM+frames``: a system's rows with the driver's frame-pointer choice, checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_compiler.errors import InvalidInput
from llm_compiler.evaluation.flag_tuning import system_kind
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command
from tests.conftest import run_cli

#: -Oz makes the constants with push/pop; each adds to the unwind table.
CONSTANTS = r"""
extern void take(int, int, int, int);
void constants(void) {
    take(1, 2, 3, 4);
    take(5, 6, 7, 8);
    take(9, 10, 11, 12);
    take(13, 14, 15, 16);
}
"""
#: A leaf: nothing for a frame pointer to save.
LEAF = "int leaf(int x) { return x * 3 + 1; }\n"


def test_frames_applies_to_systems_of_lists_only() -> None:
    assert system_kind("oz+frames") == "fixed" and system_kind("tune:10+frames") == "tune"
    for name in ("gcc-os+frames", "oz+frames+frames"):
        with pytest.raises(InvalidInput, match="systems of pass lists"):
            system_kind(name)


def test_frame_pointers_where_they_pay_validated(tmp_path: Path, toolchain: Toolchain) -> None:
    sources = tmp_path / "units"
    sources.mkdir()
    (sources / "constants.c").write_text(CONSTANTS)
    (sources / "leaf.c").write_text(LEAF)
    out = tmp_path / "run"
    args = ["evaluate", "flag-tuning", str(sources), "--jobs", "1", "--out", str(out)]
    result = run_cli(*args, "--system", "oz", "--system", "oz+frames")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by = {(Path(str(r["unit"])).name, r["system"]): r for r in rows}
    oz, framed = by[("constants.c", "oz")], by[("constants.c", "oz+frames")]
    assert framed["size"] < oz["size"] == framed["oz_size"]
    assert framed["frames"] == f"frame pointer in 1 of 1 functions: {oz['size']} -> {framed['size']}"
    assert sum(framed["sections"].values()) == framed["size"]
    assert framed["sections"][".eh_frame"] < oz["sections"][".eh_frame"]
    leaf = by[("leaf.c", "oz+frames")]
    assert leaf["size"] == by[("leaf.c", "oz")]["size"] and leaf["frames"] == ""
    # the object with the frame pointer is what clang makes with the user's flags for it
    made = tmp_path / "made.o"
    flags = ["-Oz", "-fno-omit-frame-pointer", "-momit-leaf-frame-pointer"]
    run_command([toolchain.tool("clang"), *flags, "-c", sources / "constants.c", "-o", made], timeout=60)
    assert berkeley_size(made.read_bytes()).binary_size == framed["size"]
    report = json.loads((out / "report.json").read_text())
    assert report["systems"]["oz+frames"]["geomean_backup"] > report["systems"]["oz"]["geomean_backup"] == 0


def test_frames_starts_from_the_rows_of_its_system(tmp_path: Path) -> None:
    """``oz+frames`` after ``oz`` (or a resumed run that holds ``oz``) makes no new ``oz`` row."""
    from llm_compiler.evaluation import flag_tuning

    sources = tmp_path / "units"
    sources.mkdir()
    (sources / "constants.c").write_text(CONSTANTS)
    out = tmp_path / "run"
    args = ["evaluate", "flag-tuning", str(sources), "--jobs", "1", "--out", str(out)]
    both = ("--system", "oz", "--system", "oz+frames")
    assert run_cli(*args, *both).returncode == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    # a resumed run's oz row is taken as it is: a changed size shows through oz+frames
    [oz] = [row for row in rows if row["system"] == "oz"]
    oz["size"] = oz["oz_size"] = 10_000
    (out / "results.jsonl").write_text(json.dumps(oz) + "\n")
    resumed = run_cli(*args, "--resume", *both)
    assert resumed.returncode == 0, resumed.stderr
    framed = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()][-1]
    assert framed["system"] == "oz+frames" and framed["oz_size"] == 10_000
    assert flag_tuning.FRAMES_SUFFIX == "+frames"
