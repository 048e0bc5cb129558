"""Reading a clang or gcc command line: does it compile C or C++ units to objects?

A build runs its compiler for many things: compiling a source to an object, linking,
preprocessing, assembling, asking for the version. The driver splits only the first
kind into its own steps; :func:`classify` tells them apart and returns a
:class:`UnitCompile` (with the command lines the driver's steps need), a
:class:`SeveralUnits` (``-c a.c b.c``: one unit compile per source, each writing its
own object as clang names it) or a :class:`Passthrough` (run clang, and say why).

A *unit compile* has ``-c``, one input, which is a C or C++ source (by suffix, or by
``-x c`` / ``-x c++`` before it), and none of: ``-E``, ``-S``, ``-emit-llvm``,
``-M``/``-MM``, ``-fsyntax-only``, standard input ``-``, ``-flto``, an object written to
standard output, version or help queries, files clang names after its own output
(``-fstack-usage``, optimization records, ``-ftime-trace``), or instrumentation that
LLVM passes insert (sanitizers, profiling, coverage, ``-pg``: the driver runs its own
pass list, which would leave them out). ``@FILE`` response files are expanded before
(:mod:`llm_compiler.driver.response_files`). From such a line:

* the **front-end arguments** are the line without ``-c``, ``-o`` and the ``-O``
  levels (the driver decides the optimization); when the build asked for a
  dependency file (``-MD``, ``-MMD``) the file and its make target are made explicit
  (``-MF``, ``-MQ <object>``), as clang would have named them, since the front end
  writes IR, not the object;
* the **code-generation flags** are every other option of the line but those only the
  front end reads (:data:`~llm_compiler.driver.options.FRONTEND_ONLY`: preprocessing,
  dependency files, the language standard and dialect, AST plugins). Warning options
  reach the lowering too: backend diagnostics (``-Wframe-larger-than=``, the
  ``warning`` attribute) depend on them, and on ``-Werror``;
* the **LLVM options** are the values of ``-mllvm``: clang gives them to the
  optimizer and the code generator of one process, so the driver gives them to
  ``opt`` and to the lowering;
* the **fallback arguments** are the line with ``-Oz`` in place of its ``-O`` levels:
  what runs when the driver's own steps fail.

A command left to clang runs with ``-Oz`` in place of its ``-O`` levels too
(:attr:`Passthrough.arguments`), unless it is a query: the build's ``-O`` levels are
ignored everywhere the driver compiles, so a precompiled header, an ``-E`` or an
``-flto`` object sees what the driver's own compiles see.

Everything here is a pure function of the argument list; nothing is run.

Example:
    >>> unit = classify(["-Wall", "-O2", "-g", "-c", "blocksort.c"])
    >>> unit.output, unit.frontend_arguments, unit.codegen_flags
    ('blocksort.o', ('-Wall', '-g', 'blocksort.c'), ('-Wall', '-g'))
    >>> classify(["-o", "bzip2", "bzip2.o", "-L.", "-lbz2"]).reason
    'no -c: not a compile to an object'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.driver.options import (
    ATTACHED_VALUE,
    DIALECT_F,
    FRONTEND_ONLY,
    FRONTEND_ONLY_PREFIXES,
    LEVEL,
    NOT_A_UNIT,
    NOT_A_UNIT_PREFIXES,
    QUERIES,
    SEPARATE_VALUE,
)
from llm_compiler.toolchain.frontend import C_SUFFIXES, CXX_SUFFIXES

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
    """A command the driver leaves to clang.

    Attributes:
        reason: Why it is not a unit compile (for the log).
        compiles: Whether it has ``-c`` (a compile the driver did not optimize).
        arguments: The line clang runs: the build's, with ``-Oz`` in place of its ``-O``
            levels unless it is a query (module docstring); empty when unknown (the
            build's line runs).
    """

    reason: str
    compiles: bool = False
    arguments: tuple[str, ...] = ()


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
        llvm_options: The values of the line's ``-mllvm`` options, in order (what
            ``opt`` is given too).
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
    llvm_options: tuple[str, ...] = ()

    @property
    def position_flags(self) -> tuple[str, ...]:
        """The line's ``-fPIC``, ``-fpie``, ``-fno-pic``... (:data:`POSITION_FLAGS`)."""
        return tuple(flag for flag in self.listing_arguments if flag in POSITION_FLAGS)

    @property
    def plain_arguments(self) -> tuple[str, ...]:
        """The front-end line without its dependency-file options and position flags: the
        unit as a build compiles it for a static object (the compiler's default)."""
        return tuple(flag for flag in self.listing_arguments if flag not in POSITION_FLAGS)


@dataclass(frozen=True)
class SeveralUnits:
    """``-c`` with several C or C++ sources: one unit compile per source, in order, each
    writing its own object (the source's stem + ``.o``), as clang does.

    Attributes:
        units: The units, each with the line's options and its one source.
    """

    units: tuple[UnitCompile, ...]


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
        elif argument in SEPARATE_VALUE:
            if index < len(arguments):
                tokens.append(_Token((argument, arguments[index]), argument, arguments[index]))
                index += 1
            else:
                tokens.append(_Token((argument,), argument, None))
        else:
            attached = next(
                (name for name in ATTACHED_VALUE if argument.startswith(name) and len(argument) > len(name)),
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
        if token.name in NOT_A_UNIT:
            return NOT_A_UNIT[token.name]
        for prefix, reason in NOT_A_UNIT_PREFIXES.items():
            if token.name.startswith(prefix):
                return reason
        if token.name in SEPARATE_VALUE and token.value is None:
            return f"{token.name} without its value"
    return None


#: Where build systems compile their configuration probes, whose objects they throw away:
#: autoconf's ``conftest.*``, CMake's ``try_compile`` projects, Meson's private checks.
_PROBE_FOLDERS = ("/CMakeFiles/CMakeScratch/", "/CMakeFiles/CMakeTmp/", "/meson-private/")


def probe(source: str, cwd: str) -> str | None:
    """Why compiling ``source`` in ``cwd`` is a build system's configuration probe (its
    object tells the build whether something compiles, and is thrown away), else None.

    Example:
        >>> probe("conftest.c", "/src/expat")
        "autoconf's probe conftest.c"
        >>> probe("src.c", "/b/CMakeFiles/CMakeScratch/TryCompile-x")
        'a configuration probe in /b/CMakeFiles/CMakeScratch/TryCompile-x'
        >>> probe("lib/conf.c", "/src") is None
        True
    """
    name = Path(source).name
    if name.startswith("conftest."):
        return f"autoconf's probe {name}"
    for place in (f"{cwd}/", f"{Path(cwd) / source}"):
        if any(folder in place for folder in _PROBE_FOLDERS):
            return f"a configuration probe in {cwd}"
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


def classify(arguments: Sequence[str]) -> UnitCompile | SeveralUnits | Passthrough:
    """Classifies a compiler command line (the arguments after the compiler's name, its
    ``@FILE`` response files expanded).

    Args:
        arguments: The arguments as the build passed them.

    Returns:
        A :class:`UnitCompile` for a compile of one C or C++ unit to an object, a
        :class:`SeveralUnits` for ``-c`` with several such sources, else a
        :class:`Passthrough` saying why not.

    Example:
        >>> [unit.output for unit in classify(["-c", "a.c", "src/b.c"]).units]
        ['a.o', 'b.o']
        >>> classify(["-E", "-x", "c", "-"]).reason
        'preprocessing (-E)'
        >>> classify(["-O2", "-flto", "-c", "a.c"]).arguments
        ('-flto', '-c', 'a.c', '-Oz')
    """
    tokens = _tokens(arguments)
    compiles = any(token.name == "-c" for token in tokens)
    reason = _why_not_a_unit(tokens)
    if reason is None and not compiles:
        reason = "no -c: not a compile to an object"
    inputs = _inputs(tokens)
    outputs = [token.value for token in tokens if token.name == "-o"]
    if reason is None:
        if not inputs:
            reason = "no input file"
        elif len(inputs) > 1:
            reason = f"several inputs ({len(inputs)})"
            named = outputs or any(token.name in ("-MF", "-MT", "-MQ") for token in tokens)
            if not named and all(name != "-" and language is not None for name, language in inputs):
                return SeveralUnits(tuple(_one_of(tokens, index) for index in range(len(inputs))))
        elif inputs[0][0] == "-":
            reason = "source on standard input"
        elif inputs[0][1] is None:
            reason = f"{inputs[0][0]} is not a C or C++ source"
    if reason is None and outputs and outputs[-1] == "-":
        reason = "object written to standard output"
    if reason is not None:
        return Passthrough(reason, compiles, _at_oz(tokens, reason))
    source, language = inputs[0]
    assert language is not None
    output = str(outputs[-1]) if outputs else default_output(source)
    return _split(tuple(arguments), tokens, source, language, output)


def _one_of(tokens: Sequence[_Token], wanted: int) -> UnitCompile:
    """The unit of input number ``wanted`` of a line with several: the line without the
    other inputs, and without the ``-x`` options after that input."""
    kept: list[_Token] = []
    seen = -1
    for token in tokens:
        if token.is_input:
            seen += 1
            if seen != wanted:
                continue
        elif token.name == "-x" and seen >= wanted:
            continue
        kept.append(token)
    line = tuple(part for token in kept for part in token.text)
    [(source, language)] = _inputs(kept)
    assert language is not None
    return _split(line, kept, source, language, default_output(source))


def _at_oz(tokens: Sequence[_Token], reason: str) -> tuple[str, ...]:
    """The line clang runs for a command left to it: ``-Oz`` in place of its ``-O``
    levels, where it has an input or a level and is not a query."""
    line = tuple(part for token in tokens for part in token.text)
    has_level = any(LEVEL.fullmatch(token.name) for token in tokens)
    if reason in QUERIES or not (has_level or any(token.is_input for token in tokens)):
        return line
    return (*(part for token in tokens if not LEVEL.fullmatch(token.name) for part in token.text), "-Oz")


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

    def with_output(self, output: str, side_outputs: str | None = None) -> list[str]:
        """The line writing ``output`` instead (its ``-o`` options replaced); with
        ``side_outputs`` (a folder), the linker's other files (:meth:`side_outputs`)
        are written there instead, as ``<folder>/<n>-<name>``."""
        rewritten = self._with_side_outputs(side_outputs)[0] if side_outputs is not None else self.arguments
        kept = [part for token in _tokens(rewritten) if token.name != "-o" for part in token.text]
        return [*kept, "-o", output]

    def side_outputs(self, folder: str) -> list[tuple[str, str]]:
        """The files the linker writes besides the output (``-Wl,-Map=FILE``,
        ``--out-implib``, ``--dependency-file``, ``--why-extract``, in any of the forms
        ``-Wl,`` and ``-Xlinker`` give them), each with where :meth:`with_output` puts it
        in ``folder``: (as the build named it, in ``folder``).

        Example:
            >>> line = ["-Wl,-Map=out/app.map", "-Xlinker", "--out-implib", "-Xlinker", "x.a", "a.o"]
            >>> link = link_command(line)
            >>> link.side_outputs("/tmp/s")
            [('out/app.map', '/tmp/s/0-app.map'), ('x.a', '/tmp/s/1-x.a')]
            >>> link.with_output("app", "/tmp/s")[:4]
            ['-Wl,-Map=/tmp/s/0-app.map', '-Xlinker', '--out-implib', '-Xlinker']
        """
        return self._with_side_outputs(folder)[1]

    def _with_side_outputs(self, folder: str | None) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
        found: list[tuple[str, str]] = []

        def moved(name: str) -> str:
            target = f"{folder}/{len(found)}-{Path(name).name}"
            found.append((name, target))
            return target

        line = list(self.arguments)
        # Each linker argument: where it is on the line (index, part of a -Wl, list).
        places: list[tuple[int, int]] = []
        index = 0
        while index < len(line):
            if line[index].startswith("-Wl,"):
                places += [(index, part) for part in range(1, len(line[index].split(",")))]
            elif line[index] == "-Xlinker" and index + 1 < len(line):
                index += 1
                places.append((index, -1))
            index += 1

        def read(place: tuple[int, int]) -> str:
            return line[place[0]] if place[1] < 0 else line[place[0]].split(",")[place[1]]

        def write(place: tuple[int, int], text: str) -> None:
            if place[1] < 0:
                line[place[0]] = text
            else:
                parts = line[place[0]].split(",")
                parts[place[1]] = text
                line[place[0]] = ",".join(parts)

        position = 0
        while position < len(places):
            option = read(places[position])
            name, equals, value = option.partition("=")
            if name.lstrip("-") in _SIDE_OUTPUT_OPTIONS and name.startswith("-"):
                if equals and value:
                    write(places[position], f"{name}={moved(value)}")
                elif not equals and position + 1 < len(places):
                    position += 1
                    write(places[position], moved(read(places[position])))
            position += 1
        return tuple(line), found


#: Linker options (without their dashes) that write a file besides the output.
_SIDE_OUTPUT_OPTIONS = frozenset({"Map", "out-implib", "dependency-file", "why-extract"})


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


def _reaches_lowering(token: _Token) -> bool:
    """Whether an option of a unit compile is given to the lowering of its IR: every
    option but those only the front end reads (``FRONTEND_ONLY`` and its prefixes, the
    dialect's ``-f`` flags)."""
    name = token.name
    if token.is_input or name in ("-c", "-o", "-x") or LEVEL.fullmatch(name):
        return False
    if name in FRONTEND_ONLY or name.startswith(FRONTEND_ONLY_PREFIXES):
        return False
    return not (name.startswith("-f") and name[2:].removeprefix("no-").startswith(DIALECT_F))


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
        if LEVEL.fullmatch(token.name):
            optimization.append(token.name)
            continue
        fallback += token.text
        if token.name in ("-c", "-o"):
            continue
        frontend += token.text
        if _reaches_lowering(token):
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
            if token.name not in ("-c", "-o") and not LEVEL.fullmatch(token.name)
            if not _is_dependency_option(token)
            for text in token.text
        ),
        llvm_options=tuple(str(token.value) for token in tokens if token.name == "-mllvm"),
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
