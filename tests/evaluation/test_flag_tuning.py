"""evaluate flag-tuning: figures checked by hand, systems side by side, reports, resuming a killed run."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llm_compiler.core.metrics import geometric_mean_improvement
from llm_compiler.errors import InvalidInput
from llm_compiler.evaluation.figures import mape, metrics, summarize
from llm_compiler.evaluation.flag_tuning import system_kind
from llm_compiler.evaluation.results import Row
from tests.conftest import EXAMPLES, ROOT, run_cli
from tests.models.programs import DATA, TAUGHT


def _row(oz: int, zero_shot: int, size: int, **extra: object) -> Row:
    values: dict[str, object] = {
        "unit": f"u{oz}",
        "package": "p",
        "system": "s",
        "oz_size": oz,
        "unoptimized_size": 2 * oz,
        "zero_shot_size": zero_shot,
        "size": size,
        "validated": size < oz,
        "unvalidated_size": zero_shot,
        "outcome": "improved" if size < oz else "oz",
        "pipeline": "x",
        "compiles": 3,
        "seconds": 1.0,
    }
    values.update(extra)
    return Row(**values)  # type: ignore[arg-type]


def test_figures_by_hand() -> None:
    rows = [
        _row(100, 90, 90, predicted_before=220, predicted_after=95, measured_after=90),
        _row(200, 220, 200, predicted_before=360, predicted_after=200, measured_after=220),  # a regression
        _row(50, 50, 50, outcome="parse-error", unvalidated_size=None),
    ]
    figures = metrics(rows)
    assert figures["geomean_zero_shot"] == pytest.approx(1 - (0.9 * 1.1 * 1.0) ** (1 / 3))
    assert figures["geomean_backup"] == pytest.approx(1 - 0.9 ** (1 / 3))
    assert figures["improved"] == pytest.approx(1 / 3) and figures["regressed"] == pytest.approx(1 / 3)
    assert figures["outcomes"] == {
        "improved": pytest.approx(1 / 3),
        "oz": pytest.approx(1 / 3),
        "parse-error": pytest.approx(1 / 3),
    }
    # MAPE of predicted sizes: before against the unoptimized size, after against the measured one.
    assert figures["mape_before"] == pytest.approx((20 / 200 + 40 / 400) / 2)
    assert figures["mape_after"] == pytest.approx((5 / 90 + 20 / 220) / 2)
    # Found, not validated: the regression counts as -Oz (-Oz backup), the unreadable unit not at all.
    assert figures["geomean_unvalidated"] == pytest.approx(1 - math.sqrt(0.9 * 1.0))
    assert figures["compiles_per_unit"] == 3 and figures["units"] == 3
    assert mape([(110, 100), (45, 50)]) == pytest.approx(0.1) and mape([]) is None
    summary = summarize(rows, llvm_version="19", programs="p", settings={})
    assert summary["systems"]["s"] == figures and summary["packages"]["p"]["s"] == figures


def test_systems_are_named_or_refused() -> None:
    names = ("oz", "o3", "passes:function(sroa)", "tune:100", "hf:x", "replay:f", "builtin", "common:10")
    assert [system_kind(s) for s in (*names, "builtin:k=3", "random:10")] == [
        *("fixed", "fixed", "fixed", "tune", "model", "model", "lists", "lists", "lists", "lists")
    ]
    for bad in ("tune:", "tune:0", "o4", "llama:x", "random:", "random:0"):
        with pytest.raises(InvalidInput, match="Unknown system"):
            system_kind(bad)


def _replay(path: Path, compiler_prompts: dict[str, str]) -> Path:
    lines = []
    for name, prompt in compiler_prompts.items():
        pipeline, before, after = TAUGHT[name]
        answer = (
            f"Run opt -p '{pipeline}' to reduce the binary size from {before} bytes to {after} bytes:"
            if pipeline
            else f"The input code is already optimal: its binary size is {before} bytes."
        )
        lines.append(json.dumps({"prompt": prompt, "completions": [answer]}))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory: pytest.TempPathFactory, toolchain: object) -> Path:
    from llm_compiler.core.compiler import Compiler
    from llm_compiler.tasks.prompts import flag_tuning_prompt

    with Compiler(engine="subprocess") as compiler:
        prompts = {name: flag_tuning_prompt(compiler.load(DATA / name).ir) for name in TAUGHT}
    return _replay(tmp_path_factory.mktemp("replay") / "answers.jsonl", prompts)


def _command(out: Path, replay: Path, *extra: str) -> list[str]:
    return [
        "evaluate",
        "flag-tuning",
        str(DATA),
        "--system",
        "oz",
        "--system",
        "o3",
        "--system",
        "tune:12",
        "--system",
        f"replay:{replay}",
        "--jobs",
        "1",
        "--out",
        str(out),
        *extra,
    ]


def _headline(report: dict[str, object]) -> dict[str, object]:
    systems = report["systems"]
    assert isinstance(systems, dict)
    return {
        name: {k: v for k, v in figures.items() if k != "seconds_per_unit"}
        for name, figures in systems.items()
    }


@pytest.fixture(scope="module")
def whole_run(replay_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uninterrupted run of the four systems: checked, then the killed run's reference."""
    out = tmp_path_factory.mktemp("flag-tuning") / "run"
    result = run_cli(*_command(out, replay_file))
    assert result.returncode == 0, result.stderr
    return out


def test_systems_side_by_side_with_reports(replay_file: Path, whole_run: Path, tmp_path: Path) -> None:
    out = whole_run
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 4 * len(TAUGHT)
    by = {(Path(r["unit"]).name, r["system"]): r for r in rows}
    for name, (pipeline, oz, after) in TAUGHT.items():
        assert by[(name, "oz")]["size"] == oz
        model = by[(name, f"replay:{replay_file}")]
        assert model["size"] == after and model["predicted_after"] == (after if pipeline else None)
        assert model["outcome"] == ("improved" if pipeline else "model-says-optimal")
        assert by[(name, "tune:12")]["size"] <= oz and by[(name, "o3")]["size"] <= oz
    report = json.loads((out / "report.json").read_text())
    model_figures = report["systems"][f"replay:{replay_file}"]
    expected = 1 - ((112 / 114) * (168 / 182) * 1.0) ** (1 / 3)
    assert model_figures["geomean_backup"] == pytest.approx(expected)
    assert model_figures["mape_after"] == 0 and report["systems"]["oz"]["geomean_backup"] == 0
    assert "paper" in (out / "report.md").read_text().lower()
    assert (out / "report.html").read_text().count("data:image/png;base64") >= 2
    assert "Unknown system" in run_cli(*_command(tmp_path / "x", replay_file, "--system", "o9")).stderr
    again = run_cli(*_command(out, replay_file))
    assert again.returncode == 2 and "--resume" in again.stderr


def test_a_killed_run_resumes_to_the_same_report(replay_file: Path, whole_run: Path, tmp_path: Path) -> None:
    whole = whole_run
    killed = tmp_path / "killed"
    process = subprocess.Popen(
        [sys.executable, "-m", "llm_compiler", *_command(killed, replay_file)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    results = killed / "results.jsonl"
    deadline = time.monotonic() + 300
    while (
        not (results.exists() and len(results.read_text().splitlines()) >= 4) and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert len(results.read_text().splitlines()) < 4 * len(TAUGHT), "the run finished before it was killed"
    resumed = run_cli(*_command(killed, replay_file, "--resume"))
    assert resumed.returncode == 0, resumed.stderr
    assert _headline(json.loads((killed / "report.json").read_text())) == _headline(
        json.loads((whole / "report.json").read_text())
    )
    compared = run_cli("evaluate", "compare", str(whole), str(killed))
    assert compared.returncode == 0 and str(whole) in compared.stdout and "tune:12" in compared.stdout


@pytest.mark.slow
def test_examples_with_a_tiny_model(tmp_path: Path) -> None:
    """On (two of) the examples: -Oz, the autotuner and a tiny model of the released shape."""
    pytest.importorskip("torch")
    tiny_models = pytest.importorskip("tests.models.tiny_models")
    model = tiny_models.hf_model_dir("untrained")
    out = tmp_path / "examples"
    result = run_cli(
        "evaluate",
        "flag-tuning",
        str(EXAMPLES),
        "--limit",
        "2",
        "--system",
        "oz",
        "--system",
        "tune:8",
        "--system",
        f"hf:{model}",
        "--device",
        "cpu",
        "--max-tokens",
        "16",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((out / "report.json").read_text())
    untrained = report["systems"][f"hf:{model}"]
    assert untrained["geomean_backup"] == 0 and untrained["regressed"] == 0  # nonsense keeps -Oz
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    tuned = [row for row in rows if row["system"] == "tune:8"]
    assert len(tuned) == 2
    for row in tuned:  # the autotuner keeps -Oz or a smaller list, and says which
        assert row["size"] < row["oz_size"] if row["outcome"] == "improved" else row["size"] == row["oz_size"]
    expected = geometric_mean_improvement([(row["oz_size"], row["size"]) for row in tuned])
    assert report["systems"]["tune:8"]["geomean_backup"] == pytest.approx(expected)
    assert all((out / name).is_file() for name in ("report.md", "report.html", "results.jsonl"))


def test_bleu_by_hand() -> None:
    from llm_compiler.models.disassemble import bleu

    # n-gram precisions 6/6, 4/5, 3/4, 2/3; brevity penalty exp(1 - 7/6).
    expected = math.exp(1 - 7 / 6) * (1.0 * 0.8 * 0.75 * (2 / 3)) ** 0.25
    assert bleu("the cat sat on the mat", "the cat sat on the red mat") == pytest.approx(expected, rel=1e-6)
    assert bleu("movl %eax, %ebx\nretq", "movl %eax, %ebx\nretq") == 1.0
