"""The predictor's training table (real compiles, shards that resume), its learners judged on
held-out packages, boosted trees kept as plain data, and the adaptive number of lists."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.executors import InlineExecutor, Job
from llm_compiler.corpus.program_set import ProgramSet
from llm_compiler.errors import InvalidInput
from llm_compiler.predictor.features import FEATURE_NAMES, FEATURE_VERSION
from llm_compiler.predictor.learners import (
    Boosted,
    FixedOrder,
    SafeFirst,
    by_frequency,
    choose_candidates,
    held_out,
    learners,
    safe_list,
)
from llm_compiler.predictor.ranker import Ranker, load, pass_set_hash
from llm_compiler.predictor.shipped import shipped_ranker
from llm_compiler.predictor.table import build_table, read_table
from llm_compiler.predictor.trees import TreeEnsemble, from_lightgbm, train_lightgbm
from llm_compiler.toolchain.llvm import Toolchain
from tests.conftest import EXAMPLES, run_cli

lightgbm = pytest.importorskip("lightgbm")

LISTS = ["function(instcombine<no-verify-fixpoint>),simplifycfg", "inline,function(sroa)", "globaldce"]
PACKAGES = {
    "pkga": ["crc32.c", "bitops.c"],
    "pkgb": ["strings.c", "fixed_point.c", "matmul.c"],
}


@pytest.fixture(scope="module")
def compiler(toolchain: Toolchain) -> Iterator[Compiler]:
    """One engine: the table's jobs and the CLI run LLVM's tools either way."""
    with Compiler(toolchain, timeout=120, engine="inprocess", workers=1) as compiler:
        yield compiler


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("table")
    for package, names in PACKAGES.items():
        (root / package).mkdir()
        for name in names:
            shutil.copy(EXAMPLES / name, root / package / name)
    (root / "lists.txt").write_text("\n".join(["# three lists", *LISTS]) + "\n")
    return root


def test_trees_are_lightgbms_own_predictions_as_plain_data() -> None:
    rng = np.random.default_rng(0)
    units, candidates = 300, 12
    features = rng.normal(size=(units * candidates, 5))
    candidate = np.tile(np.arange(candidates), units)
    rows = np.column_stack([features, candidate])
    target = np.where(candidate % 3 == 0, features[:, 0], -features[:, 1]) + rng.normal(size=len(rows)) * 0.1
    for objective, labels, groups in (
        ("regression", target, None),
        ("lambdarank", np.digitize(target, [-1.0, 0.0, 1.0]), [candidates] * units),
    ):
        booster = lightgbm.train(
            {"objective": objective, "verbosity": -1, "num_leaves": 7, "deterministic": True},
            lightgbm.Dataset(rows, label=labels, group=groups, categorical_feature=[5]),
            num_boost_round=30,
        )
        ensemble = from_lightgbm(booster.dump_model())
        assert any(ensemble.categories), "the candidate column is split as a category"
        np.testing.assert_allclose(ensemble.predict(rows), booster.predict(rows), rtol=0, atol=1e-12)
        again = TreeEnsemble.from_json(json.loads(json.dumps(ensemble.to_json())))
        np.testing.assert_array_equal(again.predict(rows), ensemble.predict(rows))
    first = train_lightgbm(rows, target, objective="regression", rounds=20, categorical=5)
    assert first == train_lightgbm(rows, target, objective="regression", rounds=20, categorical=5)
    with pytest.raises(InvalidInput, match="not a tree ensemble"):
        TreeEnsemble.from_json({"feature": [0], "threshold": []})


def test_the_table_is_made_in_shards_that_resume(packages: Path, compiler: Compiler) -> None:
    arguments = ("predictor", "table", "pkga", "pkgb", "--lists", "lists.txt", "--shard-size", "2")
    result = run_cli(*arguments, "--out", "table", cwd=packages)
    assert result.returncode == 0, result.stderr
    assert "5 units x 3 lists in 3 shards (3 written now" in result.stdout
    shards = sorted(p.name for p in (packages / "table" / "shards").iterdir())
    assert shards == ["pkga-unit-0000.jsonl.gz", "pkgb-unit-0000.jsonl.gz", "pkgb-unit-0001.jsonl.gz"]
    table = read_table(packages / "table")
    assert table.pipelines == tuple(LISTS) and table.header["llvm_version"] == compiler.llvm_version
    assert {shard["units"] for shard in table.shards} == {1, 2} and all(
        s["seconds"] > 0 for s in table.shards
    )
    crc32 = next(unit for unit in table.units if unit.name.endswith("crc32.c"))
    program = compiler.load(packages / "pkga" / "crc32.c")
    assert crc32.oz_size == compiler.measure_oz(program).binary_size
    assert crc32.sizes[2] == compiler.measure(program, compiler.passes(LISTS[2])).binary_size

    # A second run measures only the shard that is missing, and writes the same rows.
    def rows() -> list[bytes]:
        return gzip.decompress(
            (packages / "table" / "shards" / "pkgb-unit-0001.jsonl.gz").read_bytes()
        ).splitlines()[1:]

    before = rows()
    (packages / "table" / "shards" / "pkgb-unit-0001.jsonl.gz").unlink()
    again = run_cli(*arguments, "--out", "table", cwd=packages)
    assert again.returncode == 0, again.stderr
    assert "(1 written now, 2 there already" in again.stdout
    assert rows() == before
    # On a Dask cluster the same units give the same rows.
    dask = run_cli(*arguments, "--out", "dask", "--dask-local", "2", cwd=packages)
    assert dask.returncode == 0, dask.stderr
    assert [u.sizes for u in read_table(packages / "dask").units] == [u.sizes for u in table.units]
    # Another pool would not line up with the shards: refused, naming the fix.
    (packages / "other.txt").write_text("globaldce\n")
    refused = run_cli("predictor", "table", "pkga", "--lists", "other.txt", "--out", "table", cwd=packages)
    assert refused.returncode != 0 and "another pool hash" in refused.stderr
    bad = run_cli(
        "predictor",
        "table",
        "pkga",
        "--lists",
        "lists.txt",
        "--out",
        "bad",
        "--shard-size",
        "0",
        cwd=packages,
    )
    assert bad.returncode != 0 and "--shard-size must be at least 1" in bad.stderr
    (packages / "wrong.txt").write_text("no-such-pass\n")
    unknown = run_cli("predictor", "table", "pkga", "--lists", "wrong.txt", "--out", "wrong", cwd=packages)
    assert unknown.returncode != 0 and "no-such-pass" in unknown.stderr
    # A damaged shard is named, with what to do.
    copy = packages / "damaged"
    shutil.copytree(packages / "table", copy)
    (copy / "shards" / "pkga-unit-0000.jsonl.gz").write_bytes(
        gzip.compress(b'{"shard": 1}\n{"sizes": [1]}\n')
    )
    with pytest.raises(InvalidInput, match=r"pkga-unit-0000\.jsonl\.gz: a damaged shard"):
        read_table(copy)


class _StopsAfter(InlineExecutor):
    """Runs jobs in this process, and is interrupted (as by Ctrl-C) after ``count`` results."""

    def __init__(self, count: int) -> None:
        self.count = count

    def run(self, jobs: Sequence[Job]) -> Iterator[Any]:
        for done, result in enumerate(super().run(jobs)):
            if done == self.count:
                raise KeyboardInterrupt
            yield result


def test_an_interrupted_table_keeps_its_finished_shards(packages: Path, compiler: Compiler) -> None:
    sources = ProgramSet([packages / "pkga", packages / "pkgb"])
    out = packages / "interrupted"
    with pytest.raises(KeyboardInterrupt):
        build_table(compiler, sources, out, LISTS, shard_size=1, executor=_StopsAfter(3))
    # Shards are taken round-robin: the first of each package came first.
    assert sorted(p.name for p in (out / "shards").iterdir()) == [
        "pkga-unit-0000.jsonl.gz",
        "pkga-unit-0001.jsonl.gz",
        "pkgb-unit-0000.jsonl.gz",
    ]
    counts = build_table(compiler, sources, out, LISTS, shard_size=1)
    assert counts == {"shards": 5, "written": 2, "skipped": 3, "units": 2, "failed": 0}
    assert len(read_table(out).units) == 5


def test_a_ranker_trained_on_a_table_is_repeatable_and_judged_held_out(
    packages: Path, compiler: Compiler
) -> None:
    sources = ProgramSet([packages / "pkga", packages / "pkgb"])
    build_table(compiler, sources, packages / "for-training", LISTS, shard_size=2)
    for out in ("first", "second"):
        result = run_cli(
            "predictor", "train", "--table", "for-training", "--out", out, "--candidates", "3", cwd=packages
        )
        assert result.returncode == 0, result.stderr
    assert (packages / "first" / "ranker.json").read_bytes() == (
        packages / "second" / "ranker.json"
    ).read_bytes()
    assert "Held-out packages" in result.stdout and "boosted:100" in result.stdout
    ranker = load(packages / "first" / "ranker.json", compiler)
    assert set(ranker.pipelines) <= set(LISTS)
    learned = ranker.manifest["held_out"]["learners"]
    assert {"frequency", "coverage", "boosted:100", "boosted-rank:100"} <= set(learned)
    assert all(
        figures["top_1"] <= figures["top_3"] <= figures["top_10"] <= figures["oracle"]
        for figures in learned.values()
    )
    program = compiler.load(packages / "pkgb" / "matmul.c")
    assert 1 <= len(ranker.adaptive(program.ir, 2)) <= 2
    assert sorted(ranker.rank(program.ir)) == sorted(ranker.pipelines)
    shown = run_cli("predictor", "show", str(packages / "first" / "ranker.json"), cwd=packages)
    assert shown.returncode == 0 and "(chosen)" in shown.stdout


def test_learners_judged_on_held_out_packages_find_what_features_tell() -> None:
    # Candidate 0 gains on units whose first feature is high, candidate 1 on the others;
    # candidate 2 never gains. A learner that reads the features gets both right.
    rng = np.random.default_rng(1)
    units = 240
    raw = np.column_stack([rng.integers(0, 2, units) * 3.0, rng.normal(size=units)])
    gains = np.full((units, 3), -0.08)
    gains[raw[:, 0] > 1, 0] = 0.05
    gains[raw[:, 0] < 1, 1] = 0.04
    groups = np.arange(units) % 3
    oz = np.full(units, 1000.0)
    figures, curves = held_out(raw, gains, groups, oz, 3, learners(), stops=(0.0, 0.01))
    assert figures["frequency"]["top_1"] < 3.0 < figures["boosted:100"]["top_1"]
    assert figures["boosted:100"]["first"] > 0 > figures["frequency"]["first"]
    assert figures["neighbours:5,0.0,gain"]["top_1"] > 3.0
    assert figures["boosted:100"]["top_3"] == pytest.approx(figures["boosted:100"]["oracle"])
    # With the stop at 0.01 the boosted ranker measures one list a unit and loses nothing.
    assert curves["boosted:100"]["0.01"]["lists"] == pytest.approx(1.0)
    assert curves["boosted:100"]["0.01"]["gain"] == pytest.approx(figures["boosted:100"]["top_3"])
    # The safe list first: here none gains on every package, so the least harmful one.
    assert figures["frequency+safe-first"]["top_3"] == pytest.approx(figures["frequency"]["top_3"])
    assert safe_list(gains, groups) in (0, 1)
    model = SafeFirst(by_frequency(gains), 2)
    assert model.order(raw[0])[0] == 2 and sorted(model.order(raw[0])) == [0, 1, 2]
    assert model.subset([2, 0]).order(raw[0])[0] == 0 and isinstance(model.subset([0, 1]), FixedOrder)
    # Candidates are chosen for packages' coverage: both useful lists, then the useless one.
    assert choose_candidates(gains, groups, 3)[:2] in ([0, 1], [1, 0])
    assert by_frequency(gains).order(raw[0])[2] == 2


def test_the_adaptive_default_stops_where_the_predicted_gain_ends(compiler: Compiler) -> None:
    # One tree: candidate 1 is predicted to gain 1%, the others to lose 1%.
    column = len(FEATURE_NAMES)  # the candidate's index follows the unit's features
    trees = TreeEnsemble(
        (column, -1, -1), (0.0, 0.0, 0.0), ((1,), (), ()), (1, 1, 2), (2, 1, 2), (0.0, 0.01, -0.01), (0,), 1
    )
    gauge = Boosted(trees, (0, 1, 2), "regression", 1)
    pipelines = ("globaldce", "inline", "sroa")
    ir = compiler.load(EXAMPLES / "crc32.c").ir
    ranker = Ranker(pipelines, (0, 0, 0), gauge, gauge, stop=0.001)
    assert ranker.rank(ir)[0] == "inline"
    assert ranker.adaptive(ir, 3) == ["inline"]
    assert Ranker(pipelines, (0, 0, 0), gauge, gauge, stop=-0.1).adaptive(ir, 2) == ["inline", "globaldce"]
    # The order is the model's, the stop the gauge's: none predicted to gain is none measured.
    fixed = FixedOrder((2, 0, 1))
    assert Ranker(pipelines, (0, 0, 0), fixed, gauge, stop=0.001).adaptive(ir, 3) == ["inline"]
    assert Ranker(pipelines, (0, 0, 0), fixed, gauge, stop=0.5).adaptive(ir, 3) == []
    assert Ranker(pipelines, (0, 0, 0), fixed, None, stop=0.5).adaptive(ir, 2) == ["sroa", "globaldce"]
    # A safe list first is always measured; the others as the gauge says.
    safe_first = SafeFirst(FixedOrder((0, 1, 2)), 2)
    assert Ranker(pipelines, (0, 0, 0), safe_first, gauge, stop=0.001).adaptive(ir, 3) == ["sroa", "inline"]
    subset = ranker.subset([1, 2], {})
    assert subset.rank(ir) == ["inline", "sroa"] and subset.adaptive(ir, 2) == ["inline"]


def test_a_ranker_file_of_the_first_format_still_loads(compiler: Compiler) -> None:
    path = shipped_ranker(22)
    if json.loads(path.read_text())["format"] != 1:
        pytest.skip("the shipped LLVM 22 ranker is no longer of the first format")
    ranker = load(path)
    ir = compiler.load(EXAMPLES / "crc32.c").ir
    assert sorted(ranker.rank(ir)) == sorted(ranker.pipelines)
    assert len(ranker.adaptive(ir, 10)) == 10


def test_a_unit_with_no_list_worth_measuring_keeps_oz(compiler: Compiler, tmp_path: Path) -> None:
    column = len(FEATURE_NAMES)
    trees = TreeEnsemble(
        (column, -1, -1), (0.0, 0.0, 0.0), ((1,), (), ()), (1, 1, 2), (2, 1, 2), (0.0, 0.0, -0.01), (0,), 1
    )
    manifest = {
        "llvm_version": compiler.llvm_version,
        "llvm_major": compiler.toolchain.major,
        "pass_set": pass_set_hash(compiler),
        "feature_version": FEATURE_VERSION,
    }
    path = tmp_path / "ranker.json"
    gauge = Boosted(trees, (0, 1, 2), "regression", 1)
    Ranker(("globaldce", "inline", "sroa"), (0, 0, 0), FixedOrder((0, 1, 2)), gauge, 0.001, manifest).save(
        path
    )
    for spec, measured in ((f"builtin:{path}", 0), (f"builtin:{path},k=2", 2)):
        result = run_cli("optimize", str(EXAMPLES / "crc32.c"), "--model", spec, "--json", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        (record,) = [json.loads(line) for line in result.stdout.splitlines()]
        assert len(record["candidates"]) == measured
        assert record["binary_size"] <= record["oz_size"]
