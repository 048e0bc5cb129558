"""Where a build's bytes are, and what flags the user could add would save: on real builds."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.driver.flag_savings import CANDIDATES, measure_flag_savings, plan
from llm_compiler.driver.log import read_log, with_sections
from llm_compiler.driver.records import UnitLog
from llm_compiler.toolchain.elf import SECTION_GROUPS
from tests.conftest import run_cli

CLANG_19 = Path("/usr/lib/llvm-19/bin/clang")

SOURCES = {
    "main.c": """\
#include <stdio.h>
int scale(int x);
int main(void) {
    char line[32];
    snprintf(line, sizeof line, "%d", scale(7));
    puts(line);
    return 0;
}
""",
    "scale.c": """\
static const char weights[] = "weights of the scale";
int factor = 3;
int scale(int x) {
    int total = 0;
    for (int i = 0; i < x; i++) total += weights[i] * factor;
    return total;
}
""",
    "mix.c": """\
unsigned mix(const unsigned *p, int n) {
    unsigned h = 2166136261u;
    for (int i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}
""",
}

FLAGS = ("-O2", "-fno-omit-frame-pointer")

pytestmark = pytest.mark.skipif(not CLANG_19.is_file(), reason="the figures are clang 19's")


def build(folder: Path) -> Path:
    """Builds :data:`SOURCES` through ``llm-compiler cc --log``; returns the log."""
    log = folder / "cc.jsonl"
    for name, text in SOURCES.items():
        (folder / name).write_text(text)
        made = run_cli(
            "cc",
            "--predictor",
            "none",
            "--log",
            str(log),
            *FLAGS,
            "-c",
            name,
            "-o",
            name[:-2] + ".o",
            cwd=folder,
        )
        assert made.returncode == 0, made.stderr
    return log


def berkeley(folder: Path, *flags: str) -> int:
    """Total .text + .data (llvm-size) of :data:`SOURCES` compiled by clang 19 at -Oz."""
    total = 0
    for name in SOURCES:
        obj = folder / f"{name}{len(flags)}.o"
        subprocess.run(
            [CLANG_19, "-Oz", *FLAGS[1:], *flags, "-c", folder / name, "-o", obj], check=True, timeout=120
        )
        size = subprocess.run(
            [CLANG_19.parent / "llvm-size", "--format=berkeley", obj],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        text, data = size.stdout.splitlines()[1].split()[:2]
        total += int(text) + int(data)
    return total


def test_the_log_holds_sections_and_the_line_and_the_summary_adds_them_up(tmp_path: Path) -> None:
    log = build(tmp_path)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 3
    for line in lines:
        assert set(line["sections"]) == set(SECTION_GROUPS)
        assert sum(line["sections"].values()) == line["size"]
        assert line["arguments"] == [*FLAGS, "-c", line["source"], "-o", line["output"]]
    assert sum(line["sections"][".eh_frame"] for line in lines) > 0  # unwind tables, by default
    summary = run_cli("cc", "--summary", str(log), cwd=tmp_path)
    assert summary.returncode == 0, summary.stderr
    table = dict(re.findall(r"^  (\.\w+|other|total) +([\d,]+)", summary.stdout, re.MULTILINE))
    figures = {name: int(value.replace(",", "")) for name, value in table.items()}
    total = sum(line["size"] for line in lines)
    assert figures["total"] == total == sum(figures[group] for group in SECTION_GROUPS)
    assert figures[".eh_frame"] == sum(line["sections"][".eh_frame"] for line in lines)
    assert f"the log's sizes of these kept objects: {total:,} bytes" in summary.stdout
    assert "linked files" not in summary.stdout  # no whole-program link in this log


def test_flag_savings_equal_clangs_own_figures_and_old_lines_are_not_measurable(tmp_path: Path) -> None:
    log = build(tmp_path)
    old = {"source": "old.c", "output": "old.o", "cwd": str(tmp_path), "size": 90, "kept": "clang"}
    with log.open("a") as stream:
        stream.write(json.dumps(old) + "\n")
    summary = run_cli("cc", "--summary", str(log), "--flag-savings", cwd=tmp_path)
    assert summary.returncode == 0, summary.stderr
    with_tables, without = berkeley(tmp_path), berkeley(tmp_path, "-fno-asynchronous-unwind-tables")
    assert with_tables > without
    found = re.search(
        r"^-fno-asynchronous-unwind-tables: 3 units, ([\d,]+) -> ([\d,]+) bytes, saves ([\d,]+) "
        r".*by section: \.eh_frame -([\d,]+)$",
        summary.stdout,
        re.MULTILINE,
    )
    assert found, summary.stdout
    before, after, saved, eh_frame = (int(group.replace(",", "")) for group in found.groups())
    assert (before, after, saved) == (with_tables, without, with_tables - without)
    assert eh_frame == saved  # what it removes is the unwind tables, and nothing else
    # -fno-omit-frame-pointer is on the lines: dropping it is offered; no stack protector is on
    assert re.search(r"^-fomit-frame-pointer: 3 units, .* saves \d+", summary.stdout, re.MULTILINE)
    assert "-fno-stack-protector: no line to measure" in summary.stdout
    assert "-fno-exceptions -fno-rtti: no line to measure" in summary.stdout
    assert "caution: no .eh_frame: no backtraces from gdb/perf/backtrace()" in summary.stdout
    assert "not measurable: 1 lines: old.c (no arguments recorded" in summary.stdout
    assert "1 other kept objects without section sizes" in summary.stdout
    assert summary.stderr.count("flag savings: [") == 3 and "[3/3]" in summary.stderr


def test_units_that_cannot_be_compiled_again_are_named_and_the_rest_measured(tmp_path: Path) -> None:
    (tmp_path / "good.c").write_text("int good(int x) { return x * 3 + 1; }\n")
    (tmp_path / "broken.c").write_text("int broken(void) { return missing; }\n")
    (tmp_path / "throws.cpp").write_text(
        "#include <stdexcept>\n"
        'int check(int x) { if (x < 0) throw std::invalid_argument("negative"); return x; }\n'
    )
    (tmp_path / "virtual.cpp").write_text(
        "struct Shape { virtual ~Shape(); virtual int sides() { return 0; } };\n"
        "Shape::~Shape() {}\nint sides(Shape *s) { return s->sides(); }\n"
    )

    def line(source: str, *flags: str) -> dict[str, Any]:
        output = Path(source).stem + ".o"
        arguments = [*flags, "-c", source, "-o", output]
        return {"source": source, "output": output, "cwd": str(tmp_path), "arguments": arguments}

    records = [
        line("good.c", "-O2", "-fstack-protector-strong"),
        line("gone.c", "-O2"),
        {**line("good.c", "-O1"), "source": "copy.c"},  # a line another compile of the same IR made
        line("broken.c", "-O2"),
        line("throws.cpp", "-O2"),
        line("virtual.cpp", "-O2", "-fno-asynchronous-unwind-tables"),
        {"source": "", "output": "", "cwd": str(tmp_path), "reason": "left to clang"},
    ]
    jobs, failed, skipped = plan(records)
    assert [job.name for job in jobs] == ["good.c", "broken.c", "throws.cpp", "virtual.cpp"]
    assert failed == [
        ("gone.c", f"source gone: {tmp_path / 'gone.c'}"),
        ("copy.c", "its recorded line compiles good.c, not copy.c"),
    ]
    assert skipped == 1
    applies = {job.name: {candidate.name for candidate in job.candidates} for job in jobs}
    assert (
        "-fno-stack-protector" in applies["good.c"] and "-fno-exceptions -fno-rtti" not in applies["good.c"]
    )
    assert "-fomit-frame-pointer" not in applies["good.c"]
    assert "-fno-asynchronous-unwind-tables" not in applies["virtual.cpp"]  # already on its line
    assert "-fno-exceptions -fno-rtti" in applies["throws.cpp"]

    said: list[str] = []
    report = measure_flag_savings(records, progress=said.append)
    assert report.measured == 3 and len(said) == 4
    why = dict(report.not_measurable)
    assert set(why) == {"gone.c", "copy.c", "broken.c"}
    assert "does not compile again" in why["broken.c"] and "missing" in why["broken.c"]
    by_flag = {saving.candidate.name: saving for saving in report.savings}
    assert [saving.candidate for saving in report.savings] == list(CANDIDATES)
    no_exceptions = by_flag["-fno-exceptions -fno-rtti"]
    assert no_exceptions.units == 1 and no_exceptions.saved > 0  # virtual.cpp's type_info is gone
    assert [name for name, _ in no_exceptions.failed] == ["throws.cpp"]
    assert "exceptions disabled" in no_exceptions.failed[0][1]
    protector = by_flag["-fno-stack-protector"]
    assert protector.units == 1 and protector.saved >= 0
    text = report.text()
    assert "not measurable: 3 lines: gone.c (source gone" in text
    assert "does not compile with it: 1 (throws.cpp" in text


def test_an_old_log_line_reads_and_sections_are_read_back_from_the_kept_file(tmp_path: Path) -> None:
    log = tmp_path / "cc.jsonl"
    log.write_text(json.dumps({"source": "a.c", "output": "a.o", "cwd": "/gone", "size": 10}) + "\n")
    [record] = read_log(log)
    assert "sections" not in record and "arguments" not in record
    report = measure_flag_savings([record])
    assert report.measured == 0 and report.not_measurable[0][0] == "a.c"
    subprocess.run(
        [CLANG_19, "-Oz", "-c", "-x", "c", "-", "-o", tmp_path / "k.o"], input=b"int k = 1;\n", check=True
    )
    (tmp_path / "k.txt").write_text("not an object")
    kept = with_sections(UnitLog(source="k.c", output="k.o", cwd=str(tmp_path), size=4))
    assert kept.sections is not None and kept.sections[".data"] == 4
    assert with_sections(UnitLog(source="k.c", output="k.txt", cwd=str(tmp_path), size=4)).sections is None
    assert with_sections(UnitLog(source="k.c", output="k.o", cwd=str(tmp_path))).sections is None  # not built


def test_ndebug_is_measured_where_asserts_are_on(tmp_path: Path) -> None:
    """-DNDEBUG takes out the assertions and the strings clang gives them (the whole
    signature of the function); a line that defines NDEBUG already is not offered it."""
    (tmp_path / "checked.c").write_text(
        "#include <assert.h>\n"
        "struct parser;\n"
        "int get(struct parser *parser, const int *values, int count) {\n"
        "    assert(parser && values && count > 0);\n"
        "    return values[count - 1];\n"
        "}\n"
    )
    log = tmp_path / "cc.jsonl"
    for flags, output in (((), "checked.o"), (("-DNDEBUG",), "release.o")):
        made = run_cli(
            "cc", "--predictor", "none", "--log", str(log), "-O2", *flags, "-c", "checked.c", "-o", output,
            cwd=tmp_path,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
    jobs, _, _ = plan(read_log(log))
    offered = {job.name: {c.name for c in job.candidates} for job in jobs}
    with_ndebug = [name for name, names in offered.items() if "-DNDEBUG" in names]
    assert len(offered) == 2 and len(with_ndebug) == 1 and "release" not in with_ndebug[0], offered
    saving = {s.candidate.name: s for s in measure_flag_savings(read_log(log)).savings}["-DNDEBUG"]
    sizes = []
    for flags in ((), ("-DNDEBUG",)):
        obj = tmp_path / f"clang{len(flags)}.o"
        subprocess.run(
            [CLANG_19, "-O2", "-Oz", *flags, "-c", "checked.c", "-o", obj], check=True, cwd=tmp_path
        )
        listing = subprocess.run(
            [CLANG_19.parent / "llvm-size", "--format=berkeley", obj],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        sizes.append(sum(map(int, listing.splitlines()[1].split()[:2])))
    assert saving.units == 1 and saving.saved == sizes[0] - sizes[1] > len(
        "int get(struct parser *, const int *, int)"
    )
