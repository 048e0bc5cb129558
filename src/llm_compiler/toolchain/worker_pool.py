"""Crash-isolated compile workers for the in-process engine.

LLVM aborts the whole process on a fatal error and may crash or loop on a pass list
that exposes a bug. So in-process evaluations run in worker processes
(``python -m llm_compiler.toolchain.worker_process``), each holding the LLVM library, the
programs it has seen and their prefix states. :class:`WorkerPool` hands requests to
idle workers (preferring the one that already holds the program), waits at most the
time limit, and when a worker crashes (a signal, an ``LLVM ERROR`` exit) or hangs, it
kills that worker's process group, starts a replacement and raises the same errors
as the subprocess engine: :class:`~llm_compiler.errors.CommandFailed` with the
worker's stderr as evidence, or :class:`~llm_compiler.errors.CompileTimeout`. The
evaluation is thereby recorded as a compile failure and the run goes on.

Messages are pickles with a length prefix over the worker's stdin and stdout; the
worker points its own file descriptor 1 at stderr so that nothing LLVM prints can
corrupt them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import select
import shlex
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_compiler.errors import CommandFailed, CompileTimeout, ToolchainError
from llm_compiler.toolchain.inprocess import Evaluation
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import kill_process_group, start_process

logger = logging.getLogger(__name__)

_HEADER = struct.Struct("<Q")
_STDERR_TAIL = 8_192


def send_message(fd: int, message: object) -> None:
    """Writes one message (a length-prefixed pickle) to a raw file descriptor."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _read_some(fd: int, deadline: float | None) -> bytes:
    if deadline is not None:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise TimeoutError
    return os.read(fd, 1 << 20)


def receive_message(fd: int, deadline: float | None = None) -> Any:
    """Reads one message from a raw file descriptor; None at end of stream.

    Only one message is ever in flight on a worker's pipe (one request, then its
    answer), so reading in large chunks cannot swallow the start of the next one.

    Raises:
        TimeoutError: ``deadline`` (a ``time.monotonic()`` value) passed first.
    """
    data = b""
    needed = _HEADER.size
    while len(data) < needed:
        chunk = _read_some(fd, deadline)
        if not chunk:
            return None
        data += chunk
        if needed == _HEADER.size and len(data) >= _HEADER.size:
            needed += _HEADER.unpack_from(data)[0]
    return pickle.loads(data[_HEADER.size : needed])  # the peer is our own worker process


class _WorkerDied(Exception):
    pass


@dataclass
class _Worker:
    process: Any
    stderr_path: Path
    programs: set[str] = field(default_factory=set)

    def stderr_tail(self) -> str:
        try:
            data = self.stderr_path.read_bytes()
        except OSError:
            return ""
        return data[-_STDERR_TAIL:].decode("utf-8", errors="replace")


@dataclass
class PoolStats:
    """Counters of a pool's life: evaluations, crashes, hangs and workers started."""

    requests: int = 0
    crashes: int = 0
    timeouts: int = 0
    workers_started: int = 0


class WorkerPool:
    """A fixed number of crash-isolated in-process compile workers.

    Args:
        toolchain: The LLVM whose library the workers load.
        size: Number of workers (started lazily, one per concurrent caller).
        timeout: Seconds one request may take before its worker is killed.
        prefix_cache_instructions: Per-worker bound of the prefix-state cache.

    Raises:
        ToolchainError: From the first request, when a worker cannot load LLVM.
    """

    def __init__(
        self,
        toolchain: Toolchain,
        *,
        size: int = 1,
        timeout: float = 120.0,
        prefix_cache_instructions: int | None = None,
    ) -> None:
        self.toolchain = toolchain
        self.size = max(1, size)
        self.timeout = timeout
        self.prefix_cache_instructions = prefix_cache_instructions
        self.stats = PoolStats()
        self._scratch = tempfile.TemporaryDirectory(prefix="llm-compiler-workers-")
        self._lock = threading.Condition()
        self._idle: list[_Worker] = []
        self._all: list[_Worker] = []
        self._serial = 0
        self._finalizer = weakref.finalize(self, _shutdown, self._all, self._scratch)

    # Lifecycle ---------------------------------------------------------------

    def _command(self) -> list[str]:
        command = [
            sys.executable, "-m", "llm_compiler.toolchain.worker_process",
            str(self.toolchain.bin_dir), self.toolchain.version,
        ]  # fmt: skip
        if self.prefix_cache_instructions is not None:
            command.append(str(self.prefix_cache_instructions))
        return command

    def _start(self) -> _Worker:
        self._serial += 1
        stderr_path = Path(self._scratch.name) / f"worker-{self._serial}.stderr"
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        process = start_process(self._command(), stderr_path=stderr_path, env=env)
        self.stats.workers_started += 1
        worker = _Worker(process, stderr_path)
        self._all.append(worker)
        return worker

    def _acquire(self, program_id: str | None) -> _Worker:
        with self._lock:
            while True:
                if self._idle:
                    for worker in self._idle:
                        if program_id is not None and program_id in worker.programs:
                            self._idle.remove(worker)
                            return worker
                    return self._idle.pop()
                if len(self._all) < self.size:
                    return self._start()
                self._lock.wait()

    def _release(self, worker: _Worker) -> None:
        with self._lock:
            if worker in self._all:
                self._idle.append(worker)
            self._lock.notify()

    def _discard(self, worker: _Worker, grace: float = 0.0) -> int:
        status = _stop(worker, grace)
        with self._lock:
            if worker in self._all:
                self._all.remove(worker)
            self._lock.notify()
        return status

    def close(self) -> None:
        """Stops every worker."""
        self._finalizer()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Requests ------------------------------------------------------------------

    def _exchange(self, worker: _Worker, request: tuple[Any, ...]) -> Any:
        try:
            send_message(worker.process.stdin.fileno(), request)
        except OSError as error:
            raise _WorkerDied from error
        response = receive_message(worker.process.stdout.fileno(), time.monotonic() + self.timeout)
        if response is None:
            raise _WorkerDied
        return response

    def _request(
        self,
        program_id: str | None,
        request: tuple[Any, ...],
        describe: Callable[[], tuple[list[str], str]],
        prepare: Callable[[_Worker], tuple[Any, ...] | None] | None = None,
    ) -> Any:
        worker = self._acquire(program_id)
        self.stats.requests += 1
        try:
            response = self._prepare(worker, prepare)
            if response is None:
                response = self._exchange(worker, request)
                if response[0] == "missing":
                    # The worker dropped the program from its memory; send it again.
                    worker.programs.clear()
                    response = self._prepare(worker, prepare) or self._exchange(worker, request)
        except TimeoutError:
            self.stats.timeouts += 1
            self._discard(worker)
            command, subject = describe()
            raise CompileTimeout(
                f"LLVM did not finish within {self.timeout:g} s on {subject} (in-process engine); "
                f"the worker was killed and replaced. Replay: {shlex.join(command)} | llc -filetype=obj. "
                "Raise the limit with --timeout if the input is just large.",
                timeout=self.timeout,
                command=command,
                returncode=None,
                stderr="",
                subject=subject,
            ) from None
        except _WorkerDied:
            self.stats.crashes += 1
            status = self._discard(worker, grace=2.0)
            command, subject = describe()
            evidence = worker.stderr_tail()
            raise _crash_error(status, evidence, command, subject) from None
        except BaseException:
            self._discard(worker)
            raise
        self._release(worker)
        return response

    def _prepare(self, worker: _Worker, prepare: Callable[[_Worker], tuple[Any, ...] | None] | None) -> Any:
        """Sends the program to ``worker`` if it lacks it; returns an error answer or None."""
        setup = prepare(worker) if prepare is not None else None
        if setup is None:
            return None
        answer = self._exchange(worker, setup)
        if answer[0] != "ok":
            return answer
        worker.programs.add(setup[1])
        return None

    def evaluate(
        self,
        program_id: str,
        ir: str,
        pipeline: str | None,
        *,
        subject: str,
        replay: list[str],
        stepwise: tuple[str, ...] | None = None,
        use_cache: bool = True,
        want_ir: bool = False,
        want_asm: bool = False,
        want_obj: bool = False,
        lower: bool = True,
    ) -> Evaluation:
        """Applies ``pipeline`` to a program in a worker and measures it.

        Args:
            program_id: The program's stable id (workers keep programs by id).
            ir: Its unoptimized IR (sent once per worker).
            pipeline: The whole pipeline, or None for the unoptimized program.
            subject: What to name in errors ("prog.c with -passes='...'").
            replay: The equivalent command line, carried by errors.
            stepwise: Top-level elements to run one at a time with the prefix cache
                (the pipeline is then ignored).
            use_cache: Reuse work: prefix states (stepwise mode) and measurements of
                optimized IR measured before (both modes).
            want_ir: Also return the optimized IR text.
            want_asm: Also return the assembly.
            want_obj: Also return the object file (whole-pipeline mode).
            lower: Generate code and measure it; without it (stepwise mode only) the
                result is counted and hashed, and its sizes are 0.

        Raises:
            CommandFailed: LLVM rejected the pipeline or IR, or crashed the worker.
            CompileTimeout: The worker did not answer in time and was replaced.
        """

        def prepare(worker: _Worker) -> tuple[Any, ...] | None:
            return None if program_id in worker.programs else ("add", program_id, ir.encode())

        if stepwise is not None:
            request: tuple[Any, ...] = ("stepwise", program_id, stepwise, use_cache, want_ir, want_asm, lower)
        else:
            request = ("evaluate", program_id, pipeline, want_ir, want_asm, use_cache, want_obj)
        response = self._request(program_id, request, lambda: (replay, subject), prepare)
        return self._unwrap(response, replay, subject)

    def count(
        self, program_id: str, ir: str, pipeline: str | None, *, subject: str, replay: list[str]
    ) -> tuple[int, str]:
        """Applies ``pipeline`` to a program in a worker and counts the optimized IR,
        generating no code: (instructions, optimized-IR hash).

        Raises:
            CommandFailed: LLVM rejected the pipeline or IR, or crashed the worker.
            CompileTimeout: The worker did not answer in time and was replaced.
        """

        def prepare(worker: _Worker) -> tuple[Any, ...] | None:
            return None if program_id in worker.programs else ("add", program_id, ir.encode())

        response = self._request(
            program_id, ("count", program_id, pipeline), lambda: (replay, subject), prepare
        )
        if response[0] != "ok":
            self._unwrap(response, replay, subject)
        count, digest, _ = response[1]
        return int(count), str(digest)

    def lower(self, ir: str, *, subject: str, replay: list[str], want_asm: bool = False) -> Evaluation:
        """Lowers IR text in a worker (the in-process ``llc``)."""
        response = self._request(None, ("lower", ir.encode(), want_asm), lambda: (replay, subject))
        return self._unwrap(response, replay, subject)

    @staticmethod
    def _unwrap(response: Any, replay: list[str], subject: str) -> Evaluation:
        if response[0] == "ok":
            return response[1]  # type: ignore[no-any-return]
        message = response[1]
        if response[0] == "internal-error":
            raise ToolchainError(f"Internal error of an in-process worker on {subject}:\n{message}")
        raise CommandFailed(
            f"LLVM rejected {subject}: {message.strip()}. Replay: {shlex.join(replay)}",
            command=replay,
            returncode=1,
            stderr=message,
            subject=subject,
        )


def _crash_error(status: int, evidence: str, command: list[str], subject: str) -> CommandFailed:
    lines = [line.strip() for line in evidence.splitlines() if line.strip()]
    detail = next((line for line in lines if "LLVM ERROR" in line), "") or next(
        (line.split("\t", 1)[-1] for line in lines if "Running pass" in line), ""
    )
    if status < 0:
        try:
            import signal

            how = f"crashed with {signal.Signals(-status).name}"
        except ValueError:
            how = f"was killed by signal {-status}"
    else:
        how = f"exited with status {status}"
    message = f"LLVM {how} on {subject} (in-process engine; the worker was replaced)"
    if detail:
        message += f": {detail}"
    message += f". Replay: {shlex.join(command)} | llc -filetype=obj"
    return CommandFailed(message, command=command, returncode=status, stderr=evidence, subject=subject)


def _stop(worker: _Worker, grace: float = 0.0) -> int:
    """Kills a worker's process group and closes its pipes; returns its exit status.

    With ``grace``, the worker first gets that long to exit by itself: a dying worker
    then reports its own status (the signal of a crash), an idle one ends on its
    closed stdin.
    """
    if grace:
        with contextlib.suppress(OSError):
            worker.process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.process.wait(timeout=grace)
    status = kill_process_group(worker.process)
    for stream in (worker.process.stdin, worker.process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    return status


def _shutdown(workers: list[_Worker], scratch: tempfile.TemporaryDirectory[str]) -> None:
    for worker in list(workers):
        _stop(worker, grace=0.2)
    workers.clear()
    scratch.cleanup()
