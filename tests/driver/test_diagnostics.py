"""The build's own diagnostics: ``llm-compiler cc`` prints and fails as clang -Oz does.

A corpus of compile lines, written as the bench's real projects (zlib, bzip2, cJSON,
libyaml, expat, serd, Lua: ``bench/projects/projects.py``) compile their units, with
their flags, on small sources (``diagnostics/``) that make the front end or the
backend speak, plus the driver's own cases: backend ``-Werror``, the ``warning`` and
``error`` attributes, ``-mllvm``, ``@file``, several sources in one ``-c``, ``-flto``.
Each line runs through the real clang at ``-Oz`` (the build's ``-O`` levels replaced,
as the driver does) and through the driver, in two copies of the same folder; exit
status, standard error and the files written must be equal. Nothing is normalized.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.core.engines import check_llvm_options
from llm_compiler.core.program import Program
from llm_compiler.driver.cache import ObjectCache
from llm_compiler.driver.cc import Driver
from llm_compiler.driver.choose import Choice, FirstOf
from llm_compiler.errors import InvalidInput
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.llvm import Toolchain
from tests.conftest import run_cli

SOURCES = Path(__file__).parent / "diagnostics"

#: A list the chooser offers every unit besides -Oz: its lowering is compared too.
CHOSEN = "module(default<Oz>),function(simplifycfg)"

#: The flags of cJSON's CMake build (with -Werror) and of expat's configure (gcc's
#: warning options among them, which clang does not know).
CJSON = (
    "-DCJSON_EXPORT_SYMBOLS -Dcjson_EXPORTS -std=c89 -pedantic -Wall -Wextra -Werror -Wstrict-prototypes "
    "-Wwrite-strings -Wshadow -Winit-self -Wcast-align -Wformat=2 -Wmissing-prototypes -Wstrict-overflow=2 "
    "-Wcast-qual -Wundef -Wswitch-default -Wconversion -Wc++-compat -fstack-protector-strong -Wcomma "
    "-Wdouble-promotion -Wparentheses -Wunused-macros -Wmissing-variable-declarations "
    "-Wused-but-marked-unused -Wswitch-enum -fvisibility=hidden -fPIC"
)
EXPAT = (
    "-DHAVE_CONFIG_H -I. -DXML_ENABLE_VISIBILITY=1 -fexceptions -fno-strict-aliasing -Wall -Wextra "
    "-fvisibility=hidden -Wmissing-prototypes -Wstrict-prototypes -pedantic -Wduplicated-cond "
    "-Wduplicated-branches -Wlogical-op -Wrestrict -Wnull-dereference -Wjump-misses-init -Wdouble-promotion "
    "-Wshadow -Wformat=2 -Wno-pedantic-ms-format -Wmisleading-indentation -g -O2"
)
SERD = (
    "-I. -Iinclude -fdiagnostics-color=always -D_FILE_OFFSET_BITS=64 -Wall -Winvalid-pch -Wextra -std=c99 -g "
    "-fPIC -fvisibility=hidden -DSERD_INTERNAL -D_POSIX_C_SOURCE=200809L"
)
LUA = "-std=gnu99 -O2 -Wall -Wextra -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -g -O2"

#: Each compile line (after the compiler), by test id; "c++:" runs it as clang++.
CORPUS = {
    # zlib's configure and Makefile: static and shared objects.
    "zlib-static": "-O3 -D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN -I. -c -o unused.o unused.c",
    "zlib-shared": "-O3 -fPIC -D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN -DPIC -c -o objs/sign.o sign.c",
    # bzip2's Makefile and Makefile-libbz2_so.
    "bzip2": "-Wall -Winline -O2 -g -D_FILE_OFFSET_BITS=64 -c unused.c",
    "bzip2-shared": "-fpic -fPIC -Wall -Winline -O2 -g -D_FILE_OFFSET_BITS=64 -c uninit.c -o uninit.sho",
    # cJSON's CMake build: -Werror makes its warnings errors; a clean file passes.
    "cjson-werror": f"{CJSON} -MD -MT CMakeFiles/cjson.dir/proto.c.o -MF CMakeFiles/cjson.dir/proto.c.o.d "
    "-o CMakeFiles/cjson.dir/proto.c.o -c proto.c",
    "cjson-c89": f"{CJSON.replace(' -Werror', '')} -o CMakeFiles/cjson.dir/c89.c.o -c c89.c",
    "cjson-clean": f"{CJSON} -MD -MT CMakeFiles/cjson.dir/clean.c.o -MF CMakeFiles/cjson.dir/clean.c.o.d "
    "-o CMakeFiles/cjson.dir/clean.c.o -c clean.c",
    # libyaml's libtool: the PIC object, then the static one; -D and -I the unit needs.
    "libyaml-pic": "-DHAVE_CONFIG_H -I. -Iinclude -DFEATURE=1 -DLEGACY -g -O2 -MT config.lo -MD -MP "
    "-MF .deps/config.Tpo -c config.c -fPIC -DPIC -o .libs/config.o",
    "libyaml-static": "-DHAVE_CONFIG_H -I. -Iinclude -DFEATURE=1 -g -O2 -MT config.lo -MD -MP "
    "-MF .deps/config.Tpo -c config.c -o config.o",
    # expat's configure: gcc-only warning options clang does not know, and -Wshadow.
    "expat": f"{EXPAT} -MT shadow.lo -MD -MP -MF .deps/shadow.Tpo -c shadow.c -fPIC -DPIC -o .libs/shadow.o",
    "expat-format": f"{EXPAT} -c format.c -o format.o",
    # serd's meson build: colour diagnostics.
    "serd": f"{SERD} -MD -MQ serd.p/format.c.o -MF serd.p/format.c.o.d -o serd.p/format.c.o -c format.c",
    "serd-sign": f"{SERD} -Wconversion -Wsign-conversion -MD -MQ serd.p/sign.c.o -MF serd.p/sign.c.o.d "
    "-o serd.p/sign.c.o -c sign.c",
    # Lua's Makefile.
    "lua-fallthrough": f"{LUA} -Wimplicit-fallthrough -c -o fallthrough.o fallthrough.c",
    "lua-deprecated": f"{LUA} -fPIC -c deprecated.c",
    # Typical lines of other builds.
    "sections": "-ffunction-sections -fdata-sections -Os -Wall -c unused.c",
    "werror-frontend": "-Werror -Wall -O2 -c unused.c",
    "werror-one": "-Wall -Werror=unused-variable -O2 -c unused.c",
    "wno": "-Wall -Wno-unused-variable -O2 -c unused.c",
    "w": "-w -Wconversion -c sign.c",
    "uninit": "-O2 -Wall -c uninit.c",
    "pedantic-errors": "-std=c89 -pedantic-errors -c c89.c",
    "syntax-error": "-O2 -Wall -c syntax.c",
    "missing-include": "-O2 -Iinclude -c missing.c",
    "error-directive": "-O2 -Iinclude -c config.c",
    "header-warning": "-O2 -Iinclude -DFEATURE=2 -DLEGACY -MMD -MF deps/config.d -c config.c -o config.o",
    "codegen-flags": "-O2 -g -fno-use-init-array -fbinutils-version=2.30 -femit-dwarf-unwind=always "
    "-fdebug-types-section -c ctor.c",
    "c++": "c++:-std=c++17 -O2 -Wall -Wextra -fPIC -c warn.cpp -o warn.o",
    # The backend's diagnostics.
    "backend-werror": "-Oz -Wframe-larger-than=64 -Werror -c big.c",
    "backend-warning": "-O2 -Wframe-larger-than=128 -c big.c -o big.o",
    "backend-limit-unreached": "-O2 -Wframe-larger-than=100000 -Werror -c big.c",
    "attribute-warning": "-O2 -c attr.c",
    "attribute-werror": "-O2 -Werror -c attr.c",
    "attribute-error": "-O2 -c attr_error.c",
    "frontend-and-backend": "-O2 -Wall -c both.c",
    "inline-asm": "-O2 -c asm.c",
    "backend-colour": "-O2 -fdiagnostics-color=always -Wall -c both.c",
    # -mllvm, @file, several sources, -flto.
    "mllvm": "-O2 -mllvm -inline-threshold=500 -Wall -c unused.c",
    "mllvm-unknown": "-O2 -mllvm -no-such-llvm-option -c unused.c",
    "response-file": "@flags.rsp -c unused.c",
    "response-file-nested": "-O2 @nested.rsp",
    "response-file-missing": "@missing.rsp -c unused.c",
    "several-sources": "-O2 -Wall -c unused.c uninit.c attr.c",
    "several-sources-one-fails": "-Wall -MMD -c syntax.c unused.c",
    "several-sources-clang-says-once": "-O2 -Wall -c unused.c uninit.c -lm -L/nonexistent",
    "flto": "-O2 -flto -Wall -c unused.c",
    "flto-several": "-O2 -flto=thin -c unused.c uninit.c",
}

#: Response files the corpus's @ lines name (GNU quoting, one nested).
RESPONSE_FILES = {
    "flags.rsp": "-Wall -Wextra '-DNAME=\"two words\"' -O2\n",
    "nested.rsp": "-Wall @inner.rsp\n",
    "inner.rsp": "-Wframe-larger-than=128 -c big.c\n",
}


@dataclass(frozen=True)
class Outcome:
    """What a command did: its exit status, its stderr, and the files in its folder."""

    status: int
    stderr: str
    files: frozenset[str]


class Fixed:
    """Offers one list for every unit and link (besides -Oz, which the driver always builds)."""

    def __init__(self, pipeline: str = CHOSEN) -> None:
        self.pipeline = pipeline

    def choose(self, program: Program) -> Choice:
        return Choice(self.pipeline, "predicted", "a fixed list")


def prepared(folder: Path) -> Path:
    """A copy of the corpus's sources with the folders the lines write into."""
    shutil.copytree(SOURCES, folder)
    for name in ("objs", "CMakeFiles/cjson.dir", ".deps", ".libs", "serd.p", "deps"):
        (folder / name).mkdir(parents=True)
    for name, text in RESPONSE_FILES.items():
        (folder / name).write_text(text)
    return folder


def files(folder: Path) -> frozenset[str]:
    return frozenset(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


def at_oz(arguments: list[str]) -> list[str]:
    """The line as the driver compiles it: its -O levels replaced by -Oz."""
    return [*(a for a in arguments if not re.fullmatch(r"-O(\d*|s|z|g|fast)", a)), "-Oz"]


def clang_outcome(toolchain: Toolchain, folder: Path, language: str, arguments: list[str]) -> Outcome:
    clang = toolchain.tool("clang++" if language == "c++" else "clang")
    result = subprocess.run(
        [clang, *at_oz(arguments)], cwd=folder, capture_output=True, timeout=120, check=False
    )
    return Outcome(result.returncode, result.stderr.decode(), files(folder))


def driver_outcome(
    toolchain: Toolchain,
    folder: Path,
    language: str,
    arguments: list[str],
    monkeypatch: pytest.MonkeyPatch,
    **options: Any,
) -> tuple[Outcome, list[dict[str, Any]]]:
    """What the driver (``options``: more of its arguments) does with the line in ``folder``,
    and the lines it logged."""
    monkeypatch.chdir(folder)
    stderr, log = io.BytesIO(), folder.parent / f"{folder.name}.jsonl"
    chooser = FirstOf(Fixed())
    driver = Driver(
        language, chooser, toolchain=toolchain, stdout=io.BytesIO(), stderr=stderr, log=log, **options
    )
    status = driver.run(arguments)
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    log.unlink(missing_ok=True)
    return Outcome(status, stderr.getvalue().decode(), files(folder)), lines


@pytest.mark.parametrize("line", list(CORPUS.values()), ids=list(CORPUS))
def test_the_driver_prints_and_fails_as_clang_at_oz(
    line: str, tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    language, arguments = (
        ("c++", shlex.split(line[4:])) if line.startswith("c++:") else ("c", shlex.split(line))
    )
    expected = clang_outcome(toolchain, prepared(tmp_path / "clang"), language, arguments)
    got, _ = driver_outcome(toolchain, prepared(tmp_path / "driver"), language, arguments, monkeypatch)
    assert got.stderr.splitlines() == expected.stderr.splitlines()
    assert got.status == expected.status
    assert got.files == expected.files


def test_the_corpus_covers_what_it_should() -> None:
    """The corpus has at least 30 lines and lines that fail, warn, and stay silent."""
    assert len(CORPUS) >= 30
    assert {
        "backend-werror",
        "attribute-warning",
        "mllvm",
        "response-file",
        "several-sources",
        "flto",
    } <= set(CORPUS)


def test_each_unit_of_a_line_with_several_sources_is_compiled_by_the_driver(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = prepared(tmp_path / "driver")
    outcome, lines = driver_outcome(
        toolchain, folder, "c", ["-O2", "-c", "unused.c", "uninit.c"], monkeypatch
    )
    assert outcome.status == 0
    assert [(line["source"], line["output"]) for line in lines] == [
        ("unused.c", "unused.o"),
        ("uninit.c", "uninit.o"),
    ]
    assert all(line["kept"] in ("oz", "clang-oz", "chosen") and line["program_id"] for line in lines)


def test_a_line_from_a_response_file_is_compiled_by_the_driver(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = prepared(tmp_path / "driver")
    outcome, [line] = driver_outcome(toolchain, folder, "c", ["@flags.rsp", "-c", "unused.c"], monkeypatch)
    assert outcome.status == 0 and "unused variable 'unused_local'" in outcome.stderr
    assert (
        line["source"] == "unused.c" and line["kept"] in ("oz", "clang-oz", "chosen") and line["program_id"]
    )


def test_a_line_left_to_clang_compiles_at_oz(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = prepared(tmp_path / "driver")
    outcome, [line] = driver_outcome(toolchain, folder, "c", ["-O2", "-flto", "-c", "unused.c"], monkeypatch)
    assert outcome.status == 0 and line["reason"].startswith("left to clang: link-time optimization")
    dis = [str(toolchain.tool("llvm-dis")), str(folder / "unused.o"), "-o", "-"]
    bitcode = subprocess.run(dis, capture_output=True, text=True, check=True, timeout=60).stdout
    assert "minsize" in bitcode  # the attribute -Oz gives every function, -O2 none


def test_the_backends_diagnostics_are_said_again_on_a_rebuild_with_the_drivers_object(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = prepared(tmp_path / "driver")
    cache = ObjectCache(tmp_path / "cache")
    for _ in range(2):  # a unit the backend warns about is not cached: a rebuild warns again
        outcome, [line] = driver_outcome(
            toolchain, folder, "c", ["-O2", "-Wall", "-c", "both.c"], monkeypatch, cache=cache
        )
        assert outcome.status == 0 and outcome.stderr.endswith("2 warnings generated.\n")
        assert line["kept"] in ("oz", "clang-oz", "chosen") and not line["cached"]
        assert line["size"] == berkeley_size((folder / "both.o").read_bytes()).binary_size
    outcome, [line] = driver_outcome(
        toolchain, folder, "c", ["-O2", "-c", "unused.c"], monkeypatch, cache=cache
    )
    outcome, [line] = driver_outcome(
        toolchain, folder, "c", ["-O2", "-c", "unused.c"], monkeypatch, cache=cache
    )
    assert line["cached"]  # a unit the backend is silent about is


def test_mllvm_reaches_opt_as_clang_gives_it_to_its_optimizer(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = {}
    for option in ((), ("-mllvm", "-inline-threshold=500")):
        folder = prepared(tmp_path / f"driver{len(option)}")
        outcome, [line] = driver_outcome(
            toolchain, folder, "c", [*option, "-O2", "-c", "inline.c"], monkeypatch
        )
        assert outcome.status == 0, outcome.stderr
        sizes[option] = (line["oz_size"], line["clang_oz_size"])
    # opt's default<Oz> inlines as clang's -Oz does, with the option and without it.
    assert sizes[()][0] == sizes[()][1]
    with_option = sizes[("-mllvm", "-inline-threshold=500")]
    assert with_option[0] == with_option[1] != sizes[()][0]


def test_llvm_options_for_opt_are_checked() -> None:
    assert check_llvm_options(["-inline-threshold=5", "--enable-machine-outliner"]) == (
        "-inline-threshold=5",
        "--enable-machine-outliner",
    )
    for bad in ("-o=/tmp/x", "-passes=verify", "-load=plugin.so", "-O3", "not-an-option", "- x", ""):
        with pytest.raises(InvalidInput, match="LLVM option"):
            check_llvm_options([bad])


def test_codegen_only_flags_reach_the_lowering(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = prepared(tmp_path / "driver")
    outcome, _ = driver_outcome(
        toolchain, folder, "c", ["-O2", "-fno-use-init-array", "-c", "ctor.c"], monkeypatch
    )
    assert outcome.status == 0
    readelf = [str(toolchain.tool("llvm-readelf")), "-S", str(folder / "ctor.o")]
    sections = subprocess.run(readelf, capture_output=True, text=True, check=True, timeout=60).stdout
    assert ".ctors" in sections and ".init_array" not in sections


def test_the_cli_fails_on_a_backend_error_with_clangs_status(tmp_path: Path, toolchain: Toolchain) -> None:
    folder = prepared(tmp_path / "driver")
    line = ["-Oz", "-Wframe-larger-than=64", "-Werror", "-c", "big.c"]
    result = run_cli("cc", "--predictor", "none", "--cache", "off", "--no-server", *line, cwd=folder)
    expected = clang_outcome(toolchain, prepared(tmp_path / "clang"), "c", line)
    assert result.returncode == expected.status == 1
    assert result.stderr.splitlines() == expected.stderr.splitlines()
    assert "stack frame size" in result.stderr and not (folder / "big.o").exists()


def test_rebuilds_from_the_cache_still_see_every_unit_and_every_response_file(tmp_path: Path) -> None:
    folder = prepared(tmp_path / "driver")
    options = ("--predictor", "none", "--cache", str(tmp_path / "cache"), "--no-server")
    for _ in range(2):  # the second time from the cache: each unit still says its warnings
        result = run_cli("cc", *options, "-Wall", "-c", "unused.c", "uninit.c", cwd=folder)
        assert result.returncode == 0 and result.stderr.count("1 warning generated.") == 2, result.stderr
    assert run_cli("cc", *options, "@flags.rsp", "-c", "unused.c", cwd=folder).returncode == 0
    (folder / "flags.rsp").write_text("-Wall -Werror\n")  # the same command, other flags
    result = run_cli("cc", *options, "@flags.rsp", "-c", "unused.c", cwd=folder)
    assert result.returncode == 1 and "error: unused variable" in result.stderr


MAIN = """\
int first(int x);
int second(int x);
int third(int x);
int main(int argc, char **argv) { (void)argv; return (first(argc) + second(argc) + third(argc)) & 1; }
"""


def text_section_size(toolchain: Toolchain, path: Path) -> int:
    readelf = [str(toolchain.tool("llvm-readelf")), "-S", "-W", str(path)]
    table = subprocess.run(readelf, capture_output=True, text=True, check=True, timeout=60).stdout
    [row] = [line.split("]", 1)[1].split() for line in table.splitlines() if " .text " in line]
    return int(row[4], 16)


def test_a_whole_program_links_map_file_is_that_of_the_installed_link(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    link = ["main.o", "inline.o", "-fuse-ld=lld", "-Wl,-Map=maps/app.map", "-o", "app"]
    reference = prepared(tmp_path / "clang")
    (reference / "main.c").write_text(MAIN)
    for source in ("main.c", "inline.c"):
        subprocess.run([toolchain.tool("clang"), "-Oz", "-c", source], cwd=reference, check=True, timeout=120)
    expected = clang_outcome(toolchain, reference, "c", link)
    folder = prepared(tmp_path / "driver")
    (folder / "main.c").write_text(MAIN)
    monkeypatch.chdir(folder)
    stderr, log = io.BytesIO(), tmp_path / "link.jsonl"
    # Its LTO link (memory for registers) runs last and is larger: it is not the one installed.
    chooser = FirstOf(Fixed("module(default<Oz>),function(reg2mem)"))
    driver = Driver(
        "c", chooser, toolchain=toolchain, whole_program=True, stdout=io.BytesIO(), stderr=stderr, log=log
    )
    for source in ("main.c", "inline.c"):
        assert driver.run(["-O2", "-c", source]) == 0
    # No folder for the map: the link fails as clang's does.
    assert expected.status == 1 and "app.map" in expected.stderr
    assert driver.run(link) == expected.status
    assert stderr.getvalue().decode().splitlines() == expected.stderr.splitlines()
    (folder / "maps").mkdir()
    assert driver.run(link) == 0
    last = json.loads(log.read_text().splitlines()[-1])
    assert last["link"] and last["chosen_size"] is not None and last["kept"] in ("oz", "native"), last
    table = (folder / "maps" / "app.map").read_text().splitlines()
    [text_line] = [line for line in table if line.split()[-1:] == [".text"]]
    assert int(text_line.split()[2], 16) == text_section_size(toolchain, folder / "app")
