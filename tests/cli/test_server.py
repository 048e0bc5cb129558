"""The compile server with real processes, sockets and clang: a command run by the server
writes what it writes when run by itself (object, warnings, errors, exit status), in the
client's directory and environment; a stale socket or a missing server leaves the
command to its own process, which starts a server for the next one."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_compiler.cli import server
from llm_compiler.toolchain.llvm import Toolchain

SOURCE = """\
#include "scale.h"
int scaled_sum(const int *values, int count) {
    int unused;
    int total = 0;
    for (int i = 0; i < count; ++i)
        total += values[i] * SCALE;
    return total;
}
"""


@pytest.fixture()
def runtime(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A runtime folder of this test's own, so that its server is its own."""
    folder = tmp_path_factory.mktemp("run")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    monkeypatch.setenv("LLM_COMPILER_SERVER_IDLE", "3")
    monkeypatch.delenv("LLM_COMPILER_NO_SERVER", raising=False)
    yield folder
    _stop(Path(server.socket_path()))


def _stop(path: Path) -> None:
    """Waits for the server at ``path`` to go idle and exit (its socket removed)."""
    deadline = time.monotonic() + 60
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.2)


def _wait_for_server(path: Path) -> None:
    """Waits for a server to listen at ``path`` (its log says so once it does; a stale
    socket may be there before)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.is_socket() and "listening" in _log(path):
            return
        time.sleep(0.1)
    raise AssertionError(f"no server at {path}; its log: {_log(path)}")


def _log(path: Path) -> str:
    log = Path(server.log_path(str(path)))
    return log.read_text() if log.exists() else "(none)"


def _project(folder: Path) -> Path:
    (folder / "include").mkdir(parents=True)
    (folder / "include" / "scale.h").write_text("#define SCALE 3\n")
    (folder / "unit.c").write_text(SOURCE)
    (folder / "broken.c").write_text("int broken(void) { return missing; }\n")
    return folder


def _cc(folder: Path, *arguments: str, no_server: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "llm_compiler", "cc", "--cache", "off", "--predictor", "none"]
    env = {**os.environ, "CPATH": str(folder / "include")}  # the header is found only through it
    if no_server:
        env["LLM_COMPILER_NO_SERVER"] = "1"
    return subprocess.run(
        [*command, *arguments], cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_a_served_command_writes_what_its_own_process_writes(tmp_path: Path, runtime: Path) -> None:
    folder = _project(tmp_path / "project")
    alone = _cc(folder, "-Wall", "-O2", "-c", "unit.c", "-o", "alone.o", no_server=True)
    assert alone.returncode == 0, alone.stderr
    path = Path(server.socket_path())
    assert str(path).startswith(str(runtime)) and not path.exists()

    first = _cc(folder, "-Wall", "-O2", "-c", "unit.c", "-o", "first.o")  # starts the server
    _wait_for_server(path)
    assert (path.parent.stat().st_mode & 0o777) == 0o700 and (path.stat().st_mode & 0o777) == 0o600
    served = _cc(folder, "-Wall", "-O2", "-c", "unit.c", "-o", "served.o")
    failed = _cc(folder, "-O2", "-c", "broken.c", "-o", "broken.o")
    failed_alone = _cc(folder, "-O2", "-c", "broken.c", "-o", "broken.o", no_server=True)

    objects = {(folder / name).read_bytes() for name in ("alone.o", "first.o", "served.o")}
    assert len(objects) == 1
    assert first.returncode == served.returncode == 0
    assert "unused variable 'unused'" in served.stderr and served.stderr == alone.stderr
    assert failed.returncode == failed_alone.returncode != 0 and not (folder / "broken.o").exists()
    assert "use of undeclared identifier 'missing'" in failed.stderr and failed.stderr == failed_alone.stderr

    _stop(path)
    assert not path.exists(), _log(path)
    assert "served 2 commands" in _log(path)


def test_a_stale_socket_leaves_the_command_to_its_own_process_and_a_new_server_starts(
    tmp_path: Path, runtime: Path
) -> None:
    folder = _project(tmp_path / "project")
    path = Path(server.socket_path())
    path.parent.mkdir(mode=0o700, exist_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(path))  # bound, never listening: what a killed server leaves
    done = _cc(folder, "-O2", "-c", "unit.c", "-o", "unit.o")
    assert done.returncode == 0, done.stderr
    assert (folder / "unit.o").read_bytes()[:4] == b"\x7fELF"
    _wait_for_server(path)
    again = _cc(folder, "-O2", "-c", "unit.c", "-o", "again.o")
    assert again.returncode == 0 and (folder / "again.o").read_bytes() == (folder / "unit.o").read_bytes()
    _stop(path)
    assert "served 1 commands" in _log(path)


def test_a_folder_others_may_use_is_not_used(tmp_path: Path, runtime: Path) -> None:
    folder = _project(tmp_path / "project")
    shared = Path(server.folder())
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    done = _cc(folder, "-O2", "-c", "unit.c", "-o", "unit.o")
    assert done.returncode == 0, done.stderr
    time.sleep(1)
    assert list(shared.iterdir()) == []  # no socket, no log: no server in a folder others can write


def _slow_llvm(folder: Path, toolchain_bin: Path) -> Path:
    """An LLVM folder whose clang, when ``STALL`` exists, first writes its pid and
    sleeps: a compile that is still running when its client is stopped."""
    slow = folder / "slow-llvm"
    slow.mkdir()
    for tool in toolchain_bin.iterdir():
        (slow / tool.name).symlink_to(tool)
    (slow / "clang").unlink()
    (slow / "clang").write_text(
        f'#!/bin/sh\nif [ -e "{folder}/STALL" ]; then echo $$ > "{folder}/stalled"; sleep 120; fi\n'
        f'exec {toolchain_bin / "clang"} "$@"\n'
    )
    (slow / "clang").chmod(0o755)
    return slow


def _gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize(
    ("stop", "ignoring_ctrl_c"),
    [(signal.SIGINT, False), (signal.SIGKILL, False), (signal.SIGKILL, True)],
    ids=["ctrl-c", "kill-9", "kill-9-of-a-build-that-ignores-ctrl-c"],
)
def test_a_stopped_client_stops_its_command(
    tmp_path: Path, runtime: Path, toolchain: Toolchain, stop: signal.Signals, ignoring_ctrl_c: bool
) -> None:
    folder = _project(tmp_path / "project")
    env = {**os.environ, "CPATH": str(folder / "include")}
    env["LLVM_BIN"] = str(_slow_llvm(tmp_path, toolchain.bin_dir))
    command = [sys.executable, "-m", "llm_compiler", "cc", "--cache", "off", "--predictor", "none"]
    # Ctrl-C as the build has it, whatever this test's own process inherited: a build
    # started in the background or under nohup ignores it, and the server inherits that.
    disposition = "SIG_IGN" if ignoring_ctrl_c else "SIG_DFL"
    setup = (
        f"import os, signal, sys; signal.signal(signal.SIGINT, signal.{disposition}); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    command = [sys.executable, "-c", setup, *command]
    path = Path(server.socket_path())
    started = subprocess.run(
        [*command, "-c", "unit.c", "-o", "unit.o"], cwd=folder, env=env, capture_output=True, timeout=300
    )
    assert started.returncode == 0, started.stderr
    _wait_for_server(path)
    (tmp_path / "STALL").touch()
    client = subprocess.Popen([*command, "-c", "unit.c", "-o", "stopped.o"], cwd=folder, env=env)
    deadline = time.monotonic() + 60
    while not (tmp_path / "stalled").exists():
        assert client.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.2)
    stalled = int((tmp_path / "stalled").read_text())
    if ignoring_ctrl_c:  # as it would by itself, the client ignores Ctrl-C and its command goes on
        client.send_signal(signal.SIGINT)
        time.sleep(1)
        assert client.poll() is None and not _gone(stalled, 0.5)
    client.send_signal(stop)
    assert client.wait(timeout=30) == -stop
    assert _gone(stalled, 30), "the command's clang still runs after its client stopped"
    assert not (folder / "stopped.o").exists()
    (tmp_path / "STALL").unlink()  # the server goes on serving
    again = subprocess.run([*command, "-c", "unit.c", "-o", "again.o"], cwd=folder, env=env, timeout=300)
    assert again.returncode == 0 and (folder / "again.o").read_bytes() == (folder / "unit.o").read_bytes()
    _stop(path)
    assert "served 2 commands" in _log(path)


def test_a_command_in_another_mount_namespace_runs_on_its_own_and_the_server_makes_way(
    tmp_path: Path, runtime: Path
) -> None:
    if os.geteuid() != 0 or subprocess.run(["unshare", "-m", "true"], check=False).returncode != 0:
        pytest.skip("needs unshare -m (root)")
    folder = _project(tmp_path / "project")
    path = Path(server.socket_path())
    assert _cc(folder, "-O2", "-c", "unit.c", "-o", "unit.o").returncode == 0
    _wait_for_server(path)
    command = [sys.executable, "-m", "llm_compiler", "cc", "--cache", "off", "--predictor", "none"]
    # The object's folder is a tmpfs in the command's namespace only: a server child
    # writing it from the server's namespace would put it where the build cannot see it.
    (folder / "out").mkdir()
    script = 'mount -t tmpfs none out && "$@" && test -s out/unit.o'
    inside = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", *command, "-c", "unit.c", "-o", "out/unit.o"],
        cwd=folder,
        env={**os.environ, "CPATH": str(folder / "include")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert inside.returncode == 0, inside.stderr
    assert list((folder / "out").iterdir()) == []
    _stop(path)
    assert "cannot give" in _log(path)


def test_a_server_that_does_not_answer_leaves_the_command_to_its_own_process(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = Path(server.socket_path())
    path.parent.mkdir(mode=0o700, exist_ok=True)
    monkeypatch.setattr(server, "START_TIMEOUT", 1.0)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as hung:
        hung.bind(str(path))
        hung.listen(1)  # connections wait in its queue, never accepted: a stopped server
        answers: list[int | None] = []
        waiting = threading.Thread(
            target=lambda: answers.append(server.delegate("cc", ["--version"])), daemon=True
        )
        waiting.start()
        waiting.join(30)
        assert not waiting.is_alive() and answers == [None]
    path.unlink()
