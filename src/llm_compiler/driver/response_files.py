"""``@FILE`` response files, expanded as clang expands them.

A build too long for one command line puts arguments in a file and passes ``@FILE``.
clang replaces every argument that starts with ``@`` and names a file by the
arguments in that file, split the GNU way (LLVM's ``cl::TokenizeGNUCommandLine``):

* spaces, tabs, carriage returns and newlines separate arguments;
* a backslash takes the next character as it is (a space, a quote, a backslash),
  inside quotes too;
* single and double quotes group what is between them, the quotes dropped; an
  argument made only of ``""`` is no argument;
* ``#`` is an ordinary character (no comments), and a UTF-8 byte-order mark is skipped.

Response files may name others; a name is read from the working directory, nested
ones too (clang's driver does not resolve them from the including file). An ``@FILE``
whose file does not exist stays as it is (clang then reports "no such file"). A file
that names itself, directly or not, or that cannot be read is an error for clang:
:func:`expand_response_files` returns None and the command is left to clang, which
says so.

This module imports only the standard library and reads only the files named.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

#: What separates arguments (LLVM's ``isWhitespace``).
_WHITESPACE = frozenset(" \t\r\n")
_QUOTES = frozenset("\"'")
_UTF8_BOM = "\ufeff"


def split_gnu(text: str) -> list[str]:
    """Splits a response file's text into arguments as clang does on Linux.

    Example:
        >>> split_gnu('-DA=1 "-DB=two words" -DC=x\\\\ y \\'-I a\\'\\n"" #')
        ['-DA=1', '-DB=two words', '-DC=x y', '-I a', '#']
    """
    arguments: list[str] = []
    token: list[str] = []
    index, end = 0, len(text)
    while index < end:
        char = text[index]
        if not token and char in _WHITESPACE:
            index += 1
            continue
        if char == "\\" and index + 1 < end:
            token.append(text[index + 1])
            index += 2
            continue
        if char in _QUOTES:
            index += 1
            while index < end and text[index] != char:
                if text[index] == "\\" and index + 1 < end:
                    index += 1
                token.append(text[index])
                index += 1
            index += 1  # the closing quote (or past the end: the token ends with the text)
            continue
        if char in _WHITESPACE:
            arguments.append("".join(token))
            token = []
            index += 1
            continue
        token.append(char)
        index += 1
    if token:
        arguments.append("".join(token))
    return arguments


def expand_response_files(
    arguments: Sequence[str], cwd: str | os.PathLike[str] | None = None
) -> list[str] | None:
    """``arguments`` with every ``@FILE`` replaced by its arguments, nested ones too.

    Args:
        arguments: A command line (without the compiler's name).
        cwd: Where relative file names are read from (the working directory by default).

    Returns:
        The expanded arguments (the same list when there is no ``@FILE``), or None when
        clang would stop with an error: a file that includes itself, one that cannot
        be read (a folder, no permission) or is not UTF-8 text.

    Example:
        >>> expand_response_files(["-c", "a.c"])
        ['-c', 'a.c']
        >>> expand_response_files(["-c", "@/nonexistent/args"])
        ['-c', '@/nonexistent/args']
    """
    base = Path(os.getcwd() if cwd is None else cwd)
    return _expand(list(arguments), base, ())


def _expand(arguments: list[str], base: Path, stack: tuple[Path, ...]) -> list[str] | None:
    expanded: list[str] = []
    for argument in arguments:
        if not argument.startswith("@") or len(argument) == 1:
            expanded.append(argument)
            continue
        path = base / argument[1:]
        if not os.path.lexists(path):
            expanded.append(argument)  # clang keeps it, then reports no such file
            continue
        resolved = Path(os.path.abspath(path))
        if resolved in stack:
            return None  # clang: recursive expansion
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        inner = _expand(split_gnu(text.removeprefix(_UTF8_BOM)), base, (*stack, resolved))
        if inner is None:
            return None
        expanded += inner
    return expanded
