"""What the link adds for a unit's object: dynamic relocations of absolute pointers in
position-independent code, counted before a list is kept."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.objective import DEFAULT_OBJECTIVE
from llm_compiler.driver.arguments import UnitCompile, classify
from llm_compiler.driver.lowering import CLANG_OZ_FLAGS, keep_smallest, link_cost, lower, object_size
from llm_compiler.driver.records import UnitLog, completed
from llm_compiler.toolchain.elf import dynamic_relocation_bytes
from llm_compiler.toolchain.ir import is_position_independent
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command

TABLES = r"""
const char *names[] = {"zero", "one", "two", "three"};
static int twice(int x) { return 2 * x; }
static int (*const ops[])(int) = {twice, twice};
int apply(int i, int x) { return ops[i & 1](x) + names[i & 3][0]; }
"""


def relative_relocations(toolchain: Toolchain, library: Path) -> int:
    listing = run_command([toolchain.tool("llvm-readelf"), "-r", library], timeout=60).stdout_text
    return len(re.findall(r"R_(X86_64|386)_RELATIVE", listing))


@pytest.mark.parametrize(("flags", "entry"), [((), 24), (("-m32",), 8)])
def test_dynamic_relocations_are_those_the_link_makes(
    toolchain: Toolchain, tmp_path: Path, flags: tuple[str, ...], entry: int
) -> None:
    source, empty = tmp_path / "tables.c", tmp_path / "empty.c"
    source.write_text(TABLES)
    empty.write_text("int nothing;\n")
    made = {}
    for name in ("tables", "empty"):
        obj, library = tmp_path / f"{name}.o", tmp_path / f"lib{name}.so"
        clang = toolchain.tool("clang")
        run_command(
            [clang, *flags, "-Oz", "-fPIC", "-g", "-c", tmp_path / f"{name}.c", "-o", obj], timeout=60
        )
        run_command([clang, *flags, "-shared", "-nostdlib", obj, "-o", library], timeout=60)
        made[name] = (dynamic_relocation_bytes(obj.read_bytes()), relative_relocations(toolchain, library))
    # the debug information's own absolute relocations (-g) are not loaded: not counted
    assert made["empty"][0] == 0
    assert made["tables"][0] == entry * (made["tables"][1] - made["empty"][1]) == entry * 4


def test_only_position_independent_units_pay(toolchain: Toolchain, tmp_path: Path) -> None:
    source = tmp_path / "tables.c"
    source.write_text(TABLES)
    for flag, independent in (("-fPIC", True), ("-fno-pic", False)):
        ir = run_command(
            [toolchain.tool("clang"), flag, "-Oz", "-S", "-emit-llvm", source, "-o", "-"], timeout=60
        ).stdout_text
        assert is_position_independent(ir) is independent
        obj = run_command([toolchain.tool("clang"), flag, "-Oz", "-c", source, "-o", "-"], timeout=60).stdout
        assert link_cost(ir)(obj) == (96 if independent else 0)


def test_a_list_is_kept_only_when_it_saves_more_than_the_link_adds(
    toolchain: Toolchain, tmp_path: Path
) -> None:
    (tmp_path / "tables.c").write_text(TABLES)
    unit = classify(["-fPIC", "-c", str(tmp_path / "tables.c"), "-o", str(tmp_path / "tables.o")])
    assert isinstance(unit, UnitCompile)
    clang = toolchain.tool("clang")

    def size(obj: bytes) -> int:
        return object_size(obj, DEFAULT_OBJECTIVE)

    lowering = partial(lower, clang, unit, size=size)
    front = [clang, "-fPIC", "-Oz", "-Xclang", "-disable-llvm-optzns", "-S", "-emit-llvm"]
    ir = run_command([*front, tmp_path / "tables.c", "-o", "-"], timeout=60).stdout_text
    with Compiler(toolchain, engine="subprocess", keep_ir=True) as compiler:
        program = compiler.load_ir(ir, name="tables.c")
        chosen_list = "default<O0>"  # its object is larger than -Oz's
        chosen_obj = lowering(compiler.optimize(program, compiler.passes(chosen_list))).obj

        def decide(cost: dict[bool, int]) -> UnitLog:
            log = UnitLog(source="tables.c", output="tables.o", cwd=str(tmp_path), pipeline=chosen_list)
            with ThreadPoolExecutor(max_workers=2) as background:
                return keep_smallest(
                    compiler=compiler,
                    program=program,
                    log=log,
                    clang_oz=completed(lambda: lowering(program.ir, flags=CLANG_OZ_FLAGS)),
                    background=background,
                    known=b"",
                    lower=lowering,
                    size=size,
                    link_cost=lambda obj: cost[obj == chosen_obj],
                )[1]

        # the -Oz objects' relocations would cost the link more than the larger code
        kept = decide({True: 0, False: 100_000})
        assert kept.kept == "chosen" and kept.size == kept.chosen_size > int(str(kept.oz_size))
        # the same on both sides: the larger code is not kept
        kept = decide({True: 100_000, False: 100_000})
        assert kept.kept in ("oz", "clang-oz") and "not smaller" in kept.reason
