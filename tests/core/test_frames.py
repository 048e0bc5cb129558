"""Frame pointers where they shrink the unwind tables, with the real clang and LLVM."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from llm_compiler.core.frames import FRAME_POINTER, choose_frames, user_decides_frames
from llm_compiler.toolchain.elf import berkeley_size, function_costs, section_sizes
from llm_compiler.toolchain.ir import defined_functions, functions_with_inline_asm, with_function_attribute
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command

#: -Oz materializes the small constants as push/pop pairs: each moves the frame address.
UNIT = r"""
extern void take(int, int, int, int);
void constants(void) {
    take(1, 2, 3, 4);
    take(5, 6, 7, 8);
    take(9, 10, 11, 12);
    take(13, 14, 15, 16);
}
int leaf(int x) { return x * 3 + 1; }
int with_asm(int x) {
    int r;
    __asm__("lea 1(%1), %0" : "=r"(r) : "r"(x));
    take(1, 2, 3, r);
    take(5, 6, 7, r);
    take(9, 10, 11, r);
    return r;
}
__attribute__((naked)) void naked(void) { __asm__("ret"); }
"""


def unit_ir(toolchain: Toolchain, tmp_path: Path, *flags: str) -> str:
    source = tmp_path / "unit.c"
    source.write_text(UNIT)
    command = [toolchain.tool("clang"), "-Oz", *flags, "-S", "-emit-llvm", source, "-o", "-"]
    return run_command(command, timeout=60).stdout_text


def lowerer(toolchain: Toolchain, *flags: str):  # type: ignore[no-untyped-def]
    def lower(ir: str) -> bytes:
        command = [
            toolchain.tool("clang"),
            "-Oz",
            *flags,
            "-Xclang",
            "-disable-llvm-passes",
            "-c",
            "-x",
            "ir",
        ]
        return run_command([*command, "-", "-o", "-"], timeout=60, input=ir.encode()).stdout

    return lower


def size(obj: bytes) -> int:
    return berkeley_size(obj).binary_size


def frame_pointer_functions(ir: str) -> set[str]:
    """The functions LLVM's own reader sees with the attribute (opt prints the module again)."""
    groups = dict(re.findall(r"^attributes #(\d+) = \{ (.*) \}$", ir, re.M))
    found = set()
    for line in ir.splitlines():
        match = re.match(r"^define [^@]*@(\w+)\(.*#(\d+)", line)
        if match and FRAME_POINTER in groups.get(match.group(2), ""):
            found.add(match.group(1))
    return found


def test_the_attribute_goes_to_the_named_functions_only(toolchain: Toolchain, tmp_path: Path) -> None:
    ir = unit_ir(toolchain, tmp_path)
    assert functions_with_inline_asm(ir) == {"with_asm", "naked"}
    changed = with_function_attribute(ir, FRAME_POINTER, {"constants", "naked"})
    reread = run_command([toolchain.tool("opt"), "-S", "-"], timeout=60, input=changed.encode()).stdout_text
    assert frame_pointer_functions(reread) == {"constants"}  # naked functions are left alone
    assert defined_functions(reread) == defined_functions(ir)
    everything = with_function_attribute(ir, FRAME_POINTER)
    assert frame_pointer_functions(everything) == {"constants", "leaf", "with_asm"}
    # a function that already says how to treat the frame pointer keeps its own value
    user = unit_ir(toolchain, tmp_path, "-fno-omit-frame-pointer")
    assert with_function_attribute(user, FRAME_POINTER) == user


def test_function_costs_are_code_and_unwind_entry(toolchain: Toolchain, tmp_path: Path) -> None:
    obj = lowerer(toolchain)(unit_ir(toolchain, tmp_path))
    costs = function_costs(obj)
    assert costs is not None and set(costs) == {"constants", "leaf", "with_asm", "naked"}
    sections = section_sizes(obj)
    assert sum(costs.values()) == sections[".text"] + sections[".eh_frame"] - eh_frame_cies(
        toolchain, obj, tmp_path
    )
    split = lowerer(toolchain, "-ffunction-sections")(unit_ir(toolchain, tmp_path))
    assert function_costs(split) is None  # functions cannot be told apart by address


def eh_frame_cies(toolchain: Toolchain, obj: bytes, tmp_path: Path) -> int:
    """Bytes of .eh_frame that belong to no function: its CIEs (llvm-dwarfdump's word)."""
    path = tmp_path / "unit.o"
    path.write_bytes(obj)
    dump = run_command([toolchain.tool("llvm-dwarfdump"), "--eh-frame", path], timeout=60).stdout_text
    return sum(
        int(length, 16) + 4 for length in re.findall(r"^[0-9a-f]+ ([0-9a-f]+) [0-9a-f]+ CIE$", dump, re.M)
    )


def test_frame_pointers_are_given_where_they_make_the_object_smaller(
    toolchain: Toolchain, tmp_path: Path
) -> None:
    ir = unit_ir(toolchain, tmp_path)
    lower = lowerer(toolchain)
    obj = lower(ir)
    choice = choose_frames(ir, obj, lower, size)
    assert choice is not None
    assert choice.functions == ("constants",)  # not the leaf, not the inline assembly
    assert choice.size == size(choice.obj) == size(lower(choice.ir)) < size(obj)
    assert section_sizes(choice.obj)[".eh_frame"] < section_sizes(obj)[".eh_frame"]
    assert frame_pointer_functions(choice.ir) == {"constants"}


def test_no_choice_where_it_cannot_win(toolchain: Toolchain, tmp_path: Path) -> None:
    # without unwind tables a frame pointer only costs
    ir = unit_ir(toolchain, tmp_path, "-fno-asynchronous-unwind-tables")
    lower = lowerer(toolchain)
    assert section_sizes(lower(ir))[".eh_frame"] == 0
    assert choose_frames(ir, lower(ir), lower, size) is None
    # code alone: the prologue is all a frame pointer adds
    code = unit_ir(toolchain, tmp_path)
    assert choose_frames(code, lower(code), lower, lambda obj: section_sizes(obj)[".text"]) is None


@pytest.mark.parametrize(
    ("line", "decides"),
    [
        (["-O2", "-c", "a.c"], False),
        (["-O2", "-fno-omit-frame-pointer", "-c", "a.c"], True),
        (["-fomit-frame-pointer", "-c", "a.c"], True),
        (["-pg", "-c", "a.c"], True),
    ],
)
def test_the_users_frame_pointer_flags_decide(line: list[str], decides: bool) -> None:
    assert user_decides_frames(line) is decides


def test_a_program_with_chosen_frame_pointers_unwinds_as_before(toolchain: Toolchain, tmp_path: Path) -> None:
    """glibc's backtrace() walks .eh_frame: it must see the same frames with the choice."""
    source = tmp_path / "walk.c"
    source.write_text(
        r"""
#include <execinfo.h>
#include <stdio.h>
__attribute__((noinline)) int deepest(int a, int b, int c, int d) {
    void *frames[64];
    return backtrace(frames, 64) + a + b + c + d;
}
__attribute__((noinline)) int middle(void) { return deepest(1, 2, 3, 4) + deepest(5, 6, 7, 8) - 36; }
int main(void) { printf("%d\n", middle()); return 0; }
"""
    )
    ir = run_command(
        [toolchain.tool("clang"), "-Oz", "-S", "-emit-llvm", source, "-o", "-"], timeout=60
    ).stdout_text
    lower = lowerer(toolchain)
    outputs = []
    for variant in (ir, with_function_attribute(ir, FRAME_POINTER)):
        obj = tmp_path / "walk.o"
        obj.write_bytes(lower(variant))
        program = tmp_path / "walk"
        run_command([toolchain.tool("clang"), obj, "-o", program], timeout=60)
        outputs.append(
            subprocess.run([program], capture_output=True, text=True, check=True, timeout=30).stdout
        )
    assert outputs[0] == outputs[1] and int(outputs[0]) >= 2 * 4  # deepest, middle, main, libc start
