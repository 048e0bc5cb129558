"""LLVMs other than the tests' reference: LLVM 22 end to end, and a major with no ranker.

The rest of the suite runs on the reference LLVM (tests/conftest.py). Here the same
commands run on LLVM 22 (Debian 12 serves it from its security suite; ``bash
scripts/setup.sh --dev`` installs it where apt offers it), and their sizes are checked
against ``opt``, ``llc`` and ``llvm-size`` run by hand with that LLVM. The fallback for
an LLVM without a shipped ranker is checked on the reference LLVM with only LLVM 22's
ranker visible.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import random
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import InvalidInput
from llm_compiler.passes.pipeline import PassList, parse_pipeline
from llm_compiler.passes.sampling import random_pass_list
from llm_compiler.predictor import shipped
from llm_compiler.predictor.learners import FixedOrder
from llm_compiler.predictor.ranker import load
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.llvm import Toolchain, find_toolchain
from tests.autotune.test_tuner import sizes_by_hand
from tests.conftest import EXAMPLES, run_cli
from tests.test_measure_by_hand import by_hand

LLVM22 = Path("/usr/lib/llvm-22/bin")
SOME_EXAMPLES = [EXAMPLES / name for name in ("crc32.c", "fixed_point.c", "shapes.cpp")]


@pytest.fixture(scope="module")
def llvm22() -> Toolchain:
    if not (LLVM22 / "opt").is_file():
        pytest.skip(
            "LLVM 22 is not installed: bash scripts/setup.sh --dev installs it where apt offers clang-22"
        )
    toolchain = find_toolchain(LLVM22)
    assert toolchain.major == 22
    return toolchain


def test_measure_on_llvm22_equals_hand_made_objects(llvm22: Toolchain, tmp_path: Path) -> None:
    with Compiler(llvm22, engine="subprocess", workers=1) as compiler:
        pipelines = [
            "default<Oz>",
            str(random_pass_list(random.Random(22), compiler.pass_set, max_length=12)),
        ]
    for pipeline in pipelines:
        result = run_cli(
            "measure", *map(str, SOME_EXAMPLES), "--passes", pipeline, "--json", "--llvm-bin", str(LLVM22)
        )
        assert result.returncode == 0, result.stderr
        for record in map(json.loads, result.stdout.splitlines()):
            assert record["llvm_version"] == llvm22.version
            expected = by_hand(llvm22, Path(record["file"]), pipeline, tmp_path)
            assert record["passes"]["binary_size"] == expected, (record["file"], pipeline)


@pytest.mark.slow
def test_tune_on_llvm22_finds_lists_that_reproduce_by_hand(llvm22: Toolchain, tmp_path: Path) -> None:
    result = run_cli(
        "tune", *map(str, SOME_EXAMPLES), "--budget", "30", "--seed", "1", "--jobs", "2",
        "--llvm-bin", str(LLVM22), "--json", "--store", str(tmp_path / "tune.sqlite"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["llvm_version"] == llvm22.version
    for entry in summary["programs"]:
        assert entry["status"] == "ok" and entry["best_size"] <= entry["oz_size"]
        source = Path(entry["program"])
        assert by_hand(llvm22, source, "default<Oz>", tmp_path) == entry["oz_size"]
        assert entry["best_size"] in sizes_by_hand(llvm22, source, entry["best_pipeline"], tmp_path)
    assert any(entry["best_size"] < entry["oz_size"] for entry in summary["programs"])


def test_optimize_on_llvm22_uses_its_own_ranker_and_beats_oz(llvm22: Toolchain, tmp_path: Path) -> None:
    # Three of the examples, C and C++: each unit's smallest candidate is validated on LLVM
    # 22's suites, so the whole folder would cost about three times as much.
    result = run_cli("optimize", *map(str, SOME_EXAMPLES), "--json", "--llvm-bin", str(LLVM22))
    assert result.returncode == 0, result.stderr
    assert f"LLVM {llvm22.version} ({LLVM22})" in result.stderr.splitlines()[0]
    assert "No ranker is shipped" not in result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == len(SOME_EXAMPLES)
    for record in records:
        assert record["model"] == "builtin" and record["binary_size"] <= record["oz_size"]
        if record["binary_size"] < record["oz_size"]:
            source = Path(record["unit"])
            assert record["binary_size"] in sizes_by_hand(llvm22, source, record["chosen"], tmp_path)
    assert any(record["binary_size"] < record["oz_size"] for record in records)


@pytest.mark.slow
def test_cc_on_llvm22_builds_a_program_that_runs_and_is_never_larger(
    llvm22: Toolchain, tmp_path: Path
) -> None:
    shutil.copy(EXAMPLES / "qsort_ints.c", tmp_path)
    log = tmp_path / "cc.jsonl"
    environment = {"LLVM_BIN": str(LLVM22)}
    compiled = run_cli("cc", "--log", str(log), "-O2", "-c", "qsort_ints.c", cwd=tmp_path, env=environment)
    assert compiled.returncode == 0, compiled.stderr
    [line] = [json.loads(text) for text in log.read_text().splitlines()]
    assert line["llvm"] == f"{llvm22.version} ({LLVM22})"
    assert line["size"] == berkeley_size((tmp_path / "qsort_ints.o").read_bytes()).binary_size
    assert line["size"] <= min(line["oz_size"], line["clang_oz_size"])
    linked = run_cli("cc", "qsort_ints.o", "-o", "qsort_ints", cwd=tmp_path, env=environment)
    assert linked.returncode == 0, linked.stderr
    reference = tmp_path / "reference"
    subprocess.run([llvm22.tool("clang"), "-Oz", "qsort_ints.c", "-o", reference], cwd=tmp_path, check=True)
    ran = subprocess.run([tmp_path / "qsort_ints"], capture_output=True, timeout=60, check=False)
    expected = subprocess.run([reference], capture_output=True, timeout=60, check=False)
    assert (ran.returncode, ran.stdout) == (expected.returncode, expected.stdout)


@pytest.fixture()
def only_llvm22_ranker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The shipped rankers as the package would see them with only LLVM 22's shipped."""
    real = shipped.shipped_ranker(22)
    if not real.is_file():
        pytest.fail(f"{real} is not shipped")
    monkeypatch.setattr(shipped, "shipped_majors", lambda: (22,))
    monkeypatch.setattr(
        shipped, "shipped_ranker", lambda major: real if major == 22 else tmp_path / "none.json"
    )
    shipped._ranker_file.cache_clear()
    yield real
    shipped._ranker_file.cache_clear()


def test_an_llvm_without_a_ranker_gets_the_nearest_ones_lists_adapted_and_beats_oz(
    compiler: Compiler, only_llvm22_ranker: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        path = shipped.ranker_file(compiler)
    assert f"No ranker is shipped for LLVM {compiler.llvm_version}" in caplog.text and "22." in caplog.text
    ranker = load(path, compiler)  # fits the reference LLVM and its pass set
    source = load(only_llvm22_ranker)
    adapted = ranker.manifest["adapted_from"]
    assert adapted["llvm_version"].startswith("22.") and adapted["candidates"] == len(source.pipelines)
    assert 0 < len(ranker.pipelines) <= len(source.pipelines)
    members = set(compiler.pass_set.members)
    for text in ranker.pipelines:
        assert compiler.check(parse_pipeline(text)) == text
        assert all(str(PassList((node,))) in members for node in parse_pipeline(text))
    # Asked again, the cached file is used.
    assert shipped.ranker_file(compiler) == path
    gains = 0
    for source_file in SOME_EXAMPLES:
        program = compiler.load(source_file)
        oz = compiler.measure_oz(program).binary_size
        ranked = ranker.rank(program.ir)[:10]
        best = min(compiler.measure(program, parse_pipeline(text)).binary_size for text in ranked)
        gains += best < oz
    assert gains >= 1


def test_adapting_keeps_known_passes_respells_parameters_and_drops_the_rest(compiler: Compiler) -> None:
    base = load(shipped.shipped_ranker(19), compiler)
    respelled = "function(simplifycfg<bonus-inst-threshold=3>)"
    pipelines = ("function(sroa),module(no-such-pass)", "module(no-such-pass)", "function(sroa)", respelled)
    ranker = dataclasses.replace(
        base, pipelines=pipelines, frequency=(1, 2, 3, 4), model=FixedOrder((2, 3, 0, 1))
    )
    adapted = shipped.adapt_ranker(ranker, compiler)
    simplifycfg = next(m for m in compiler.pass_set.members if m.startswith("function(simplifycfg"))
    assert adapted.pipelines == ("function(sroa)", simplifycfg)
    assert adapted.frequency == (1, 4) and adapted.model == FixedOrder((1, 0))
    info = adapted.manifest["adapted_from"]
    assert (info["elements_dropped"], info["elements_replaced"], info["kept"]) == (2, 1, [0, 3])
    with pytest.raises(InvalidInput, match="None of the shipped ranker's lists"):
        shipped.adapt_ranker(dataclasses.replace(ranker, pipelines=("module(no-such-pass)",) * 4), compiler)


def test_the_nearest_shipped_major() -> None:
    assert shipped.nearest_major(20, (19, 22)) == 19
    assert shipped.nearest_major(21, (19, 22)) == 22
    assert shipped.nearest_major(17, (19, 22)) == 19
    assert shipped.nearest_major(30, (19, 22)) == 22
    with pytest.raises(InvalidInput):
        shipped.nearest_major(19, ())
    assert set(shipped.shipped_majors()) >= {19, 22}
