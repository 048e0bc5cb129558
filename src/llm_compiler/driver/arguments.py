"""Reading a clang or gcc command line: does it compile one C or C++ unit to an object?

A build runs its compiler for many things: compiling a source to an object, linking,
preprocessing, assembling, asking for the version. The driver splits only the first
kind into its own steps; :func:`classify` tells them apart and returns either a
:class:`UnitCompile` (with the command lines the driver's steps need) or a
:class:`Passthrough` (run clang with the arguments unchanged, and say why).

A *unit compile* has ``-c``, exactly one input, which is a C or C++ source (by suffix,
or by ``-x c`` / ``-x c++`` before it), and none of: ``-E``, ``-S``, ``-emit-llvm``,
``-M``/``-MM``, ``-fsyntax-only``, standard input ``-``, a response file ``@FILE``,
``-flto``, an object written to standard output, version or help queries, or
instrumentation that LLVM passes insert (sanitizers, profiling, coverage, ``-pg``:
the driver runs its own pass list, which would leave them out). From such a line:

* the **front-end arguments** are the line without ``-c``, ``-o`` and the ``-O``
  levels (the driver decides the optimization); when the build asked for a
  dependency file (``-MD``, ``-MMD``) the file and its make target are made explicit
  (``-MF``, ``-MQ <object>``), as clang would have named them, since the front end
  writes IR, not the object;
* the **code-generation flags** are those that still matter when IR is lowered to an
  object (``-fPIC``, ``-m*``, ``-g*``, ``--target=``, ``-ffunction-sections``,
  ``-Wa,...``...);
* the **fallback arguments** are the line with ``-Oz`` in place of its ``-O`` levels:
  what runs when the driver's own steps fail.

Everything here is a pure function of the argument list; nothing is run.

Example:
    >>> unit = classify(["-Wall", "-O2", "-g", "-c", "blocksort.c"])
    >>> unit.output, unit.frontend_arguments, unit.codegen_flags
    ('blocksort.o', ('-Wall', '-g', 'blocksort.c'), ('-g',))
    >>> classify(["-o", "bzip2", "bzip2.o", "-L.", "-lbz2"]).reason
    'no -c: not a compile to an object'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.toolchain.frontend import C_SUFFIXES, CXX_SUFFIXES

#: Options whose value is the next argument (so that value is not an input file).
_SEPARATE_VALUE = frozenset(
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
_ATTACHED_VALUE = ("-o", "-x", "-MF", "-MT", "-MQ")

#: Options that make a line something other than a unit compile to an object.
_NOT_A_UNIT = {
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
    "-pg": "profiling instrumentation (-pg) is inserted by LLVM passes",
    "--coverage": "coverage instrumentation is inserted by LLVM passes",
    "-fprofile-arcs": "coverage instrumentation is inserted by LLVM passes",
    "-ftest-coverage": "coverage instrumentation is inserted by LLVM passes",
}
_NOT_A_UNIT_PREFIXES = {
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
}

#: ``-f`` flags (after ``-f`` and an optional ``no-``) that matter when IR is lowered.
_CODEGEN_F = (
    "pic", "PIC", "pie", "PIE", "function-sections", "data-sections", "unique-section-names",
    "basic-block-sections", "emulated-tls", "integrated-as", "asynchronous-unwind-tables",
    "unwind-tables", "omit-frame-pointer", "stack-protector", "cf-protection", "plt",
    "stack-clash-protection", "split-machine-functions", "stack-size-section", "xray", "addrsig",
)  # fmt: skip
_CODEGEN_EXACT = frozenset({"-no-integrated-as", "-integrated-as"})
_CODEGEN_WITH_VALUE = frozenset({"-target", "-mllvm", "-Xassembler"})

#: The name of a C or C++ compiler executable (``cc``, ``gcc-12``, ``clang++-19``,
#: ``x86_64-linux-gnu-g++``), as CMake's compiler launcher passes it.
_COMPILER_NAME = re.compile(r"^(?:[\w.+-]*-)?(?:cc|gcc|clang|c\+\+|g\+\+|clang\+\+)(?:-\d+(?:\.\d+)*)?$")

#: Dependency-file options the front end must still see (kept in the front-end line).
_DEPENDENCY_OUTPUT = frozenset({"-MD", "-MMD"})
_DEPENDENCY_WP = ("-Wp,-MD,", "-Wp,-MMD,")
#: Every option about the dependency file (dropped from the line that lists dependencies).
_DEPENDENCY_OPTIONS = frozenset({"-MD", "-MMD", "-MF", "-MT", "-MQ", "-MP", "-MG", "-MV"})


@dataclass(frozen=True)
class Passthrough:
    """A command the driver leaves to clang, arguments unchanged.

    Attributes:
        reason: Why it is not a unit compile (for the log).
        compiles: Whether it has ``-c`` (a compile the driver did not optimize).
    """

    reason: str
    compiles: bool = False


@dataclass(frozen=True)
class UnitCompile:
    """A compile of one C or C++ translation unit to an object, ready to split.

    Attributes:
        arguments: The command line as the build gave it (without the compiler).
        source: The source file, as written on the line.
        language: ``"c"`` or ``"c++"``.
        output: The object the build expects (``-o``, or the source's stem + ``.o``).
        frontend_arguments: The line without ``-c``, ``-o`` and ``-O`` levels, with
            dependency output made explicit; the driver adds its front-end flags.
        codegen_flags: The flags that matter when the IR is lowered to an object.
        fallback_arguments: The line with ``-Oz`` in place of its ``-O`` levels.
        optimization_flags: The ``-O`` levels the build gave (dropped).
        dependency_output: The dependency file the build asked for (``-MD``...), or None.
        listing_arguments: The front-end line without its dependency-file options, for
            ``clang -M`` to list the files the front end reads.
    """

    arguments: tuple[str, ...]
    source: str
    language: str
    output: str
    frontend_arguments: tuple[str, ...]
    codegen_flags: tuple[str, ...]
    fallback_arguments: tuple[str, ...]
    optimization_flags: tuple[str, ...] = ()
    dependency_output: str | None = None
    listing_arguments: tuple[str, ...] = ()

    @property
    def position_flags(self) -> tuple[str, ...]:
        """The line's ``-fPIC``, ``-fpie``, ``-fno-pic``... (:data:`POSITION_FLAGS`)."""
        return tuple(flag for flag in self.listing_arguments if flag in POSITION_FLAGS)

    @property
    def plain_arguments(self) -> tuple[str, ...]:
        """The front-end line without its dependency-file options and position flags: the
        unit as a build compiles it for a static object (the compiler's default)."""
        return tuple(flag for flag in self.listing_arguments if flag not in POSITION_FLAGS)


#: Flags that choose position-independent code: a project that builds a static and a
#: shared library compiles each unit twice, with and without one of them.
POSITION_FLAGS = frozenset(
    {"-fPIC", "-fpic", "-fPIE", "-fpie", "-fno-PIC", "-fno-pic", "-fno-PIE", "-fno-pie"}
)


@dataclass(frozen=True)
class _Token:
    """One option or input: its argument(s) as given, its name and its value."""

    text: tuple[str, ...]
    name: str
    value: str | None = None

    @property
    def is_input(self) -> bool:
        return self.name == ""


def _tokens(arguments: Sequence[str]) -> list[_Token]:
    tokens = []
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        index += 1
        if argument == "-" or not argument.startswith("-"):
            tokens.append(_Token((argument,), "", argument))
        elif argument in _SEPARATE_VALUE:
            if index < len(arguments):
                tokens.append(_Token((argument, arguments[index]), argument, arguments[index]))
                index += 1
            else:
                tokens.append(_Token((argument,), argument, None))
        else:
            attached = next(
                (name for name in _ATTACHED_VALUE if argument.startswith(name) and len(argument) > len(name)),
                None,
            )
            if attached == "-o" and argument.startswith("-obj"):
                attached = None
            if attached is not None:
                tokens.append(_Token((argument,), attached, argument[len(attached) :]))
            else:
                tokens.append(_Token((argument,), argument))
    return tokens


def _source_language(path: str, forced: str | None) -> str | None:
    """``"c"``, ``"c++"`` or None (not a C or C++ source) for an input file."""
    if forced is not None:
        return forced if forced in ("c", "c++") else None
    suffix = Path(path).suffix
    if suffix in C_SUFFIXES:
        return "c"
    if suffix in CXX_SUFFIXES:
        return "c++"
    return None


def _inputs(tokens: Sequence[_Token]) -> list[tuple[str, str | None]]:
    """Each input file with its language (``-x`` applies to the inputs after it)."""
    forced: str | None = None
    found = []
    for token in tokens:
        if token.name == "-x":
            forced = None if token.value in (None, "none") else token.value
        elif token.is_input:
            found.append((token.text[0], _source_language(token.text[0], forced)))
    return found


def _why_not_a_unit(tokens: Sequence[_Token]) -> str | None:
    for token in tokens:
        if token.is_input:
            if token.text[0].startswith("@"):
                return "response file (@FILE)"
            continue
        if token.name in _NOT_A_UNIT:
            return _NOT_A_UNIT[token.name]
        for prefix, reason in _NOT_A_UNIT_PREFIXES.items():
            if token.name.startswith(prefix):
                return reason
        if token.name in _SEPARATE_VALUE and token.value is None:
            return f"{token.name} without its value"
    return None


def default_output(source: str) -> str:
    """The object a ``-c`` compile without ``-o`` writes: the source's stem + ``.o``, here.

    Example:
        >>> default_output("src/lib/crc32.c")
        'crc32.o'
    """
    return Path(source).with_suffix(".o").name


def dependency_file(output: str) -> str:
    """The file ``-MD``/``-MMD`` write without ``-MF``: the object with a ``.d`` suffix.

    Example:
        >>> dependency_file("build/obj/crc32.o")
        'build/obj/crc32.d'
    """
    return str(Path(output).with_suffix(".d"))


def classify(arguments: Sequence[str]) -> UnitCompile | Passthrough:
    """Classifies a compiler command line (the arguments after the compiler's name).

    Args:
        arguments: The arguments as the build passed them.

    Returns:
        A :class:`UnitCompile` for a compile of one C or C++ unit to an object, else a
        :class:`Passthrough` saying why not.

    Example:
        >>> classify(["-c", "a.c", "b.c"]).reason
        'several inputs (2)'
        >>> classify(["-E", "-x", "c", "-"]).reason
        'preprocessing (-E)'
    """
    tokens = _tokens(arguments)
    compiles = any(token.name == "-c" for token in tokens)
    reason = _why_not_a_unit(tokens)
    if reason is None and not compiles:
        reason = "no -c: not a compile to an object"
    inputs = _inputs(tokens)
    if reason is None:
        if not inputs:
            reason = "no input file"
        elif len(inputs) > 1:
            reason = f"several inputs ({len(inputs)})"
        elif inputs[0][0] == "-":
            reason = "source on standard input"
        elif inputs[0][1] is None:
            reason = f"{inputs[0][0]} is not a C or C++ source"
    outputs = [token.value for token in tokens if token.name == "-o"]
    if reason is None and outputs and outputs[-1] == "-":
        reason = "object written to standard output"
    if reason is not None:
        return Passthrough(reason, compiles)
    source, language = inputs[0]
    assert language is not None
    output = str(outputs[-1]) if outputs else default_output(source)
    return _split(tuple(arguments), tokens, source, language, output)


@dataclass(frozen=True)
class LinkCommand:
    """A link: a line without ``-c`` that writes a program or a library.

    Attributes:
        arguments: The line as the build gave it (without the compiler).
        inputs: Its input files, as written (objects, archives, sources...).
        output: The file it writes (``-o``, else ``a.out``).
    """

    arguments: tuple[str, ...]
    inputs: tuple[str, ...]
    output: str

    def with_output(self, output: str) -> list[str]:
        """The line writing ``output`` instead (its ``-o`` options replaced)."""
        kept = [part for token in _tokens(self.arguments) if token.name != "-o" for part in token.text]
        return [*kept, "-o", output]


def link_command(arguments: Sequence[str]) -> LinkCommand | None:
    """The line as a :class:`LinkCommand`, or None when it is not a plain link (a
    compile, ``-E``, ``-S``, a query, a response file, its own ``-flto``...).

    Example:
        >>> link_command(["-o", "bzip2", "bzip2.o", "-L.", "-lbz2"])
        LinkCommand(arguments=('-o', 'bzip2', 'bzip2.o', '-L.', '-lbz2'), inputs=('bzip2.o',), output='bzip2')
        >>> link_command(["-c", "a.c"]) is None
        True
    """
    tokens = _tokens(arguments)
    if any(token.name == "-c" for token in tokens) or _why_not_a_unit(tokens) is not None:
        return None
    inputs = tuple(name for name, _ in _inputs(tokens))
    if not inputs or "-" in inputs:
        return None
    outputs = [token.value for token in tokens if token.name == "-o"]
    return LinkCommand(tuple(arguments), inputs, str(outputs[-1]) if outputs else "a.out")


def _is_codegen(token: _Token) -> bool:
    name = token.name
    if name in _CODEGEN_WITH_VALUE or name in _CODEGEN_EXACT:
        return True
    if name.startswith(("--target=", "-m", "-g", "-Wa,")) and name != "-gcc-toolchain":
        return True
    if name.startswith("-f"):
        flag = name[2:].removeprefix("no-")
        return flag.startswith(_CODEGEN_F)
    return False


def _dependency_rewrite(tokens: Sequence[_Token], output: str) -> list[str]:
    """The flags that make the front end write the build's dependency file as clang would."""
    names = [token.name for token in tokens]
    direct = any(name in _DEPENDENCY_OUTPUT for name in names)
    through_wp = any(name.startswith(_DEPENDENCY_WP) for name in names)
    extra = []
    if (direct or through_wp) and not any(name in ("-MT", "-MQ") for name in names):
        extra += ["-MQ", output]
    if direct and not through_wp and "-MF" not in names:
        extra += ["-MF", dependency_file(output)]
    return extra


def _dependency_output(tokens: Sequence[_Token], output: str) -> str | None:
    """The dependency file the line makes the front end write, or None.

    Example:
        >>> _dependency_output(_tokens(["-MD", "-MF", "x.d", "-c", "a.c"]), "a.o")
        'x.d'
        >>> _dependency_output(_tokens(["-Wp,-MMD,.deps/a.d", "-c", "a.c"]), "a.o")
        '.deps/a.d'
    """
    found: str | None = None
    for token in tokens:
        if token.name.startswith(_DEPENDENCY_WP):
            found = token.name.split(",", 2)[2]
    if found is not None:
        return found
    if not any(token.name in _DEPENDENCY_OUTPUT for token in tokens):
        return None
    named = [token.value for token in tokens if token.name == "-MF" and token.value]
    return named[-1] if named else dependency_file(output)


def _is_dependency_option(token: _Token) -> bool:
    return token.name in _DEPENDENCY_OPTIONS or token.name.startswith(("-Wp,-MD", "-Wp,-MMD"))


def _split(
    arguments: tuple[str, ...], tokens: Sequence[_Token], source: str, language: str, output: str
) -> UnitCompile:
    frontend: list[str] = []
    codegen: list[str] = []
    fallback: list[str] = []
    optimization: list[str] = []
    for token in tokens:
        if token.name.startswith("-O"):
            optimization.append(token.name)
            continue
        fallback += token.text
        if token.name in ("-c", "-o"):
            continue
        frontend += token.text
        if _is_codegen(token):
            codegen += token.text
    return UnitCompile(
        arguments=arguments,
        source=source,
        language=language,
        output=output,
        frontend_arguments=(*frontend, *_dependency_rewrite(tokens, output)),
        codegen_flags=tuple(codegen),
        fallback_arguments=(*fallback, "-Oz"),
        optimization_flags=tuple(optimization),
        dependency_output=_dependency_output(tokens, output),
        listing_arguments=tuple(
            text
            for token in tokens
            if token.name not in ("-c", "-o") and not token.name.startswith("-O")
            if not _is_dependency_option(token)
            for text in token.text
        ),
    )


def reads_stdin(arguments: Sequence[str]) -> bool:
    """Whether the command reads a source from standard input (an input ``-``).

    Example:
        >>> reads_stdin(["-E", "-x", "c", "-"]), reads_stdin(["-E", "a.c", "-o", "-"])
        (True, False)
    """
    return any(token.is_input and token.text[0] == "-" for token in _tokens(arguments))


def split_launcher(arguments: Sequence[str]) -> tuple[str | None, list[str]]:
    """Drops the real compiler a launcher passes first (CMake's ``*_COMPILER_LAUNCHER``).

    With ``-DCMAKE_C_COMPILER_LAUNCHER="llm-compiler;cc"`` CMake runs
    ``llm-compiler cc /usr/bin/cc ARGS...``: the first argument names the compiler the
    build chose. It is dropped, and its name says whether the unit is C or C++.

    Returns:
        ``"c"`` or ``"c++"`` when a compiler was dropped (None otherwise), and the rest.

    Example:
        >>> split_launcher(["/usr/bin/clang++-19", "-c", "a.cc"])
        ('c++', ['-c', 'a.cc'])
        >>> split_launcher(["-c", "a.c"])
        (None, ['-c', 'a.c'])
    """
    if arguments and not arguments[0].startswith("-"):
        name = Path(arguments[0]).name
        if _COMPILER_NAME.match(name):
            return ("c++" if "++" in name else "c"), list(arguments[1:])
    return None, list(arguments)
