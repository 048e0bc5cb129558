"""``llm-compiler cc --jobs``: its default under a parallel make (``MAKEFLAGS``), with the
values make really passes, and under a real ``make``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from llm_compiler.cli.cc import USAGE, make_runs_in_parallel, parse_driver_options

#: MAKEFLAGS as GNU make 4.3 and 4.4, older GNU make and BSD make pass them to recipes.
PARALLEL = [
    " -j2 --jobserver-auth=3,4",  # GNU make 4.2, 4.3
    "s -j8 --jobserver-auth=fifo:/tmp/GMfifo1234",  # GNU make 4.4, with -s
    "--jobserver-fds=3,4 -j",  # GNU make before 4.2
    " -j",  # make -j: no limit
    "k -j16 -- CFLAGS=-O2",
    " -J 15,16 -j 4",  # BSD make
]
SERIAL = ["", " -j1", "s", "ks -- CFLAGS=-j8", "w -j1 --no-print-directory", "-j 1"]


@pytest.mark.parametrize("makeflags", PARALLEL)
def test_a_parallel_make_measures_one_candidate_at_a_time(
    makeflags: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert make_runs_in_parallel(makeflags)
    options, rest = parse_driver_options(["-c", "x.c"], {"MAKEFLAGS": makeflags})
    assert options.jobs == 1 and rest == ["-c", "x.c"]
    # an explicit choice still wins, on the command line or in the environment
    assert parse_driver_options(["--jobs", "3", "-c", "x.c"], {"MAKEFLAGS": makeflags})[0].jobs == 3
    environ = {"MAKEFLAGS": makeflags, "LLM_COMPILER_CC_JOBS": "2"}
    assert parse_driver_options(["-c", "x.c"], environ)[0].jobs == 2


@pytest.mark.parametrize("makeflags", SERIAL)
def test_a_serial_make_measures_up_to_4_candidates_at_once(
    makeflags: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert not make_runs_in_parallel(makeflags)
    assert parse_driver_options(["-c", "x.c"], {"MAKEFLAGS": makeflags})[0].jobs == 4


def test_the_help_says_what_the_default_is() -> None:
    assert "MAKEFLAGS" in USAGE and "--jobs N" in USAGE


PROBE = """\
import os
from llm_compiler.cli.cc import make_runs_in_parallel, parse_driver_options
options, _ = parse_driver_options(["-c", "x.c"])
print(make_runs_in_parallel(os.environ.get("MAKEFLAGS", "")), options.jobs)
"""


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_under_a_real_make(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(PROBE)
    recipe = f"\t@{sys.executable} probe.py > $@.txt\n"
    (tmp_path / "Makefile").write_text(f"all: a b\na:\n{recipe}b:\n{recipe}")
    skipped = ("MAKE", "MFLAGS", "LLM_COMPILER_CC_JOBS")  # the test's own make, if any, and choices
    environ = {key: value for key, value in os.environ.items() if not key.startswith(skipped)}
    default = parse_driver_options(["-c", "x.c"], {})[0].jobs

    def jobs(*make_arguments: str) -> set[str]:
        subprocess.run(["make", "-B", *make_arguments], cwd=tmp_path, env=environ, check=True, timeout=120)
        return {(tmp_path / f"{name}.txt").read_text().strip() for name in ("a", "b")}

    assert jobs("-j2") == {"True 1"}
    assert jobs("-j") == {"True 1"}
    assert jobs("-j1") == {f"False {default}"}
    assert jobs() == {f"False {default}"}
