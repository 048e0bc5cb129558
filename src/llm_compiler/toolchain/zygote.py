"""LLVM loaded once, forked once per compile: the same start for every compile.

Starting ``opt`` and ``llc`` costs tens of milliseconds each (loading libLLVM), which on
a small unit is most of its compile. A *zygote* is a process that loads LLVM once
(:class:`~llm_compiler.toolchain.inprocess.InProcessLLVM`, its targets and the
``llc`` helper), warms it with one fixed compile, and then only accepts connections
on a Unix socket and forks: each connection gets a child of its own, which reads one
request, compiles (parse, passes, verifier, print, parse again, code generation: what
``opt -passes=P -S | llc -filetype=obj`` does), answers and exits.

Why a fork per request and not a long-lived worker: the output of ``opt`` for some pass
lists depends on heap addresses (hash maps keyed by pointers). A process started with
address randomization off (``setarch -R``, :func:`~llm_compiler.toolchain.runner.fixed_layout`)
lays out its heap the same way each time; a worker's heap depends on its history.
The zygote is started with randomization off, a fixed environment (``LC_ALL=C``,
``PYTHONHASHSEED=0``, and of the starter's only :data:`ENVIRONMENT_KEPT`), the folder
``/`` and a fixed command line (its listening socket is its standard input), and it
never reads a request itself, so its heap is the same at every fork, in every zygote of
the same toolchain, installation and cache folder: the same request gives the same
bytes whichever build, load or server it comes from. (For the few address-dependent
lists those bytes need not be an ``opt`` process's, whose heap starts elsewhere: builds
through a server agree with each other.)

Crashes and hangs touch one child only. The client (:class:`Zygote`) passes the child
a file for its standard output and error; the child sends its pid first. A child that
dies without an answer (a signal, an ``LLVM ERROR`` abort) raises
:class:`~llm_compiler.errors.CommandFailed` with that file's tail as evidence; one
that runs past the time limit is killed and raises
:class:`~llm_compiler.errors.CompileTimeout`. The zygote ends when the process that
started it (:func:`start`) and everything forked from that process are gone: its
standard output is a pipe whose other end they hold.

Requests (length-prefixed pickles, :func:`~llm_compiler.toolchain.worker_pool.send_message`):

* ``("identity",)`` -> ``("ok", bin_dir, version, context)``: ``context`` is what the
  children run under (:func:`run_context`); a command whose own differs does not use
  the zygote (:func:`find`), so that a build's cgroup, ``nice`` level, scheduling policy
  and processors reach every compile it makes.
* ``("compile", ir, pipeline, want_asm, seconds)`` -> ``("ok", ir_text, obj, asm)``:
  ``pipeline`` None lowers ``ir`` as it is (``ir_text`` is then None), ``asm`` is None
  unless asked for; ``seconds`` bounds the child's life even if its client is gone.
* ``("optimize", ir, pipeline, seconds)`` -> ``("ok", ir_text)``: no code generation.
* ``("llvm-error", message)`` answers IR or a pipeline LLVM rejects.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_compiler.errors import CommandFailed, CompileTimeout, ToolchainError
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import fixed_layout
from llm_compiler.toolchain.worker_pool import receive_message, send_message

#: The environment variable that names a zygote's socket to a command (``off``: none).
ENVIRONMENT = "LLM_COMPILER_ZYGOTE"

#: What the zygote's environment holds besides its fixed values: where the ``llc``
#: helper is cached.
ENVIRONMENT_KEPT = ("HOME", "XDG_CACHE_HOME")

#: Seconds :func:`start` waits for a zygote to load LLVM.
START_TIMEOUT = 60.0

#: Seconds a client waits for a child's identity.
IDENTITY_TIMEOUT = 10.0

_EVIDENCE_LIMIT = 16_384
#: A module compiled once before the first fork, so that what LLVM sets up lazily
#: (pass registry, target machines) is set up once, the same way in every zygote.
_WARM_IR = b"define i32 @f(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n"
_WARM_PIPELINE = "default<Oz>"


class ZygoteGone(ToolchainError):
    """No zygote answered at the socket (it exited, or never started)."""


# The zygote ------------------------------------------------------------------


def main(argv: list[str]) -> int:
    """``python -m llm_compiler.toolchain.zygote BIN_DIR VERSION``: standard input is the
    listening socket, standard output the pipe to the starter, standard error a log."""
    from llm_compiler.toolchain.inprocess import InProcessLLVM

    toolchain = Toolchain(Path(argv[0]), argv[1])
    engine = InProcessLLVM(toolchain)
    # On a crash, LLVM's handlers print the stack and the pass that ran: the evidence.
    engine.lib.LLVMEnablePrettyStackTrace()
    _compile(engine, _WARM_IR, _WARM_PIPELINE, want_asm=False)
    listener = socket.socket(fileno=0)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    os.write(1, b"ready\n")
    poller = select.poll()
    poller.register(0, select.POLLIN)
    poller.register(1, 0)  # POLLERR: the starter and its children are gone
    try:
        while True:
            events = dict(poller.poll())
            if events.get(1):
                return 0
            if not events.get(0):
                continue
            try:
                connection, _ = listener._accept()  # type: ignore[attr-defined]
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                continue
            if os.fork() == 0:
                try:
                    _child(engine, connection)
                finally:
                    os._exit(1)
            os.close(connection)
    finally:
        _remove(listener.getsockname())


def _child(engine: Any, connection: int) -> None:
    """Serves one request on ``connection`` (module docstring) and exits."""
    # A session of its own, as each opt and llc process has (runner.run_command): where
    # the scheduler shares the processors by session (autogroups), the zygote's
    # children would otherwise share one share among them.
    os.setsid()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.close(0)
    stream = socket.socket(fileno=connection)
    _, descriptors, _, _ = socket.recv_fds(stream, 1, 1)
    if len(descriptors) != 1:
        os._exit(2)
    log = os.dup(2)  # the zygote's log: one line per request
    for number in (1, 2):
        os.dup2(descriptors[0], number)
    os.close(descriptors[0])
    send_message(connection, os.getpid())
    request = receive_message(connection)
    if request is None:
        os._exit(0)
    kind = request[0]
    with contextlib.suppress(OSError):
        os.write(log, f"{os.getpid()} {kind} {request[2] if kind != 'identity' else ''}\n".encode())
        os.close(log)
    if kind in ("compile", "optimize"):
        signal.alarm(max(1, math.ceil(request[-1])) + 5)  # an orphaned hang ends too
    try:
        if kind == "identity":
            bin_dir = str(engine.toolchain.bin_dir)
            answer: tuple[Any, ...] = ("ok", bin_dir, engine.toolchain.version, run_context())
        elif kind == "compile":
            answer = ("ok", *_compile(engine, request[1], request[2], want_asm=request[3]))
        elif kind == "optimize":
            answer = ("ok", _optimize(engine, request[1], request[2]))
        else:
            answer = ("internal-error", f"unknown request {kind!r}")
    except Exception as error:
        from llm_compiler.toolchain.llvm_c import LLVMError

        if isinstance(error, LLVMError):
            answer = ("llvm-error", str(error))
        else:
            answer = ("internal-error", traceback.format_exc())
    send_message(connection, answer)
    os._exit(0)


def _optimize(engine: Any, ir: bytes, pipeline: str) -> str:
    context = engine.lib.LLVMContextCreate()
    try:
        module = engine.parse(context, ir)
        engine.run_passes(module, pipeline)
        text: str = engine.print_module(module)
        return text
    finally:
        engine.lib.LLVMContextDispose(context)


def _compile(engine: Any, ir: bytes, pipeline: str | None, *, want_asm: bool) -> tuple[Any, ...]:
    """(optimized IR text or None, object, assembly or None), as opt | llc give them."""
    text = None if pipeline is None else _optimize(engine, ir, pipeline)
    lowered = ir if text is None else text.encode()
    obj = engine._lower_text(lowered, "obj")
    asm = engine._lower_text(lowered, "asm").decode("utf-8", errors="replace") if want_asm else None
    return text, obj, asm


# The starter -----------------------------------------------------------------


@dataclass
class Started:
    """A running zygote: its socket, process and the pipe end that keeps it alive."""

    path: str
    process: subprocess.Popen[bytes]
    lifeline: int

    def stop(self) -> None:
        """Ends the zygote (its children finish their requests)."""
        with contextlib.suppress(OSError):
            os.close(self.lifeline)
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.process.wait()
        _remove(self.path)


def _remove(path: str) -> None:
    """Removes a zygote's socket, log and private folder."""
    folder = os.path.dirname(path)
    for name in (path, os.path.join(folder, "zygote.log")):
        with contextlib.suppress(OSError):
            os.unlink(name)
    with contextlib.suppress(OSError):
        os.rmdir(folder)


def start(toolchain: Toolchain, *, python: str = sys.executable) -> Started:
    """Starts a zygote for ``toolchain`` in a private folder and waits until it is ready.

    It lives until the returned :attr:`Started.lifeline` is closed in this process and
    in every process forked from it (or :meth:`Started.stop`).

    Raises:
        ToolchainError: It could not start or load LLVM (its log's tail says why).
    """
    from llm_compiler.toolchain.llvm_c import build_shim

    # Built here when missing, so that every zygote finds it made: none builds it itself,
    # which would give that one zygote another history, hence another heap.
    build_shim(toolchain)
    folder = tempfile.mkdtemp(prefix="llm-compiler-zygote-")  # mode 0700
    path = os.path.join(folder, "zygote.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    environment = {
        "PATH": "/usr/bin:/bin",
        "LC_ALL": "C",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    environment.update({name: os.environ[name] for name in ENVIRONMENT_KEPT if name in os.environ})
    command = fixed_layout([python, "-m", __name__, str(toolchain.bin_dir), toolchain.version])
    log_path = os.path.join(folder, "zygote.log")
    try:
        listener.bind(path)
        os.chmod(path, 0o600)
        listener.listen(128)
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                command,
                stdin=listener.fileno(),
                stdout=subprocess.PIPE,
                stderr=log,
                cwd="/",
                env=environment,
                start_new_session=True,
            )
    except OSError as error:
        raise ToolchainError(f"Could not start a zygote ({shlex.join(command)}): {error}") from error
    finally:
        listener.close()
    assert process.stdout is not None
    lifeline = os.dup(process.stdout.fileno())
    process.stdout.close()
    started = Started(path, process, lifeline)
    ready = select.select([lifeline], [], [], START_TIMEOUT)[0]
    if not ready or os.read(lifeline, 6) != b"ready\n":
        evidence = Path(log_path).read_text(errors="replace")[-_EVIDENCE_LIMIT:]
        started.stop()
        raise ToolchainError(f"The zygote for LLVM {toolchain.version} did not start: {evidence}")
    return started


# The client ------------------------------------------------------------------


class Zygote:
    """A client of the zygote at ``path``: one connection, hence one child, per request."""

    def __init__(self, path: str) -> None:
        self.path = path

    def identity(self) -> tuple[str, str, dict[str, Any]]:
        """The zygote's (bin directory, version, its children's :func:`run_context`).

        Raises:
            ZygoteGone: No zygote answers.
        """
        answer = self.request(("identity",), timeout=IDENTITY_TIMEOUT, subject="identity")
        return answer[1], answer[2], answer[3]

    def request(self, message: tuple[Any, ...], *, timeout: float, subject: str) -> tuple[Any, ...]:
        """Sends ``message`` to a new child and returns its ``("ok", ...)`` answer.

        Raises:
            ZygoteGone: No zygote accepted the request (nothing ran).
            CompileTimeout: The child ran past ``timeout`` seconds and was killed.
            CommandFailed: The child died without an answer, or LLVM rejected the input.
        """
        deadline = time.monotonic() + timeout
        command = ["zygote", self.path, str(message[0])]
        with (
            tempfile.TemporaryFile() as evidence,
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stream,
        ):
            try:
                stream.connect(self.path)
                socket.send_fds(stream, [b"r"], [evidence.fileno()])
                pid = receive_message(stream.fileno(), time.monotonic() + IDENTITY_TIMEOUT)
            except (OSError, TimeoutError) as error:
                raise ZygoteGone(f"No zygote answers at {self.path}: {error}") from error
            if not isinstance(pid, int):
                raise ZygoteGone(f"No zygote answers at {self.path}")
            try:
                send_message(stream.fileno(), message)
                answer = receive_message(stream.fileno(), deadline)
            except TimeoutError:
                _kill(pid)
                raise CompileTimeout(
                    f"LLVM did not finish within {timeout:g} s on {subject} (zygote child {pid}); "
                    "it was killed. Raise the limit with --timeout if the input is just large.",
                    timeout=timeout,
                    command=command,
                    returncode=None,
                    stderr=_tail(evidence),
                    subject=subject,
                ) from None
            except OSError:
                answer = None
            if answer is None:
                text = _tail(evidence)
                lines = [line for line in text.splitlines() if line.strip()]
                detail = next((line for line in lines if "error" in line.lower()), lines[0] if lines else "")
                raise CommandFailed(
                    f"LLVM crashed on {subject} (zygote child {pid} died without an answer)"
                    + (f": {detail.strip()}" if detail else ""),
                    command=command,
                    returncode=None,
                    stderr=text,
                    subject=subject,
                )
        if answer[0] == "ok":
            return tuple(answer)
        if answer[0] == "internal-error":
            raise ToolchainError(f"Internal error of a zygote child on {subject}:\n{answer[1]}")
        raise CommandFailed(
            f"LLVM rejected {subject}: {str(answer[1]).strip()}",
            command=command,
            returncode=1,
            stderr=str(answer[1]),
            subject=subject,
        )


def _kill(pid: int) -> None:
    """Kills the child ``pid``, through a pidfd: a child already gone (its pid maybe
    reused) is left alone."""
    try:
        descriptor = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except OSError:  # no pidfds here: the child is alive, it has not answered
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        return
    try:
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(descriptor, signal.SIGKILL)
    finally:
        os.close(descriptor)


def _tail(evidence: Any) -> str:
    evidence.seek(0, os.SEEK_END)
    size = evidence.tell()
    evidence.seek(max(0, size - _EVIDENCE_LIMIT))
    data: bytes = evidence.read()
    return data.decode("utf-8", errors="replace")


def find(toolchain: Toolchain) -> Zygote | None:
    """The zygote :data:`ENVIRONMENT` names, if it answers and runs ``toolchain``."""
    path = os.environ.get(ENVIRONMENT, "")
    if not path or path == "off":
        return None
    zygote = Zygote(path)
    try:
        bin_dir, version, context = zygote.identity()
    except (ToolchainError, OSError):
        return None
    if version != toolchain.version or Path(bin_dir).resolve() != Path(toolchain.bin_dir).resolve():
        return None
    if context != run_context():  # its children would not run where this command runs
        return None
    return zygote


def run_context() -> dict[str, Any]:
    """Where this process runs: its cgroup, ``nice`` level, scheduling policy and
    priority, and processors (the I/O priority is left out: a compile reads nothing)."""
    try:
        with open("/proc/self/cgroup") as stream:
            cgroup = stream.read()
    except OSError:
        cgroup = ""
    return {
        "cgroup": cgroup,
        "priority": os.getpriority(os.PRIO_PROCESS, 0),
        "scheduler": [os.sched_getscheduler(0), os.sched_getparam(0).sched_priority],
        "cpus": sorted(os.sched_getaffinity(0)),
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
