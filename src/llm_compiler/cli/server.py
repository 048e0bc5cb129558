"""The compile server: the driver's imports paid once per build, not once per unit.

A build runs ``llm-compiler cc`` once per unit, and a miss spends about half a second
importing the driver, the predictor, the gate and numpy before its first compile. The
server is a process that has done those imports once. ``llm-compiler cc`` connects to
it over a Unix socket and hands it the command: its arguments, working directory,
environment, umask and its own standard input, output and error (the descriptors
themselves, passed with ``SCM_RIGHTS``). The server forks a child for the command;
the child takes the client's descriptors, directory and environment and runs the same
code the client would have run (:func:`llm_compiler.cli.cc.main`), then reports its
exit status, which the client exits with. Each command runs in its own forked process,
so commands share nothing but the imported code: no state passes from one to the next,
a crash ends one command only, and ``make -j`` commands run side by side.

The client (:func:`delegate`) uses only the standard library and falls back to running
the command itself whenever the server cannot answer: none is running (the client then
starts one in the background for the commands that follow, and compiles by itself),
the socket is stale, the child died without a status, or the command's process could
not be given the client's resource limits (``ulimit``), priority (``nice``) or
processors, or the client sees another system (a chroot, another mount namespace).
Either way the command's outputs are the same: the objects are written atomically,
whoever writes them.

The socket lives in ``$XDG_RUNTIME_DIR`` (else the temporary folder) under
``llm-compiler-<uid>/``, a folder only its owner may use, and its name holds a hash of
the Python, the package's location and its source files' sizes and times, so that a
changed or another installation gets its own server. A server exits after
``LLM_COMPILER_SERVER_IDLE`` seconds without a command (default 120).
``--no-server`` (``LLM_COMPILER_NO_SERVER=1``) turns it off. A signal that stops the
client (Ctrl-C) is passed on to the command's process, save one the client ignores (a
build under ``nohup``); a client killed outright makes its command stop, as a killed
compiler would. The command's process stops on these whatever the server inherited,
killing the compiles it started.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import signal
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from llm_compiler.driver import direct

#: Seconds a server waits for a command before it exits.
IDLE_ENVIRONMENT = "LLM_COMPILER_SERVER_IDLE"
DEFAULT_IDLE_SECONDS = 120.0

#: What a miss imports; the server imports it once.
PRELOAD = (
    "llm_compiler.cli.cc",
    "llm_compiler.driver.cc",
    "llm_compiler.driver.predicted",
    "llm_compiler.driver.whole_program",
    "llm_compiler.core.compiler",
    "llm_compiler.toolchain.elf",
    "llm_compiler.selection",
    "llm_compiler.validation.gate",
    "llm_compiler.validation.linkage",
    "llm_compiler.autotune.export",
    "llm_compiler.predictor.proposer",
    "llm_compiler.predictor.ranker",
    "llm_compiler.predictor.shipped",
    "numpy",
    "importlib.resources",
    "zipfile",
    "platform",
)

#: Seconds after a server was started before a client starts another (one that fails
#: to start must not cost every command a process).
START_INTERVAL = 10.0

#: Seconds a client waits for the server to start its command before running it itself.
START_TIMEOUT = 60.0

_LENGTH = struct.Struct("<Q")
_DECLINED = 3  # a child's exit status: it could not run its command as its client would
_SOCKET_PATH_LIMIT = 104  # sun_path's size, less room for its terminating zero
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def signature() -> str:
    """A hash of what the server's imported code is: the Python and the package's sources."""
    digest = hashlib.sha256(f"{sys.executable}\0{sys.version}\0{_PACKAGE}".encode())
    for root, folders, files in os.walk(_PACKAGE):
        folders[:] = sorted(name for name in folders if name != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                info = os.stat(os.path.join(root, name))
                digest.update(f"\0{root}/{name}\0{info.st_size}\0{info.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def folder() -> str:
    """The owner-only folder that holds the servers' sockets."""
    base = os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
    return os.path.join(base, f"llm-compiler-{os.getuid()}")


def _private_folder(path: str) -> bool:
    """Makes ``path`` (mode 0700) if missing; True when it is a folder only we may use."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    info = os.lstat(path)
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def socket_path() -> str:
    """The socket of the server for this installation."""
    return os.path.join(folder(), f"cc-{signature()}.sock")


# The client ------------------------------------------------------------------


def delegate(command: str, arguments: Sequence[str]) -> int | None:
    """Runs ``llm-compiler <command> ARGUMENTS`` in the server; its exit status, or None
    when the caller must run it itself (module docstring)."""
    if not sys.platform.startswith("linux"):  # descriptors passed over AF_UNIX, /proc, fork
        return None
    try:
        given, _ = direct.scan_options(arguments, os.environ)
    except ValueError:
        return None  # the command itself reports the option without its value
    if direct.is_set(given, "--no-server"):
        return None
    try:
        if not _private_folder(folder()):
            return None
        path = socket_path()
        if len(os.fsencode(path)) >= _SOCKET_PATH_LIMIT:
            return None
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        return None
    with connection:
        try:
            connection.connect(path)
        except OSError:
            _start(path)
            return None
        try:
            return _run_remote(connection, command, arguments)
        except OSError:
            return None


def _run_remote(connection: socket.socket, command: str, arguments: Sequence[str]) -> int | None:
    mask = os.umask(0)
    os.umask(mask)
    request = json.dumps(
        {
            "command": command,
            "arguments": list(arguments),
            "cwd": os.getcwd(),
            "environ": dict(os.environ),
            "umask": mask,
            "limits": _limits(),
            "priority": os.getpriority(os.PRIO_PROCESS, 0),
            "cpus": sorted(os.sched_getaffinity(0)),
            "world": _world(),
        }
    ).encode()
    socket.send_fds(connection, [b"r"], [0, 1, 2])
    connection.sendall(_LENGTH.pack(len(request)) + request)
    connection.settimeout(START_TIMEOUT)  # a server that does not answer (stopped, hung)
    reader = connection.makefile("rb")
    first = reader.readline().split()
    if len(first) != 2 or first[0] != b"pid":
        return None  # the server went away, or cannot run the command as this process would
    connection.settimeout(None)
    child = int(first[1])
    forwarded = _forward_signals(child)
    try:
        last = reader.readline().split()
    finally:
        for number, handler in forwarded.items():
            signal.signal(number, handler)
    if len(last) != 2 or last[0] != b"exit":
        return None  # the command's process died without a status: run it here
    return int(last[1])


def _limits() -> dict[str, list[int]]:
    """This process's resource limits (``ulimit``), by name."""
    import resource

    return {
        name: list(resource.getrlimit(getattr(resource, name)))
        for name in dir(resource)
        if name.startswith("RLIMIT_")
    }


def _world() -> list[str]:
    """What this process sees the system through: its root folder and namespaces (a
    command in another mount namespace, say under ``unshare``, sees other files)."""
    root = os.stat("/")
    seen = [f"root {root.st_dev}:{root.st_ino}"]
    for kind in ("mnt", "user", "pid", "net", "uts", "ipc", "cgroup"):
        try:
            seen.append(os.readlink(f"/proc/self/ns/{kind}"))
        except OSError:
            seen.append(f"{kind}:?")
    return seen


def _take_context(request: dict[str, Any]) -> bool:
    """Gives this process the client's limits, priority and processors; False when one
    cannot be had (a limit above the server's, a higher priority) or the client sees
    another system (root folder, namespaces): the client then runs the command itself."""
    import resource

    if request["world"] != _world():
        return False
    try:
        for name, (soft, hard) in request["limits"].items():
            number = getattr(resource, name, None)
            if number is not None and resource.getrlimit(number) != (soft, hard):
                resource.setrlimit(number, (soft, hard))
        if os.getpriority(os.PRIO_PROCESS, 0) != request["priority"]:
            os.setpriority(os.PRIO_PROCESS, 0, request["priority"])
        if sorted(os.sched_getaffinity(0)) != request["cpus"]:
            os.sched_setaffinity(0, request["cpus"])
    except (OSError, ValueError):
        return False
    return True


def _forward_signals(child: int) -> dict[int, Any]:
    """Passes SIGINT, SIGTERM and SIGHUP on to ``child``, save those this process ignores
    (as it would running the command itself, say under ``nohup``); returns the handlers
    replaced."""

    def forward(number: int, frame: object) -> None:
        with contextlib.suppress(OSError):
            os.kill(child, number)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)

    replaced: dict[int, Any] = {}
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(number) != signal.SIG_IGN:
            replaced[number] = signal.signal(number, forward)
    return replaced


def log_path(path: str) -> str:
    """The log of the server at socket ``path``: its starts, errors and commands served."""
    return path[: -len(".sock")] + ".log"


def _start(path: str) -> None:
    """Starts a server for ``path`` in the background, unless one is starting already or
    one was started in the last :data:`START_INTERVAL` seconds."""
    import fcntl

    try:
        with open(path + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(lock, fcntl.LOCK_UN)
        if time.time() - os.stat(log_path(path)).st_mtime < START_INTERVAL:
            return
    except FileNotFoundError:
        pass
    except OSError:
        return  # a server holds the lock: it is starting or running
    import subprocess

    try:
        with open(log_path(path), "ab") as log:
            log.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} starting for pid {os.getpid()}\n".encode())
            log.flush()
            subprocess.Popen(
                [sys.executable, "-m", "llm_compiler.cli.server", path],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                close_fds=True,
            )
    except OSError:
        pass


# The server ------------------------------------------------------------------


def serve(path: str, idle_seconds: float) -> int:
    """Listens on ``path`` until idle for ``idle_seconds``; one forked child per command."""
    import fcntl
    import importlib

    lock = open(path + ".lock", "a")  # noqa: SIM115 -- held for the server's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server has this socket
    for name in PRELOAD:
        importlib.import_module(name)
    from llm_compiler.predictor.ranker import preload_shipped

    preload_shipped()
    _preload_toolchain()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(64)
    sys.stderr.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} listening\n")
    sys.stderr.flush()
    children: set[int] = set()
    last = time.monotonic()
    served = 0
    try:
        while True:
            ready = select.select([listener], [], [], 1.0)[0]
            statuses = {pid: _status(pid) for pid in children}
            children = {pid for pid, status in statuses.items() if status is None}
            if _DECLINED in statuses.values():
                # Its clients live in another world (namespace, limits) than it does: it
                # makes way for a server started by one of them.
                sys.stderr.write("a command needed what this server cannot give: exiting\n")
                return 0
            if ready:
                connection, _ = listener.accept()
                pid = os.fork()
                if pid == 0:
                    try:
                        listener.close()
                        lock.close()  # the server's lock ends with the server, not its children
                        _child(connection)
                    finally:
                        os._exit(1)  # a child never returns to the server's loop
                connection.close()
                children.add(pid)
                served += 1
                last = time.monotonic()
            elif not children and time.monotonic() - last > idle_seconds:
                return 0
    finally:
        listener.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        lock.close()
        sys.stderr.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} served {served} commands, idle: exiting\n")


def _status(pid: int) -> int | None:
    """A finished child's exit status (reaping it), or None while it runs."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return -1
    return os.waitstatus_to_exitcode(status) if done == pid else None


def _receive(connection: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, descriptors, _, _ = socket.recv_fds(connection, 1, 3)
    if not data:
        raise EOFError  # connected and gone: nothing to run
    if len(descriptors) != 3:
        raise OSError("the client did not pass its standard descriptors")
    header = connection.recv(_LENGTH.size, socket.MSG_WAITALL)
    (length,) = _LENGTH.unpack(header)
    data = connection.recv(length, socket.MSG_WAITALL)
    if len(data) != length:
        raise OSError("the client's request was cut short")
    return json.loads(data), descriptors


def _child(connection: socket.socket) -> None:
    """Runs one command as its client would have (module docstring); exits."""
    status = 1
    try:
        request, descriptors = _receive(connection)
        for target, descriptor in enumerate(descriptors):
            os.dup2(descriptor, target)
            os.close(descriptor)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["environ"])
        os.umask(request["umask"])
        if not _take_context(request):
            os._exit(_DECLINED)  # the client, seeing no pid, runs the command itself
        arguments = [str(argument) for argument in request["arguments"]]
        command = str(request["command"])
        sys.argv = ["llm-compiler", command, *arguments]
        # Whatever the server inherited (a build started under nohup ignores SIGINT), the
        # signals that reach this process come from its client, and each must stop the
        # command the way Ctrl-C does: the compiles it started are killed with it.
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.default_int_handler)
        connection.sendall(f"pid {os.getpid()}\n".encode())
        threading.Thread(target=_stop_when_gone, args=(connection,), daemon=True).start()
        from llm_compiler.cli import cc

        status = cc.main(command, arguments)
    except EOFError:
        os._exit(0)
    except SystemExit as done:
        status = done.code if isinstance(done.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
        status = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
    # The status is the last word: no interruption from here on.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        connection.sendall(f"exit {status}\n".encode())
    finally:
        os._exit(0)


def _preload_toolchain() -> None:
    """Reads once what every command on the LLVM this environment names reads again: its
    pass registry (``opt --print-passes``), its searchable pass set, and the built-in
    validation suite. A command on another LLVM reads its own; the toolchain itself is
    looked for again by each command."""
    from llm_compiler.selection import preload
    from llm_compiler.toolchain.llvm import find_toolchain, forget_found_toolchains

    try:
        preload(find_toolchain())
    except Exception:  # no usable LLVM here: each command reports it as without a server
        pass
    finally:
        forget_found_toolchains()


def _stop_when_gone(connection: socket.socket) -> None:
    """Interrupts the command when its client goes away (killed with its build)."""
    with contextlib.suppress(OSError):
        connection.recv(1)
    os.kill(os.getpid(), signal.SIGINT)


def main(argv: list[str]) -> int:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    idle = float(os.environ.get(IDLE_ENVIRONMENT) or DEFAULT_IDLE_SECONDS)
    return serve(argv[0], idle)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
