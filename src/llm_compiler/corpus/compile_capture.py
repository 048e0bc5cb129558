"""Building a source tree to learn how each of its files is compiled.

Real code needs its own build's flags (include paths, generated headers, defines) to
compile. :func:`capture_compile_commands` builds a tree the way its authors meant,
with clang as the compiler, and records every compile command:

1. ``configure`` (autotools): ``./configure``, then ``make -k`` under ``bear``;
2. ``CMakeLists.txt``: CMake's own compile database, then a build (generated headers);
3. ``meson.build``: Meson's own compile database, then ``ninja -k 0``;
4. a ``Makefile``: ``make -k`` under ``bear``;
5. when that recorded nothing and the tree is a Debian source package, its
   packaging's own build (``debian/rules build`` under ``bear``, without tests or docs);
6. otherwise, or when the build recorded nothing: every C/C++ file on its own, with
   each folder holding headers as an include path (best effort; files that still do
   not compile are reported by the caller).

The build keeps going past errors (``-k``): a test program that fails to build does
not cost the library its units. Builds run with ``-O0`` to be quick; optimization
flags are dropped from the recorded commands anyway.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.errors import CommandFailed, LlmCompilerError
from llm_compiler.toolchain.frontend import C_SUFFIXES, CXX_SUFFIXES, CompileCommand
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command

HEADER_SUFFIXES = frozenset({".h", ".hh", ".hpp", ".hxx", ".inc"})


@dataclass(frozen=True)
class CapturedBuild:
    """The compile commands of a tree and how they were found.

    Attributes:
        method: ``"autotools"``, ``"cmake"``, ``"meson"``, ``"make"`` or ``"files"``.
        commands: One command per C/C++ file (the first seen when a file is compiled twice).
        note: Why an earlier method was given up, if one was.
    """

    method: str
    commands: tuple[CompileCommand, ...]
    note: str = ""


def _environment(toolchain: Toolchain) -> dict[str, str]:
    environment = dict(os.environ)
    environment.update(
        CC=str(toolchain.tool("clang")),
        CXX=str(toolchain.tool("clang++")),
        CFLAGS="-O0 -w",
        CXXFLAGS="-O0 -w",
        MAKEFLAGS="",
        DEB_BUILD_OPTIONS="nocheck nodoc",
    )
    return environment


def _read_database(path: Path) -> list[CompileCommand]:
    if not path.is_file():
        return []
    try:
        entries = json.loads(path.read_text())
    except json.JSONDecodeError:
        return []
    commands = []
    for entry in entries if isinstance(entries, list) else []:
        try:
            command = CompileCommand.from_entry(entry)
        except LlmCompilerError:
            continue
        if command.source.suffix in C_SUFFIXES | CXX_SUFFIXES and command.source.is_file():
            commands.append(command)
    return commands


def _unique(commands: list[CompileCommand]) -> tuple[CompileCommand, ...]:
    seen: set[Path] = set()
    unique = []
    for command in commands:
        source = command.source.resolve()
        if source not in seen:
            seen.add(source)
            unique.append(command)
    return tuple(unique)


def _bear(database: Path, jobs: int, makefile: str | None = None, target: str | None = None) -> list[str]:
    bear = shutil.which("bear")
    if bear is None:
        raise LlmCompilerError("bear is not installed (sudo apt-get install bear)")
    make = ["make", "-k", f"-j{jobs}"]
    if makefile:
        make += ["-f", makefile]
    return [bear, "--output", str(database), "--", *make, *([target] if target else [])]


def _traced_make(database: Path, jobs: int, tree: Path, toolchain: Toolchain, timeout: float) -> str:
    """``make`` under ``bear`` into ``database``; a note on what failed ("" when it passed)."""
    try:
        return _run_steps([_bear(database, jobs)], tree, toolchain, timeout)
    except LlmCompilerError as error:
        return str(error)


def _run_steps(steps: list[list[str]], tree: Path, toolchain: Toolchain, timeout: float) -> str:
    """Runs build steps in order; returns a note on the first failure ("" when all passed).

    ``make -k`` exits non-zero when anything failed; what did build is still recorded,
    so a failure is a note, not an error.
    """
    environment = _environment(toolchain)
    for step in steps:
        try:
            run_command(step, timeout=timeout, cwd=tree, env=environment, subject=str(tree))
        except CommandFailed as error:
            tail = " / ".join(line.strip() for line in error.stderr.strip().splitlines()[-3:])
            return f"`{' '.join(step[:3])}` failed: {tail or error}"
    return ""


# Folders that hold no code of the package's own build: Debian's packaging, quilt's
# copies of files before patching, version control.
_NOT_BUILT = frozenset({"debian", ".pc", ".git"})


def _tree_files(tree: Path, suffixes: frozenset[str]) -> list[Path]:
    return [
        path
        for path in tree.rglob("*")
        if path.suffix in suffixes and path.is_file() and not _NOT_BUILT & set(path.relative_to(tree).parts)
    ]


def _files_on_their_own(tree: Path) -> tuple[CompileCommand, ...]:
    sources = sorted(_tree_files(tree, C_SUFFIXES | CXX_SUFFIXES))
    header_dirs = sorted(
        {path.parent for path in _tree_files(tree, HEADER_SUFFIXES)},
        key=lambda directory: (len(directory.parts), str(directory)),
    )
    flags = [f"-I{directory}" for directory in header_dirs]
    if any(path.name == "config.h" for path in tree.rglob("config.h")):
        flags.append("-DHAVE_CONFIG_H")
    commands = []
    for source in sources:
        compiler = "clang++" if source.suffix in CXX_SUFFIXES else "clang"
        arguments = (compiler, *flags, "-c", str(source))
        commands.append(CompileCommand(str(source.parent), str(source), arguments))
    return tuple(commands)


def capture_compile_commands(
    tree: Path, toolchain: Toolchain, *, jobs: int = 2, timeout: float = 1800.0
) -> CapturedBuild:
    """Builds ``tree`` and returns the compile command of each C/C++ file.

    Args:
        tree: An unpacked source tree (it is built in place).
        toolchain: Its clang and clang++ are the build's compilers.
        jobs: Parallel build jobs.
        timeout: Seconds for each build step (configure, make...).

    Returns:
        The commands, and the method that produced them. Never empty-handed unless the
        tree holds no C/C++ file: when the build records nothing, files are compiled on
        their own.
    """
    tree = tree.resolve()
    database = tree / "compile_commands.json"
    notes: list[str] = []
    method = ""
    commands: list[CompileCommand] = []
    if (tree / "configure").is_file():
        method = "autotools"
        steps = [["sh", "./configure"]]
        note = _run_steps(steps, tree, toolchain, timeout)
        if not note:
            note = _traced_make(database, jobs, tree, toolchain, timeout)
        commands = _read_database(database)
        notes.append(note)
    elif (tree / "CMakeLists.txt").is_file() and shutil.which("cmake"):
        method = "cmake"
        build = tree / "_llm_compiler_build"
        environment = _environment(toolchain)
        configure = ["cmake", "-S", str(tree), "-B", str(build), "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"]
        configure += ["-DCMAKE_BUILD_TYPE=None", f"-DCMAKE_C_COMPILER={environment['CC']}"]
        configure += [f"-DCMAKE_CXX_COMPILER={environment['CXX']}"]
        note = _run_steps([configure], tree, toolchain, timeout)
        if not note:
            note = _run_steps(
                [["cmake", "--build", str(build), "-j", str(jobs), "--", "-k"]], tree, toolchain, timeout
            )
        commands = _read_database(build / "compile_commands.json")
        notes.append(note)
    elif (tree / "meson.build").is_file() and shutil.which("meson") and shutil.which("ninja"):
        method = "meson"
        build = tree / "_llm_compiler_build"
        note = _run_steps([["meson", "setup", str(build)]], tree, toolchain, timeout)
        if not note:
            note = _run_steps([["ninja", "-C", str(build), "-k", "0"]], tree, toolchain, timeout)
        commands = _read_database(build / "compile_commands.json")
        notes.append(note)
    elif (tree / "Makefile").is_file() or (tree / "makefile").is_file():
        method = "make"
        note = _traced_make(database, jobs, tree, toolchain, timeout)
        commands = _read_database(database)
        notes.append(note)
    if not commands and (tree / "debian" / "rules").is_file():
        # Some packages build only through their Debian packaging (lua5.4's
        # generated headers, for example): run its build target, without tests or docs.
        if method:
            notes.append(f"the {method} build recorded no compile command; ran debian/rules build")
        method = "debian/rules"
        # An in-tree configure that failed leaves config.status, which makes the
        # packaging's out-of-tree configure refuse to run (gmp).
        (tree / "config.status").unlink(missing_ok=True)
        try:
            notes.append(
                _run_steps([_bear(database, jobs, "debian/rules", "build")], tree, toolchain, timeout)
            )
        except LlmCompilerError as error:
            notes.append(str(error))
        commands = _read_database(database)
    if not commands:
        if method:
            notes.append(f"the {method} build recorded no compile command; compiling files on their own")
        return CapturedBuild("files", _files_on_their_own(tree), "; ".join(n for n in notes if n))
    return CapturedBuild(method, _unique(commands), "; ".join(n for n in notes if n))
