"""What a whole-program link costs, with the real clang, lld and GNU ld: the native link
beside the LTO links, and a relink of unchanged files written from the cache."""

from __future__ import annotations

import io
import json
import stat
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.driver.cache import ObjectCache
from llm_compiler.driver.cc import Driver
from llm_compiler.driver.choose import FirstOf, OzOnly
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import CommandResult, run_command
from tests.conftest import run_cli
from tests.driver.test_whole_program import (
    SOURCES,
    VERSION_SCRIPT,
    Counting,
    build,
    expected_output,
    log_lines,
)

#: The line that links the program of :func:`build`: main.o and the archive ``-lparts`` names,
#: with an option the linker warns of (GNU ld and lld both do).
LINE = ["main.o", "-L.", "-lparts", "-Wl,-z,notanoption", "-o", "program"]


class Watching(Driver):
    """The driver, with each clang it runs written down: its line, when it started and ended."""

    def __init__(self, *arguments: Any, lto_timeout: float | None = None, **options: Any) -> None:
        super().__init__(*arguments, **options)
        self.calls: list[tuple[list[str], float, float]] = []
        self.lto_timeout = lto_timeout  # seconds an LTO link may run (None: the driver's)

    def _clang(self, arguments: Sequence[str], *, input: bytes | None = None) -> CommandResult:
        started = time.monotonic()
        try:
            if self.lto_timeout is not None and any("--lto-newpm-passes=" in part for part in arguments):
                line = [self.clang, *arguments]
                return run_command(line, timeout=self.lto_timeout, input=input, check=False)
            return super()._clang(arguments, input=input)
        finally:
            self.calls.append(([str(part) for part in arguments], started, time.monotonic()))

    def lto_links(self) -> list[tuple[list[str], float, float]]:
        return [
            call for call in self.calls if any(part.startswith("--lto-newpm-passes=") for part in call[0])
        ]

    def native_link(self) -> tuple[list[str], float, float]:
        [native] = [call for call in self.calls if call not in self.lto_links()]  # the build's own line
        return native


def watching(folder: Path, toolchain: Toolchain, chooser: Any, **options: Any) -> Watching:
    return Watching(
        "c",
        FirstOf(chooser),
        log=folder / "links.jsonl",
        toolchain=toolchain,
        cache=ObjectCache(folder / "cache"),
        whole_program=True,
        stdout=io.BytesIO(),
        stderr=io.BytesIO(),
        **options,
    )


def compile_units(folder: Path, *flags: str, sources: dict[str, str] = SOURCES) -> None:
    for name, text in sources.items():
        (folder / name).write_text(text)
        compiled = run_cli("cc", "--whole-program", "--oz", "--cache", "off", *flags, "-c", name, cwd=folder)
        assert compiled.returncode == 0, compiled.stderr


def test_a_relink_of_unchanged_files_is_written_from_the_cache(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert build(tmp_path, toolchain, "--whole-program", "--oz", "--cache", "off").returncode == 0
    monkeypatch.chdir(tmp_path)
    program, counting = tmp_path / "program", Counting()
    first = watching(tmp_path, toolchain, counting)
    assert first.run(LINE) == 0
    # The native link and the two default<Oz> links started together, then the chosen ones.
    assert len(first.lto_links()) == 4
    assert min(started for _, started, _ in first.lto_links()) < first.native_link()[2]
    made, mode = program.read_bytes(), stat.S_IMODE(program.stat().st_mode)
    warned = first.stderr.getvalue()
    assert b"notanoption" in warned
    program.unlink()

    again = watching(tmp_path, toolchain, counting)
    assert again.run(LINE) == 0
    assert again.calls == [] and counting.calls == 1  # no link, native or LTO, and no choice
    assert program.read_bytes() == made and stat.S_IMODE(program.stat().st_mode) == mode
    assert again.stderr.getvalue() == warned  # the native link's words, as they were
    assert mode & stat.S_IXUSR
    one, two = log_lines(tmp_path / "links.jsonl")
    assert not one["cached"] and two["cached"] and two["kept"] == one["kept"] in ("oz", "chosen")
    assert {**two, "cached": False, "seconds": 0} == {
        **one,
        "seconds": 0,
    }  # the line of the link that made it
    ran = subprocess.run([program, "x"], capture_output=True, text=True, timeout=30)
    assert ran.stdout == expected_output([str(program), "x"])

    # One member of the archive -lparts names changed: linked again, with the new member.
    (tmp_path / "scale.c").write_text(SOURCES["scale.c"].replace("3 * x + 1", "3 * x + 2"))
    compile_units(tmp_path, sources={"scale.c": (tmp_path / "scale.c").read_text()})
    (tmp_path / "libparts.a").unlink()
    archive = [toolchain.tool("llvm-ar"), "rcs", "libparts.a", "scale.o", "checksum.o"]
    subprocess.run(archive, cwd=tmp_path, check=True, timeout=60)
    changed = watching(tmp_path, toolchain, counting)
    assert changed.run(LINE) == 0
    assert changed.lto_links() and not log_lines(tmp_path / "links.jsonl")[-1]["cached"]
    ran = subprocess.run([program], capture_output=True, text=True, timeout=30)
    assert ran.stdout.split()[0] == "5"  # scale(1) = 3 * 1 + 2
    # One input object changed (its bytes, not its IR): linked again too.
    with (tmp_path / "main.o").open("ab") as stream:
        stream.write(b"\0")
    touched = watching(tmp_path, toolchain, counting)
    assert touched.run(LINE) == 0 and touched.lto_links()
    assert not log_lines(tmp_path / "links.jsonl")[-1]["cached"]


def test_a_changed_version_script_links_again(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    compile_units(tmp_path, "-fPIC", sources={name: SOURCES[name] for name in ("scale.c", "checksum.c")})
    monkeypatch.chdir(tmp_path)
    line = ["-shared", "scale.o", "checksum.o", "-Wl,--version-script=parts.map", "-o", "libparts.so"]
    exported = []
    for script in (VERSION_SCRIPT, VERSION_SCRIPT, VERSION_SCRIPT.replace("checksum;", "checksum; scale;")):
        (tmp_path / "parts.map").write_text(script)
        assert watching(tmp_path, toolchain, OzOnly()).run(line) == 0
        nm = [toolchain.tool("llvm-nm"), "-D", "--defined-only", tmp_path / "libparts.so"]
        exported.append(subprocess.run(nm, capture_output=True, text=True, check=True, timeout=60).stdout)
    assert [line["cached"] for line in log_lines(tmp_path / "links.jsonl")] == [False, True, False]
    assert " scale" not in exported[1] and " scale" in exported[2] and " checksum" in exported[2]


@pytest.mark.parametrize(
    "line",
    [
        ["main.o", "-L.", "-lparts", "-Wl,-Map=program.map", "-o", "program"],  # a side output
        ["main.c", "libparts.a", "-o", "program"],  # a source: its headers are not hashed
    ],
)
def test_links_that_read_or_write_more_than_is_hashed_are_not_cached(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch, line: list[str]
) -> None:
    assert build(tmp_path, toolchain, "--whole-program", "--oz", "--cache", "off").returncode == 0
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        driver = watching(tmp_path, toolchain, OzOnly())
        assert driver.run(line) == 0 and driver.lto_links()
    assert [line["cached"] for line in log_lines(tmp_path / "links.jsonl")] == [False, False]
    assert (tmp_path / "program.map").exists() == ("-Wl,-Map=program.map" in line)


def test_a_link_decided_by_a_timeout_is_not_kept_for_a_relink(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert build(tmp_path, toolchain, "--whole-program", "--oz", "--cache", "off").returncode == 0
    monkeypatch.chdir(tmp_path)
    for _ in range(2):  # the LTO links killed at once (a busy machine): the native link, twice
        driver = watching(tmp_path, toolchain, OzOnly(), lto_timeout=0.001)
        assert driver.run(LINE) == 0 and len(driver.lto_links()) == 2
    lines = log_lines(tmp_path / "links.jsonl")
    assert [(line["kept"], line["cached"]) for line in lines] == [("native", False)] * 2
    assert "did not finish within" in lines[0]["reason"] and lines[0]["verdict"] == "compile-failure"
    driver = watching(tmp_path, toolchain, OzOnly())  # in time: decided, and kept for the next one
    assert driver.run(LINE) == 0 and driver.lto_links()
    assert watching(tmp_path, toolchain, OzOnly()).run(LINE) == 0
    assert [line["cached"] for line in log_lines(tmp_path / "links.jsonl")[2:]] == [False, True]


def native_linker(toolchain: Toolchain, folder: Path) -> str:
    """The linker clang runs by default (``-###``)."""
    listed = subprocess.run(
        [toolchain.tool("clang"), "-###", "main.o", "-o", "program"],
        capture_output=True, text=True, cwd=folder, timeout=60,
    ).stderr  # fmt: skip
    return listed.strip().splitlines()[-1].split('"')[1]


def test_a_native_link_that_fails_is_the_builds_error_though_the_lto_links_pass(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    compile_units(tmp_path)
    if "lld" in Path(native_linker(toolchain, tmp_path)).name:
        pytest.skip("clang links with lld by default here: --icf=all would not fail natively")
    monkeypatch.chdir(tmp_path)
    # GNU ld does not know --icf=all, lld does: the native link fails, the LTO links pass.
    line = ["main.o", "scale.o", "checksum.o", "-Wl,--icf=all", "-o", "program"]
    for _ in range(2):  # nothing kept for the next time either
        driver = watching(tmp_path, toolchain, OzOnly())
        assert driver.run(line) == 1
        stderr = driver.stderr.getvalue().decode()  # type: ignore[attr-defined]
        assert "unrecognized option '--icf=all'" in stderr and "linker command failed" in stderr
        assert not (tmp_path / "program").exists()
        lto = driver.lto_links()
        assert len(lto) == 2 and min(started for _, started, _ in lto) < driver.native_link()[2]
    lines = log_lines(tmp_path / "links.jsonl")
    assert [(line["kept"], line["reason"], line["cached"]) for line in lines] == [
        ("clang", "the link failed", False)
    ] * 2


def test_the_native_link_is_the_builds_own_bytes_with_a_version_script(
    tmp_path: Path, toolchain: Toolchain
) -> None:
    """A program lld links with a version script carries its output's name as the line
    gives it (the base version): the native link kept is the build's line, not a link to
    another path."""
    (tmp_path / "main.c").write_text(
        "int visible(void) { return 1; }\nint main(void) { return visible() - 1; }\n"
    )
    (tmp_path / "v.map").write_text("V1 { global: visible; local: *; };\n")
    cache = ["--oz", "--cache", str(tmp_path / "cache")]
    assert run_cli("cc", "--whole-program", *cache, "-c", "main.c", cwd=tmp_path).returncode == 0
    line = ["main.o", "-fuse-ld=lld", "-Wl,--version-script=v.map", "-o", "program"]  # "-o" as given
    linked = run_cli(
        "cc", "--whole-program", *cache, "--log", str(tmp_path / "links.jsonl"), *line, cwd=tmp_path
    )
    assert linked.returncode == 0, linked.stderr
    versions = subprocess.run(
        [toolchain.tool("llvm-readelf"), "-V", "program"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout
    assert "llm-compiler-link" not in versions, "no scratch path in the program"
    # Its LTO links are made twice at one path beside the output: the same bytes, so kept.
    decided = [json.loads(line) for line in (tmp_path / "links.jsonl").read_text().splitlines()][-1]
    assert decided["kept"] == "oz" and decided["verdict"] == "validated", decided["reason"]
    # The native link was the build's own line: the size clang gives it (an output name as long).
    subprocess.run([toolchain.tool("clang"), *line[:-1], "plain_1"], cwd=tmp_path, check=True)
    assert decided["native_size"] == berkeley_size((tmp_path / "plain_1").read_bytes()).binary_size
    assert not (tmp_path / ".llm-compiler-lto").exists()
