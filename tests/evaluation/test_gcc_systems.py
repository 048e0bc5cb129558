"""gcc-os and gcc-os-lto beside clang -Oz: GCC's sizes, sections per row, corpus units, old corpora."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.core.metrics import geometric_mean_improvement
from llm_compiler.errors import InvalidInput
from llm_compiler.evaluation.figures import section_totals
from llm_compiler.evaluation.flag_tuning import system_kind
from llm_compiler.evaluation.results import Row
from llm_compiler.toolchain.elf import SECTION_GROUPS
from llm_compiler.toolchain.llvm import Toolchain
from tests.conftest import run_cli

PROGRAMS = {
    "crc.c": """
static const unsigned table[8] = {0x1, 0x3, 0x7, 0xf, 0x1f, 0x3f, 0x7f, 0xff};
unsigned crc(const unsigned char *p, unsigned n) {
    unsigned c = ~0u;
    for (unsigned i = 0; i < n; i++) c = (c >> 4) ^ table[(c ^ p[i]) & 7] * LEVEL;
    return ~c;
}
""",
    "fib.c": "int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n",
    "names.c": """
#include <string.h>
const char *names[] = {"alpha", "beta", "gamma", "delta"};
int counter;
int find(const char *name) {
    for (int i = 0; i < 4; i++) if (strcmp(names[i], name) == 0) return i + counter++;
    return -1;
}
""",
}
FLAGS = ["-DLEVEL=3"]


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gcc") / "tiny"
    root.mkdir()
    for name, text in PROGRAMS.items():
        (root / name).write_text(text)
    return root


def _llvm_size(toolchain: Toolchain, path: Path) -> int:
    output = subprocess.run(
        [toolchain.tool("llvm-size"), "--format=berkeley", path], capture_output=True, text=True, check=True
    ).stdout
    text, data = output.splitlines()[1].split()[:2]
    return int(text) + int(data)


def _gcc_size(toolchain: Toolchain, source: Path, scratch: Path, *, lto: bool) -> int:
    """GCC's size of ``source``, compiled and measured here without llm-compiler."""
    obj = scratch / f"{source.stem}-{lto}.o"
    if lto:
        slim = scratch / f"{source.stem}-slim.o"
        subprocess.run(["gcc", *FLAGS, "-Os", "-flto", "-c", source, "-o", slim], check=True)
        link: list[str | Path] = [
            "gcc",
            "-Os",
            "-flto",
            "-r",
            "-nostdlib",
            "-flinker-output=nolto-rel",
            slim,
            "-o",
            obj,
        ]
        subprocess.run(link, check=True)
    else:
        subprocess.run(["gcc", *FLAGS, "-Os", "-c", source, "-o", obj], check=True)
    return _llvm_size(toolchain, obj)


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _evaluate(
    target: str, out: Path, *systems: str, resume: bool = False
) -> subprocess.CompletedProcess[str]:
    args = ["evaluate", "flag-tuning", target, "-D", "LEVEL=3", "--jobs", "1", "--out", str(out)]
    for system in systems:
        args += ["--system", system]
    return run_cli(*args, *(["--resume"] if resume else []))


def test_gcc_systems_are_named_and_refused_for_ir_counts() -> None:
    assert system_kind("gcc-os") == system_kind("gcc-os-lto") == "gcc"
    with pytest.raises(InvalidInput, match="gcc-os, gcc-os-lto"):
        system_kind("gcc-o")


def test_gcc_beside_clang_oz_with_sections(sources: Path, toolchain: Toolchain, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = _evaluate(str(sources), out, "oz", "gcc-os", "gcc-os-lto")
    assert result.returncode == 0, result.stderr
    rows = _rows(out)
    assert len(rows) == 3 * len(PROGRAMS)
    by = {(Path(str(r["unit"])).name, r["system"]): r for r in rows}
    for name in PROGRAMS:
        oz = by[(name, "oz")]
        for system, lto in (("gcc-os", False), ("gcc-os-lto", True)):
            row = by[(name, system)]
            expected = _gcc_size(toolchain, sources / name, tmp_path, lto=lto)
            assert row["size"] == row["zero_shot_size"] == row["unvalidated_size"] == expected
            assert row["oz_size"] == oz["size"] and row["validated"] is False and row["outcome"] == "gcc"
            assert row["pipeline"] == ("gcc -Os -flto" if lto else "gcc -Os") and row["compiles"] == 1
    for row in rows:
        sections = row["sections"]
        assert isinstance(sections, dict) and list(sections) == list(SECTION_GROUPS)
        assert sum(sections.values()) == row["size"]
    assert by[("crc.c", "gcc-os")]["sections"][".rodata"] >= 32  # the table
    report = json.loads((out / "report.json").read_text())
    pairs = [(int(r["oz_size"]), int(r["size"])) for r in rows if r["system"] == "gcc-os"]
    assert report["systems"]["gcc-os"]["geomean_zero_shot"] == pytest.approx(
        geometric_mean_improvement(pairs)
    )
    assert report["systems"]["gcc-os"]["geomean_backup"] == pytest.approx(geometric_mean_improvement(pairs))
    totals = report["sections"]["gcc-os-lto"]
    assert totals["units"] == 3 and totals["total"] == sum(
        int(r["size"]) for r in rows if r["system"] == "gcc-os-lto"
    )
    assert totals[".text"] == sum(r["sections"][".text"] for r in rows if r["system"] == "gcc-os-lto")
    markdown = (out / "report.md").read_text()
    table = markdown.split("## Bytes per section")[1].split("##")[0]
    assert "| gcc-os-lto | 3 |" in table and "| oz | 3 |" in table
    assert "Bytes per section" in (out / "report.html").read_text()


def test_a_run_of_old_rows_without_sections_resumes(sources: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _evaluate(str(sources), out, "oz", "gcc-os").returncode == 0
    old = []
    for row in _rows(out):
        if row["system"] == "oz":  # the run was killed before gcc-os, by a version without sections
            del row["sections"]
            old.append(json.dumps(row) + "\n")
    (out / "results.jsonl").write_text("".join(old))
    assert Row.from_json(json.loads(old[0])).sections is None
    resumed = _evaluate(str(sources), out, "oz", "gcc-os", resume=True)
    assert resumed.returncode == 0, resumed.stderr
    rows = [Row.from_json(r) for r in _rows(out)]
    assert len(rows) == 6 and [r.sections for r in rows if r.system == "oz"] == [None] * 3
    report = json.loads((out / "report.json").read_text())
    assert set(report["sections"]) == {"gcc-os"} == set(section_totals(rows))
    assert "| gcc-os | 3 |" in (out / "report.md").read_text()


def test_a_corpus_unit_compiled_by_gcc_and_old_units_told_how_to_keep_sources(
    sources: Path, toolchain: Toolchain, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    added = run_cli(
        "corpus", "add", "files", str(sources / "crc.c"), str(sources / "fib.c"), "-D", "LEVEL=3",
        "--corpus", str(corpus), "--project", "tiny", "--split", "test", "--token-limit", "40",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    out = tmp_path / "run"
    result = _evaluate(f"corpus:{corpus}?kind=unit", out, "oz", "gcc-os", "gcc-os-lto")
    assert result.returncode == 0, result.stderr
    by = {(Path(str(r["unit"])).name, r["system"]): r for r in _rows(out)}
    assert len(by) == 6
    for name in ("crc.c", "fib.c"):
        for system, lto in (("gcc-os", False), ("gcc-os-lto", True)):
            assert by[(name, system)]["size"] == _gcc_size(toolchain, sources / name, tmp_path, lto=lto)
    # per-function units have no source of their own
    functions = _evaluate(f"corpus:{corpus}?kind=function", tmp_path / "functions", "gcc-os")
    assert functions.returncode == 2 and "has no source of its own for GCC" in functions.stderr
    # a corpus written before units kept their GCC source
    manifest = corpus / "manifest.jsonl"
    records = [json.loads(line) for line in manifest.read_text().splitlines()]
    for record in records:
        record["extra"].pop("gcc", None)
    manifest.write_text("".join(json.dumps(record) + "\n" for record in records))
    old = _evaluate(f"corpus:{corpus}?kind=unit", tmp_path / "old", "oz", "gcc-os")
    assert old.returncode == 0, old.stderr  # oz still gives rows
    errors = [json.loads(line) for line in (tmp_path / "old" / "errors.jsonl").read_text().splitlines()]
    assert {e["system"] for e in errors} == {"gcc-os"} and len(errors) == 2
    assert all("Rebuild the corpus with GCC installed" in e["error"] for e in errors)
    assert all("llm-compiler corpus add files" in e["error"] for e in errors)


@pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None,
    reason="apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi",
)
def test_a_cortex_m_unit_beside_clang_oz(sources: Path, toolchain: Toolchain, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = [
        "evaluate",
        "flag-tuning",
        str(sources / "crc.c"),
        "-D",
        "LEVEL=3",
        "--target",
        "thumbv7em-none-eabi",
    ]
    result = run_cli(*args, "--system", "oz", "--system", "gcc-os", "--jobs", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr
    by = {r["system"]: r for r in _rows(out)}
    obj = tmp_path / "crc.o"
    arm: list[str | Path] = [
        "arm-none-eabi-gcc",
        "-mthumb",
        "-march=armv7e-m",
        *FLAGS,
        "-Os",
        "-c",
        sources / "crc.c",
        "-o",
        obj,
    ]
    subprocess.run(arm, check=True)
    assert by["gcc-os"]["size"] == _llvm_size(toolchain, obj) == sum(by["gcc-os"]["sections"].values())
    assert by["gcc-os"]["sections"][".eh_frame"] == 0  # no unwind tables on a bare-metal Thumb target
    assert sum(by["oz"]["sections"].values()) == by["oz"]["size"]
