"""The compile server with real processes, sockets and clang: a command run by the server
writes what it writes when run by itself (object, warnings, errors, exit status), in the
client's directory and environment; a stale socket or a missing server leaves the
command to its own process, which starts a server for the next one."""

from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.cli.main import SERVED_ENTRY, SERVER_PRELOAD
from llm_compiler.driver import server
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
    for path in (folder / f"llm-compiler-{os.getuid()}").glob("*.sock"):
        _stop(path)


def _socket() -> Path:
    """The socket of the server of ``llm-compiler cc``."""
    return Path(server.socket_path(SERVED_ENTRY, SERVER_PRELOAD))


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
    path = _socket()
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
    path = _socket()
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


def _slow_llvm(folder: Path, toolchain_bin: Path, seconds: int = 120) -> Path:
    """An LLVM folder whose clang, when ``STALL`` exists, first writes its pid and
    sleeps ``seconds``: a compile that is still running when its client is stopped."""
    slow = folder / "slow-llvm"
    slow.mkdir()
    for tool in toolchain_bin.iterdir():
        (slow / tool.name).symlink_to(tool)
    (slow / "clang").unlink()
    (slow / "clang").write_text(
        f'#!/bin/sh\nif [ -e "{folder}/STALL" ]; then echo $$ > "{folder}/stalled"; sleep {seconds}; fi\n'
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
    path = _socket()
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
    path = _socket()
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
    path = _socket()
    path.parent.mkdir(mode=0o700, exist_ok=True)
    monkeypatch.setattr(server, "START_TIMEOUT", 1.0)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as hung:
        hung.bind(str(path))
        hung.listen(1)  # connections wait in its queue, never accepted: a stopped server
        answers: list[int | None] = []
        waiting = threading.Thread(
            target=lambda: answers.append(
                server.delegate("cc", ["--version"], entry=SERVED_ENTRY, preload=SERVER_PRELOAD)
            ),
            daemon=True,
        )
        waiting.start()
        waiting.join(30)
        assert not waiting.is_alive() and answers == [None]
    path.unlink()


# What a served command takes from its client ----------------------------------

PROBE = Path(__file__).with_name("served_probe.py")
CAPLESS = ["setpriv", "--inh-caps=-all", "--bounding-set=-all"]  # root without capabilities


def _probe_socket() -> Path:
    sys.path.insert(0, str(PROBE.parent))  # where the client finds the probe, to hash it
    try:
        return Path(server.socket_path("served_probe:main", "served_probe:warm"))
    finally:
        sys.path.remove(str(PROBE.parent))


def _probe(*wrapper: str, status: int = 0, extra_groups: list[int] | None = None) -> dict[str, Any]:
    """Runs the probe's client under ``wrapper``; its own state, whether it was served, and
    the state of the process that ran the command."""
    env = {**os.environ, "PYTHONPATH": str(PROBE.parent)}  # the server imports the probe
    done = subprocess.run(
        [*wrapper, sys.executable, str(PROBE), str(status)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        extra_groups=extra_groups,
    )
    assert done.returncode == status, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == 2 and lines[0]["command"] == "probe" and lines[0]["arguments"] == [str(status)]
    return {"client": lines[1]["client"], "served": lines[1]["served"], "command": lines[0]["state"]}


def _cgroup_v2_child(name: str) -> Path | None:
    """A new cgroup v2 group under this process's own, or None where none can be made."""
    own = [line[3:] for line in Path("/proc/self/cgroup").read_text().splitlines() if line.startswith("0::")]
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if " - cgroup2 " in line and fields[3] == "/" and own:
            group = Path(fields[4], own[0].lstrip("/"), f"{name}-{os.getpid()}")
            try:
                group.mkdir()
            except OSError:
                return None
            return group
    return None


@pytest.fixture()
def cgroup(request: pytest.FixtureRequest) -> Iterator[Path | None]:
    """A cgroup v2 group of the test's own, removed once its processes are gone."""
    group = _cgroup_v2_child(f"llm-compiler-test-{request.node.name[:40]}".replace("[", "-").strip("]"))
    yield group
    deadline = time.monotonic() + 30
    while group is not None and group.exists():
        try:
            group.rmdir()
        except OSError:
            assert time.monotonic() < deadline, f"{group} still has processes"
            time.sleep(0.2)


def _in(group: Path) -> list[str]:
    """A wrapper that runs its command in cgroup ``group``."""
    return ["sh", "-c", f'echo $$ > "{group}/cgroup.procs" && exec "$@"', "sh"]


def _needs_root_and(*tools: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("sets groups and drops capabilities: needs root")
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"needs {tool}")


def test_a_served_command_has_its_clients_io_priority_scheduling_groups_and_cgroup(
    runtime: Path, cgroup: Path | None
) -> None:
    _needs_root_and("nice", "ionice", "chrt")
    path = _probe_socket()
    first = _probe()  # starts the server
    assert not first["served"]
    _wait_for_server(path)
    assert _log(path).count("probe: warmed") == 1
    wrapper = ["nice", "-n", "5", "ionice", "-c", "3", "chrt", "--idle", "0"]
    run = _probe(*(_in(cgroup) if cgroup else []), *wrapper, status=7, extra_groups=[4343, 4242])
    client, command = run["client"], run["command"]
    assert run["served"] and command["pid"] != client["pid"]
    assert {**command, "pid": 0} == {**client, "pid": 0}
    # The client's context is the one asked for, and not what the server itself has.
    server_side = first["client"]
    assert client["ioprio"] >> 13 == 3 != server_side["ioprio"] >> 13  # class idle
    assert client["scheduler"] == os.SCHED_IDLE != server_side["scheduler"]
    assert client["nice"] == 5 != server_side["nice"]
    assert client["groups"] == [4242, 4343] != server_side["groups"]
    if cgroup is not None:  # else this machine lets the test make no cgroup to move into
        assert f"/{cgroup.name}\n" in client["cgroup"] and client["cgroup"] != server_side["cgroup"]
    _stop(path)
    assert "served 1 commands" in _log(path) and "cannot give" not in _log(path)


@pytest.mark.parametrize("difference", ["other-groups", "a-cgroup-it-cannot-join"])
def test_a_context_the_server_cannot_give_leaves_the_command_to_its_client(
    runtime: Path, cgroup: Path | None, difference: str
) -> None:
    _needs_root_and("setpriv")
    if difference == "a-cgroup-it-cannot-join" and cgroup is None:
        pytest.skip("no cgroup v2 group can be made under this test's own")
    path = _probe_socket()
    assert not _probe(*CAPLESS)["served"]  # starts a server without capabilities
    _wait_for_server(path)
    assert _probe(*CAPLESS)["served"]  # which serves a client like the one that started it
    if difference == "other-groups":  # it cannot set groups
        run = _probe(*CAPLESS, status=5, extra_groups=[4242])
    else:  # nor write a file only root with its capabilities may write
        assert cgroup is not None
        (cgroup / "cgroup.procs").chmod(0o444)
        run = _probe(*_in(cgroup), *CAPLESS, status=5)
        assert f"/{cgroup.name}\n" in run["client"]["cgroup"]
    assert not run["served"] and run["command"] == run["client"]  # run by the client itself
    _stop(path)
    assert "served 2 commands" in _log(path) and "cannot give" in _log(path)


@pytest.mark.slow
def test_a_served_command_uses_the_predictor_and_the_cache(tmp_path: Path, runtime: Path) -> None:
    folder = _project(tmp_path / "project")
    log = tmp_path / "cc.jsonl"
    chosen = ["--predictor", "builtin:k=2", "--no-direct", "--log", str(log), "-c", "unit.c"]
    env = {**os.environ, "CPATH": str(folder / "include")}

    def cc(cache: Path, output: str, **extra: str) -> None:
        command = [sys.executable, "-m", "llm_compiler", "cc", "--cache", str(cache), *chosen, "-o", output]
        done = subprocess.run(
            command, cwd=folder, env={**env, **extra}, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"{output}: {done.stderr}"

    cc(tmp_path / "alone-cache", "alone.o", LLM_COMPILER_NO_SERVER="1")
    path = _socket()  # after the long run: the hash covers the package's files
    assert _cc(folder, "-c", "unit.c", "-o", "start.o").returncode == 0  # starts the server
    _wait_for_server(path)
    cache = tmp_path / "cache"
    cc(cache, "served.o")
    cc(cache, "again.o")
    alone, served, again = (json.loads(line) for line in log.read_text().splitlines())
    assert alone["origin"] == served["origin"] == again["origin"] == "predicted"
    assert alone["pipeline"] == served["pipeline"] and not served["cached"] and again["cached"]
    assert (
        (folder / "alone.o").read_bytes()
        == (folder / "served.o").read_bytes()
        == (folder / "again.o").read_bytes()
    )
    stats = subprocess.run(
        [sys.executable, "-m", "llm_compiler", "cc", "--cache", str(cache), "--stats"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "entries: 1," in stats and "hits: 1," in stats and "misses: 1," in stats
    _stop(path)
    assert "served 3 commands" in _log(path)  # the two compiles and --stats


def test_the_server_imports_only_the_standard_library() -> None:
    tree = ast.parse(Path(server.__file__).read_text())
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    outside = sorted(name for name in names if name.split(".")[0] not in sys.stdlib_module_names)
    assert names and outside == []


def test_a_command_longer_than_the_idle_time_leaves_the_server_serving(
    tmp_path: Path, runtime: Path, toolchain: Toolchain
) -> None:
    # The server's idle time counts from the end of its last command, not its start: a
    # compile that ran past LLM_COMPILER_SERVER_IDLE (3 s here) is not followed by an exit.
    folder = _project(tmp_path / "project")
    slow = _slow_llvm(tmp_path, toolchain.bin_dir, seconds=5)
    env = {**os.environ, "CPATH": str(folder / "include"), "LLVM_BIN": str(slow)}
    command = [sys.executable, "-m", "llm_compiler", "cc", "--cache", "off", "--predictor", "none"]

    def compile_to(output: str) -> None:
        done = subprocess.run(
            [*command, "-c", "unit.c", "-o", output], cwd=folder, env=env, capture_output=True, timeout=300
        )
        assert done.returncode == 0, done.stderr

    compile_to("unit.o")  # starts the server
    path = _socket()
    _wait_for_server(path)
    (tmp_path / "STALL").touch()
    compile_to("long.o")  # served, and longer than the idle time
    (tmp_path / "STALL").unlink()
    time.sleep(1.5)  # the server sees its command end (it looks each second), then a new one comes
    compile_to("after.o")
    _stop(path)
    assert "served 2 commands" in _log(path)
