"""Running untrusted test binaries: their own directory, limits, no environment.

Programs built with an untested pass list may do anything a miscompiled program
does. :func:`run_sandboxed` runs one in a fresh directory, with an empty
environment, a wall-clock timeout (the whole process group is killed), and limits
on CPU time, address space and file size (``prlimit``). Where bubblewrap (``bwrap``)
works, the program also sees the whole file system read-only except its own
directory and a private ``/tmp``, has no network, and dies with its parent, so no
test can write outside its directory. Without bubblewrap the limits still apply and
:func:`isolation` says what is missing.
"""

from __future__ import annotations

import functools
import shutil
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.errors import CompileTimeout
from llm_compiler.toolchain.runner import run_command


@dataclass(frozen=True)
class Limits:
    """Resource limits of one test run."""

    timeout: float = 10.0
    cpu_seconds: int = 10
    memory_bytes: int = 2 * 1024**3
    file_bytes: int = 64 * 1024**2


@dataclass(frozen=True)
class RunResult:
    """What a test binary printed and how it ended (``timed_out`` for a killed run)."""

    stdout: bytes
    stderr: bytes
    returncode: int
    timed_out: bool = False

    @property
    def killed_by(self) -> int | None:
        """The signal that ended the run (``signal.SIGSEGV``...), or None for an exit.

        Bubblewrap reports a child killed by signal N as exit status 128 + N, as shells
        do, so an exit status in that range reads as that signal too.

        Example:
            >>> RunResult(b"", b"", 139).killed_by == signal.SIGSEGV
            True
        """
        if self.returncode < 0:
            return -self.returncode
        if 128 < self.returncode < 128 + signal.NSIG:
            return self.returncode - 128
        return None


@functools.lru_cache(maxsize=1)
def _bwrap() -> str | None:
    path = shutil.which("bwrap")
    if path is None:
        return None
    probe = run_command(
        [path, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--", "true"],
        timeout=30,
        check=False,
    )
    return path if probe.returncode == 0 else None


def isolation() -> str:
    """How test binaries are isolated on this machine, in words."""
    if _bwrap():
        return (
            "bubblewrap (read-only file system but for the test's directory and /tmp, no network) and prlimit"
        )
    if shutil.which("prlimit"):
        return (
            "prlimit only: install bubblewrap (apt-get install bubblewrap) to keep tests from writing outside"
        )
    return "none: install util-linux (prlimit) and bubblewrap"


def sandbox_command(argv: list[str], directory: Path, limits: Limits) -> list[str]:
    """The command line that runs ``argv`` in ``directory`` under ``limits``."""
    command = list(argv)
    prlimit = shutil.which("prlimit")
    if prlimit:
        command = [
            prlimit, f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}", f"--as={limits.memory_bytes}",
            f"--fsize={limits.file_bytes}", "--", *command,
        ]  # fmt: skip
    bwrap = _bwrap()
    if bwrap:
        where = str(directory.resolve())
        command = [
            bwrap, "--ro-bind", "/", "/", "--tmpfs", "/tmp", "--bind", where, where, "--chdir", where,
            "--unshare-all", "--die-with-parent", "--new-session", "--clearenv", "--", *command,
        ]  # fmt: skip
    return command


#: Where a run's output goes inside its directory (files, so the file-size limit bounds
#: them: a miscompiled program that prints forever cannot fill this process's memory).
_STDOUT, _STDERR = ".llm-compiler-stdout", ".llm-compiler-stderr"


def run_sandboxed(
    binary: Path,
    directory: Path,
    limits: Limits | None = None,
    *,
    arguments: Sequence[str] = (),
    stdin: bytes = b"",
    environment: Mapping[str, str] | None = None,
) -> RunResult:
    """Runs ``binary`` (inside ``directory``) isolated and limited.

    Args:
        binary: The executable.
        directory: Its working directory (the only one it may write to).
        limits: Its limits (default: :class:`Limits`'s).
        arguments: Its command-line arguments.
        stdin: Bytes on its standard input.
        environment: Variables it sees (``LC_ALL=C`` always).

    Its standard output and error are written to files in ``directory``, so they are
    bounded by ``limits.file_bytes`` like any file it writes; a program that writes
    more is stopped (``SIGXFSZ``).
    """
    limits = limits or Limits()
    variables = [f"{key}={value}" for key, value in {"LC_ALL": "C", **(environment or {})}.items()]
    shell = ["/bin/sh", "-c", f'exec "$@" >{_STDOUT} 2>{_STDERR}', "sh"]
    argv = [*shell, "/usr/bin/env", "-i", *variables, str(binary.resolve()), *arguments]
    command = sandbox_command(argv, directory, limits)
    try:
        result = run_command(
            command,
            timeout=limits.timeout,
            input=stdin,
            cwd=directory,
            env={"LC_ALL": "C"},
            check=False,
            subject=binary.name,
        )
    except CompileTimeout as error:
        return RunResult(_read(directory / _STDOUT), error.stderr.encode(), -9, timed_out=True)
    # Killed at the CPU-time limit (SIGXCPU; bubblewrap reports a signal as 128 + it):
    # a hang that used its CPU time before the wall-clock limit struck, not a crash.
    cpu_limit = result.returncode in (-signal.SIGXCPU, 128 + signal.SIGXCPU)
    stderr = _read(directory / _STDERR) + result.stderr
    return RunResult(_read(directory / _STDOUT), stderr, result.returncode, timed_out=cpu_limit)


def _read(path: Path) -> bytes:
    """A captured output file's bytes (removed), or nothing when the run never made it."""
    try:
        data = path.read_bytes()
    except OSError:
        return b""
    path.unlink(missing_ok=True)
    return data
