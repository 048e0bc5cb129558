"""Berkeley text/data/bss read from ELF, Mach-O and COFF headers equals what llvm-size prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from llm_compiler.errors import InvalidInput
from llm_compiler.toolchain.elf import SECTION_GROUPS, berkeley_size, section_sizes
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.objects import BerkeleySize, object_format
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


def llvm_size_columns(toolchain: Toolchain, obj: Path) -> dict[str, int]:
    """llvm-size's Berkeley columns by name (``text data bss`` for COFF; ``__TEXT __DATA
    __OBJC others`` for Mach-O, which llvm-size prints in the Darwin style)."""
    out = run_command([toolchain.tool("llvm-size"), "--format=berkeley", obj], timeout=30).stdout_text
    header, row = out.splitlines()[:2]
    return dict(zip(header.split(), map(int, row.split()[:4]), strict=False))


def compile_object(toolchain: Toolchain, tmp_path: Path, target: str, *flags: str) -> Path:
    source = tmp_path / "sections.c"
    source.write_text(SECTIONS_C)
    obj = tmp_path / f"sections-{target}.o"
    run_command(
        [toolchain.tool("clang"), f"--target={target}", "-Oz", *flags, "-c", source, "-o", obj], timeout=60
    )
    return obj


def assert_matches_llvm_size(toolchain: Toolchain, obj: Path) -> None:
    size, columns = berkeley_size(obj.read_bytes()), llvm_size_columns(toolchain, obj)
    if "__TEXT" in columns:
        assert object_format(obj.read_bytes()) == "Mach-O"
        assert (size.text, size.data + size.bss) == (columns["__TEXT"], columns["__DATA"] + columns["__OBJC"])
    else:
        assert object_format(obj.read_bytes()) == "COFF"
        assert (size.text, size.data, size.bss) == (columns["text"], columns["data"], columns["bss"])


@pytest.mark.parametrize(
    ("target", "flags"),
    [
        ("x86_64-apple-macosx10.15.0", ()),
        ("arm64-apple-macosx11.0", ()),
        ("i386-apple-macosx10.15.0", ()),  # 32-bit Mach-O
        ("x86_64-apple-macosx10.15.0", ("-g",)),  # __DWARF counts in none of the columns
        ("x86_64-pc-windows-msvc", ()),
        ("x86_64-w64-mingw32", ()),
        ("i686-pc-windows-msvc", ()),
        ("aarch64-pc-windows-msvc", ()),
        ("x86_64-pc-windows-msvc", ("-g",)),  # .debug$S counts as data, as llvm-size counts it
    ],
)
def test_macho_and_coff_objects_match_llvm_size(
    toolchain: Toolchain, tmp_path: Path, target: str, flags: tuple[str, ...]
) -> None:
    obj = compile_object(toolchain, tmp_path, target, *flags)
    assert_matches_llvm_size(toolchain, obj)
    size = berkeley_size(obj.read_bytes())
    # zeroed[100] and counter's neighbours are zero-fill: bss, not binary size.
    assert size.bss >= 400 and size.data >= 16 and size.text > 0
    assert size.binary_size == size.text + size.data


def test_coff_bigobj_matches_llvm_size(toolchain: Toolchain, tmp_path: Path) -> None:
    """Over 65,279 sections make the COFF writer use the bigobj header."""
    source = tmp_path / "many.c"
    source.write_text("\n".join(f"int v{i} = {i + 1};" for i in range(66_000)) + "\nint zero[9];\n")
    obj = tmp_path / "many.o"
    run_command(
        [toolchain.tool("clang"), "--target=x86_64-w64-mingw32", "-fdata-sections", "-c", source, "-o", obj],
        timeout=120,
    )
    assert obj.read_bytes()[:4] == b"\0\0\xff\xff"
    assert_matches_llvm_size(toolchain, obj)
    assert berkeley_size(obj.read_bytes()) == BerkeleySize(text=0, data=4 * 66_000, bss=4 * 9)


@pytest.mark.parametrize("linker", ["lld-link", "ld64.lld"])
def test_linked_pe_and_macho_match_llvm_size(toolchain: Toolchain, tmp_path: Path, linker: str) -> None:
    if not (toolchain.bin_dir / linker).is_file():
        pytest.skip(f"{linker} is not in {toolchain.bin_dir}")
    command: list[str | Path] = [toolchain.tool(linker)]
    if linker == "lld-link":
        obj = compile_object(toolchain, tmp_path, "x86_64-pc-windows-msvc")
        linked = tmp_path / "sections.dll"
        command += ["/dll", "/noentry", f"/out:{linked}", obj]
    else:
        obj = compile_object(toolchain, tmp_path, "x86_64-apple-macosx10.15.0")
        linked = tmp_path / "sections.dylib"
        command += ["-dylib", "-arch", "x86_64", "-platform_version", "macos", "10.15", "10.15"]
        command += ["-undefined", "dynamic_lookup", obj, "-o", linked]
    run_command(command, timeout=60)
    assert_matches_llvm_size(toolchain, linked)


@pytest.mark.parametrize(
    ("blob", "named"),
    [
        (b"\0asm\x01\0\0\0", "WebAssembly"),
        (b"\xca\xfe\xba\xbe\0\0\0\x02", "universal (fat) Mach-O"),
        (b"<!-- not an object -->", "unknown format (first bytes 3c 21 2d 2d)"),
        (b"MZ\x90\x00 not an elf file", "unknown format (first bytes 4d 5a 90 00)"),
        (b"", "the file is empty"),
    ],
)
def test_an_unreadable_format_is_named_with_the_fix(blob: bytes, named: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        berkeley_size(blob)
    message = str(raised.value)
    assert named in message and "--objective ir-instructions" in message and "ELF" in message


def test_a_wasm_object_is_refused_with_the_fix(toolchain: Toolchain, tmp_path: Path) -> None:
    obj = compile_object(toolchain, tmp_path, "wasm32-unknown-unknown")
    with pytest.raises(InvalidInput, match=r"\(WebAssembly\).*--target x86_64-linux-gnu"):
        berkeley_size(obj.read_bytes())


@pytest.mark.parametrize("target", ["x86_64-apple-macosx10.15.0", "x86_64-pc-windows-msvc"])
def test_rejects_truncated_macho_and_coff(toolchain: Toolchain, tmp_path: Path, target: str) -> None:
    blob = compile_object(toolchain, tmp_path, target).read_bytes()
    with pytest.raises(InvalidInput, match=r"Truncated|Malformed"):
        berkeley_size(blob[:60])


def test_rejects_truncated_elf(toolchain: Toolchain, tmp_path: Path) -> None:
    source = tmp_path / "t.c"
    source.write_text(SECTIONS_C)
    obj = tmp_path / "t.o"
    run_command([toolchain.tool("clang"), "-c", source, "-o", obj], timeout=60)
    with pytest.raises(InvalidInput, match="Truncated"):
        berkeley_size(obj.read_bytes()[:-200])


def llvm_size_sections(toolchain: Toolchain, path: Path) -> dict[str, int]:
    """Every section's size as ``llvm-size -A`` prints it."""
    out = run_command([toolchain.tool("llvm-size"), "-A", path], timeout=30).stdout_text
    rows = (line.split() for line in out.splitlines()[2:])
    return {row[0]: int(row[1]) for row in rows if len(row) == 3 and row[0] != "Total"}


@pytest.mark.parametrize(
    ("target", "unwind"),
    [("x86_64-pc-linux-gnu", ".eh_frame"), ("thumbv7em-none-eabi", ".ARM.exidx")],
)
def test_section_groups_add_up_to_the_binary_size(
    toolchain: Toolchain, tmp_path: Path, target: str, unwind: str
) -> None:
    obj = compile_object(toolchain, tmp_path, target)
    blob = obj.read_bytes()
    groups = section_sizes(blob)
    assert tuple(groups) == SECTION_GROUPS
    assert sum(groups.values()) == berkeley_size(blob).binary_size
    listed = llvm_size_sections(toolchain, obj)
    assert groups[".text"] == sum(size for name, size in listed.items() if name.startswith(".text"))
    assert groups[".eh_frame"] == listed[unwind] > 0
    assert groups[".rodata"] == sum(size for name, size in listed.items() if name.startswith(".rodata")) > 0
    assert groups[".data"] == listed[".data"] >= 16


def test_section_groups_of_a_linked_program(toolchain: Toolchain, tmp_path: Path) -> None:
    source = tmp_path / "main.c"
    source.write_text('#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n')
    program = tmp_path / "main"
    run_command([toolchain.tool("clang"), "-Oz", source, "-o", program], timeout=60)
    blob = program.read_bytes()
    groups = section_sizes(blob)
    assert sum(groups.values()) == berkeley_size(blob).binary_size
    listed = llvm_size_sections(toolchain, program)
    assert groups[".eh_frame"] == listed.get(".eh_frame", 0) + listed.get(".eh_frame_hdr", 0)
    assert groups["other"] >= listed[".dynsym"] > 0  # the dynamic symbol table is loaded, not code
