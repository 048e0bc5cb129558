"""Berkeley text/data/bss read from ELF section headers equals what llvm-size prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from llm_compiler.errors import InvalidInput
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command

SECTIONS_C = r"""
int zeroed[100];                       /* .bss: not counted */
int initialized[4] = {1, 2, 3, 4};     /* .data */
const char banner[] = "read-only";     /* .rodata: text */
static int counter = 7;
int bump(void) { return ++counter + zeroed[3] + initialized[1] + banner[0]; }
"""


def llvm_size(toolchain: Toolchain, obj: Path) -> tuple[int, int, int]:
    out = run_command([toolchain.tool("llvm-size"), "--format=berkeley", obj], timeout=30).stdout_text
    text, data, bss = map(int, re.split(r"\s+", out.splitlines()[1].strip())[:3])
    return text, data, bss


@pytest.mark.parametrize(
    "target",
    [
        "x86_64-pc-linux-gnu",
        "i386-pc-linux-gnu",  # 32-bit ELF
        "aarch64-linux-gnu",
        "powerpc64-linux-gnu",  # big-endian
    ],
)
def test_matches_llvm_size(toolchain: Toolchain, tmp_path: Path, target: str) -> None:
    source = tmp_path / "sections.c"
    source.write_text(SECTIONS_C)
    obj = tmp_path / "sections.o"
    run_command([toolchain.tool("clang"), f"--target={target}", "-Oz", "-c", source, "-o", obj], timeout=60)
    size = berkeley_size(obj.read_bytes())
    assert (size.text, size.data, size.bss) == llvm_size(toolchain, obj)
    assert size.bss >= 400 and size.data >= 16
    assert size.binary_size == size.text + size.data


def test_rejects_non_elf() -> None:
    with pytest.raises(InvalidInput, match="Not an ELF"):
        berkeley_size(b"MZ\x90\x00 not an elf file")


def test_rejects_truncated_elf(toolchain: Toolchain, tmp_path: Path) -> None:
    source = tmp_path / "t.c"
    source.write_text(SECTIONS_C)
    obj = tmp_path / "t.o"
    run_command([toolchain.tool("clang"), "-c", source, "-o", obj], timeout=60)
    with pytest.raises(InvalidInput, match="Truncated"):
        berkeley_size(obj.read_bytes()[:-200])
