"""A real Debian package built by its own Makefile through the driver: bzip2.

bzip2's default make target builds the library (``*.o`` for ``libbz2.a``, ``*.sho``
with ``-fPIC`` for ``libbz2.so``), the ``bzip2`` program linked against
``libbz2.so``, and runs its own tests ("Doing 6 tests": three compressions and three
decompressions compared byte for byte with reference files). The builds:

1. plain clang at ``-Oz`` (the baseline);
2. ``llm-compiler cc`` with the built-in predictor: each unit's first three predicted
   lists (``builtin:k=3``: the default ten would only bring more lists to validate)
   measured and the smallest validated; the tests must pass, the library must be
   smaller than the baseline's and the ``bzip2`` program no larger (this one runs in
   the project's test command);
3. ``llm-compiler cc --save-ir`` building what the ``bzip2`` program needs (its own
   unit and the shared library's: tuning the static library's copies too would double
   the time), whose IR ``llm-compiler tune`` then tunes;
4. ``llm-compiler cc --results``: the whole default target, tests included, with the
   tuned lists; the ``bzip2`` program and the library must be smaller than the
   baseline's.

Each build is a clean copy in its own folder, with bzip2's CFLAGS plus
``-ffile-prefix-map=<folder>=.`` (as Debian's own builds): with ``-g`` the IR would
otherwise name the build folder, and a unit's id (which finds its tuned list) is the
hash of its IR. So the ids, the tuned lists and the sizes are the same on every run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.corpus.debian import fetch_source
from llm_compiler.files import cache_dir
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.llvm import Toolchain

pytestmark = [pytest.mark.network, pytest.mark.slow]

#: Where the unpacked sources are kept between runs. Read when the module is imported,
#: before the session's fixture points the cache at a temporary folder.
SOURCES = cache_dir("test-sources")

#: bzip2's own CFLAGS with -Oz for the baseline, and without an optimization level.
BASELINE_CFLAGS = "-Wall -Winline -Oz -g -D_FILE_OFFSET_BITS=64"
CFLAGS = "-Wall -Winline -g -D_FILE_OFFSET_BITS=64"

LLM_COMPILER = Path(sys.executable).parent / "llm-compiler"


def bzip2_tree() -> Path:
    """The unpacked Debian source of bzip2 (fetched with apt once, then cached)."""
    tree = SOURCES / "bzip2"
    if (tree / "Makefile").is_file():
        return tree
    SOURCES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=SOURCES) as download:
        package = fetch_source("bzip2", Path(download))
        shutil.copytree(package.directory, Path(download) / "tree", symlinks=True)
        (Path(download) / "tree").rename(tree)
    return tree


def make(tree: Path, folder: Path, cc: str, cflags: str, *targets: str) -> subprocess.CompletedProcess[str]:
    """Builds a clean copy of ``tree`` in ``folder`` with bzip2's Makefile."""
    shutil.copytree(tree, folder, symlinks=True)
    cflags += f" -ffile-prefix-map={folder}=."
    return subprocess.run(
        ["make", "-j2", f"CC={cc}", f"CFLAGS={cflags}", *targets],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


def assert_tests_passed(build: subprocess.CompletedProcess[str]) -> None:
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    assert "Doing 6 tests" in build.stdout
    assert "cmp sample3.tst sample3.ref" in build.stdout
    assert "looks\nlike you're in business" in build.stdout


def size(path: Path) -> int:
    return berkeley_size(path.read_bytes()).binary_size


def log_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory, toolchain: Toolchain) -> Path:
    """bzip2 built and tested with plain clang -Oz."""
    folder = tmp_path_factory.mktemp("bzip2") / "oz"
    build = make(bzip2_tree(), folder, str(toolchain.tool("clang")), BASELINE_CFLAGS)
    assert_tests_passed(build)
    return folder


def compare(baseline: Path, build: Path, what: str) -> dict[str, tuple[int, int]]:
    """(-Oz size, ``what`` size) of the program and the library; printed."""
    sizes = {name: (size(baseline / name), size(build / name)) for name in ("bzip2", "libbz2.so.1.0.4")}
    print()
    for name, (before, after) in sizes.items():
        print(f"{name}: clang -Oz {before} bytes, {what} {after} bytes ({1 - after / before:.2%} smaller)")
    return sizes


@pytest.mark.debian
def test_bzip2_built_with_predicted_lists_passes_its_tests_and_is_smaller(
    tmp_path: Path, baseline: Path
) -> None:
    started = time.monotonic()
    log = tmp_path / "cc.jsonl"
    build = tmp_path / "predicted"
    # The program, the shared library it links, and bzip2's own tests (the static
    # library's copies of the same units would only double the time).
    result = make(
        bzip2_tree(), build, f"{LLM_COMPILER} cc --predictor builtin:k=3 --log {log}", CFLAGS, "bzip2", "test"
    )
    assert_tests_passed(result)
    lines = log_lines(log)
    assert len(lines) == 8  # bzip2.o and the library's seven units (-fPIC)
    assert all(line["kept"] in ("chosen", "oz", "clang-oz") for line in lines)
    assert all(line["size"] <= min(line["oz_size"], line["clang_oz_size"]) for line in lines)
    assert any(line["origin"] == "predicted" and line["kept"] == "chosen" for line in lines)
    sizes = compare(baseline, build, "predicted")
    print(f"build with the predictor: {time.monotonic() - started:.0f} s")
    # The library is smaller; the program, which links it dynamically, is no larger: its
    # own unit keeps -Oz where the smaller lists would import a function more.
    assert sizes["libbz2.so.1.0.4"][1] < sizes["libbz2.so.1.0.4"][0]
    assert sizes["bzip2"][1] <= sizes["bzip2"][0]


def test_bzip2_builds_passes_its_tests_and_shrinks_with_tuned_lists(tmp_path: Path, baseline: Path) -> None:
    started = time.monotonic()
    tree = bzip2_tree()
    assert LLM_COMPILER.is_file()
    driver = str(LLM_COMPILER) + " cc --predictor none"
    ir_dir, tuned = tmp_path / "ir", tmp_path / "tuned"
    log2, log3 = tmp_path / "cc2.jsonl", tmp_path / "cc3.jsonl"
    timings: dict[str, float] = {}

    mark = time.monotonic()
    collect = make(tree, tmp_path / "collect", f"{driver} --save-ir {ir_dir} --log {log2}", CFLAGS, "bzip2")
    assert collect.returncode == 0, collect.stderr[-3000:]
    collected = log_lines(log2)
    assert sorted(line["output"] for line in collected) == sorted(
        ["bzip2.o"] + [f"{name}.sho" for name in ("blocksort", "huffman", "crctable", "randtable")]
        + [f"{name}.sho" for name in ("compress", "decompress", "bzlib")]
    )  # fmt: skip
    assert all(line["origin"] == "oz" and line["kept"] in ("oz", "clang-oz") for line in collected)
    assert len(list(ir_dir.glob("*.ll"))) == len(collected)
    timings["build 2 (--save-ir)"] = time.monotonic() - mark

    mark = time.monotonic()
    tune = subprocess.run(
        [LLM_COMPILER, "tune", ir_dir, "--budget", "30", "--out", tuned, "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    assert tune.returncode == 0, tune.stderr[-3000:]
    timings["tune (budget 30)"] = time.monotonic() - mark

    mark = time.monotonic()
    build = tmp_path / "tuned-build"
    final = make(tree, build, f"{driver} --results {tuned} --log {log3}", CFLAGS)
    assert_tests_passed(final)
    timings["build 3 (--results)"] = time.monotonic() - mark

    lines = {line["output"]: line for line in log_lines(log3)}
    assert all(lines[line["output"]]["origin"] == "tuned" for line in collected)
    assert all(line["size"] <= min(line["oz_size"], line["clang_oz_size"]) for line in lines.values())
    sizes = compare(baseline, build, "tuned")
    for step, seconds in timings.items():
        print(f"{step}: {seconds:.0f} s")
    print(f"total: {time.monotonic() - started:.0f} s")
    assert sizes["bzip2"][1] < sizes["bzip2"][0]
    assert sizes["libbz2.so.1.0.4"][1] < sizes["libbz2.so.1.0.4"][0]
