"""The ``slow`` mark means something: a plain ``pytest`` leaves slow tests out, the test command runs them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SLOW_TEST = "test_tuned_results_are_used_and_never_larger_than_oz"


def collected(*arguments: str) -> list[str]:
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *arguments]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode in (0, 5), result.stdout + result.stderr  # 5: every test deselected
    return [line for line in result.stdout.splitlines() if "::" in line]


def test_a_plain_run_deselects_slow_tests_and_the_test_command_selects_them() -> None:
    plain = collected("tests/driver/test_cc.py")
    assert plain and not any(SLOW_TEST in line for line in plain)
    assert any(SLOW_TEST in line for line in collected("tests/driver/test_cc.py", "-m", "slow"))
    # The test command's own selection (scripts/test.sh) names no `slow` and so runs them.
    script = (ROOT / "scripts" / "test.sh").read_text()
    selections = re.findall(r'-m "([^"]+)"', script)
    assert selections and all("slow" not in selection for selection in selections)
    command_run = collected("tests/driver/test_cc.py", "-m", selections[0])
    assert any(SLOW_TEST in line for line in command_run)
