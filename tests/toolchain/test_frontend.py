"""The front end emits the unoptimized -Oz IR the released models saw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.corpus.program_set import ProgramSet
from llm_compiler.errors import InvalidInput
from llm_compiler.toolchain.frontend import (
    CompileCommand,
    FrontendOptions,
    bare_metal_triple,
    emit_ir,
    flags_from_compile_command,
    language_of,
)
from llm_compiler.toolchain.llvm import Toolchain

SOURCE = """
#include "config.h"
int scale(int v) { return v * FACTOR; }
#ifdef WITH_EXTRA
int extra(int *p) { return *p + 1; }
#endif
"""


def test_models_ir_shape(toolchain: Toolchain, write) -> None:  # type: ignore[no-untyped-def]
    ir = emit_ir(toolchain, write("f.c", "int f(int *p) { return *p + 1; }\n"))
    assert "minsize" in ir and "optsize" in ir, "functions must carry minsize optsize"
    assert "!tbaa" in ir, "TBAA metadata must be present"
    assert "alloca" in ir, "no LLVM pass may have run (mem2reg would remove the allocas)"


def test_cxx_goes_through_clang_plus_plus(toolchain: Toolchain, write) -> None:  # type: ignore[no-untyped-def]
    ir = emit_ir(
        toolchain, write("v.cpp", "#include <vector>\nint n() { std::vector<int> v(3); return v.size(); }\n")
    )
    assert "_ZNSt6vector" in ir


def test_include_dirs_and_defines(toolchain: Toolchain, write, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write("inc/config.h", "#define FACTOR 3\n")
    source = write("src/s.c", SOURCE)
    options = FrontendOptions(include_dirs=(str(tmp_path / "inc"),), defines={"WITH_EXTRA": None})
    ir = emit_ir(toolchain, source, options)
    assert "@extra" in ir and "mul nsw i32 %" in ir
    assert "@extra" not in emit_ir(toolchain, source, FrontendOptions(include_dirs=(str(tmp_path / "inc"),)))


def test_target_triple(toolchain: Toolchain, write) -> None:  # type: ignore[no-untyped-def]
    ir = emit_ir(
        toolchain, write("t.c", "int g(void) { return 1; }\n"), FrontendOptions(target="aarch64-linux-gnu")
    )
    assert 'target triple = "aarch64' in ir


@pytest.mark.skipif(
    not Path("/usr/lib/arm-none-eabi/include/stdio.h").is_file(),
    reason="newlib for ARM bare metal: apt-get install libnewlib-arm-none-eabi (scripts/setup.sh --dev)",
)
def test_a_cortex_m_unit_finds_newlib(toolchain: Toolchain, write) -> None:  # type: ignore[no-untyped-def]
    source = write(
        "io.c", '#include <stdio.h>\n#include <sys/types.h>\nint say(void) { return puts("hi"); }\n'
    )
    ir = emit_ir(
        toolchain, source, FrontendOptions(target="thumbv7em-none-eabi", extra_flags=("-mcpu=cortex-m4",))
    )
    assert 'target triple = "thumbv7em-unknown-none-eabi"' in ir and "@puts" in ir
    assert [
        bare_metal_triple(t) for t in ("armv7m-none-eabihf", "thumbv6m-none-eabi", "aarch64-linux-gnu")
    ] == [
        "arm-none-eabi",
        "arm-none-eabi",
        None,
    ]


def test_compile_error_names_file_and_cause(toolchain: Toolchain, write) -> None:  # type: ignore[no-untyped-def]
    source = write("bad.c", "int f( { return 0; }\n")
    with pytest.raises(InvalidInput) as caught:
        emit_ir(toolchain, source)
    assert "bad.c" in str(caught.value) and "error:" in str(caught.value)


def test_unknown_suffix_and_missing_file(toolchain: Toolchain, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="unknown kind of file"):
        language_of(tmp_path / "x.rs")
    with pytest.raises(InvalidInput, match="no such file"):
        emit_ir(toolchain, tmp_path / "missing.c")


def test_compile_commands_entry(compiler: Compiler, write, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write("proj/include/config.h", "#define FACTOR 5\n")
    write("proj/src/s.c", SOURCE)
    entry = {
        "directory": str(tmp_path / "proj"),
        "file": "src/s.c",
        "command": "cc -Iinclude -DWITH_EXTRA -O2 -g -Werror -MD -MF s.d -c src/s.c -o build/s.o",
    }
    command = CompileCommand.from_entry(entry)
    options = flags_from_compile_command(command)
    assert options.extra_flags == ("-Iinclude", "-DWITH_EXTRA")
    database = write("proj/compile_commands.json", json.dumps([entry]))
    specs = list(ProgramSet([database]))
    assert [spec.path for spec in specs] == [tmp_path / "proj/src/s.c"]
    program = specs[0].load(compiler)
    assert "@extra" in program.ir and program.language == "c"


def test_compile_commands_arguments_form() -> None:
    command = CompileCommand.from_entry(
        {"directory": "/p", "file": "a.cc", "arguments": ["c++", "-std=c++17", "-c", "a.cc", "-o", "a.o"]}
    )
    assert flags_from_compile_command(command).extra_flags == ("-std=c++17",)
    with pytest.raises(InvalidInput, match="no command"):
        CompileCommand.from_entry({"directory": "/p", "file": "a.cc"})


def test_a_line_compiling_several_files_keeps_only_flags() -> None:
    """``cc -c a.c b.c`` (as libgsm's Makefile does) is one entry per file with both files."""
    line = ["cc", "-include", "cfg.c", "-Iinc", "-c", "src/a.c", "src/b.c", "lib.a"]
    command = CompileCommand.from_entry({"directory": "/p", "file": "src/b.c", "arguments": line})
    assert flags_from_compile_command(command).extra_flags == ("-include", "cfg.c", "-Iinc")
