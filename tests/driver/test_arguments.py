"""Classifying and rewriting real compiler command lines (no compiler runs here)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from llm_compiler.driver.arguments import (
    Passthrough,
    SeveralUnits,
    UnitCompile,
    classify,
    link_command,
    reads_stdin,
    split_launcher,
)
from llm_compiler.driver.response_files import expand_response_files, split_gnu


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
    assert compile_.codegen_flags == ("-Wall", "-Winline", "-g")
    assert compile_.fallback_arguments == (
        "-Wall", "-Winline", "-g", "-D_FILE_OFFSET_BITS=64", "-c", "blocksort.c", "-Oz",
    )  # fmt: skip
    assert compile_.optimization_flags == ("-O2",)


def test_bzip2s_shared_object_rule_keeps_fpic_for_lowering() -> None:
    compile_ = unit("-Wall -Winline -O2 -g -D_FILE_OFFSET_BITS=64 -fPIC -o blocksort.sho -c blocksort.c")
    assert compile_.output == "blocksort.sho"
    assert compile_.codegen_flags == ("-Wall", "-Winline", "-g", "-fPIC")
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
        ("-c a.c b.c -o ab.o", "several inputs (2)"),
        ("-c a.c b.c -MD -MF deps.d", "several inputs (2)"),
        ("-c a.c start.s", "several inputs (2)"),
        ("-c a.c -", "several inputs (2)"),
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
        ("-fstack-usage -c a.c", "stack usage"),
        ("-fsave-optimization-record -c a.c", "optimization record"),
        ("-ftime-trace -c a.c", "time trace"),
        ("-MJ a.json -c a.c", "compilation database"),
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


def test_every_flag_but_the_front_ends_own_reaches_the_lowering() -> None:
    line = (
        "-m32 -march=x86-64-v2 -mtune=generic -mcmodel=large -ffunction-sections -fdata-sections "
        "-fno-omit-frame-pointer -fstack-protector-strong -target x86_64-linux-gnu --target=i686-linux-gnu "
        "-gdwarf-4 -Wa,--noexecstack -mllvm -x86-asm-syntax=intel -fno-pic -fpie -fno-PIE "
        "-Werror -Wall -Wframe-larger-than=512 -I inc -Iinc2 -DX -UY -include cfg.h -isystem /s -std=c99 "
        "-fno-strict-aliasing -fvisibility=hidden -pipe -fbinutils-version=2.30 -fno-use-init-array "
        "-femit-dwarf-unwind=always -fdebug-types-section -ffast-math -MD -MF a.d -MT a.o -MP "
        "-Wp,-MD,x.d -pedantic -ansi -fms-extensions -fno-rtti -fsigned-char -stdlib=libc++ -c a.c"
    )
    assert unit(line).codegen_flags == (
        "-m32", "-march=x86-64-v2", "-mtune=generic", "-mcmodel=large", "-ffunction-sections",
        "-fdata-sections", "-fno-omit-frame-pointer", "-fstack-protector-strong", "-target",
        "x86_64-linux-gnu", "--target=i686-linux-gnu", "-gdwarf-4", "-Wa,--noexecstack", "-mllvm",
        "-x86-asm-syntax=intel", "-fno-pic", "-fpie", "-fno-PIE", "-Werror", "-Wall",
        "-Wframe-larger-than=512", "-fno-strict-aliasing", "-fvisibility=hidden", "-pipe",
        "-fbinutils-version=2.30", "-fno-use-init-array", "-femit-dwarf-unwind=always",
        "-fdebug-types-section", "-ffast-math",
    )  # fmt: skip
    assert unit(line).llvm_options == ("-x86-asm-syntax=intel",)


def test_mllvm_values_are_the_units_llvm_options_in_order() -> None:
    compile_ = unit("-mllvm -inline-threshold=5 -O2 -mllvm -enable-machine-outliner -c a.c")
    assert compile_.llvm_options == ("-inline-threshold=5", "-enable-machine-outliner")
    assert compile_.codegen_flags == ("-mllvm", "-inline-threshold=5", "-mllvm", "-enable-machine-outliner")


def test_every_optimization_level_is_dropped_and_the_fallback_is_oz() -> None:
    compile_ = unit("-O0 -O1 -O -Os -Ofast -Og -O3 -c a.c -o a.o")
    assert compile_.optimization_flags == ("-O0", "-O1", "-O", "-Os", "-Ofast", "-Og", "-O3")
    assert compile_.frontend_arguments == ("a.c",)
    assert compile_.fallback_arguments == ("-c", "a.c", "-o", "a.o", "-Oz")
    objc = unit("-ObjC -O2 -c a.c")  # an option, not a level
    assert objc.optimization_flags == ("-O2",) and "-ObjC" in objc.frontend_arguments


@pytest.mark.parametrize(
    ("line", "runs"),
    [
        ("-O2 -flto -c a.c -o a.o", "-flto -c a.c -o a.o -Oz"),
        ("-flto=thin -c a.c", "-flto=thin -c a.c -Oz"),
        ("-O3 -S a.c", "-S a.c -Oz"),
        ("-E -O2 -dM -x c /dev/null", "-E -dM -x c /dev/null -Oz"),
        ("-x c-header -O2 -c config.h -o config.h.pch", "-x c-header -c config.h -o config.h.pch -Oz"),
        ("-O2 -c a.c b.c -o ab.o", "-c a.c b.c -o ab.o -Oz"),
        ("-O1 -fsanitize=address -c a.c", "-fsanitize=address -c a.c -Oz"),
        ("-O2 -flto a.o b.o -o prog", "-flto a.o b.o -o prog -Oz"),
        ("-ObjC -O2 -c start.s", "-ObjC -c start.s -Oz"),
        ("--version", "--version"),
        ("-O2 --version", "-O2 --version"),
        ("-print-prog-name=ld", "-print-prog-name=ld"),
        ("-dumpmachine", "-dumpmachine"),
        ("-v", "-v"),
    ],
)
def test_a_command_left_to_clang_runs_at_oz_unless_it_is_a_query(line: str, runs: str) -> None:
    assert passthrough(line).arguments == tuple(shlex.split(runs))


def test_several_sources_are_compiled_unit_by_unit_as_clang_names_their_objects() -> None:
    line = "-O2 -Wall -DX -MMD -x c++ a.inc -x none src/b.c -fPIC -c lib/c.cpp"
    result = classify(shlex.split(line))
    assert isinstance(result, SeveralUnits)
    first, second, third = result.units
    assert [(u.source, u.language, u.output) for u in result.units] == [
        ("a.inc", "c++", "a.o"),
        ("src/b.c", "c", "b.o"),
        ("lib/c.cpp", "c++", "c.o"),
    ]
    assert first.frontend_arguments == (
        "-Wall",
        "-DX",
        "-MMD",
        "-x",
        "c++",
        "a.inc",
        "-fPIC",
        "-MQ",
        "a.o",
        "-MF",
        "a.d",
    )
    assert second.arguments == (
        "-O2",
        "-Wall",
        "-DX",
        "-MMD",
        "-x",
        "c++",
        "-x",
        "none",
        "src/b.c",
        "-fPIC",
        "-c",
    )
    assert third.fallback_arguments == (
        "-Wall", "-DX", "-MMD", "-x", "c++", "-x", "none", "-fPIC", "-c", "lib/c.cpp", "-Oz",
    )  # fmt: skip
    assert all(u.codegen_flags == ("-Wall", "-fPIC") for u in result.units)


def test_a_links_side_outputs_in_every_form_move_to_a_folder() -> None:
    line = [
        "-Wl,-Map=out/app.map,--gc-sections", "-Wl,--Map,second.map", "-Xlinker", "-Map", "-Xlinker",
        "third.map", "-Wl,--out-implib=libapp.dll.a", "-Xlinker", "--dependency-file=deps.d",
        "-Wl,--why-extract", "-Wl,why.txt", "-Wl,-soname,libapp.so", "main.o", "-o", "app",
    ]  # fmt: skip
    link = link_command(line)
    assert link is not None
    moved = link.side_outputs("/s")
    assert moved == [
        ("out/app.map", "/s/0-app.map"),
        ("second.map", "/s/1-second.map"),
        ("third.map", "/s/2-third.map"),
        ("libapp.dll.a", "/s/3-libapp.dll.a"),
        ("deps.d", "/s/4-deps.d"),
        ("why.txt", "/s/5-why.txt"),
    ]
    assert link.with_output("/s/app", "/s") == [
        "-Wl,-Map=/s/0-app.map,--gc-sections", "-Wl,--Map,/s/1-second.map", "-Xlinker", "-Map", "-Xlinker",
        "/s/2-third.map", "-Wl,--out-implib=/s/3-libapp.dll.a", "-Xlinker", "--dependency-file=/s/4-deps.d",
        "-Wl,--why-extract", "-Wl,/s/5-why.txt", "-Wl,-soname,libapp.so", "main.o", "-o", "/s/app",
    ]  # fmt: skip
    assert link.with_output("x") == [*line[:-2], "-o", "x"]  # unchanged without a folder
    plain = link_command(["-Wl,--gc-sections", "-Wl,-Mapfile", "main.o"])
    assert plain is not None and plain.side_outputs("/s") == []


def test_response_files_split_as_clangs_gnu_tokenizer() -> None:
    text = '-DA=1 "-DB=two words" \'-DC=x\\y\' -DD=a\\ b "" -DE="q\\"x" # -DF\r\n\t-DG=\'\'"" "un\\terminated'
    assert split_gnu(text) == [
        "-DA=1", "-DB=two words", "-DC=xy", "-DD=a b", '-DE=q"x', "#", "-DF", "-DG=", "unterminated",
    ]  # fmt: skip
    assert split_gnu("") == [] and split_gnu(" \n ") == [] and split_gnu("a\\") == ["a\\"]


def test_response_files_nest_from_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "outer.rsp").write_text("\ufeff-DA @sub/inner.rsp -c\n")
    (tmp_path / "sub" / "inner.rsp").write_text("-DB @inner2.rsp @missing.rsp")
    (tmp_path / "inner2.rsp").write_text("-DROOT")
    (tmp_path / "sub" / "inner2.rsp").write_text("-DSUB")
    expanded = expand_response_files(["-O2", "@outer.rsp", "a.c", "@"], cwd=tmp_path)
    assert expanded == ["-O2", "-DA", "-DB", "-DROOT", "@missing.rsp", "-c", "a.c", "@"]
    (tmp_path / "loop.rsp").write_text("-DX @again.rsp")
    (tmp_path / "again.rsp").write_text("@loop.rsp")
    assert expand_response_files(["@loop.rsp"], cwd=tmp_path) is None
    (tmp_path / "folder.rsp").mkdir()
    assert expand_response_files(["@folder.rsp"], cwd=tmp_path) is None
    twice = expand_response_files(["@inner2.rsp", "@inner2.rsp"], cwd=tmp_path)
    assert twice == ["-DROOT", "-DROOT"]  # the same file twice is no loop


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


def _sources(arguments: list[str]) -> list[str]:
    """The sources clang compiles in a line of :data:`_LINES`: the C and C++ files, and
    any input after ``-x c`` or ``-x c++`` (``clang -c -x c x.o`` compiles x.o as C)."""
    sources, language, i = [], "none", 0
    while i < len(arguments):
        word = arguments[i]
        if word in ("-o", "-MF", "-MT", "-I", "-x"):
            if word == "-x" and i + 1 < len(arguments):
                language = arguments[i + 1]
            i += 2
            continue
        if word in ("a.c", "b.cpp") or (word == "x.o" and language in ("c", "c++")):
            sources.append(word)
        i += 1
    return sources


@settings(max_examples=300, deadline=None)
@given(_LINES)
@example(words=[("-c",), ("a.c",), ("-x", "c"), ("x.o",)])  # x.o compiled as C, as clang does
def test_classify_never_fails_and_rewrites_consistently(words: list[tuple[str, ...]]) -> None:
    arguments = [argument for word in words for argument in word]
    result = classify(arguments)
    without_levels = [a for a in arguments if not a.startswith("-O")]
    if isinstance(result, Passthrough):
        assert result.reason
        assert result.arguments in (tuple(arguments), (*without_levels, "-Oz"))
        return
    if isinstance(result, SeveralUnits):
        assert len(result.units) > 1 and "-o" not in arguments
        assert [u.source for u in result.units] == _sources(arguments)
        return
    assert "-c" in arguments and result.source in arguments
    assert "-c" not in result.frontend_arguments
    assert not any(a.startswith("-O") for a in result.frontend_arguments)
    assert result.fallback_arguments == (*without_levels, "-Oz")
    assert set(result.codegen_flags) <= set(result.frontend_arguments)
