"""What a link line reads: its inputs, the libraries its ``-l`` options name, the files
its options name.

A whole-program link (:mod:`llm_compiler.driver.whole_program`) is written from the
cache when none of the files it reads changed. :func:`read_files` lists them with
their hashes: the line's inputs, the libraries its ``-l`` options may link
(:func:`libraries`: ``lib<name>.so`` and ``.a`` in the first of its ``-L`` folders,
then clang's own, that has either), and the files its words name (:func:`named_files`:
a version script, a linker script, a linker's response file...), including what
``-Wl,`` and ``-Xlinker`` pass (:func:`linker_words`). A link whose inputs or libraries
in the build's folder are not all objects, archives or bitcode (:func:`linkable`: a
source, a linker script), or whose ``-l`` is found nowhere, is not cached.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from llm_compiler.driver.arguments import LinkCommand
from llm_compiler.files import file_sha256
from llm_compiler.toolchain.runner import CommandResult

#: The options that name a library folder or a library, as a link line or the linker takes them.
_LIBRARY_OPTIONS = {"-L": "folder", "--library-path": "folder", "-l": "library", "--library": "library"}
#: The first bytes of an LLVM bitcode file.
BITCODE_MAGIC = b"BC\xc0\xde"


def read_files(
    command: LinkCommand, clang: Callable[[Sequence[str]], CommandResult]
) -> list[tuple[str, str]] | None:
    """The files the link reads, each with its SHA-256, sorted (module docstring); None
    for a link that is not cached. ``clang`` runs clang (to ask for its library folders).

    Raises:
        OSError: A file could not be read.
    """
    inputs = [Path(name) for name in command.inputs]
    found = libraries(command, clang)
    in_tree = [path for path in found or () if path.resolve().is_relative_to(Path.cwd().resolve())]
    if found is None or not all(map(linkable, [*inputs, *in_tree])):
        return None
    output = Path(command.output).resolve()
    named = {Path(name) for name in named_files(command) if Path(name).resolve() != output}
    return sorted((str(path), file_sha256(path)) for path in {*inputs, *found, *named})


def linker_words(arguments: Sequence[str]) -> list[str]:
    """The line with what ``-Wl,`` and ``-Xlinker`` pass to the linker as words of their own."""
    words: list[str] = []
    remaining = iter(arguments)
    for argument in remaining:
        if argument.startswith("-Wl,"):
            words.extend(argument.split(",")[1:])
        elif argument == "-Xlinker":
            words.append(next(remaining, ""))
        else:
            words.append(argument)
    return words


def named_files(command: LinkCommand) -> list[str]:
    """What the line's words name that is a file (a version script, a linker script, a
    response file of the linker...), written as given."""
    named: list[str] = []
    for word in linker_words(command.arguments):
        names = [word, word.partition("=")[2], word[1:] if word.startswith("@") else ""]
        if word.startswith("-") and not word.startswith("--"):
            names.append(word[2:])  # an attached value: -Tlink.ld
        named.extend(name for name in names if name and os.path.isfile(name))
    return named


def libraries(command: LinkCommand, clang: Callable[[Sequence[str]], CommandResult]) -> list[Path] | None:
    """The files the line's ``-l`` options may link (``lib<name>.so`` and ``.a`` in the
    first folder that has either, ``-l:<file>`` as named), looked for in its ``-L``
    folders then clang's own; None when one is found nowhere."""
    folders: list[str] = []
    names: list[str] = []
    remaining = iter(linker_words(command.arguments))
    for word in remaining:
        option, equals, value = word.partition("=")
        if word in _LIBRARY_OPTIONS:
            kind, value = _LIBRARY_OPTIONS[word], next(remaining, "")
        elif equals and option in _LIBRARY_OPTIONS and option.startswith("--"):
            kind = _LIBRARY_OPTIONS[option]
        elif word[:2] in _LIBRARY_OPTIONS and len(word) > 2:
            kind, value = _LIBRARY_OPTIONS[word[:2]], word[2:]
        else:
            continue
        (folders if kind == "folder" else names).append(value)
    found: list[Path] = []
    searched: list[str] | None = None
    for name in names:
        files = [name[1:]] if name.startswith(":") else [f"lib{name}.so", f"lib{name}.a"]
        existing = _first_with(folders, files)
        if not existing:  # clang's folders, asked once
            searched = _search_folders(command, clang) if searched is None else searched
            existing = _first_with(searched, files)
        if not existing:
            return None
        found.extend(existing)
    return found


def _first_with(folders: Sequence[str], files: Sequence[str]) -> list[Path]:
    """``files`` in the first of ``folders`` that holds any of them."""
    existing = (
        [Path(folder) / file for file in files if (Path(folder) / file).is_file()] for folder in folders
    )
    return next((paths for paths in existing if paths), [])


def _search_folders(command: LinkCommand, clang: Callable[[Sequence[str]], CommandResult]) -> list[str]:
    """The folders clang has the linker look for libraries in, for this line."""
    result = clang([*command.arguments, "-print-search-dirs"])
    for line in result.stdout.decode(errors="replace").splitlines():
        if result.returncode == 0 and line.startswith("libraries: ="):
            return line.removeprefix("libraries: =").split(":")
    return []


def linkable(path: Path) -> bool:
    """Whether ``path`` is an object, an archive or bitcode (a file that names no other)."""
    with path.open("rb") as stream:
        return stream.read(8).startswith((b"\x7fELF", b"!<arch>\n", BITCODE_MAGIC))
