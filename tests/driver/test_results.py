"""``cc --results DIR`` uses only records tune validated, in the build's objective, as one list.

A real ``llm-compiler tune --no-validate`` run writes the records; the real driver
builds the unit with them (``--predictor none``, so that what the tuned record does not
give is -Oz), and its object, its log line and its standard error are read.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.core.objective import Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.driver.choose import BEST_FILE, Choice, FirstOf, OzOnly, TunedResults
from llm_compiler.errors import InvalidInput
from tests.conftest import EXAMPLES, run_cli

#: Where the unit is compiled: the same folder for every build, so that its IR (which
#: names the source as the build gave it) is the IR tune saw.
UNIT = "unit.c"


def cc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli("cc", "--predictor", "none", "--cache", "off", *args, cwd=cwd)


def build(
    folder: Path, results: Path, output: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Builds the unit with ``--results results``; the command and its log line."""
    log = folder / f"{output}.jsonl"
    done = cc("--results", str(results), "--log", str(log), "-O2", "-c", UNIT, "-o", output, cwd=folder)
    assert done.returncode == 0, done.stderr
    [line] = [json.loads(text) for text in log.read_text().splitlines()]
    return done, line


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """qsort_ints.c built at -Oz (no chooser; its IR saved), then ``tune --no-validate``
    on that IR (a few seconds): its folder, record and -Oz object."""
    folder = tmp_path_factory.mktemp("results")
    shutil.copy(EXAMPLES / "qsort_ints.c", folder / UNIT)
    log = folder / "oz.jsonl"
    oz = cc("--save-ir", "ir", "--log", str(log), "-O2", "-c", UNIT, "-o", "oz.o", cwd=folder)
    assert oz.returncode == 0, oz.stderr
    [line] = [json.loads(text) for text in log.read_text().splitlines()]
    assert line["origin"] == "oz" and line["kept"] in ("oz", "clang-oz")
    tune = run_cli(
        "tune", "ir", "--no-validate", "--budget", "10", "--broadcast", "0", "--jobs", "2", "--out", "tuned",
        cwd=folder,
    )  # fmt: skip
    assert tune.returncode == 0, tune.stderr
    [record] = [json.loads(text) for text in (folder / "tuned" / BEST_FILE).read_text().splitlines()]
    assert record["program_id"] == line["program_id"]
    return {"folder": folder, "record": record, "oz": (folder / "oz.o").read_bytes(), "oz_line": line}


def results_folder(folder: Path, name: str, record: dict[str, Any]) -> Path:
    """A folder holding ``best.jsonl`` with ``record`` alone."""
    (folder / name).mkdir()
    (folder / name / BEST_FILE).write_text(json.dumps(record) + "\n")
    return folder / name


def test_an_unvalidated_list_is_not_used(tuned: dict[str, Any]) -> None:
    record, folder = tuned["record"], tuned["folder"]
    # The run found a list smaller than -Oz, and says that nothing checked it.
    assert record["best_pipeline"] != OZ_PIPELINE and record["best_size"] < record["oz_size"]
    assert (record["validated"], record["verdict"], record["objective"]) == (
        False,
        "not-checked",
        "binary-size",
    )
    done, line = build(folder, folder / "tuned", "unvalidated.o")
    assert (folder / "unvalidated.o").read_bytes() == tuned["oz"]
    assert (line["origin"], line["pipeline"], line["kept"]) == ("oz", OZ_PIPELINE, tuned["oz_line"]["kept"])
    why = "not used: it was not validated (tune --no-validate); run tune without --no-validate"
    assert why in line["reason"]
    assert done.stderr.splitlines() == [
        f"llm-compiler cc: tuned list for {record['program']} ({folder / 'tuned' / BEST_FILE}) {why}"
    ]


def test_a_validated_record_is_used_and_others_are_refused(tuned: dict[str, Any]) -> None:
    folder = tuned["folder"]
    validated = {
        **tuned["record"],
        "validated": True,
        "verdict": "validated",
        "validation": "passed: (by hand)",
    }
    done, line = build(folder, results_folder(folder, "validated", validated), "validated.o")
    assert done.stderr == ""
    assert (line["origin"], line["pipeline"]) == ("tuned", validated["best_pipeline"])
    assert line["kept"] == "chosen" and line["size"] < line["oz_size"]
    assert (
        f"{validated['best_size']} bytes vs -Oz {validated['oz_size']} (llc, binary-size), validated"
        in line["reason"]
    )
    assert (folder / "validated.o").read_bytes() != tuned["oz"]

    per_function = {"base": validated["best_pipeline"], "functions": {"sort_ints": "function(sroa)"}}
    refused = {
        "instructions": ({**validated, "objective": "ir-instructions"}, "it was tuned for ir-instructions ("),
        "per-function": ({**validated, "function_lists": per_function}, "it keeps per-function lists"),
        "old": (
            {k: v for k, v in validated.items() if k not in ("validated", "verdict")},
            "the record predates validation records",
        ),
    }
    for name, (record, why) in refused.items():
        done, line = build(folder, results_folder(folder, name, record), f"{name}.o")
        assert (folder / f"{name}.o").read_bytes() == tuned["oz"], name
        assert (line["origin"], line["pipeline"]) == ("oz", OZ_PIPELINE), name
        assert why in line["reason"], (name, line["reason"])
        [warning] = done.stderr.splitlines()
        assert warning.startswith(f"llm-compiler cc: tuned list for {record['program']} (") and why in warning


def test_the_chooser_says_why_it_refuses_and_warns_once(tmp_path: Path) -> None:
    program = Program(name="p", ir="define i32 @f() {\n  ret i32 0\n}\n")
    other = Program(name="q", ir="")
    base = {
        "status": "ok",
        "objective": "binary-size",
        "best_size": 10,
        "oz_size": 12,
        "validation": "passed",
    }
    kept = {
        **base,
        "program_id": program.id,
        "best_pipeline": "function(sroa)",
        "validated": True,
        "verdict": "validated",
    }
    (tmp_path / BEST_FILE).write_text(
        json.dumps(kept) + "\n" + json.dumps({**base, "program_id": other.id, "status": "oz-failed"}) + "\n"
    )
    warned: list[str] = []
    tuned = TunedResults(tmp_path, warn=warned.append)
    choice = tuned.choose(program)
    assert choice is not None and (choice.pipeline, choice.origin) == ("function(sroa)", "tuned")
    assert "10 bytes vs -Oz 12 (llc, binary-size), validated: passed" in choice.reason
    assert tuned.refusal(program) is None and warned == []
    # The text-size build refuses the binary-size record, once on stderr, each time in the log.
    by_text = TunedResults(tmp_path, Objective.TEXT_SIZE, warn=warned.append)
    first, second = FirstOf(by_text, OzOnly()).choose(program), FirstOf(by_text).choose(program)
    for refused in (first, second):
        assert isinstance(refused, Choice) and refused.origin == "oz" and refused.pipeline == OZ_PIPELINE
        assert "it was tuned for binary-size (10 bytes against -Oz's 12)" in refused.reason
    assert first.reason.endswith("--oz: never beyond -Oz")
    assert second.reason.endswith("no chooser had a list for this unit")
    assert len(warned) == 1 and "run tune --objective text-size" in warned[0]
    # A unit tune did not finish is refused; a unit it never saw is not a refusal.
    assert tuned.choose(other) is None and "status oz-failed" in str(tuned.refusal(other))
    unseen = Program(name="r", ir="; another unit\n")
    assert tuned.choose(unseen) is None and tuned.refusal(unseen) is None
    assert FirstOf(tuned).choose(unseen).reason == "no chooser had a list for this unit"
    with pytest.raises(InvalidInput, match=r"best\.jsonl"):
        TunedResults(tmp_path / "missing")
