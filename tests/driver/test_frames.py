"""The driver's frame-pointer choice: smaller objects that link, run and unwind, and the
user's own frame-pointer flags respected."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from llm_compiler.core.frames import FRAME_POINTER
from llm_compiler.toolchain.elf import berkeley_size, section_sizes
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command
from tests.conftest import run_cli

UNIT = r"""
#include <execinfo.h>
int total;
__attribute__((noinline)) void take(int a, int b, int c, int d) {
    void *frames[64];
    total += a + b + c + d + backtrace(frames, 64);
}
void constants(void) {
    take(1, 2, 3, 4);
    take(5, 6, 7, 8);
    take(9, 10, 11, 12);
    take(13, 14, 15, 16);
}
"""

MAIN = r"""
#include <stdio.h>
extern int total;
void constants(void);
int main(void) { constants(); printf("%d\n", total); return 0; }
"""


def compile_unit(tmp_path: Path, *flags: str, driver: tuple[str, ...] = ()) -> dict[str, object]:
    (tmp_path / "unit.c").write_text(UNIT)
    log = tmp_path / "cc.jsonl"
    log.unlink(missing_ok=True)
    compiled = run_cli(
        "cc", *driver, "--log", str(log), "-O2", *flags, "-c", "unit.c", "-o", "unit.o", cwd=tmp_path
    )
    assert compiled.returncode == 0, compiled.stderr
    [line] = [json.loads(text) for text in log.read_text().splitlines()]
    return line


def run_program(toolchain: Toolchain, tmp_path: Path, obj: Path) -> str:
    (tmp_path / "main.c").write_text(MAIN)
    program = tmp_path / "program"
    run_command([toolchain.tool("clang"), "-Oz", tmp_path / "main.c", obj, "-o", program], timeout=60)
    return subprocess.run([program], capture_output=True, text=True, check=True, timeout=30).stdout


def test_frame_pointers_make_the_unit_smaller_and_it_runs_and_unwinds_the_same(
    toolchain: Toolchain, tmp_path: Path
) -> None:
    line = compile_unit(tmp_path)
    obj = (tmp_path / "unit.o").read_bytes()
    assert "frame pointer in 1 of 2 functions" in str(line["frames"]), line
    assert line["size"] == berkeley_size(obj).binary_size < int(str(line["clang_oz_size"]))
    assert line["sections"] == section_sizes(obj)
    clang = tmp_path / "clang.o"
    run_command([toolchain.tool("clang"), "-O2", "-Oz", "-c", tmp_path / "unit.c", "-o", clang], timeout=60)
    assert section_sizes(obj)[".eh_frame"] < section_sizes(clang.read_bytes())[".eh_frame"]
    # the same output, backtrace() counts included: the unwind tables are whole and exact
    assert run_program(toolchain, tmp_path, tmp_path / "unit.o") == run_program(toolchain, tmp_path, clang)


def test_the_users_frame_pointer_flags_and_oz_mode_get_no_choice(tmp_path: Path) -> None:
    for flags in (("-fno-omit-frame-pointer",), ("-fomit-frame-pointer",)):
        line = compile_unit(tmp_path, *flags)
        assert line["frames"] == "", (flags, line)
    line = compile_unit(tmp_path, driver=("--oz",))
    assert line["frames"] == "" and line["kept"] in ("oz", "clang-oz")


def test_a_whole_program_build_carries_the_choice_into_its_links(
    toolchain: Toolchain, tmp_path: Path
) -> None:
    """The IR a whole-program object carries gives the same functions a frame pointer,
    compiled anew or served by the cache."""
    (tmp_path / "unit.c").write_text(UNIT + "int whole_program_marker;\n")  # a unit of its own: a miss first
    for attempt in ("miss", "hit"):
        log = tmp_path / f"{attempt}.jsonl"
        compiled = run_cli(
            "cc", "--whole-program", "--log", str(log), "-O2", "-c", "unit.c", "-o", "unit.o", cwd=tmp_path
        )
        assert compiled.returncode == 0, compiled.stderr
        [line] = [json.loads(text) for text in log.read_text().splitlines()]
        assert line["frame_functions"] == ["constants"] and line["cached"] is (attempt == "hit")
        section = tmp_path / "carried.bc"
        run_command(
            [toolchain.tool("llvm-objcopy"), "--dump-section=.llvm.lto=" + str(section), tmp_path / "unit.o"],
            timeout=60,
        )
        carried = run_command([toolchain.tool("llvm-dis"), section, "-o", "-"], timeout=60).stdout_text
        given = {
            line.split("@")[1].split("(")[0]
            for line in carried.splitlines()
            if line.startswith("define") and "#" in line and FRAME_POINTER in attributes_of(carried, line)
        }
        assert given == {"constants"}
    (tmp_path / "main.c").write_text(MAIN)
    linked = run_cli("cc", "--whole-program", "-O2", "main.c", "unit.o", "-o", "program", cwd=tmp_path)
    assert linked.returncode == 0, linked.stderr
    ran = subprocess.run([tmp_path / "program"], capture_output=True, text=True, check=True, timeout=30)
    assert ran.stdout == run_program(toolchain, tmp_path, tmp_path / "unit.o")


def attributes_of(ir: str, define: str) -> str:
    group = define.rsplit("#", 1)[1].split()[0]
    return next(line for line in ir.splitlines() if line.startswith(f"attributes #{group} ="))


def test_frame_pointers_are_weighed_with_what_the_link_adds(toolchain: Toolchain, tmp_path: Path) -> None:
    """An object with frame pointers replaces the kept one only when it is smaller with its
    dynamic relocations counted (here the kept object's are made to cost nothing and the
    other's a lot: the kept one stands, and no check is even started)."""
    from llm_compiler.core.program import Program
    from llm_compiler.driver.diagnostics import Lowered
    from llm_compiler.driver.frames import smaller_frames
    from llm_compiler.driver.records import UnitLog

    (tmp_path / "unit.c").write_text(UNIT)
    clang = toolchain.tool("clang")
    ir = run_command(
        [clang, "-Oz", "-S", "-emit-llvm", tmp_path / "unit.c", "-o", "-"], timeout=60
    ).stdout_text

    def lower(text: str) -> Lowered:
        command = [clang, "-Oz", "-Xclang", "-disable-llvm-passes", "-c", "-x", "ir", "-", "-o", "-"]
        return Lowered(run_command(command, timeout=60, input=text.encode()).stdout, b"")

    kept = lower(ir).obj
    size = berkeley_size(kept).binary_size
    log = UnitLog(source="unit.c", output="unit.o", cwd=str(tmp_path), size=size)
    program = Program(name="unit.c", ir=ir)
    arguments = dict(
        arguments=["-c", "unit.c"], program=program, ir=ir, obj=kept, kept=kept, log=log,
        lower=lower, size=lambda obj: berkeley_size(obj).binary_size, says=(), known=b"",
    )  # fmt: skip
    obj, made = smaller_frames(
        **arguments,  # type: ignore[arg-type]
        selector=object(),  # type: ignore[arg-type]
        link_cost=lambda obj: 0 if obj == kept else 10_000,
    )
    assert obj == kept and made == log
