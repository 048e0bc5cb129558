"""Whole-program mode with the real clang, lld and opt: objects with their IR, one list per link."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.core.program import Program
from llm_compiler.driver.arguments import link_command
from llm_compiler.driver.cache import ObjectCache
from llm_compiler.driver.cc import Driver
from llm_compiler.driver.choose import Choice, FirstOf, OzOnly
from llm_compiler.driver.whole_program import IR_SECTION, carries_ir
from llm_compiler.selection import links
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.llvm import Toolchain
from tests.conftest import run_cli
from tests.driver.test_cc import Bogus, Failing

#: Three units: main calls into a library archive; `unused` is called by no one and
#: `scale` has one caller in another unit, so only a whole-program view drops or
#: inlines them.
SOURCES = {
    "main.c": """\
#include <stdio.h>
int scale(int x);
int checksum(const char *text);
int main(int argc, char **argv) {
    int total = 0;
    for (int i = 0; i < argc; i++) total += checksum(argv[i]);
    printf("%d %d\\n", scale(argc), total);
    return 0;
}
""",
    "scale.c": "int scale(int x) { return 3 * x + 1; }\nint unused(int x) { return x * x * x + scale(x); }\n",
    "checksum.c": """\
int checksum(const char *text) {
    unsigned sum = 0;
    for (; *text; text++) sum = sum * 31 + (unsigned char)*text;
    return (int)(sum % 1000);
}
""",
}
VERSION_SCRIPT = "{ global: checksum; local: *; };\n"


def log_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def expected_output(arguments: list[str]) -> str:
    total = 0
    for text in arguments:
        value = 0
        for byte in text.encode():
            value = (value * 31 + byte) % 2**32
        total += value % 1000
    return f"{3 * len(arguments) + 1} {total}\n"


def build(folder: Path, toolchain: Toolchain, *driver_options: str) -> subprocess.CompletedProcess[str]:
    """Compiles the units, archives two, links the program, as a Makefile would."""
    for name, text in SOURCES.items():
        (folder / name).write_text(text)
    env = {"LLVM_BIN": str(toolchain.bin_dir)}
    for name in SOURCES:
        compiled = run_cli("cc", *driver_options, "-O2", "-c", name, cwd=folder, env=env)
        assert compiled.returncode == 0, compiled.stderr
    archive = [toolchain.tool("llvm-ar"), "rcs", "libparts.a", "scale.o", "checksum.o"]
    subprocess.run(archive, cwd=folder, check=True, timeout=60)
    return run_cli("cc", *driver_options, "main.o", "-L.", "-lparts", "-o", "program", cwd=folder, env=env)


def test_link_commands_are_recognized() -> None:
    link = link_command(["-O2", "main.o", "-L.", "-lparts", "-o", "program", "-Wl,--as-needed"])
    assert link is not None and link.inputs == ("main.o",) and link.output == "program"
    expected = ["-O2", "main.o", "-L.", "-lparts", "-Wl,--as-needed", "-o", "/tmp/x"]
    assert link.with_output("/tmp/x") == expected
    assert link_command(["main.o"]).output == "a.out"  # type: ignore[union-attr]
    for not_a_link in (["-c", "a.c"], ["-E", "a.c"], ["--version"], ["@args"], ["-flto", "a.o"]):
        assert link_command(not_a_link) is None, not_a_link


def sections(toolchain: Toolchain, path: Path) -> str:
    command = [toolchain.tool("llvm-readelf"), "-S", path]
    return subprocess.run(command, capture_output=True, text=True, check=True, timeout=60).stdout


def test_a_program_is_linked_with_its_own_list_and_runs(tmp_path: Path, toolchain: Toolchain) -> None:
    log = tmp_path / "cc.jsonl"
    # The predictor's first three lists, not ten: fewer lists to measure and validate, for
    # the units and for the joined program, where what is checked is the link.
    options = ("--whole-program", "--predictor", "builtin:k=3", "--cache", "off", "--log", str(log))
    linked = build(tmp_path, toolchain, *options)
    assert linked.returncode == 0, linked.stderr
    assert IR_SECTION in sections(toolchain, tmp_path / "main.o")
    assert carries_ir(tmp_path / "main.o") and carries_ir(tmp_path / "libparts.a")
    assert IR_SECTION not in sections(toolchain, tmp_path / "program")  # excluded from the link
    ran = subprocess.run([tmp_path / "program", "a", "bc"], capture_output=True, text=True, timeout=30)
    assert ran.returncode == 0 and ran.stdout == expected_output([str(tmp_path / "program"), "a", "bc"])
    lines = log_lines(log)
    assert [line["source"] for line in lines[:3]] == list(SOURCES)  # units compile as per unit
    link = lines[-1]
    assert link["link"] and link["output"] == "program" and link["origin"] in ("predicted", "oz")
    assert link["kept"] in ("chosen", "oz") and link["size"] <= link["oz_size"] < link["native_size"]
    assert link["size"] == berkeley_size((tmp_path / "program").read_bytes()).binary_size
    # Internalized and joined: the function no one calls is gone, which a per-unit build keeps.
    nm = [toolchain.tool("llvm-nm"), tmp_path / "program"]
    symbols = subprocess.run(nm, capture_output=True, text=True, check=True, timeout=60).stdout
    assert " unused" not in symbols and " scale" not in symbols


def test_whole_program_is_smaller_than_the_per_unit_build(tmp_path: Path, toolchain: Toolchain) -> None:
    whole, per_unit = tmp_path / "whole", tmp_path / "units"
    whole.mkdir()
    per_unit.mkdir()
    assert build(whole, toolchain, "--whole-program", "--oz", "--cache", "off").returncode == 0
    assert build(per_unit, toolchain, "--oz", "--cache", "off").returncode == 0
    sizes = [berkeley_size((folder / "program").read_bytes()).binary_size for folder in (whole, per_unit)]
    assert sizes[0] < sizes[1]


def test_a_shared_library_keeps_what_its_version_script_exports(tmp_path: Path, toolchain: Toolchain) -> None:
    (tmp_path / "parts.map").write_text(VERSION_SCRIPT)
    for name in ("scale.c", "checksum.c"):
        (tmp_path / name).write_text(SOURCES[name])
        assert run_cli("cc", "--whole-program", "--oz", "-fPIC", "-c", name, cwd=tmp_path).returncode == 0
    log = tmp_path / "cc.jsonl"
    linked = run_cli(
        "cc", "--whole-program", "--oz", "--log", str(log), "-shared", "scale.o", "checksum.o",
        "-Wl,--version-script=parts.map", "-Wl,-soname,libparts.so.1", "-o", "libparts.so.1", cwd=tmp_path,
    )  # fmt: skip
    assert linked.returncode == 0, linked.stderr
    line = log_lines(log)[-1]
    assert line["kept"] == "oz" and line["verdict"] == "validated" and "no run" in line["reason"], line
    exported = subprocess.run(
        [toolchain.tool("llvm-nm"), "-D", "--defined-only", tmp_path / "libparts.so.1"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    assert " checksum" in exported and " scale" not in exported and " unused" not in exported


def test_objects_without_ir_link_as_the_build_links_them(tmp_path: Path, toolchain: Toolchain) -> None:
    for name, text in SOURCES.items():
        (tmp_path / name).write_text(text)
        compiled = subprocess.run([toolchain.tool("clang"), "-Oz", "-c", name], cwd=tmp_path, timeout=120)
        assert compiled.returncode == 0
    log = tmp_path / "cc.jsonl"
    objects = [f"{Path(name).stem}.o" for name in SOURCES]
    linked = run_cli("cc", "--whole-program", "--log", str(log), *objects, "-o", "program", cwd=tmp_path)
    assert linked.returncode == 0, linked.stderr
    assert not log.exists()  # no IR: a plain link, left to clang


@pytest.mark.parametrize(
    ("chooser", "kept", "reason", "verdict"),
    [
        # No list: the decision is the oz link's, which ran as the native link does.
        (FirstOf(Failing()), "oz", "oz link kept: the chooser broke", "validated"),
        (FirstOf(Bogus(), OzOnly()), "oz", "the chosen list failed, oz kept", "compile-failure"),
    ],
)
def test_failures_fall_back_and_the_program_still_runs(
    tmp_path: Path,
    toolchain: Toolchain,
    monkeypatch: pytest.MonkeyPatch,
    chooser: Any,
    kept: str,
    reason: str,
    verdict: str,
) -> None:
    for name, text in SOURCES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "cc.jsonl"
    streams = {"stdout": io.BytesIO(), "stderr": io.BytesIO()}
    driver = Driver("c", chooser, log=log, toolchain=toolchain, whole_program=True, **streams)
    for name in SOURCES:
        assert driver.run(["-c", name]) == 0
    assert driver.run(["main.o", "scale.o", "checksum.o", "-o", "program"]) == 0
    line = log_lines(log)[-1]
    assert line["kept"] == kept and reason in line["reason"] and line["verdict"] == verdict, line
    ran = subprocess.run([tmp_path / "program"], capture_output=True, text=True, timeout=30)
    assert ran.stdout == expected_output([str(tmp_path / "program")])
    assert line["size"] == line["oz_size"] < line["native_size"]


class Fixed:
    """Answers one list for every unit and link."""

    def __init__(self, pipeline: str) -> None:
        self.pipeline = pipeline

    def choose(self, program: Program) -> Choice:
        return Choice(self.pipeline, "predicted", "a fixed list")


#: A list that beats -Oz on the joined program of :func:`merging_sources` only.
MERGING = "module(default<Oz>),module(mergefunc)"


def merging_sources(ending: str = "") -> dict[str, str]:
    """Two units define the same function under two names; once the program is joined
    and internalized, mergefunc (not in -Oz's pipeline) folds them, which no unit alone
    can (noinline: else -Oz inlines each into its one caller and nothing is left to
    fold). ``ending`` runs at the end of ``main``."""
    main = (
        SOURCES["main.c"]
        .replace("#include <stdio.h>", "#include <stdio.h>\n#include <unistd.h>")
        .replace(
            "int checksum(const char *text);", "int checksum(const char *text);\nint again(const char *t);"
        )
        .replace("total += checksum(argv[i]);", "total += checksum(argv[i]) + again(argv[i]);")
        .replace("    return 0;\n}", f"    {ending}\n    return 0;\n}}")
    )
    return {
        "main.c": main,
        "scale.c": SOURCES["scale.c"],
        "checksum.c": "__attribute__((noinline)) " + SOURCES["checksum.c"],
        "again.c": "__attribute__((noinline)) "
        + SOURCES["checksum.c"].replace("int checksum(", "int again("),
    }


def link_with(
    folder: Path, toolchain: Toolchain, sources: dict[str, str], pipeline: str, language: str = "c"
) -> dict[str, Any]:
    """Compiles ``sources`` at -Oz (whole-program objects), links them with a chooser that
    answers ``pipeline`` for the joined program (origin ``predicted``); the link's log line."""
    for name, text in sources.items():
        (folder / name).write_text(text)
    log, stdout, stderr = folder / "cc.jsonl", io.BytesIO(), io.BytesIO()
    units = Driver(
        language, FirstOf(OzOnly()), toolchain=toolchain, whole_program=True, stdout=stdout, stderr=stderr
    )
    for name in sources:
        assert units.run(["-c", name]) == 0, stderr.getvalue()
    linker = Driver(
        language,
        FirstOf(Fixed(pipeline)),
        log=log,
        toolchain=toolchain,
        whole_program=True,
        stdout=stdout,
        stderr=stderr,
    )
    assert linker.run([f"{Path(name).stem}.o" for name in sources] + ["-o", "program"]) == 0
    [line] = log_lines(log)
    assert line["link"] and line["pipeline"] == pipeline, line
    return line


def test_a_list_that_beats_oz_on_the_joined_program_is_kept(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    line = link_with(tmp_path, toolchain, merging_sources(), MERGING)
    assert line["kept"] == "chosen" and line["verdict"] == "validated", line
    assert "the program's own output and exit status" in line["reason"]  # it ran as the native link
    assert line["size"] < line["oz_size"] < line["native_size"]
    assert line["size"] == berkeley_size((tmp_path / "program").read_bytes()).binary_size
    ran = subprocess.run([tmp_path / "program", "xy"], capture_output=True, text=True, timeout=30)
    doubled = expected_output([str(tmp_path / "program"), "xy"]).split()
    assert ran.returncode == 0 and ran.stdout.split() == [doubled[0], str(2 * int(doubled[1]))]


#: C++ units: ``main`` catches what ``parse``, in another unit, throws when run with no
#: arguments. lower-invoke makes the invoke a call, so the exception is caught no more.
THROWING = {
    "main.cpp": """\
#include <cstdio>
#include <stdexcept>
int parse(int x);
int main(int argc, char **) {
    try {
        std::printf("%d\\n", parse(argc - 2));
    } catch (const std::exception &error) {
        std::printf("caught %s\\n", error.what());
    }
    return 0;
}
""",
    "parse.cpp": """\
#include <stdexcept>
__attribute__((noinline)) int parse(int x) {
    if (x < 0) throw std::runtime_error("negative");
    return 2 * x;
}
""",
}
#: Smaller linked than default<Oz> (no landing pad) and the program aborts: only its
#: own run shows it.
BREAKS_THE_PROGRAM = "module(default<Oz>),function(lower-invoke,simplifycfg)"


def test_a_list_that_breaks_the_linked_program_is_not_kept(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    line = link_with(tmp_path, toolchain, THROWING, BREAKS_THE_PROGRAM, "c++")
    assert line["chosen_size"] < line["oz_size"], line  # it would be kept on its size
    assert line["kept"] == "oz" and line["verdict"] == "validation-failure", line
    assert "the program's own run: the chosen link exited with status 134" in line["reason"]
    assert line["size"] == berkeley_size((tmp_path / "program").read_bytes()).binary_size
    ran = subprocess.run([tmp_path / "program"], capture_output=True, text=True, timeout=30)
    assert ran.returncode == 0 and ran.stdout == "caught negative\n"


@pytest.mark.parametrize(
    ("ending", "why"),
    [
        ("if (getchar() == EOF) return 2;", "exited with status 2"),  # it needs input
        ("for (;;) pause();", "ran past its time limit twice"),  # it never ends
    ],
)
def test_a_program_that_cannot_run_here_is_decided_by_its_links_and_its_list(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch, ending: str, why: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(links, "RUN_TIMEOUT", 1.0)  # the endless run: 1 s, then 3 s
    line = link_with(tmp_path, toolchain, merging_sources(ending), MERGING)
    assert line["kept"] == "chosen" and line["verdict"] == "validated", line
    assert f"the program's own run: unsupported (the native link {why}" in line["reason"]
    assert line["size"] == berkeley_size((tmp_path / "program").read_bytes()).binary_size


def test_an_lto_link_that_fails_keeps_the_native_link(tmp_path: Path, toolchain: Toolchain) -> None:
    for name, text in SOURCES.items():
        (tmp_path / name).write_text(text)
        assert run_cli("cc", "--whole-program", "--oz", "-c", name, cwd=tmp_path).returncode == 0
    garbage = tmp_path / "garbage.bc"
    garbage.write_bytes(b"BC\xc0\xde" + b"\xff" * 64)  # the IR of main.o replaced by a broken one
    objcopy = [toolchain.tool("llvm-objcopy"), f"--update-section={IR_SECTION}={garbage}", "main.o"]
    subprocess.run(objcopy, cwd=tmp_path, check=True, timeout=60)
    log = tmp_path / "cc.jsonl"
    objects = [f"{Path(name).stem}.o" for name in SOURCES]
    linked = run_cli("cc", "--whole-program", "--log", str(log), *objects, "-o", "program", cwd=tmp_path)
    assert linked.returncode == 0, linked.stderr
    [line] = log_lines(log)
    assert line["kept"] == "native" and line["reason"].startswith("native link kept: the LTO link")
    assert line["verdict"] == "compile-failure"
    assert line["size"] == line["native_size"] and line["oz_size"] is None
    ran = subprocess.run([tmp_path / "program"], capture_output=True, text=True, timeout=30)
    assert ran.stdout == expected_output([str(tmp_path / "program")])


def test_a_link_that_fails_shows_the_linkers_error(tmp_path: Path, toolchain: Toolchain) -> None:
    (tmp_path / "main.c").write_text(SOURCES["main.c"])
    assert run_cli("cc", "--whole-program", "-c", "main.c", cwd=tmp_path).returncode == 0
    linked = run_cli("cc", "--whole-program", "main.o", "-o", "program", cwd=tmp_path)
    assert linked.returncode != 0 and "undefined reference" in linked.stderr and "scale" in linked.stderr
    assert not (tmp_path / "program").exists()


class Counting:
    """Answers one list and counts how often it was asked."""

    def __init__(self) -> None:
        self.calls = 0

    def choose(self, program: Any) -> Choice:
        self.calls += 1
        return Choice("module(default<Oz>),function(simplifycfg)", "predicted", "a fixed list")


def test_a_relink_of_the_same_program_reuses_its_choice(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert build(tmp_path, toolchain, "--whole-program", "--oz", "--cache", "off").returncode == 0
    monkeypatch.chdir(tmp_path)
    counting, log = Counting(), tmp_path / "links.jsonl"
    linked = []
    # Another output name: another line (no relink from the cache), the same joined module.
    for output in ("program", "again"):
        driver = Driver(
            "c",
            FirstOf(counting),
            log=log,
            toolchain=toolchain,
            cache=ObjectCache(tmp_path / "cache"),
            whole_program=True,
            stdout=io.BytesIO(),
            stderr=io.BytesIO(),
        )
        assert driver.run(["main.o", "-L.", "-lparts", "-o", output]) == 0
        linked.append((tmp_path / output).read_bytes())
    first, second = log_lines(log)
    assert not second["cached"] and counting.calls == 1 and linked[0] == linked[1]
    assert first["pipeline"] == second["pipeline"] == "module(default<Oz>),function(simplifycfg)"
    assert "earlier link" in second["reason"] and first["size"] == second["size"]
    ran = subprocess.run([tmp_path / "program", "x"], capture_output=True, text=True, timeout=30)
    assert ran.stdout == expected_output([str(tmp_path / "program"), "x"])


def test_lto_links_store_a_string_that_ends_another_once(tmp_path: Path, toolchain: Toolchain) -> None:
    """lld's -O2 merges string tails in the LTO links, as GNU ld does by default."""
    (tmp_path / "say.c").write_text(
        "#include <stdio.h>\n"
        "const char *greeting(int loud) {\n"
        '    return loud ? "HELLO, WIDE WORLD OF STRINGS" : "WORLD OF STRINGS";\n'
        "}\n"
    )
    (tmp_path / "main.c").write_text(
        "#include <stdio.h>\n"
        "const char *greeting(int loud);\n"
        "int main(int argc, char **argv) { puts(greeting(argc > 1)); puts(greeting(0)); return 0; }\n"
    )
    env = {"LLVM_BIN": str(toolchain.bin_dir)}
    options = ("--whole-program", "--predictor", "none", "--cache", "off")
    for name in ("say.c", "main.c"):
        assert run_cli("cc", *options, "-O2", "-c", name, cwd=tmp_path, env=env).returncode == 0
    log = tmp_path / "link.jsonl"
    linked = run_cli(
        "cc", *options, "--log", str(log), "main.o", "say.o", "-o", "program", cwd=tmp_path, env=env
    )
    assert linked.returncode == 0, linked.stderr
    assert log_lines(log)[-1]["kept"] == "oz"  # the LTO link: the two functions joined
    assert (tmp_path / "program").read_bytes().count(b"WORLD OF STRINGS\0") == 1
    ran = subprocess.run([tmp_path / "program", "x"], capture_output=True, text=True, timeout=30)
    assert ran.stdout == "HELLO, WIDE WORLD OF STRINGS\nWORLD OF STRINGS\n"
