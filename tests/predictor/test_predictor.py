"""The built-in predictor end to end: a real tuning run, training, ranking, optimize and evaluate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.store import Store
from llm_compiler.errors import InvalidInput
from llm_compiler.predictor.dataset import TrainingUnit, build_training_data, select_candidates
from llm_compiler.predictor.proposer import RankedLists
from llm_compiler.predictor.ranker import load
from llm_compiler.predictor.shipped import ranker_file, shipped_ranker
from llm_compiler.selection.registry import DEFAULT_K, ProposerContext, first_count, make_proposer, parse_spec
from llm_compiler.toolchain.elf import berkeley_size
from tests.conftest import EXAMPLES, run_cli
from tests.models.programs import DATA

PACKAGES = {
    "pkga": [EXAMPLES / "crc32.c", EXAMPLES / "bitops.c"],
    "pkgb": [EXAMPLES / "strings.c", EXAMPLES / "fixed_point.c", DATA / "clamp.c"],
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real tuning run over two small packages, and a predictor trained on it."""
    root = tmp_path_factory.mktemp("predictor")
    for package, sources in PACKAGES.items():
        (root / package).mkdir()
        for source in sources:
            shutil.copy(source, root / package / source.name)
    tuned = run_cli("tune", "pkga", "pkgb", "--budget", "20", "--jobs", "2", "--out", "run", cwd=root)
    assert tuned.returncode == 0, tuned.stderr
    result = run_cli("predictor", "train", "--tuning", "run", "--out", "first", cwd=root)
    assert result.returncode == 0, result.stderr
    assert "Held-out packages" in result.stdout
    return root


def test_training_records_its_provenance_and_is_repeatable(trained: Path, compiler: Compiler) -> None:
    again = run_cli("predictor", "train", "--tuning", "run", "--out", "second", cwd=trained)
    assert again.returncode == 0, again.stderr
    first = (trained / "first" / "ranker.json").read_bytes()
    assert first == (trained / "second" / "ranker.json").read_bytes()
    ranker = load(trained / "first" / "ranker.json", compiler)
    manifest = ranker.manifest
    assert manifest["llvm_version"] == compiler.llvm_version
    assert manifest["training"]["packages"] == {"pkga": 2, "pkgb": 3}
    assert manifest["training"]["units"] == 5
    held_out = manifest["held_out"]
    assert {"learners", "chosen", "adaptive"} <= set(held_out)
    assert {"frequency", "coverage", held_out["chosen"]} <= set(held_out["learners"])
    assert any(name.startswith("boosted:") for name in held_out["learners"])
    # Every candidate is a list the tuning run kept or broadcast, accepted by this LLVM.
    lines = (trained / "run" / "evaluations.jsonl").read_text().splitlines()
    evaluations = {json.loads(line)["pipeline"] for line in lines}
    assert ranker.pipelines and set(ranker.pipelines) <= evaluations
    for pipeline in ranker.pipelines:
        compiler.passes(pipeline)
    # The training data has every unit measured under every candidate.
    data = json.loads((trained / "first" / "training.json").read_text())
    assert len(data["sizes"]) == 5 and all(len(row) == len(ranker.pipelines) for row in data["sizes"])
    program = compiler.load(trained / "pkga" / "crc32.c")
    assert sorted(ranker.rank(program.ir)) == sorted(ranker.pipelines)


def test_training_learns_in_the_objective_asked_for(
    trained: Path, compiler: Compiler, tmp_path: Path
) -> None:
    result = run_cli(
        "predictor", "train", "--tuning", "run", "--out", "text", "--objective", "text-size", cwd=trained
    )
    assert result.returncode == 0, result.stderr
    data = json.loads((trained / "text" / "training.json").read_text())
    assert data["provenance"]["objective"] == "text-size"
    crc32 = next(unit for unit in data["units"] if unit["name"].endswith("crc32.c"))
    program = compiler.load(trained / "pkga" / "crc32.c")
    assert crc32["oz_size"] == compiler.measure_oz(program).text
    # A run that counted IR only has no object sizes to learn bytes from.
    store = Store(tmp_path / "tune.sqlite")
    store.check_meta({"llvm_version": compiler.llvm_version, "objective": "ir-instructions"}, resume=False)
    store.close()
    with pytest.raises(InvalidInput, match="measures no object"):
        build_training_data(compiler, [tmp_path])


def test_a_ranker_for_another_llvm_or_pass_set_is_refused(trained: Path, compiler: Compiler) -> None:
    record = json.loads((trained / "first" / "ranker.json").read_text())
    for key, value, words in (
        ("llvm_major", 17, "trained for LLVM 17"),
        ("pass_set", "0123456789abcdef", "another searchable pass set"),
        ("feature_version", 0, "features of version 0"),
    ):
        changed = json.loads(json.dumps(record))
        changed["manifest"][key] = value
        path = trained / f"changed-{key}.json"
        path.write_text(json.dumps(changed))
        with pytest.raises(InvalidInput, match=words) as error:
            load(path, compiler)
        assert "llm-compiler predictor train" in str(error.value)
    (trained / "garbage.json").write_text("{not json")
    with pytest.raises(InvalidInput, match="not a predictor file"):
        load(trained / "garbage.json", compiler)


def test_optimize_with_a_trained_predictor_is_never_larger_than_oz(trained: Path) -> None:
    spec = f"builtin:{trained / 'first' / 'ranker.json'},k=3"
    result = run_cli("optimize", "pkga", "pkgb", "--model", spec, "--out", "optimized", "--json", cwd=trained)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == 5
    for record in records:
        assert record["model"] == spec
        assert record["binary_size"] <= record["oz_size"]
        assert 1 <= len(record["candidates"]) <= 3
        if record["fallback"] is None:
            chosen = next(c for c in record["candidates"] if c["run"] == record["chosen"])
            assert chosen["verdict"] == "validated"
        written = trained / "optimized" / (record["unit"].replace("/", "_") + ".o")
        assert berkeley_size(written.read_bytes()).binary_size == record["binary_size"]
    assert any(record["binary_size"] < record["oz_size"] for record in records)


def test_optimize_uses_the_shipped_predictor_by_default(tmp_path: Path) -> None:
    result = run_cli("optimize", str(EXAMPLES / "crc32.c"), "-o", str(tmp_path / "crc32.o"), "--json")
    assert result.returncode == 0, result.stderr
    (record,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert record["model"] == "builtin"
    assert record["binary_size"] <= record["oz_size"]
    assert 1 <= len(record["candidates"]) <= DEFAULT_K
    assert berkeley_size((tmp_path / "crc32.o").read_bytes()).binary_size == record["binary_size"]


def test_the_shipped_predictor_fits_the_installed_llvm(compiler: Compiler) -> None:
    path = ranker_file(compiler)
    assert path == shipped_ranker(compiler.toolchain.major)
    ranker = load(path, compiler)
    held_out = ranker.manifest["held_out"]
    figures = held_out["learners"][held_out["chosen"]] if "learners" in held_out else held_out["predictor"]
    assert figures["top_10"] > 0
    assert set(ranker.manifest["training"]["packages"]).isdisjoint(
        {"bzip2", "cjson", "giflib", "nettle", "speex"}
    )


def test_evaluate_sets_the_predictor_beside_its_baselines(trained: Path) -> None:
    spec = f"builtin:{trained / 'first' / 'ranker.json'},k=2"
    systems = [spec, "common:2", "random:2"]
    arguments = [part for system in systems for part in ("--system", system)]
    result = run_cli("evaluate", "flag-tuning", "pkga", *arguments, "--out", "eval", cwd=trained)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in (trained / "eval" / "results.jsonl").read_text().splitlines()]
    assert {row["system"] for row in rows} == set(systems)
    for row in rows:
        assert row["size"] <= row["oz_size"]
        assert row["validated"] == (row["outcome"] == "improved")
        assert row["compiles"] <= 1 + 2
    report = json.loads((trained / "eval" / "report.json").read_text())
    assert set(report["systems"]) == set(systems)


def test_candidates_are_chosen_greedily_by_summed_gain() -> None:
    units = [TrainingUnit(str(i), f"p/{i}", "p", 100, ()) for i in range(3)]
    pipelines = ["a", "b", "c", "d"]
    matrix = [
        [90, 95, 100, None],  # a helps unit 0 most
        [100, 95, 80, 100],  # c helps unit 1 most
        [100, 95, 100, 120],  # only b helps unit 2
    ]
    # c (gain log 1.25) first, then a, then b (unit 2's only gain), then d (adds nothing).
    assert select_candidates(units, pipelines, matrix, [0, 0, 0, 5], 4) == [2, 0, 1, 3]
    assert select_candidates(units, pipelines, matrix, [0, 0, 0, 5], 2) == [2, 0]


def test_predictor_specs(compiler: Compiler) -> None:
    assert first_count(parse_spec("builtin")) == DEFAULT_K and parse_spec("builtin").argument == ""
    assert first_count(parse_spec("builtin:k=3")) == 3
    assert first_count(parse_spec("builtin:max=16")) == 16
    adaptive, _ = make_proposer("builtin:max=4", ProposerContext(compiler))
    fixed, _ = make_proposer("builtin:k=4", ProposerContext(compiler))
    assert isinstance(adaptive, RankedLists) and adaptive.stops_early
    assert isinstance(fixed, RankedLists) and not fixed.stops_early
    # stop=X moves the adaptive default's threshold (the shipped ranker has a gauge).
    fewer, _ = make_proposer("builtin:stop=0.008", ProposerContext(compiler))
    assert isinstance(fewer, RankedLists) and fewer.stops_early and fewer.ranker.stop == 0.008
    assert adaptive.ranker.stop is not None and adaptive.ranker.stop < 0.008
    assert fewer.ranker.pipelines == adaptive.ranker.pipelines
    assert first_count(parse_spec(f"builtin:{shipped_ranker(19)},k=2")) == 2
    assert first_count(parse_spec("common:5")) == 5
    common, _ = make_proposer("common:5", ProposerContext(compiler))
    assert isinstance(common, RankedLists) and not common.learned
    for bad in ("builtin:k=0", "builtin:k=x", "common:0", "builtin:k=2,max=3"):
        with pytest.raises(InvalidInput):
            first_count(parse_spec(bad))
    for bad in (
        "builtin:/no/such/file.json",
        "common:x",
        "builtin,depth=3",
        "common:3,k=2,first=1",
        "builtin:stop=x",
        "builtin:stop=nan",
        "builtin:k=3,stop=0.01",
        "common:5,stop=0.01",
    ):
        with pytest.raises(InvalidInput):
            make_proposer(bad, ProposerContext(compiler))


def test_optimize_table_keeps_its_figures_on_a_narrow_terminal() -> None:
    result = run_cli("optimize", str(EXAMPLES / "crc32.c"), env={"COLUMNS": "60"})
    assert result.returncode == 0, result.stderr
    [row] = [line for line in result.stdout.splitlines() if line.startswith("│")]
    assert len(row) <= 60
    oz, kept, change = (cell.strip() for cell in row.split("│")[2:5])
    assert oz.isdigit() and kept.isdigit() and int(kept) <= int(oz), result.stdout
    assert change.endswith("%"), result.stdout
