"""GCC as a reference: drivers per target, clang flags translated, objects at -Os and -Os -flto."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from llm_compiler.errors import InvalidInput
from llm_compiler.toolchain import gcc
from llm_compiler.toolchain.elf import berkeley_size, section_sizes
from llm_compiler.toolchain.frontend import CompileCommand, FrontendOptions
from llm_compiler.toolchain.llvm import Toolchain

UNIT = """
#include <string.h>
static const int table[16] = {1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, SEED};
int counter = 5;
const char *greeting = "hello";
int look(int x) { return table[x & 15] + counter + (int)strlen(greeting); }
int sum(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * look(i); return s; }
"""

needs_arm = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None,
    reason="apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi",
)


@pytest.fixture()
def unit(tmp_path: Path) -> Path:
    source = tmp_path / "unit.c"
    source.write_text(UNIT)
    return source


def _llvm_size(toolchain: Toolchain, blob: bytes, tmp_path: Path) -> int:
    path = tmp_path / "measured.o"
    path.write_bytes(blob)
    output = subprocess.run(
        [toolchain.tool("llvm-size"), "--format=berkeley", path], capture_output=True, text=True, check=True
    ).stdout
    text, data = output.splitlines()[1].split()[:2]
    return int(text) + int(data)


def _section_names(blob: bytes) -> list[str]:
    return [section.name for section in ELFFile(io.BytesIO(blob)).iter_sections()]


def test_clang_flags_become_gccs() -> None:
    command = CompileCommand.from_entry(
        {
            "directory": "/src",
            "file": "a.c",
            "command": "clang --target=x86_64-linux-gnu -Xclang -foo -mllvm -bar -O2 -g -Wall -Wno-unused "
            "-fcolor-diagnostics -Iinclude -D X=1 -DY -UZ -include cfg.h -isystem sys -iquote q "
            "-std=gnu99 -fPIC -fno-strict-aliasing -march=x86-64 -MD -MF a.d -c a.c -o a.o",
        }
    )
    flags = gcc.translate_flags(command.arguments[1:], target="x86_64-linux-gnu")
    assert flags == [
        "-Iinclude", "-D", "X=1", "-DY", "-UZ", "-include", "cfg.h", "-isystem", "sys", "-iquote", "q",
        "-std=gnu99", "-fPIC", "-fno-strict-aliasing", "-march=x86-64",
    ]  # fmt: skip
    # a preprocessed source needs only the code-generation flags
    assert gcc.codegen_flags(flags) == ["-std=gnu99", "-fPIC", "-fno-strict-aliasing", "-march=x86-64"]
    options = FrontendOptions(include_dirs=("inc",), defines={"N": "2"}, extra_flags=("-std=c11", "-O1"))
    assert gcc.flags_of_options(options) == ["-Iinc", "-DN=2", "-std=c11"]
    # clang's own sysroot for a cross C library is clang's, not GCC's
    assert gcc.translate_flags(["--sysroot=/opt/x", "-fno-common"], target=None) == ["-fno-common"]


def test_drivers_by_target_and_the_package_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert gcc.driver_name(None) == ("gcc", ())
    assert gcc.driver_name(None, "c++") == ("g++", ())
    assert gcc.driver_name("arm-none-eabi") == ("arm-none-eabi-gcc", ())
    assert gcc.driver_name("thumbv6m-none-eabi")[1] == ("-mthumb", "-march=armv6-m")
    assert gcc.driver_name("armv7-none-eabi") == ("arm-none-eabi-gcc", ("-march=armv7-a",))
    assert gcc.driver_name("aarch64-linux-gnu") == ("aarch64-linux-gnu-gcc", ())
    with pytest.raises(InvalidInput, match="No GCC is known for target 'riscv32-unknown-elf'"):
        gcc.driver_name("riscv32-unknown-elf")
    monkeypatch.setenv("PATH", str(tmp_path))  # no compiler at all
    with pytest.raises(InvalidInput, match="apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi"):
        gcc.gcc_driver("thumbv7em-none-eabi")
    with pytest.raises(InvalidInput, match="apt-get install gcc-aarch64-linux-gnu"):
        gcc.gcc_driver("aarch64-linux-gnu")
    with pytest.raises(InvalidInput, match=r"apt-get install gcc\)"):
        gcc.gcc_driver(None)


def test_host_objects_at_os_and_with_lto(unit: Path, toolchain: Toolchain, tmp_path: Path) -> None:
    flags = ["-DSEED=42", "-std=gnu11"]
    plain = gcc.compile_object(unit, flags, lto=False, target=None)
    linked = gcc.compile_object(unit, flags, lto=True, target=None)
    # the same object gcc makes when run by hand
    by_hand = tmp_path / "by_hand.o"
    subprocess.run(["gcc", *flags, "-Os", "-c", unit, "-o", by_hand], check=True)
    assert plain == by_hand.read_bytes()
    for blob in (plain, linked):
        size = berkeley_size(blob).binary_size
        assert size == _llvm_size(toolchain, blob, tmp_path) > 0
        assert sum(section_sizes(blob).values()) == size
        assert section_sizes(blob)[".rodata"] >= 64  # the table
    names = _section_names(linked)
    assert not [name for name in names if name.startswith(".gnu.lto_")] and ".text" in names
    assert ELFFile(io.BytesIO(linked)).header["e_type"] == "ET_REL"
    # an LTO object before the link holds only GCC's IR: no code to measure
    slim = tmp_path / "slim.o"
    subprocess.run(["gcc", *flags, "-Os", "-flto", "-c", unit, "-o", slim], check=True)
    assert any(name.startswith(".gnu.lto_") for name in _section_names(slim.read_bytes()))


def test_preprocessing_and_compile_errors(unit: Path, tmp_path: Path) -> None:
    text = gcc.preprocess(unit, ["-DSEED=4242"], target=None)
    assert "4242" in text and "SEED" not in text.split("table[16]")[1].split(";")[0]
    preprocessed = tmp_path / "unit.i"
    preprocessed.write_text(text)
    assert gcc.compile_object(preprocessed, [], lto=False, target=None) == gcc.compile_object(
        unit, ["-DSEED=4242"], lto=False, target=None
    )
    broken = tmp_path / "broken.c"
    broken.write_text("int f(void) { return undefined_name; }\n")
    with pytest.raises(InvalidInput, match="undefined_name") as raised:
        gcc.compile_object(broken, [], lto=True, target=None)
    assert "broken.c does not compile with gcc" in str(raised.value)


def test_flags_gcc_does_not_know_are_dropped(unit: Path) -> None:
    flags = ["-DSEED=1", "-fno-such-flag-anywhere", "-fno-common"]
    assert gcc.compile_object(unit, flags, lto=False, target=None) == gcc.compile_object(
        unit, ["-DSEED=1", "-fno-common"], lto=False, target=None
    )


@needs_arm
@pytest.mark.parametrize("lto", [False, True])
def test_a_thumb_unit_for_a_cortex_m(unit: Path, toolchain: Toolchain, tmp_path: Path, lto: bool) -> None:
    blob = gcc.compile_object(unit, ["-DSEED=3"], lto=lto, target="thumbv7em-none-eabi")
    elf = ELFFile(io.BytesIO(blob))
    assert elf.header["e_machine"] == "EM_ARM" and elf.header["e_type"] == "ET_REL"
    attributes = subprocess.run(
        ["arm-none-eabi-readelf", "-A", tmp_path / "x.o"] if (tmp_path / "x.o").write_bytes(blob) else [],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert re.search(r"Tag_CPU_arch: v7E-M", attributes) and "Tag_THUMB_ISA_use: Thumb-2" in attributes
    size = berkeley_size(blob).binary_size
    assert size == _llvm_size(toolchain, blob, tmp_path) == sum(section_sizes(blob).values())
    assert not [name for name in _section_names(blob) if name.startswith(".gnu.lto_")]
