"""What the driver knows of a compiler's options, as tables: which take a value, which
make a line something other than a unit compile, which only the front end reads.

:mod:`llm_compiler.driver.arguments` reads command lines with them. The tables are
written out by hand from clang's and gcc's manuals; an option they do not name is an
option without a value that every step of a unit compile is given.
"""

from __future__ import annotations

import re

#: Options whose value is the next argument (so that value is not an input file).
SEPARATE_VALUE = frozenset(
    {
        "-o", "-x", "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote", "-idirafter",
        "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-isysroot", "-imultilib", "-MF", "-MT",
        "-MQ", "-MJ", "-L", "-l", "-Xclang", "-Xlinker", "-Xassembler", "-Xpreprocessor",
        "-Xanalyzer", "-target", "-arch", "-u", "-z", "-T", "-e", "-mllvm", "--param", "-aux-info",
        "-include-pch", "-serialize-diagnostics", "-F", "-framework", "-dependency-file",
        "-dependency-dot", "-gcc-toolchain", "--sysroot", "-B", "-specs", "-working-directory",
    }
)  # fmt: skip

#: Options with a value that may also be attached (``-oFILE``, ``-xc``, ``-MFdeps.d``).
ATTACHED_VALUE = ("-o", "-x", "-MF", "-MT", "-MQ")

#: Options that make a line something other than a unit compile to an object.
NOT_A_UNIT = {
    "-E": "preprocessing (-E)",
    "-S": "assembly output (-S)",
    "-emit-llvm": "IR output (-emit-llvm)",
    "-emit-ast": "AST output (-emit-ast)",
    "-M": "dependency listing (-M)",
    "-MM": "dependency listing (-MM)",
    "-fsyntax-only": "syntax check (-fsyntax-only)",
    "-###": "command listing (-###)",
    "--version": "version query",
    "-dumpversion": "version query",
    "-dumpfullversion": "version query",
    "-dumpmachine": "target query",
    "-dumpspecs": "specs query",
    "--help": "help",
    "-help": "help",
    "-save-temps": "-save-temps keeps clang's own intermediate files",
    "-gsplit-dwarf": "split DWARF (.dwo) is named after clang's own output",
    "-fstack-usage": "the stack usage file (.su) is named after clang's own output",
    "-fsave-optimization-record": "the optimization record is named after clang's own output",
    "-pg": "profiling instrumentation (-pg) is inserted by LLVM passes",
    "--coverage": "coverage instrumentation is inserted by LLVM passes",
    "-fprofile-arcs": "coverage instrumentation is inserted by LLVM passes",
    "-ftest-coverage": "coverage instrumentation is inserted by LLVM passes",
}
NOT_A_UNIT_PREFIXES = {
    "-print-": "a query (-print-*)",
    "--print-": "a query (--print-*)",
    "-flto": "link-time optimization (-flto) cannot be split",
    "-fsanitize=": "sanitizers are inserted by LLVM passes",
    "-fsanitize-coverage=": "sanitizer coverage is inserted by LLVM passes",
    "-fprofile-generate": "profiling instrumentation is inserted by LLVM passes",
    "-fprofile-instr-generate": "profiling instrumentation is inserted by LLVM passes",
    "-fcs-profile-generate": "profiling instrumentation is inserted by LLVM passes",
    "-fprofile-use": "profile-guided optimization runs in LLVM's own pipeline",
    "-fprofile-instr-use": "profile-guided optimization runs in LLVM's own pipeline",
    "-fmemory-profile": "memory profiling is inserted by LLVM passes",
    "-finstrument-function": "function instrumentation is inserted by LLVM passes",
    "-fpass-plugin=": "LLVM pass plugins run in LLVM's own pipeline",
    "-save-temps=": "-save-temps keeps clang's own intermediate files",
    "-gsplit-dwarf=": "split DWARF (.dwo) is named after clang's own output",
    "-fsave-optimization-record=": "the optimization record is named after clang's own output",
    "-foptimization-record-file=": "the optimization record describes clang's own pipeline",
    "-ftime-trace": "the time trace is named after clang's own output",
    "-save-stats": "the statistics file is named after clang's own output",
    "-MJ": "the compilation database entry names clang's own output",
}

#: Queries: lines that compile nothing, so their -O levels are left as they are.
QUERIES = frozenset(
    {"version query", "target query", "specs query", "help", "a query (-print-*)", "a query (--print-*)"}
)

#: Options only the front end reads, by name (exact): every other option of a unit
#: compile also reaches the lowering of its IR to an object (:func:`_reaches_lowering`).
FRONTEND_ONLY = frozenset(
    {
        # Preprocessing and where headers are found.
        "-D", "-U", "-I", "-include", "-imacros", "-isystem", "-iquote", "-idirafter", "-iprefix",
        "-iwithprefix", "-iwithprefixbefore", "-isysroot", "-imultilib", "-iframework", "-cxx-isystem",
        "-F", "-nostdinc", "-nostdinc++", "-nostdlibinc", "-nobuiltininc", "-undef", "-C", "-CC", "-P",
        "-H", "-dD", "-dM", "-dI", "-dN", "-trigraphs", "-traditional-cpp", "-Xpreprocessor",
        "-include-pch", "-ivfsoverlay",
        # Dependency files and compilation databases (the front end writes them).
        "-MD", "-MMD", "-MF", "-MT", "-MQ", "-MP", "-MG", "-MV", "-MJ", "-dependency-file",
        "-dependency-dot",
        # The language and its dialect.
        "-ansi", "-pedantic", "-pedantic-errors", "--pedantic", "--pedantic-errors", "-stdlib",
        # Diagnostics written to a file by the front end (the lowering would overwrite it).
        "-serialize-diagnostics", "-Xanalyzer",
    }
)  # fmt: skip
#: Options only the front end reads, by how their name starts.
FRONTEND_ONLY_PREFIXES = (
    "-D", "-U", "-I", "-F", "-include", "-imacros", "-isystem", "-iquote", "-idirafter", "-iframework",
    "-cxx-isystem", "-ivfsoverlay", "--embed-dir=", "-Wp,", "-std=", "--std=", "-stdlib=", "--stdlib=",
    "-fmacro-prefix-map=", "-fplugin", "-fpch-", "-fmodule", "-fimplicit-module", "-fprebuilt-module",
    "-fbuiltin-module-map",
)  # fmt: skip
#: ``-f`` flags of the language dialect (after ``-f`` and an optional ``no-``): front end only.
DIALECT_F = (
    "ms-extensions", "ms-compatibility", "gnu89-inline", "gnu-keywords", "asm", "blocks",
    "dollars-in-identifiers", "signed-char", "unsigned-char", "short-enums", "short-wchar", "wchar-type=",
    "char8_t", "rtti", "cxx-exceptions", "coroutines", "delayed-template-parsing", "permissive",
    "operator-names", "writable-strings", "elide-constructors", "threadsafe-statics", "template-depth",
    "constexpr-depth", "constexpr-steps", "bracket-depth", "access-control", "sized-deallocation",
    "aligned-allocation", "new-alignment", "visibility-inlines-hidden", "implicit-templates", "trigraphs",
    "digraphs", "declspec", "borland-extensions", "pascal-strings", "double-square-bracket-attributes",
    "lax-vector-conversions", "gnu-inline-asm", "c++-static-destructors", "relaxed-template-template-args",
)  # fmt: skip

#: An optimization level: ``-O``, ``-O0``..``-O4``, ``-Os``, ``-Oz``, ``-Og``, ``-Ofast``.
LEVEL = re.compile(r"-O(?:\d*|s|z|g|fast)")
