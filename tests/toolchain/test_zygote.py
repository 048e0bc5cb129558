"""The zygote with real LLVM and real processes: its children give the bytes opt | llc
give, the same bytes for the same request however many came before, and a child that
crashes or hangs fails its own request only; ``llm-compiler cc`` through the compile
server compiles with it and writes the object it writes without the server."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_compiler.cli.main import SERVED_ENTRY, SERVER_PRELOAD
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.engines import Engine, SubprocessEngine, ZygoteEngine
from llm_compiler.core.program import Program
from llm_compiler.driver import server
from llm_compiler.errors import CommandFailed, CompileTimeout, ToolchainError
from llm_compiler.toolchain import zygote
from llm_compiler.toolchain.llvm import Toolchain
from tests.conftest import EXAMPLE_FILES

LISTS = (
    "default<Oz>",
    "function(sroa),function(instcombine<no-verify-fixpoint>)",
    "function(sroa,gvn,simplifycfg)",
)


def _large_source(functions: int = 400) -> str:
    """A C unit whose -O3 takes well over a tenth of a second."""
    body = [
        f"int f{n}(int *a, int count) {{ int s = {n}; for (int i = 0; i < count; ++i) "
        f"{{ s += a[i] * {n + 3} ^ (s >> 3); if (s > {1000 + n}) a[i] = s - i; }} return s; }}"
        for n in range(functions)
    ]
    return "\n".join(body) + "\n"


@pytest.fixture(scope="module")
def started(toolchain: Toolchain) -> Iterator[zygote.Started]:
    running = zygote.start(toolchain)
    yield running
    running.stop()


@pytest.fixture()
def named(started: zygote.Started, monkeypatch: pytest.MonkeyPatch) -> zygote.Started:
    monkeypatch.setenv(zygote.ENVIRONMENT, started.path)
    return started


@pytest.fixture(scope="module")
def large(toolchain: Toolchain, tmp_path_factory: pytest.TempPathFactory) -> Program:
    with Compiler(toolchain, engine="subprocess") as compiler:
        source = tmp_path_factory.mktemp("large") / "large.c"
        source.write_text(_large_source())
        return compiler.load(source)


def _children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


def test_the_zygote_gives_the_bytes_of_opt_and_llc(toolchain: Toolchain, named: zygote.Started) -> None:
    with (
        Compiler(toolchain, engine="subprocess") as processes,
        Compiler(toolchain, engine="zygote") as forked,
    ):
        assert forked.engine is Engine.ZYGOTE and named.path in forked.engine_note
        for path in EXAMPLE_FILES:
            program = processes.load(path)
            for text in (*LISTS, None):
                passes = None if text is None else processes.passes(text)
                expected = processes.compile(program, passes, outputs=("ir", "obj", "asm"))
                got = forked.compile(program, passes, outputs=("ir", "obj", "asm"))
                assert got.obj == expected.obj and got.obj
                assert got.ir == expected.ir and got.assembly == expected.assembly
                assert got.measurement == expected.measurement
            counted = forked.count(program, processes.passes(LISTS[1]))
            assert counted == processes.count(program, processes.passes(LISTS[1]))


def test_the_same_request_gives_the_same_bytes_after_a_hundred_others(
    toolchain: Toolchain, named: zygote.Started
) -> None:
    with Compiler(toolchain, engine="zygote") as forked:
        programs = [forked.load(path) for path in EXAMPLE_FILES]
        passes = forked.passes("function(sroa,newgvn,instcombine<no-verify-fixpoint>),default<Oz>")
        first = forked.compile(programs[0], passes, outputs=("ir", "obj"), fresh=True)
        again = forked.compile(programs[0], passes, outputs=("ir", "obj"), fresh=True)
        assert (again.ir, again.obj) == (first.ir, first.obj)
        for index in range(100):
            others = forked.passes(LISTS[index % len(LISTS)])
            forked.compile(programs[1 + index % (len(programs) - 1)], others, fresh=True)
        later = forked.compile(programs[0], passes, outputs=("ir", "obj"), fresh=True)
        assert (later.ir, later.obj) == (first.ir, first.obj)
    served = Path(named.path).with_name("zygote.log").read_text()
    assert served.count(" compile ") >= 103  # each compile was a child of the zygote


def test_another_zygote_gives_the_same_bytes(toolchain: Toolchain, started: zygote.Started) -> None:
    other = zygote.start(toolchain)
    try:
        programs = [Compiler(toolchain, engine="subprocess").load(path) for path in EXAMPLE_FILES[:3]]
        for program in programs:
            message = ("compile", program.ir.encode(), "function(sroa,newgvn),default<Oz>", True, 60.0)
            answers = [
                zygote.Zygote(z.path).request(message, timeout=60, subject=program.name)
                for z in (started, other)
            ]
            assert answers[0] == answers[1] and answers[0][2]
    finally:
        other.stop()


def test_a_crashed_child_fails_its_request_only(
    toolchain: Toolchain, named: zygote.Started, large: Program
) -> None:
    client = zygote.Zygote(named.path)
    killed: list[int] = []

    def kill_the_child() -> None:
        deadline = time.monotonic() + 30
        while not killed and time.monotonic() < deadline:
            log = Path(named.path).parent / "zygote.log"
            for child in _children(named.process.pid):
                if f"{child} compile" not in (log.read_text() if log.exists() else ""):
                    continue  # not compiling yet: wait until its request is read
                # LLVM's handler prints its stack dump on the first and lets the second
                # take the default action, as a fault that recurs does.
                os.kill(child, signal.SIGSEGV)
                time.sleep(0.2)
                os.kill(child, signal.SIGSEGV)
                killed.append(child)
            time.sleep(0.005)

    killer = threading.Thread(target=kill_the_child)
    killer.start()
    with pytest.raises(CommandFailed) as caught:
        client.request(
            ("compile", large.ir.encode(), "default<O3>", False, 60.0), timeout=60, subject="large.c"
        )
    killer.join()
    assert killed and f"zygote child {killed[0]}" in str(caught.value)
    assert not isinstance(caught.value, CompileTimeout)
    assert "died without an answer" in str(caught.value)
    assert "PLEASE submit a bug report" in caught.value.stderr  # LLVM's crash handler spoke
    assert named.process.poll() is None
    assert client.identity() == (str(toolchain.bin_dir), toolchain.version, zygote.run_context())


def test_a_hung_child_is_killed_after_the_timeout(
    toolchain: Toolchain, named: zygote.Started, large: Program
) -> None:
    with Compiler(toolchain, engine="zygote", timeout=0.05) as forked:
        started = time.monotonic()
        with pytest.raises(CompileTimeout) as caught:
            forked.compile(large, forked.passes("default<O3>"), fresh=True)
        assert time.monotonic() - started < 5
    found = re.search(r"zygote child (\d+)", str(caught.value))
    assert found is not None
    child = int(found.group(1))
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{child}").exists()
    assert named.process.poll() is None and _children(named.process.pid) == []
    with Compiler(toolchain, engine="zygote") as forked:
        assert forked.measure(large, forked.passes("default<Oz>")).binary_size > 0


def test_a_command_that_runs_elsewhere_does_not_use_the_zygote(
    toolchain: Toolchain, named: zygote.Started
) -> None:
    """A build under another nice level (or cgroup, policy, processors) compiles with
    processes of its own context, not with children of the zygote's."""
    probe = (
        "import sys; from llm_compiler.toolchain import zygote; "
        "from llm_compiler.toolchain.llvm import Toolchain; from pathlib import Path; "
        f"print(zygote.find(Toolchain(Path({str(toolchain.bin_dir)!r}), {toolchain.version!r})) is not None)"
    )
    here = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    niced = subprocess.run(
        ["nice", "-n", "3", sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert (here.stdout.strip(), niced.stdout.strip()) == ("True", "False")


def test_llvm_errors_are_command_failures(named: zygote.Started) -> None:
    client = zygote.Zygote(named.path)
    with pytest.raises(CommandFailed) as caught:
        client.request(
            ("compile", b"define i32 @f( {", "default<Oz>", False, 30.0), timeout=30, subject="bad.ll"
        )
    assert caught.value.returncode == 1 and "LLVM rejected bad.ll" in str(caught.value)


def test_no_zygote_is_no_zygote_engine(
    toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(zygote.ENVIRONMENT, str(tmp_path / "none.sock"))
    assert zygote.find(toolchain) is None
    with pytest.raises(ToolchainError):
        Compiler(toolchain, engine="zygote")
    other = Toolchain(toolchain.bin_dir, "0.0.1")
    monkeypatch.delenv(zygote.ENVIRONMENT)
    assert zygote.find(other) is None


def test_the_zygote_ends_with_its_starter(toolchain: Toolchain) -> None:
    running = zygote.start(toolchain)
    os.close(running.lifeline)
    assert running.process.wait(timeout=30) == 0
    assert not Path(running.path).exists()


# Through the compile server -----------------------------------------------------


def _cc(folder: Path, *arguments: str, **environment: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "llm_compiler", "cc", "--cache", "off", "--predictor", "none"]
    return subprocess.run(
        [*command, *arguments],
        cwd=folder,
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_cc_through_the_server_compiles_with_the_zygote(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("run")))
    monkeypatch.setenv("LLM_COMPILER_SERVER_IDLE", "3")
    monkeypatch.delenv("LLM_COMPILER_NO_SERVER", raising=False)
    monkeypatch.delenv(zygote.ENVIRONMENT, raising=False)
    (tmp_path / "unit.c").write_text((EXAMPLE_FILES[0]).read_text())
    alone = _cc(tmp_path, "-O2", "-c", "unit.c", "-o", "alone.o", LLM_COMPILER_NO_SERVER="1")
    assert alone.returncode == 0, alone.stderr
    path = Path(server.socket_path(SERVED_ENTRY, SERVER_PRELOAD))
    first = _cc(tmp_path, "-O2", "-c", "unit.c", "-o", "first.o")  # starts the server
    assert first.returncode == 0, first.stderr
    log = Path(server.log_path(str(path)))
    deadline = time.monotonic() + 60
    while not (log.exists() and "listening" in log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    found = re.search(r"zygote of LLVM \S+ at (\S+)", log.read_text())
    assert found is not None, log.read_text()
    served_log = Path(found.group(1)).with_name("zygote.log")
    before = served_log.read_text().count(" compile ")
    served = _cc(tmp_path, "-O2", "-c", "unit.c", "-o", "served.o")
    assert served.returncode == 0, served.stderr
    used = served_log.read_text().count(" compile ")
    assert used > before  # the command's compiles were the zygote's children
    off = _cc(tmp_path, "-O2", "-c", "unit.c", "-o", "off.o", LLM_COMPILER_ZYGOTE="off")
    assert off.returncode == 0, off.stderr
    assert served_log.read_text().count(" compile ") == used  # off: opt and llc processes
    assert "served" in log.read_text() or path.exists()
    objects = {(tmp_path / name).read_bytes() for name in ("alone.o", "first.o", "served.o", "off.o")}
    assert len(objects) == 1
    deadline = time.monotonic() + 60
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not path.exists() and not served_log.exists()  # the zygote went with its server


def test_compiles_run_as_processes_once_the_zygote_is_gone(toolchain: Toolchain, tmp_path: Path) -> None:
    gone = ZygoteEngine(toolchain, 60.0, zygote=zygote.Zygote(str(tmp_path / "no-zygote.sock")))
    processes = SubprocessEngine(toolchain, 60.0)
    with Compiler(toolchain, engine="subprocess") as compiler:
        program = compiler.load(EXAMPLE_FILES[0])
    pipeline = "function(sroa),function(instcombine<no-verify-fixpoint>)"
    outputs = {"ir", "obj"}
    assert gone.compile(program, pipeline, outputs, []) == processes.compile(program, pipeline, outputs, [])
    assert gone.count(program, pipeline, []) == processes.count(program, pipeline, [])
    assert gone.lower_ir(program.ir, None, "x", []) == processes.lower_ir(program.ir, None, "x", [])
