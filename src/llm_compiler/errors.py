"""The exception tree of llm-compiler.

Every error the library raises derives from :class:`LlmCompilerError`. Errors also
inherit the matching built-in exception (``OSError``, ``ValueError``,
``TimeoutError``...) so that callers can catch either. Messages are written for the
person at the terminal: they say what happened, to which input, and what to do.
"""

from __future__ import annotations

import shlex
import signal
from collections.abc import Sequence


class LlmCompilerError(Exception):
    """Root of all llm-compiler errors."""


class ToolchainError(LlmCompilerError, OSError):
    """A problem with the LLVM toolchain or with running one of its tools."""


class LLVMNotFound(ToolchainError, FileNotFoundError):
    """No usable LLVM installation was found."""


class CommandFailed(ToolchainError):
    """A subprocess failed: it exited non-zero, was killed by a signal or timed out.

    Attributes:
        command: The argv that was run.
        returncode: The exit status; negative for "killed by signal -returncode";
            None when the process was killed by us after a timeout.
        stderr: What the process wrote on its standard error (decoded, maybe truncated).
        subject: What the command was working on (a file name, a program id), if known.
    """

    def __init__(
        self,
        message: str,
        *,
        command: Sequence[str],
        returncode: int | None,
        stderr: str,
        subject: str | None = None,
    ) -> None:
        super().__init__(message)
        self.command = list(command)
        self.returncode = returncode
        self.stderr = stderr
        self.subject = subject

    @property
    def command_line(self) -> str:
        """The command as a shell-quoted line, for logs and bug reports."""
        return shlex.join(self.command)

    @property
    def crashed(self) -> bool:
        """True when the process died from a signal (an LLVM abort or segfault)."""
        return self.returncode is not None and self.returncode < 0

    @property
    def signal_name(self) -> str | None:
        """The name of the killing signal (``SIGSEGV``...), when the process crashed."""
        if not self.crashed or self.returncode is None:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"


class CompileTimeout(CommandFailed, TimeoutError):
    """A subprocess ran past its time limit and its whole process group was killed."""

    def __init__(self, message: str, *, timeout: float, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.timeout = timeout


class InvalidInput(LlmCompilerError, ValueError):
    """An input program is missing, of an unknown kind, or not valid source or IR."""


class InvalidPassList(LlmCompilerError, ValueError):
    """A pass list is not a valid pipeline of known, allowed passes.

    Attributes:
        text: The pipeline text that was rejected.
        token: The offending token, if one can be named.
        position: Its character offset in ``text``, if known.
    """

    def __init__(
        self,
        message: str,
        *,
        text: str = "",
        token: str | None = None,
        position: int | None = None,
    ) -> None:
        super().__init__(message)
        self.text = text
        self.token = token
        self.position = position


class PassSetError(LlmCompilerError, ValueError):
    """The searchable pass set for an LLVM version is missing or malformed."""


class TrainingError(LlmCompilerError, RuntimeError):
    """Training could not start or go on: no tokenizer, data the context cannot hold, out of memory."""


#: The longest reason :func:`reason_of` gives (a log line's or a record's field).
REASON_LIMIT = 1000


def reason_of(error: BaseException, limit: int = REASON_LIMIT) -> str:
    """An error as one line for a log or a unit's record: its text on one line (a worker's
    internal error, which names the unit and carries a traceback, cut to its first and
    last lines), its type when it says nothing, at most ``limit`` characters.

    Example:
        >>> reason_of(ValueError("bad   input"))
        'bad input'
        >>> reason_of(KeyError())
        'KeyError'
    """
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if "Traceback (most recent call last):" in lines:
        lines = [lines[0], lines[-1]]
    text = " ".join(" ".join(lines).split()) or type(error).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
