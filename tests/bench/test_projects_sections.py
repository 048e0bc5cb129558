"""The real-project benchmark's section breakdown and its GCC modes (``bench/projects``).

The report's tables are checked on hand-made records, old ones without ``sections``
among them; the measuring and the GCC LTO archive check run on real programs built by
clang and GCC.
"""

from __future__ import annotations

import importlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from llm_compiler.errors import CommandFailed

BENCH = Path(__file__).resolve().parents[2] / "bench" / "projects"
CLANG = Path("/usr/lib/llvm-19/bin/clang")


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    """``bench_projects`` (which imports ``report`` and ``projects`` beside it)."""
    sys.path.insert(0, str(BENCH))
    try:
        yield importlib.import_module("bench_projects")
    finally:
        sys.path.remove(str(BENCH))


def record(project: str, mode: str, sections: dict[str, int] | None, built: bool = True) -> dict[str, Any]:
    """A record as ``bench_projects.py`` writes it; ``sections=None``: one written before
    sections were measured (no such key)."""
    total = sum(sections.values()) if sections else 1000
    artifact: dict[str, Any] = {"bytes": total, "sha256": "0" * 64}
    made: dict[str, Any] = {
        "project": project,
        "mode": mode,
        "built": built,
        "tests_passed": True,
        "total_bytes": total,
        "total_s": 1.0,
        "build_s": 1.0,
        "artifacts": {"lib.so": artifact},
    }
    if sections is not None:
        artifact["sections"] = made["sections"] = sections
    return made


def groups(text: int, eh: int, rodata: int, data: int, other: int) -> dict[str, int]:
    return {".text": text, ".eh_frame": eh, ".rodata": rodata, ".data": data, "other": other}


def table_rows(text: str, title: str) -> list[list[str]]:
    """The cells of the rows of the markdown table under ``title``."""
    part = text.split(title, 1)[1] if title else text
    rows = [line for line in part.splitlines() if line.startswith("| ")]
    table = rows[: next((i for i, row in enumerate(rows[1:], 1) if row.startswith("| project |")), None)]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in table]


def test_the_section_table_shows_groups_totals_and_both_baselines(bench: ModuleType) -> None:
    records = [
        record("cjson", "clang-oz", groups(600, 200, 100, 50, 50)),  # 1000
        record("cjson", "gcc-os", groups(500, 150, 100, 50, 0)),  # 800
        record("cjson", "gcc-os-lto", None),  # an old record: total 1000, no sections
        record("zlib", "clang-oz", groups(1500, 300, 100, 50, 50)),  # 2000
        record("zlib", "gcc-os", groups(2000, 300, 100, 50, 50)),  # 2500
        record("zlib", "cc", groups(1, 1, 1, 1, 1), built=False),
    ]
    text = bench.report(records)
    rows = table_rows(text, "Where the bytes are")
    assert rows[0] == [
        "project", "mode", ".text", ".eh_frame", ".rodata", ".data", "other", "total",
        "vs clang -Oz", "vs gcc -Os",
    ]  # fmt: skip
    body = {(row[0], row[1]): row[2:] for row in rows[1:]}
    assert body["cjson", "clang-oz"] == ["600", "200", "100", "50", "50", "1000", "-", "-25.00 %"]
    assert body["cjson", "gcc-os"] == ["500", "150", "100", "50", "0", "800", "+20.00 %", "-"]
    assert body["cjson", "gcc-os-lto"] == ["-", "-", "-", "-", "-", "1000", "+0.00 %", "-25.00 %"]
    assert body["zlib", "gcc-os"] == ["2000", "300", "100", "50", "50", "2500", "-25.00 %", "-"]
    assert ("zlib", "cc") not in body  # not built: no row
    assert body["total over 2 projects", "clang-oz"] == [
        "2100", "500", "200", "100", "100", "3000", "- (n=0)", "+0.00 % (n=2)",
    ]  # fmt: skip  # geomean of 1000/800 and 2000/2500 is 1
    assert body["total over 2 projects", "gcc-os"][:6] == ["2500", "450", "200", "100", "50", "3300"]
    # An old record among a mode's: its group sums are unknown, its total is not.
    assert body["total over 1 projects", "gcc-os-lto"] == [
        "-", "-", "-", "-", "-", "1000", "+0.00 % (n=1)", "-25.00 % (n=1)",
    ]  # fmt: skip
    assert "do not add up" not in text


def test_the_size_table_has_gcc_columns_only_with_a_gcc_record(bench: ModuleType) -> None:
    clang_only = [record("cjson", "clang-oz", groups(600, 200, 100, 50, 50))]
    assert "vs gcc -Os" not in table_rows(bench.report(clang_only), "")[0]
    records = [*clang_only, record("cjson", "gcc-os", groups(500, 150, 100, 50, 0))]
    text = bench.report(records)
    rows = table_rows(text, "")
    column = rows[0].index("-Oz vs gcc -Os")
    assert rows[1][column] == "-25.00 %"  # clang -Oz's 1000 B against gcc -Os's 800 B
    assert rows[2][column] == "-25.00 % (n=1)"
    assert rows[3][column] == "-25.00 % (-200 B)"
    separator = text.splitlines()[1]
    assert {len(row) for row in rows} == {separator.count("---")}  # every row has every column


def test_sections_that_miss_the_total_are_flagged(bench: ModuleType) -> None:
    wrong = record("cjson", "clang-oz", groups(600, 200, 100, 50, 50))
    wrong["total_bytes"] = 999
    assert "sections do not add up to the total: cjson clang-oz" in bench.report([wrong])


@pytest.mark.skipif(not CLANG.is_file(), reason="needs LLVM 19's clang")
def test_measured_sections_add_up_and_old_records_are_filled_from_disk(
    bench: ModuleType, tmp_path: Path
) -> None:
    source = tmp_path / "lib.c"
    source.write_text(
        'static const char text[] = "hello";\nint table[64] = {1};\nconst char *f(void) { return text; }\n'
    )
    library = tmp_path / "libf.so"
    bench.run_command([CLANG, "-Oz", "-shared", "-fPIC", source, "-o", library], timeout=120)
    artifacts, missing = bench.measure_artifacts(tmp_path, ("libf.so", "absent*"))
    assert missing == ["absent*"]
    measured = artifacts["libf.so"]
    assert sum(measured["sections"].values()) == measured["bytes"]
    assert measured["sections"][".data"] >= 256  # the initialised table
    old: dict[str, Any] = {"built": True, "tree": str(tmp_path), "artifacts": {"libf.so": dict(measured)}}
    del old["artifacts"]["libf.so"]["sections"]
    replaced = {**old, "artifacts": {"libf.so": {**old["artifacts"]["libf.so"], "sha256": "f" * 64}}}
    assert bench.fill_sections([old, replaced]) == 1
    assert old["sections"] == measured["sections"]
    assert "sections" not in replaced  # another build's bytes are not this record's


@pytest.mark.skipif(shutil.which("gcc-ar") is None, reason="needs GCC")
def test_gcc_lto_links_through_gcc_archives_and_not_through_llvm_ones(
    bench: ModuleType, tmp_path: Path
) -> None:
    context = bench.Context(
        out=tmp_path, work=tmp_path, sources=tmp_path, llvm_bin=CLANG.parent,
        llm_compiler=tmp_path / "llm-compiler", timeout=120, jobs=1,
    )  # fmt: skip
    tools = tmp_path / "tools"
    bench.write_wrappers(tools, "gcc-os-lto", context)
    assert "-Os -flto" in (tools / "c++").read_text() and "g++" in (tools / "c++").read_text()
    env = bench.environment(context, tools, "gcc-os-lto", None)
    assert Path(env["AR"]).name == "gcc-ar" and Path(env["NM"]).name == "gcc-nm"
    bench.check_gcc_lto(tools, env)
    llvm = bench.environment(context, tools, "clang-oz", None)
    with pytest.raises(CommandFailed, match="ld returned 1 exit status"):  # f is not found
        bench.check_gcc_lto(tools, {**env, "AR": llvm["AR"], "RANLIB": llvm["RANLIB"]})
