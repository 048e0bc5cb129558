#!/usr/bin/env bash
# Runs the project's checks: set-up (with the test tools), ruff, mypy, then pytest.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k pipeline` or `-m slow`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy
.venv/bin/python -m pytest --durations=15 "$@"
