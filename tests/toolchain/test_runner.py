"""The subprocess runner: outputs, failures, crashes, timeouts that kill the whole group."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from llm_compiler.errors import CommandFailed, CompileTimeout, ToolchainError
from llm_compiler.toolchain import runner
from llm_compiler.toolchain.runner import ADDR_NO_RANDOMIZE, fixed_layout, run_command


def test_returns_outputs_and_duration() -> None:
    result = run_command(["sh", "-c", "cat; echo err >&2"], timeout=10, input=b"hello")
    assert result.stdout == b"hello"
    assert result.stderr_text == "err\n"
    assert result.returncode == 0
    assert 0 < result.seconds < 10
    slow = run_command(["sleep", "0.3"], timeout=10)
    assert 0.3 <= slow.seconds < 10


def test_failure_carries_command_status_and_stderr() -> None:
    with pytest.raises(CommandFailed) as caught:
        run_command(["sh", "-c", "echo 'error: broken thing' >&2; exit 3"], timeout=10, subject="input.ll")
    error = caught.value
    assert error.returncode == 3
    assert "broken thing" in error.stderr
    assert error.command == ["sh", "-c", "echo 'error: broken thing' >&2; exit 3"]
    assert "exit status 3" in str(error) and "input.ll" in str(error) and "broken thing" in str(error)
    assert not error.crashed


def test_crash_by_signal_is_named() -> None:
    with pytest.raises(CommandFailed) as caught:
        run_command(["sh", "-c", "kill -SEGV $$"], timeout=10)
    assert caught.value.crashed
    assert caught.value.signal_name == "SIGSEGV"
    assert "SIGSEGV" in str(caught.value)


def test_check_false_returns_failures() -> None:
    assert run_command(["sh", "-c", "exit 4"], timeout=10, check=False).returncode == 4


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"
    started = time.monotonic()
    with pytest.raises(CompileTimeout) as caught:
        run_command(["sh", "-c", f"sleep 60 & echo $! > {marker}; wait"], timeout=0.5, subject="slow.ll")
    assert time.monotonic() - started < 10
    assert isinstance(caught.value, TimeoutError) and isinstance(caught.value, CommandFailed)
    assert caught.value.timeout == 0.5 and "slow.ll" in str(caught.value)
    grandchild = int(marker.read_text())
    for _ in range(50):
        if not _alive(grandchild):
            break
        time.sleep(0.05)
    assert not _alive(grandchild), "the grandchild survived the timeout"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split()[2] != "Z"


def test_missing_program_is_a_toolchain_error() -> None:
    with pytest.raises(ToolchainError, match="no-such-program"):
        run_command(["/nonexistent/no-such-program"], timeout=5)


def test_fixed_layout_runs_without_address_randomization() -> None:
    if runner._setarch() is None:
        pytest.skip("setarch -R is not allowed here (seccomp): commands run as given")
    argv = fixed_layout(["cat", "/proc/self/personality"])
    assert argv[1:] == ["-R", "cat", "/proc/self/personality"] and argv[0].endswith("setarch")
    personality = int(run_command(argv, timeout=30).stdout_text, 16)
    assert personality & ADDR_NO_RANDOMIZE
    plain = int(run_command(["cat", "/proc/self/personality"], timeout=30).stdout_text, 16)
    assert not plain & ADDR_NO_RANDOMIZE


def test_fixed_layout_without_setarch_runs_the_command_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    runner._setarch.cache_clear()
    monkeypatch.setattr(runner.shutil, "which", lambda name: None)
    try:
        assert fixed_layout(["opt", Path("x.ll")]) == ["opt", "x.ll"]
    finally:
        runner._setarch.cache_clear()
