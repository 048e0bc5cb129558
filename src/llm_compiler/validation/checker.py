"""The build-and-run checker: an object file in, a link failure or a sandboxed run out.

Every validator that runs programs (the differential run check, PassListEval) builds
and runs them the same way, here. The candidate's object file (from
``Compiler.compile(program, passes, ("obj",))``) is written as ``program.o`` into a
fresh directory and linked with one link line, the one a person would type: the
``clang++`` driver with ``-no-pie`` (``llc`` lowers with the static relocation model),
``-fuse-ld=lld`` when the toolchain has ``ld.lld``, and ``-lm``. The link runs through
the project's subprocess runner with the compiler's time limit. The executable then runs
in the sandbox (:mod:`llm_compiler.validation.sandbox`) under its
:class:`~llm_compiler.validation.sandbox.Limits`.

The result is a frozen value: a :class:`LinkFailure` (with a readable detail that
names the undefined symbols, and says when the failure is libstdc++ bodies that exist
only inline, dropped before any inliner ran: a link failure, not a miscompile) or the
sandbox's :class:`~llm_compiler.validation.sandbox.RunResult`. Judging the run (against
a reference build, an expected output...) is the caller's business.

A busy machine can make a good program run past its limits, so a run that stops at a
limit is run once more under :attr:`Checker.retry_limits` (by default
:data:`RETRY_FACTOR` times the limits), and a link that runs past its time limit is
tried once more with :data:`RETRY_FACTOR` times it; only what happens on that second
try is returned. A run that still times out has ``timed_out``, a link that still
times out is a :class:`LinkFailure` with ``timed_out``: callers must treat either as
"not known under this load", never store it as a verdict.

:attr:`Checker.link_command` is the link line itself, so that replay commands repeat
exactly the link the check did.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.errors import CommandFailed, CompileTimeout
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command
from llm_compiler.validation.sandbox import Limits, RunResult, run_sandboxed

logger = logging.getLogger(__name__)

#: How much longer the second try of a run (or link) that ran past its limits may take:
#: a program that timed out on a busy machine is run once more with this many times its
#: wall-clock and CPU-time limits before its timeout counts.
RETRY_FACTOR = 3

#: The names the object and the executable have in the build directory (and in replays).
OBJECT_NAME = "program.o"
EXECUTABLE_NAME = "program"

#: The note a link failure carries when inline-only library bodies are what is missing.
INLINE_ONLY_NOTE = (
    "(library functions that exist only as inline bodies were dropped before any inliner "
    "ran: a link failure, not a miscompile)"
)

# lld: "ld.lld: error: undefined symbol: NAME"; GNU ld: "undefined reference to `NAME'".
_UNDEFINED = re.compile(r"undefined symbol: (?P<lld>.+)$|undefined reference to [`'](?P<gnu>.+)'$")


@dataclass(frozen=True)
class LinkFailure:
    """A candidate object that did not link.

    Attributes:
        detail: What went wrong, readable: the failed command, the undefined symbols
            (or the linker's last lines) and, for dropped inline-only library bodies,
            a note that this is not a miscompile.
        undefined_symbols: The symbols the linker could not resolve (demangled as the
            linker printed them), first seen first; empty for other failures.
        timed_out: The link ran past its time limit twice (:data:`RETRY_FACTOR`): the
            machine was too busy to tell, which says nothing about the object.
    """

    detail: str
    undefined_symbols: tuple[str, ...] = ()
    timed_out: bool = False


def retry_limits_for(limits: Limits) -> Limits:
    """The limits of the second try of a run that stopped at ``limits``: wall-clock and
    CPU time :data:`RETRY_FACTOR` times longer, memory and file size as they were.

    Example:
        >>> retry_limits_for(Limits(timeout=2.0, cpu_seconds=2)).timeout
        6.0
    """
    return dataclasses.replace(
        limits, timeout=limits.timeout * RETRY_FACTOR, cpu_seconds=limits.cpu_seconds * RETRY_FACTOR
    )


class Checker:
    """Links object files into executables and runs them in the sandbox.

    Args:
        toolchain: The LLVM whose ``clang++`` (and ``ld.lld``, when present) links.
        link_timeout: Seconds the link may run (the compiler's time limit).
        limits: Limits of each run (default: :class:`Limits`'s).
        retry_limits: Limits of the one second try of a run that stopped at ``limits``
            (default: :func:`retry_limits_for` ``limits``).

    Example::

        checker = Checker(compiler.toolchain, link_timeout=compiler.timeout)
        obj = compiler.compile(program, passes, ("obj",)).obj
        result = checker.link_and_run(obj, subject=program.name)
        if isinstance(result, LinkFailure):
            print(result.detail)
        else:
            print(result.returncode, result.stdout)
    """

    def __init__(
        self,
        toolchain: Toolchain,
        *,
        link_timeout: float,
        limits: Limits | None = None,
        retry_limits: Limits | None = None,
    ) -> None:
        self.toolchain = toolchain
        self.link_timeout = link_timeout
        self.limits = limits or Limits()
        self.retry_limits = retry_limits or retry_limits_for(self.limits)
        lld = ("-fuse-ld=lld",) if (toolchain.bin_dir / "ld.lld").exists() else ()
        self._link_command = (
            str(toolchain.tool("clang++")), "-no-pie", *lld, OBJECT_NAME, "-lm", "-o", EXECUTABLE_NAME,
        )  # fmt: skip

    @property
    def link_command(self) -> tuple[str, ...]:
        """The link line, run in the build directory (``program.o`` in, ``program`` out)."""
        return self._link_command

    @property
    def link_line(self) -> str:
        """:attr:`link_command` as shell text, for replay commands."""
        return shlex.join(self._link_command)

    def link_and_run(self, obj: bytes, *, subject: str) -> RunResult | LinkFailure:
        """Links ``obj`` and runs the executable in a fresh directory, in the sandbox.

        Args:
            obj: The bytes of an object file that defines ``main``.
            subject: What is checked (a program's name), named in logs and errors.

        Returns:
            How the run ended, or why the link failed. A run or link that runs past
            its limits is tried once more with longer ones (module docstring); a run
            past its second limits has ``timed_out``, a link past its second time
            limit is a :class:`LinkFailure` with ``timed_out``.

        Raises:
            ToolchainError: ``clang++`` cannot be started.
        """
        with tempfile.TemporaryDirectory(prefix="llm-compiler-run-") as scratch:
            directory = Path(scratch)
            (directory / OBJECT_NAME).write_bytes(obj)
            failure = self._link(directory, subject)
            if failure is not None:
                return failure
            result = run_sandboxed(directory / EXECUTABLE_NAME, directory, self.limits)
            if result.timed_out:
                logger.info(
                    "%s ran past its limits (%g s); running it once more with %g s",
                    subject, self.limits.timeout, self.retry_limits.timeout,
                )  # fmt: skip
                # in a directory of its own, so that nothing the first run wrote is seen
                again = directory / "retry"
                again.mkdir()
                shutil.copy2(directory / EXECUTABLE_NAME, again / EXECUTABLE_NAME)
                result = run_sandboxed(again / EXECUTABLE_NAME, again, self.retry_limits)
            return result

    def _link(self, directory: Path, subject: str) -> LinkFailure | None:
        """Links ``program.o`` in ``directory``; a link past its time limit is tried once
        more with :data:`RETRY_FACTOR` times it. Returns None when the link succeeded."""
        timed_out: CompileTimeout | None = None
        for timeout in (self.link_timeout, self.link_timeout * RETRY_FACTOR):
            try:
                run_command(self._link_command, timeout=timeout, cwd=directory, subject=subject)
            except CompileTimeout as error:
                timed_out = error
            except CommandFailed as error:
                return link_failure(error)
            else:
                return None
        assert timed_out is not None
        return dataclasses.replace(link_failure(timed_out), timed_out=True)


def link_failure(error: CommandFailed) -> LinkFailure:
    """The readable :class:`LinkFailure` of a failed link command."""
    lines = error.stderr.splitlines()
    symbols: list[str] = []
    evidence: list[str] = []
    for line in lines:
        match = _UNDEFINED.search(line.strip())
        if match is None:
            continue
        evidence.append(line.strip())
        symbol = match.group("lld") or match.group("gnu")
        if symbol not in symbols:
            symbols.append(symbol)
    detail = f"{error}\n" + "\n".join(evidence[:5] or lines[-5:])
    if any("std::" in symbol or symbol.startswith("_ZN") for symbol in symbols):
        detail += f"\n{INLINE_ONLY_NOTE}"
    return LinkFailure(detail, tuple(symbols))
