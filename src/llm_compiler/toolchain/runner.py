"""The one way llm-compiler runs a subprocess.

Every external command (clang, opt, llc, llvm-size, test binaries...) goes through
:func:`run_command`. It takes an argv list (never a shell string), logs the exact
command line, starts the child in a new process group, enforces a timeout by killing
that whole group (so grandchildren die too), and on failure raises an error that
carries the command, its exit status and its standard error.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.errors import CommandFailed, CompileTimeout, ToolchainError

logger = logging.getLogger(__name__)

#: Most bytes of stderr kept in an error (the tail is what explains a failure).
_STDERR_LIMIT = 16_384


@dataclass(frozen=True)
class CommandResult:
    """What a finished command produced.

    Attributes:
        command: The argv that ran.
        returncode: Its exit status (0 unless ``check=False`` was passed).
        stdout: Raw standard output.
        stderr: Raw standard error.
        seconds: Wall-clock duration.
    """

    command: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float

    @property
    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")


def _tail(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    if len(text) > _STDERR_LIMIT:
        text = "...\n" + text[-_STDERR_LIMIT:]
    return text


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def run_command(
    command: Sequence[str | os.PathLike[str]],
    *,
    timeout: float,
    input: bytes | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    subject: str | None = None,
) -> CommandResult:
    """Runs ``command`` and waits for it, at most ``timeout`` seconds.

    Args:
        command: The argv; the first element is the program.
        timeout: Seconds before the process group is killed with SIGKILL.
        input: Bytes fed to standard input (stdin is /dev/null otherwise).
        cwd: Working directory.
        env: The complete environment; the current one when None.
        check: Raise :class:`CommandFailed` on a non-zero exit or a signal.
        subject: What the command works on, named in error messages.

    Returns:
        The finished command's outputs and duration.

    Raises:
        CompileTimeout: The command ran past ``timeout``; the group was killed.
        CommandFailed: With ``check``, the command exited non-zero or crashed.
        ToolchainError: The program could not be started (missing, not executable).

    Example:
        >>> run_command(["true"], timeout=5).returncode
        0
    """
    argv = [os.fspath(part) for part in command]
    line = shlex.join(argv)
    logger.debug("run: %s", line)
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
    except OSError as error:
        raise ToolchainError(
            f"Could not start {argv[0]!r} ({error.strerror or error}). "
            f"Command: {line}. Check that the program is installed and executable."
        ) from error
    try:
        stdout, stderr = process.communicate(input=input, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        stdout, stderr = process.communicate()
        about = f" on {subject}" if subject else ""
        raise CompileTimeout(
            f"{Path(argv[0]).name} did not finish within {timeout:g} s{about} and was "
            f"killed. Command: {line}. Raise the limit with --timeout if the input "
            "is just large; otherwise the pass list makes the compiler loop.",
            timeout=timeout,
            command=argv,
            returncode=None,
            stderr=_tail(stderr),
            subject=subject,
        ) from None
    except BaseException:
        _kill_group(process)
        process.wait()
        raise
    finally:
        # A child may have left grandchildren behind in its group; they go with it.
        if process.returncode is not None:
            _kill_group(process)
    seconds = time.monotonic() - started
    logger.debug("exit %s after %.3f s: %s", process.returncode, seconds, line)
    if check and process.returncode != 0:
        raise _failure(argv, process.returncode, stderr, subject)
    return CommandResult(tuple(argv), process.returncode, stdout, stderr, seconds)


def _failure(argv: list[str], returncode: int, stderr: bytes, subject: str | None) -> CommandFailed:
    tool = Path(argv[0]).name
    about = f" on {subject}" if subject else ""
    if returncode < 0:
        try:
            how = f"crashed with {signal.Signals(-returncode).name}"
        except ValueError:
            how = f"was killed by signal {-returncode}"
    else:
        how = f"failed with exit status {returncode}"
    detail = _first_error_line(stderr)
    message = f"{tool} {how}{about}"
    if detail:
        message += f": {detail}"
    message += f". Command: {shlex.join(argv)}"
    return CommandFailed(message, command=argv, returncode=returncode, stderr=_tail(stderr), subject=subject)


def _first_error_line(stderr: bytes) -> str:
    """The most telling line of a tool's stderr: the first that mentions an error."""
    lines = [line.strip() for line in stderr.decode("utf-8", errors="replace").splitlines()]
    lines = [line for line in lines if line]
    for line in lines:
        lowered = line.lower()
        if "error" in lowered or "unknown" in lowered or "invalid" in lowered:
            return line
    return lines[0] if lines else ""


def start_process(
    command: Sequence[str | os.PathLike[str]],
    *,
    stderr_path: Path,
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Starts a long-lived helper process (a compile worker) with pipes on stdin/stdout.

    Like :func:`run_command` it logs the exact command and starts the child in its own
    process group, so :func:`kill_process_group` ends it and everything it started. Its
    standard error goes to ``stderr_path``, where a crash leaves its evidence.

    Raises:
        ToolchainError: The program could not be started.
    """
    argv = [os.fspath(part) for part in command]
    logger.debug("start: %s", shlex.join(argv))
    try:
        with stderr_path.open("wb") as stderr:
            return subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=dict(env) if env is not None else None,
                start_new_session=True,
            )
    except OSError as error:
        raise ToolchainError(f"Could not start {shlex.join(argv)}: {error.strerror or error}.") from error


def kill_process_group(process: subprocess.Popen[bytes]) -> int:
    """Kills a process started here and its whole group; returns its exit status."""
    _kill_group(process)
    return process.wait()


#: ``personality(2)``'s flag that turns address-space randomization off for a process.
ADDR_NO_RANDOMIZE = 0x0040000


@functools.cache
def _setarch() -> str | None:
    """``setarch`` when it can start a process without address randomization here."""
    path = shutil.which("setarch")
    if path is None:
        return None
    try:
        done = subprocess.run([path, "-R", "true"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return path if done.returncode == 0 else None


def fixed_layout(argv: Sequence[str | os.PathLike[str]]) -> list[str]:
    """``argv`` run with address-space randomization off (``setarch -R``), when possible.

    Some LLVM 19 passes (``newgvn`` among them) visit values in an order that depends on
    where the heap puts them, so one list on one unit can give several different
    outputs from run to run. Without randomization the same command on the same input
    lays out its heap the same way, so ``opt`` and ``llc`` give one output, and a build
    is the same at ``-j1`` and ``-j8``. Where ``setarch`` is missing or not allowed,
    ``argv`` is returned unchanged (the selection's determinism check still applies).
    """
    prefix = _setarch()
    parts = [os.fspath(part) for part in argv]
    return [prefix, "-R", *parts] if prefix else parts
