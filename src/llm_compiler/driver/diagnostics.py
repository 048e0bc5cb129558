"""Backend diagnostics: what lowering a unit's IR says, compared between candidates.

clang prints two kinds of diagnostics for a compile: the front end's (syntax, types,
``-Wall``...) and the backend's, given while the optimized IR becomes an object
(``-Wframe-larger-than=``, a call to a function with the ``warning`` or ``error``
attribute, inline assembly, ``-Rpass`` remarks). The driver runs the front end
itself, so its stderr is the front end's part as clang prints it; the backend's part
comes from lowering IR, where clang can only name IR lines (``<stdin>:3:29``,
``<unknown>:0:0``), not the source.

So the driver compares, and never shows, what its lowerings say
(:func:`backend_messages`: each diagnostic without its location); when clang's own
``-Oz`` of the unit says anything, the build's line is compiled once more by clang at
``-Oz`` to show clang's exact words (:func:`llm_compiler.driver.lowering.keep_smallest`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from llm_compiler.errors import ToolchainError

#: clang's count at the end of a compile ("1 warning generated.", "2 warnings and 1 error generated.").
_SUMMARY = re.compile(r"\d+ (?:warning|error)s?(?: and \d+ (?:warning|error)s?)? generated\.")
#: A diagnostic line: an optional location, the kind and the message.
_DIAGNOSTIC = re.compile(r"(?:.*?: )?(fatal error|error|warning|note|remark): (.*)")
#: Colour codes (``-fdiagnostics-color``).
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Lowered:
    """An object lowered from IR, with what clang wrote on stderr while lowering it.

    Attributes:
        obj: The object file.
        stderr: clang's standard error.
    """

    obj: bytes
    stderr: bytes = b""


def backend_messages(stderr: bytes, known: bytes = b"") -> tuple[str, ...]:
    """The diagnostics in a lowering's ``stderr`` that are not in ``known`` (the front
    end's stderr: an unknown ``-W`` option is reported by both), each as ``kind:
    message`` without its location, sorted.

    Example:
        >>> backend_messages(
        ...     b"<unknown>:0:0: warning: stack frame size (4104) exceeds limit (64) in function 'f'"
        ...     b" [-Wframe-larger-than]\\n1 warning generated.\\n"
        ... )
        ("warning: stack frame size (4104) exceeds limit (64) in function 'f' [-Wframe-larger-than]",)
        >>> unknown = b"warning: unknown warning option '-Wfoo'\\n"
        >>> backend_messages(unknown, known=unknown)
        ()
    """
    seen = set(_lines(known))
    found = []
    for line in _lines(stderr):
        if line in seen or _SUMMARY.fullmatch(line):
            continue
        match = _DIAGNOSTIC.fullmatch(line)
        if match is not None:
            found.append(f"{match.group(1)}: {match.group(2)}")
    return tuple(sorted(found))


def _lines(data: bytes) -> list[str]:
    return [_COLOUR.sub("", line).rstrip() for line in data.decode("utf-8", errors="replace").splitlines()]


class LoweringFailed(ToolchainError):
    """clang exited non-zero while lowering IR (a backend error under ``-Werror``, say).

    Attributes:
        stderr: What clang wrote on its standard error.
        status: Its exit status.
    """

    def __init__(self, message: str, *, stderr: bytes, status: int) -> None:
        super().__init__(message)
        self.stderr = stderr
        self.status = status
