"""The compile server: a command's imports paid once per build, not once per unit.

A build runs ``llm-compiler cc`` once per unit, and a miss spends about half a second
importing the driver, the predictor, the gate and numpy before its first compile. The
server is a process that has done those imports once. The command's process (the
client, :func:`delegate`) connects to it over a Unix socket and hands it the command:
its arguments, working directory, environment, umask and its own standard input,
output and error (the descriptors themselves, passed with ``SCM_RIGHTS``). The server
forks a child for the command; the child takes the client's descriptors, directory,
environment and the rest of its context (below) and calls the same function the
client would have called, then reports its exit status, which the client exits with.
Each command runs in its own forked process, so commands share nothing but the
imported code: no state passes from one to the next, a crash ends one command only,
and ``make -j`` commands run side by side.

This module is generic and imports only the standard library, at the top and inside
its functions: what it serves is named by two ``"module:function"`` strings, the
*entry* the child calls as ``function(command, arguments) -> int`` and the *preload*
hook the server calls once before it listens (``llm-compiler cc`` serves
``llm_compiler.cli.cc:main`` with :func:`llm_compiler.driver.warm.preload`). Both are
imported in the server process (``python -m llm_compiler.driver.server PATH ENTRY
PRELOAD``), never in the client. A preload hook that returns a dict of environment
variables gives each command those its client's environment lacks (``cc``'s names the
zygote the server started, :mod:`llm_compiler.toolchain.zygote`).

The child runs the command only with the client's whole context, else it declines and
the client runs the command itself: the same root folder and namespaces, the same
user and group ids, capabilities, ``no_new_privs``, seccomp mode and security label,
which it takes as they are; and, which it gives itself, the client's supplementary
groups, cgroup (on cgroup v2 it moves into the client's; a difference in a v1
hierarchy declines), scheduling policy and priority, ``nice``, I/O priority
(``ionice``; read with the ``ioprio_get`` system call, so on an architecture whose
call numbers are not known here every command runs on its own), processors and
resource limits (``ulimit``). The client also runs the command itself when no server
is running (it then starts one in the background for the commands that follow), when
the socket is stale, or when the child died without a status. Either way the
command's outputs are the same: the objects are written atomically, whoever writes
them. A server whose child declined exits, making way for one started by a client of
the other context.

The socket lives in ``$XDG_RUNTIME_DIR`` (else the temporary folder) under
``llm-compiler-<uid>/``, a folder only its owner may use, and its name holds a hash of
the Python, the entry and preload strings and the sizes and times of the source files
of the packages they name, so that a changed or another installation, or another
entry, gets its own server. A server exits after ``LLM_COMPILER_SERVER_IDLE`` seconds
without a command (default 120). A signal that stops the client (Ctrl-C) is passed on
to the command's process, save one the client ignores (a build under ``nohup``); a
client killed outright makes its command stop, as a killed compiler would. The
command's process stops on these whatever the server inherited, killing the compiles
it started.
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
from collections.abc import Callable, Sequence
from typing import Any

#: Seconds a server waits for a command before it exits.
IDLE_ENVIRONMENT = "LLM_COMPILER_SERVER_IDLE"
DEFAULT_IDLE_SECONDS = 120.0

#: Seconds after a server was started before a client starts another (one that fails
#: to start must not cost every command a process).
START_INTERVAL = 10.0

#: Seconds a client waits for the server to start its command before running it itself.
START_TIMEOUT = 60.0

_LENGTH = struct.Struct("<Q")
_DECLINED = 3  # a child's exit status: it could not run its command as its client would
_SOCKET_PATH_LIMIT = 104  # sun_path's size, less room for its terminating zero

#: ``ioprio_set`` and ``ioprio_get`` by (machine, pointer size): Linux's own numbers.
_IOPRIO_SYSCALLS = {
    ("x86_64", 8): (251, 252),
    ("aarch64", 8): (30, 31),  # the generic table, shared by riscv64
    ("riscv64", 8): (30, 31),
}
_IOPRIO_WHO_PROCESS = 1
_IOPRIO_CLASS_SHIFT = 13


def _sources(name: str) -> list[str]:
    """The source files of the top-level package or module of ``name``, found without
    importing it (an empty list when it is not found)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name.split(".")[0])
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if not spec.submodule_search_locations:
        return [spec.origin] if spec.origin else []
    found = []
    for location in spec.submodule_search_locations:
        for root, folders, files in os.walk(location):
            folders[:] = sorted(name for name in folders if name != "__pycache__")
            found += [os.path.join(root, name) for name in sorted(files) if name.endswith(".py")]
    return found


def signature(entry: str, preload: str = "") -> str:
    """A hash of what a server for ``entry`` and ``preload`` runs: the Python, the two
    strings and the sources of the packages they name."""
    digest = hashlib.sha256(f"{sys.executable}\0{sys.version}\0{entry}\0{preload}".encode())
    packages = sorted({name.partition(":")[0].split(".")[0] for name in (entry, preload) if name})
    for package in packages:
        for path in _sources(package):
            with contextlib.suppress(OSError):
                info = os.stat(path)
                digest.update(f"\0{path}\0{info.st_size}\0{info.st_mtime_ns}".encode())
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


def socket_path(entry: str, preload: str = "") -> str:
    """The socket of the server for ``entry`` and ``preload`` in this installation."""
    return os.path.join(folder(), f"server-{signature(entry, preload)}.sock")


# The client ------------------------------------------------------------------


def delegate(command: str, arguments: Sequence[str], *, entry: str, preload: str = "") -> int | None:
    """Runs ``entry(command, arguments)`` in the server for ``entry`` and ``preload``.

    Args:
        command: The command's name, passed on to the entry.
        arguments: Its arguments, passed on to the entry.
        entry: ``"module:function"``, the function the server's child calls.
        preload: ``"module:function"`` the server calls once before it listens; "" for none.

    Returns:
        The command's exit status, or None when the caller must run the command itself
        (module docstring); a server is then started for the commands that follow.
    """
    if not sys.platform.startswith("linux"):  # descriptors passed over AF_UNIX, /proc, fork
        return None
    if _ioprio_calls() is None:
        return None  # the I/O priority cannot be read here, so it cannot be passed on
    try:
        if not _private_folder(folder()):
            return None
        path = socket_path(entry, preload)
        if len(os.fsencode(path)) >= _SOCKET_PATH_LIMIT:
            return None
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        return None
    with connection:
        try:
            connection.connect(path)
        except OSError:
            _start(path, entry, preload)
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
            "program": sys.argv[0] if sys.argv else "",
            "cwd": os.getcwd(),
            "environ": dict(os.environ),
            "umask": mask,
            **context(),
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


def context() -> dict[str, Any]:
    """This process's context that a served command must have (module docstring), as
    JSON values: what :func:`_take_context` compares and gives a child."""
    import resource

    return {
        "world": _world(),
        "identity": _identity(),
        "privileges": _privileges(),
        "groups": sorted(os.getgroups()),
        "cgroup": _read("/proc/self/cgroup"),
        "scheduler": [os.sched_getscheduler(0), os.sched_getparam(0).sched_priority],
        "priority": os.getpriority(os.PRIO_PROCESS, 0),
        "ioprio": ioprio(),
        "cpus": sorted(os.sched_getaffinity(0)),
        "limits": {
            name: list(resource.getrlimit(getattr(resource, name)))
            for name in dir(resource)
            if name.startswith("RLIMIT_")
        },
    }


def _read(path: str) -> str:
    try:
        with open(path) as file:
            return file.read()
    except OSError:
        return "?"


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


def _identity() -> list[int]:
    """Real and effective user and group ids."""
    return [os.getuid(), os.geteuid(), os.getgid(), os.getegid()]


def _privileges() -> list[str]:
    """Capabilities, ``no_new_privs``, seccomp mode and security label: what a process
    may do beyond its ids, which a child cannot be given, only have."""
    status = _read("/proc/self/status").splitlines()
    kept = ("Cap", "NoNewPrivs:", "Seccomp:")
    return [line for line in status if line.startswith(kept)] + [_read("/proc/self/attr/current")]


def _ioprio_calls() -> tuple[int, int] | None:
    """``ioprio_set`` and ``ioprio_get``'s numbers here; None on another architecture."""
    return _IOPRIO_SYSCALLS.get((os.uname().machine, struct.calcsize("P")))


def ioprio() -> int | None:
    """This thread's I/O priority (``ionice``) as the kernel packs it, class << 13 | level;
    the priority of class 0 ("none", which follows ``nice``) counts as 0. None when it
    cannot be read."""
    calls = _ioprio_calls()
    if calls is None:
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    value = int(libc.syscall(calls[1], _IOPRIO_WHO_PROCESS, 0))
    if value < 0:
        return None
    return 0 if value >> _IOPRIO_CLASS_SHIFT == 0 else value


def _set_ioprio(value: int) -> None:
    """Gives this thread (and the processes it starts) the I/O priority ``value``."""
    calls = _ioprio_calls()
    if calls is None:
        raise OSError("no ioprio_set on this architecture")
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(calls[0], _IOPRIO_WHO_PROCESS, 0, value) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))


def _cgroup_lines(text: str) -> dict[str, str]:
    """``/proc/self/cgroup`` by hierarchy (``"0:"`` is cgroup v2's) to path."""
    lines = {}
    for line in text.splitlines():
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")  # a path may hold colons
        lines[f"{number}:{controllers}"] = path
    return lines


def _join_cgroup(text: str) -> None:
    """Moves this process into the cgroup v2 group of ``text`` (a client's
    ``/proc/self/cgroup``); raises OSError where it cannot (a v1 hierarchy differs, no
    cgroup2 mount, no permission)."""
    mine, theirs = _cgroup_lines(_read("/proc/self/cgroup")), _cgroup_lines(text)
    if set(mine) != set(theirs) or any(mine[key] != theirs[key] for key in mine if key != "0:"):
        raise OSError("the client's cgroup v1 hierarchies differ from the server's")
    if "0:" not in theirs:
        raise OSError("no cgroup v2 group")
    mount = None
    for line in _read("/proc/self/mountinfo").splitlines():
        fields = line.split()
        if " - cgroup2 " in line and len(fields) > 4 and fields[3] == "/":
            mount = fields[4]
            break
    if mount is None:
        raise OSError("no cgroup2 mount")
    with open(os.path.join(mount, theirs["0:"].lstrip("/"), "cgroup.procs"), "w") as procs:
        procs.write(str(os.getpid()))
    if _read("/proc/self/cgroup") != text:
        raise OSError("the move did not give the client's cgroup")


def _take_context(request: dict[str, Any]) -> bool:
    """Gives this process the client's context (:func:`context`); False when any part
    of it cannot be had: the client then runs the command itself."""
    import resource

    if request["world"] != _world() or request["identity"] != _identity():
        return False
    if request["privileges"] != _privileges() or request["ioprio"] is None:
        return False
    try:
        if sorted(os.getgroups()) != request["groups"]:
            os.setgroups(request["groups"])
        if _read("/proc/self/cgroup") != request["cgroup"]:
            _join_cgroup(request["cgroup"])
        policy, level = request["scheduler"]
        if [os.sched_getscheduler(0), os.sched_getparam(0).sched_priority] != [policy, level]:
            os.sched_setscheduler(0, policy, os.sched_param(level))
        if os.getpriority(os.PRIO_PROCESS, 0) != request["priority"]:
            os.setpriority(os.PRIO_PROCESS, 0, request["priority"])
        if ioprio() != request["ioprio"]:
            _set_ioprio(request["ioprio"])
        if sorted(os.sched_getaffinity(0)) != request["cpus"]:
            os.sched_setaffinity(0, request["cpus"])
        for name, (soft, hard) in request["limits"].items():
            number = getattr(resource, name, None)
            if number is not None and resource.getrlimit(number) != (soft, hard):
                resource.setrlimit(number, (soft, hard))
    except (OSError, ValueError, TypeError):
        return False
    now = context()  # what was given is what the client has, or the client runs it
    return all(request[name] == value for name, value in now.items())


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


def _start(path: str, entry: str, preload: str) -> None:
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
                [sys.executable, "-m", __name__, path, entry, preload],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                close_fds=True,
            )
    except OSError:
        pass


# The server ------------------------------------------------------------------


def _resolve(name: str) -> Callable[..., Any]:
    """The function a ``"module:function"`` string names, its module imported."""
    import importlib

    module, colon, function = name.partition(":")
    if not colon or not module or not function:
        raise ValueError(f"{name!r} is not module:function")
    found: Callable[..., Any] = getattr(importlib.import_module(module), function)
    return found


def serve(path: str, entry: str, preload: str, idle_seconds: float) -> int:
    """Listens on ``path`` until idle for ``idle_seconds``; one forked child per command,
    which calls ``entry``; ``preload`` (if not "") is called once before listening."""
    import fcntl

    lock = open(path + ".lock", "a")  # noqa: SIM115 -- held for the server's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server has this socket
    loaded = _resolve(preload)() if preload else None
    extra = {str(name): str(value) for name, value in loaded.items()} if isinstance(loaded, dict) else {}
    target = _resolve(entry)
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
            if len(children) < len(statuses):  # idle from the end of the last command, not its start
                last = time.monotonic()
            if _DECLINED in statuses.values():
                # Its clients live in another context (namespace, cgroup, limits) than it
                # does: it makes way for a server started by one of them.
                sys.stderr.write("a command needed what this server cannot give: exiting\n")
                return 0
            if ready:
                connection, _ = listener.accept()
                pid = os.fork()
                if pid == 0:
                    try:
                        listener.close()
                        lock.close()  # the server's lock ends with the server, not its children
                        _child(connection, target, extra)
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


def _child(connection: socket.socket, target: Callable[[str, list[str]], int], extra: dict[str, str]) -> None:
    """Runs one command as its client would have (module docstring), with the variables
    of ``extra`` its client's environment lacks; exits."""
    status = 1
    try:
        request, descriptors = _receive(connection)
        for number, descriptor in enumerate(descriptors):
            os.dup2(descriptor, number)
            os.close(descriptor)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["environ"])
        for name, value in extra.items():
            os.environ.setdefault(name, value)
        os.umask(request["umask"])
        if not _take_context(request):
            os._exit(_DECLINED)  # the client, seeing no pid, runs the command itself
        arguments = [str(argument) for argument in request["arguments"]]
        command = str(request["command"])
        sys.argv = [str(request["program"]), command, *arguments]
        # Whatever the server inherited (a build started under nohup ignores SIGINT), the
        # signals that reach this process come from its client, and each must stop the
        # command the way Ctrl-C does: the compiles it started are killed with it.
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.default_int_handler)
        connection.sendall(f"pid {os.getpid()}\n".encode())
        threading.Thread(target=_stop_when_gone, args=(connection,), daemon=True).start()
        status = target(command, arguments)
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


def _stop_when_gone(connection: socket.socket) -> None:
    """Interrupts the command when its client goes away (killed with its build)."""
    with contextlib.suppress(OSError):
        connection.recv(1)
    os.kill(os.getpid(), signal.SIGINT)


def main(argv: list[str]) -> int:
    """``python -m llm_compiler.driver.server PATH ENTRY PRELOAD``."""
    path, entry, preload = argv
    idle = float(os.environ.get(IDLE_ENVIRONMENT) or DEFAULT_IDLE_SECONDS)
    return serve(path, entry, preload, idle)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
