"""Classifying and rewriting real compiler command lines (no compiler runs here)."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_compiler.driver.arguments import (
    Passthrough,
    UnitCompile,
    classify,
    reads_stdin,
    split_launcher,
)


def unit(line: str) -> UnitCompile:
    result = classify(shlex.split(line))
    assert isinstance(result, UnitCompile), result
    return result


def passthrough(line: str) -> Passthrough:
    result = classify(shlex.split(line))
    assert isinstance(result, Passthrough), result
    return result


def test_bzip2s_object_rule() -> None:
    compile_ = unit("-Wall -Winline -O2 -g -D_FILE_OFFSET_BITS=64 -c blocksort.c")
    assert compile_.source == "blocksort.c"
    assert compile_.language == "c"
    assert compile_.output == "blocksort.o"
    assert compile_.frontend_arguments == ("-Wall", "-Winline", "-g", "-D_FILE_OFFSET_BITS=64", "blocksort.c")
    assert compile_.codegen_flags == ("-g",)
    assert compile_.fallback_arguments == (
        "-Wall", "-Winline", "-g", "-D_FILE_OFFSET_BITS=64", "-c", "blocksort.c", "-Oz",
    )  # fmt: skip
    assert compile_.optimization_flags == ("-O2",)


def test_bzip2s_shared_object_rule_keeps_fpic_for_lowering() -> None:
    compile_ = unit("-Wall -Winline -O2 -g -D_FILE_OFFSET_BITS=64 -fPIC -o blocksort.sho -c blocksort.c")
    assert compile_.output == "blocksort.sho"
    assert compile_.codegen_flags == ("-g", "-fPIC")
    assert "-o" not in compile_.frontend_arguments and "blocksort.sho" not in compile_.frontend_arguments
    assert compile_.fallback_arguments[-1] == "-Oz" and "-O2" not in compile_.fallback_arguments


def test_autotools_libtool_line_keeps_its_own_dependency_flags() -> None:
    line = (
        "-DHAVE_CONFIG_H -I. -I.. -I../include -g -O2 -MT libfoo_la-foo.lo -MD -MP "
        "-MF .deps/libfoo_la-foo.Tpo -c ../src/foo.c  -fPIC -DPIC -o .libs/libfoo_la-foo.o"
    )
    compile_ = unit(line)
    assert compile_.source == "../src/foo.c"
    assert compile_.output == ".libs/libfoo_la-foo.o"
    assert compile_.frontend_arguments == (
        "-DHAVE_CONFIG_H", "-I.", "-I..", "-I../include", "-g", "-MT", "libfoo_la-foo.lo", "-MD", "-MP",
        "-MF", ".deps/libfoo_la-foo.Tpo", "../src/foo.c", "-fPIC", "-DPIC",
    )  # fmt: skip
    assert compile_.codegen_flags == ("-g", "-fPIC")


def test_cmake_line_behind_the_launcher() -> None:
    language, rest = split_launcher(
        shlex.split(
            "/usr/bin/cc -DFOO=1 -I/src/include -O3 -DNDEBUG -std=gnu11 -fPIE -MD "
            "-MT CMakeFiles/app.dir/main.c.o -MF CMakeFiles/app.dir/main.c.o.d "
            "-o CMakeFiles/app.dir/main.c.o -c /src/main.c"
        )
    )
    assert language == "c"
    compile_ = classify(rest)
    assert isinstance(compile_, UnitCompile)
    assert compile_.output == "CMakeFiles/app.dir/main.c.o"
    assert compile_.frontend_arguments == (
        "-DFOO=1", "-I/src/include", "-DNDEBUG", "-std=gnu11", "-fPIE", "-MD",
        "-MT", "CMakeFiles/app.dir/main.c.o", "-MF", "CMakeFiles/app.dir/main.c.o.d", "/src/main.c",
    )  # fmt: skip
    assert compile_.codegen_flags == ("-fPIE",)


def test_cmake_cxx_line_behind_the_launcher() -> None:
    language, rest = split_launcher(
        ["/usr/bin/clang++-19", "-O2", "-std=c++17", "-o", "x.cpp.o", "-c", "/src/x.cpp"]
    )
    assert language == "c++"
    compile_ = classify(rest)
    assert isinstance(compile_, UnitCompile)
    assert compile_.language == "c++"


@pytest.mark.parametrize(
    ("line", "extra"),
    [
        ("-MD -c src/x.c -o obj/x.o", ("-MQ", "obj/x.o", "-MF", "obj/x.d")),
        ("-MMD -MP -c src/x.c", ("-MQ", "x.o", "-MF", "x.d")),
        ("-MD -MF deps/x.dep -c x.c -o x.o", ("-MQ", "x.o")),
        ("-MD -MQ x.o -c x.c -o out/x.o", ("-MF", "out/x.d")),
        ("-Wp,-MD,.x.o.d -c x.c -o x.o", ("-MQ", "x.o")),
        ("-c x.c -o x.o", ()),
    ],
)
def test_dependency_output_names_the_real_object(line: str, extra: tuple[str, ...]) -> None:
    compile_ = unit(line)
    given = tuple(a for a in shlex.split(line) if a not in ("-c", "-o", compile_.output))
    assert compile_.frontend_arguments == given + extra


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("-o bzip2 bzip2.o -L. -lbz2", "no -c"),
        ("-o libbz2.so.1.0.4 -shared -Wl,-soname,libbz2.so.1.0 blocksort.sho huffman.sho -lc", "no -c"),
        ("-Wall -O2 conftest.c -o conftest", "no -c"),
        ("-E conftest.c", "preprocessing"),
        ("-E -x c -", "preprocessing"),
        ("-E -dM -x c /dev/null", "preprocessing"),
        ("--version", "version query"),
        ("-dumpversion", "version query"),
        ("-dumpmachine", "target query"),
        ("-print-prog-name=ld", "query"),
        ("-print-search-dirs", "query"),
        ("--print-file-name=libc.so", "query"),
        ("-v", "no -c"),
        ("@build/args.rsp", "response file"),
        ("-c @build/args.rsp", "response file"),
        ("-c -x c -", "standard input"),
        ("-c a.c b.c", "several inputs (2)"),
        ("-c a.c -o a.o extra.o", "several inputs (2)"),
        ("-c", "no input"),
        ("-c start.S -o start.o", "not a C or C++ source"),
        ("-c start.s", "not a C or C++ source"),
        ("-x assembler-with-cpp -c start.asm", "not a C or C++ source"),
        ("-x c-header -c config.h -o config.h.pch", "not a C or C++ source"),
        ("-c prog.i", "not a C or C++ source"),
        ("-S -O2 a.c", "assembly output"),
        ("-c -emit-llvm a.c", "IR output"),
        ("-M a.c", "dependency listing"),
        ("-MM -c a.c", "dependency listing"),
        ("-fsyntax-only a.c", "syntax check"),
        ("-O2 -flto -c a.c", "link-time optimization"),
        ("-flto=thin -c a.c -o a.o", "link-time optimization"),
        ("-fsanitize=address -c a.c", "sanitizers"),
        ("--coverage -c a.c", "coverage"),
        ("-fprofile-instr-generate -c a.c", "profiling"),
        ("-pg -c a.c", "-pg"),
        ("-save-temps -c a.c", "-save-temps"),
        ("-gsplit-dwarf -c a.c", "split DWARF"),
        ("-c a.c -o -", "standard output"),
        ("-c a.c -o", "-o without its value"),
    ],
)
def test_what_is_left_to_clang(line: str, reason: str) -> None:
    result = passthrough(line)
    assert reason in result.reason
    assert result.compiles == ("-c" in shlex.split(line))


@pytest.mark.parametrize(
    ("line", "source", "language", "output"),
    [
        ("-c foo.c", "foo.c", "c", "foo.o"),
        ("-c src/foo.cpp -oobj/foo.o", "src/foo.cpp", "c++", "obj/foo.o"),
        ("-c foo.cc -o first.o -o second.o", "foo.cc", "c++", "second.o"),
        ("-x c++ -c table.inc -o table.o", "table.inc", "c++", "table.o"),
        ("-xc -c generated", "generated", "c", "generated.o"),
        ("-x c++ -x none -c foo.C", "foo.C", "c++", "foo.o"),
        ("-include config.h -isystem /opt/x -I include -c lib.cxx", "lib.cxx", "c++", "lib.o"),
        ("-fno-lto -fno-sanitize=all -c a.c", "a.c", "c", "a.o"),
        ("-Xclang -load -Xclang plugin.so -c a.c", "a.c", "c", "a.o"),
    ],
)
def test_unit_compiles(line: str, source: str, language: str, output: str) -> None:
    compile_ = unit(line)
    assert (compile_.source, compile_.language, compile_.output) == (source, language, output)
    assert "-c" not in compile_.frontend_arguments
    assert source in compile_.frontend_arguments


def test_codegen_flags_are_those_lowering_needs() -> None:
    line = (
        "-m32 -march=x86-64-v2 -mtune=generic -mcmodel=large -ffunction-sections -fdata-sections "
        "-fno-omit-frame-pointer -fstack-protector-strong -target x86_64-linux-gnu --target=i686-linux-gnu "
        "-gdwarf-4 -Wa,--noexecstack -mllvm -x86-asm-syntax=intel -fno-pic -fpie -fno-PIE "
        "-Werror -Wall -I inc -DX -std=c99 -fno-strict-aliasing -fvisibility=hidden -pipe -c a.c"
    )
    assert unit(line).codegen_flags == (
        "-m32", "-march=x86-64-v2", "-mtune=generic", "-mcmodel=large", "-ffunction-sections",
        "-fdata-sections", "-fno-omit-frame-pointer", "-fstack-protector-strong", "-target",
        "x86_64-linux-gnu", "--target=i686-linux-gnu", "-gdwarf-4", "-Wa,--noexecstack", "-mllvm",
        "-x86-asm-syntax=intel", "-fno-pic", "-fpie", "-fno-PIE",
    )  # fmt: skip


def test_every_optimization_level_is_dropped_and_the_fallback_is_oz() -> None:
    compile_ = unit("-O0 -O1 -O -Os -Ofast -Og -O3 -c a.c -o a.o")
    assert compile_.optimization_flags == ("-O0", "-O1", "-O", "-Os", "-Ofast", "-Og", "-O3")
    assert compile_.frontend_arguments == ("a.c",)
    assert compile_.fallback_arguments == ("-c", "a.c", "-o", "a.o", "-Oz")


@pytest.mark.parametrize(
    ("arguments", "language", "rest"),
    [
        (["/usr/bin/cc", "-c", "a.c"], "c", ["-c", "a.c"]),
        (["/usr/bin/gcc-12", "-c", "a.c"], "c", ["-c", "a.c"]),
        (["/usr/lib/llvm-19/bin/clang", "x.o"], "c", ["x.o"]),
        (["/usr/bin/c++", "-c", "a.cc"], "c++", ["-c", "a.cc"]),
        (["x86_64-linux-gnu-g++-12", "-c", "a.cc"], "c++", ["-c", "a.cc"]),
        (["clang++", "--version"], "c++", ["--version"]),
        (["-c", "a.c"], None, ["-c", "a.c"]),
        (["a.c", "-c"], None, ["a.c", "-c"]),
        (["ccache", "-c", "a.c"], None, ["ccache", "-c", "a.c"]),
        ([], None, []),
    ],
)
def test_split_launcher(arguments: list[str], language: str | None, rest: list[str]) -> None:
    assert split_launcher(arguments) == (language, rest)


def test_reads_stdin_only_for_an_input_dash() -> None:
    assert reads_stdin(["-E", "-x", "c", "-"])
    assert not reads_stdin(["-E", "a.c", "-o", "-"])
    assert not reads_stdin(["-MF", "-", "-c", "a.c"])


_SINGLE = [
    "-c", "-O2", "-Os", "-MD", "-MMD", "-g", "-fPIC", "-DX", "-Wall", "-m32", "-E", "-flto", "@rsp", "a.c",
    "b.cpp", "x.o", "-",
]  # fmt: skip
_WITH_VALUE = st.tuples(
    st.sampled_from(["-o", "-MF", "-MT", "-x", "-I"]),
    st.sampled_from(["a.o", "a.d", "c", "c++", "none", "inc"]),
)
_LINES = st.lists(st.one_of(st.sampled_from(_SINGLE).map(lambda word: (word,)), _WITH_VALUE), max_size=10)


@settings(max_examples=300, deadline=None)
@given(_LINES)
def test_classify_never_fails_and_rewrites_consistently(words: list[tuple[str, ...]]) -> None:
    arguments = [argument for word in words for argument in word]
    result = classify(arguments)
    if isinstance(result, Passthrough):
        assert result.reason
        return
    assert "-c" in arguments and result.source in arguments
    assert "-c" not in result.frontend_arguments
    assert not any(a.startswith("-O") for a in result.frontend_arguments)
    without_levels = [a for a in arguments if not a.startswith("-O")]
    assert result.fallback_arguments == (*without_levels, "-Oz")
    assert set(result.codegen_flags) <= set(result.frontend_arguments)
