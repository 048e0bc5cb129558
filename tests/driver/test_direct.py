"""Direct hits with the real clang and SQLite: an unchanged command is answered without its
front end, with the object, dependency file and warnings it gave; anything changed in what
the front end read, or in the command, compiles again."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from llm_compiler.driver.direct import listed_files, serve, source_entry

HEADER = "#define SCALE {scale}\nstatic inline int scaled(int x) {{ return x * SCALE; }}\n"
SOURCE = """\
#include <string.h>
#include "project.h"
int measure(const char *text) {
    int unused;
    return scaled((int)strlen(text));
}
"""


def write_project(folder: Path, scale: int = 3) -> Path:
    (folder / "my headers").mkdir(parents=True, exist_ok=True)
    (folder / "my headers" / "project.h").write_text(HEADER.format(scale=scale))
    (folder / "unit.c").write_text(SOURCE)
    return folder


def compile_unit(folder: Path, cache: Path, *options: str, flags: tuple[str, ...] = ()) -> str:
    """Runs the driver as a build would; returns its stderr."""
    command = [sys.executable, "-m", "llm_compiler", "cc", "--cache", str(cache), "--predictor", "none"]
    command += [*options, "-O2", "-Wall", "-MD", "-I", "my headers", *flags, "-c", "unit.c", "-o", "unit.o"]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stderr


def direct_hits(cache: Path) -> int:
    with sqlite3.connect(cache / "objects.sqlite") as db:
        row = db.execute("SELECT count FROM counters WHERE name = 'direct'").fetchone()
    return 0 if row is None else int(row[0])


def clang_oz(folder: Path, flags: tuple[str, ...] = ()) -> bytes:
    """What a cache-less driver writes for the unit."""
    fresh = folder / "fresh"
    fresh.mkdir(exist_ok=True)
    command = [sys.executable, "-m", "llm_compiler", "cc", "--cache", "off", "--predictor", "none"]
    command += ["-O2", "-I", "my headers", *flags, "-c", "unit.c", "-o", str(fresh / "unit.o")]
    subprocess.run(command, cwd=folder, capture_output=True, timeout=300, check=True)
    return (fresh / "unit.o").read_bytes()


def test_an_unchanged_command_is_answered_without_its_front_end(tmp_path: Path) -> None:
    folder, cache = write_project(tmp_path / "project"), tmp_path / "cache"
    first = compile_unit(folder, cache, "--log", str(tmp_path / "cc.jsonl"))
    assert "unused variable" in first
    made, depfile = (folder / "unit.o").read_bytes(), (folder / "unit.d").read_text()
    assert "my\\ headers/project.h" in depfile and direct_hits(cache) == 0
    (folder / "unit.o").unlink()
    (folder / "unit.d").unlink()
    again = compile_unit(folder, cache, "--log", str(tmp_path / "cc.jsonl"))
    assert direct_hits(cache) == 1
    assert (folder / "unit.o").read_bytes() == made and (folder / "unit.d").read_text() == depfile
    assert again == first  # the front end's warnings, as it gave them
    lines = [json.loads(line) for line in (tmp_path / "cc.jsonl").read_text().splitlines()]
    assert [line["cached"] for line in lines] == [False, True]
    assert lines[1]["source"] == "unit.c" and lines[1]["size"] == lines[0]["size"]
    # A header touched but holding the same bytes is still unchanged.
    os.utime(folder / "my headers" / "project.h")
    compile_unit(folder, cache)
    assert direct_hits(cache) == 2 and (folder / "unit.o").read_bytes() == made


def test_a_changed_header_compiles_again(tmp_path: Path) -> None:
    folder, cache = write_project(tmp_path / "project"), tmp_path / "cache"
    compile_unit(folder, cache)
    before = (folder / "unit.o").read_bytes()
    write_project(folder, scale=1000)
    compile_unit(folder, cache)
    assert direct_hits(cache) == 0
    after = (folder / "unit.o").read_bytes()
    assert after != before and after == clang_oz(folder, ("-MD",))
    compile_unit(folder, cache)  # the new state was remembered in turn
    assert direct_hits(cache) == 1 and (folder / "unit.o").read_bytes() == after


def test_another_command_directory_or_option_is_not_answered_directly(tmp_path: Path) -> None:
    folder, cache = write_project(tmp_path / "project"), tmp_path / "cache"
    compile_unit(folder, cache)
    compile_unit(folder, cache, flags=("-DEXTRA=1",))
    other = write_project(tmp_path / "other")
    compile_unit(other, cache)
    compile_unit(folder, cache, "--no-direct")
    compile_unit(folder, cache, "--oz")
    assert direct_hits(cache) == 0
    compile_unit(folder, cache)
    assert direct_hits(cache) == 1


def test_a_unit_using_the_date_is_never_answered_directly(tmp_path: Path) -> None:
    folder, cache = write_project(tmp_path / "project"), tmp_path / "cache"
    header = folder / "my headers" / "project.h"
    header.write_text(header.read_text() + "static const char *built = __DATE__;\n")
    compile_unit(folder, cache)
    compile_unit(folder, cache)
    assert direct_hits(cache) == 0
    with sqlite3.connect(cache / "objects.sqlite") as db:
        assert db.execute("SELECT count(*) FROM sources").fetchone() == (0,)


def test_an_evicted_object_or_another_compiler_goes_through_the_driver(tmp_path: Path) -> None:
    folder, cache = write_project(tmp_path / "project"), tmp_path / "cache"
    compile_unit(folder, cache)
    made = (folder / "unit.o").read_bytes()
    with sqlite3.connect(cache / "objects.sqlite") as db:
        (entry,) = db.execute("SELECT entry FROM sources").fetchone()
        changed = json.loads(entry)
        changed["tools"][0][2] += 1  # clang's modification time: an upgraded LLVM
        db.execute("UPDATE sources SET entry = ?", (json.dumps(changed),))
    compile_unit(folder, cache)
    assert direct_hits(cache) == 0 and (folder / "unit.o").read_bytes() == made
    with sqlite3.connect(cache / "objects.sqlite") as db:
        db.execute("DELETE FROM objects")
    (folder / "unit.o").unlink()
    compile_unit(folder, cache)
    assert direct_hits(cache) == 0 and (folder / "unit.o").read_bytes() == made


def test_serve_leaves_what_it_cannot_answer_to_the_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, cache = write_project(tmp_path / "project"), tmp_path / "cache"
    compile_unit(folder, cache)
    arguments = ["--cache", str(cache), "--predictor", "none", "-O2", "-Wall", "-MD", "-I", "my headers"]
    arguments += ["-c", "unit.c", "-o", "unit.o"]
    environ = dict(os.environ)
    stderr = io.BytesIO()
    monkeypatch.chdir(folder)
    assert serve("cc", arguments, environ=environ, stderr=stderr) == 0
    assert b"unused variable" in stderr.getvalue()
    for extra in (["--save-ir", str(tmp_path / "ir")], ["--whole-program"], ["--no-direct"]):
        assert serve("cc", [*extra, *arguments], environ=environ) is None
    assert serve("cc", ["--cache", "off", *arguments[2:]], environ=environ) is None
    assert serve("c++", arguments, environ=environ) is None  # another command
    assert serve("cc", ["--cache"], environ=environ) is None  # an option without its value
    assert serve("cc", arguments, environ={**environ, "CPATH": "/elsewhere"}) is None
    assert serve("cc", ["--cache", str(tmp_path / "none"), *arguments[2:]], environ=environ) is None


def test_a_file_changed_during_the_compile_is_not_remembered(tmp_path: Path) -> None:
    source = tmp_path / "unit.c"
    source.write_text("int x;\n")
    entry = dict(
        source="unit.c",
        output="unit.o",
        rule=f"unit: {source}\n",
        dependency_output=None,
        warnings=b"",
        tools=[Path(sys.executable)],
    )
    assert source_entry(**entry, since_ns=source.stat().st_mtime_ns + 1) is not None  # type: ignore[arg-type]
    assert source_entry(**entry, since_ns=source.stat().st_mtime_ns) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rule", "files"),
    [
        ("unit: a.c\n", ["a.c"]),
        ("unit: a.c b.h \\\n  /usr/include/c.h\n", ["a.c", "b.h", "/usr/include/c.h"]),
        ("unit: my\\ dir/a.c cost$$.h\n", ["my dir/a.c", "cost$.h"]),
    ],
)
def test_the_listing_of_clang_m_is_read(rule: str, files: list[str]) -> None:
    assert listed_files(rule) == files
