#!/usr/bin/env bash
# Runs the project's checks: set-up (with the test tools), ruff, mypy, then pytest.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k pipeline` or `-m slow`.
#
# llama.cpp (the [llamacpp] extra, which the gguf: and openai: model tests need) is
# compiled from source unless pip has a wheel of it cached: several minutes on 2 cores.
# It builds in the background at low priority while the checks and the other tests run;
# the tests marked llamacpp run once it is installed, and a failed build fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev

LLAMACPP_SPEC="llama-cpp-python[server]>=0.3.8"  # the [llamacpp] extra of pyproject.toml
status=.venv/llamacpp-install
rm -f "$status.rc"
(
  if .venv/bin/python -c "import llama_cpp, llama_cpp.server" 2>/dev/null; then
    echo 0 >"$status.rc"
  else
    # mtmd (multimodal) is not used here; leaving it out halves the build.
    nice -n 19 env CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}" CMAKE_BUILD_PARALLEL_LEVEL=2 \
      .venv/bin/python -m pip install -q "$LLAMACPP_SPEC" >"$status.log" 2>&1
    echo $? >"$status.rc"
  fi
) &
builder=$!
llamacpp_ready() {
  wait "$builder" || true
  if [[ "$(cat "$status.rc" 2>/dev/null)" != 0 ]]; then
    echo "test: installing $LLAMACPP_SPEC failed; the end of $status.log:" >&2
    tail -n 30 "$status.log" >&2
    return 1
  fi
}

.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy
if [[ $# -gt 0 ]]; then
  llamacpp_ready
  exec .venv/bin/python -m pytest --durations=15 "$@"
fi
status_code=0
# Tests marked debian fetch a Debian source package with apt (bzip2, built by its own
# Makefile through `llm-compiler cc`); the other network tests stay opt-in (-m network).
# Two workers (pytest-xdist), one test file each at a time so that a file's fixtures are
# built once: the tests spend much of their time waiting on one subprocess, and the
# second worker fills the second core. PYTEST_WORKERS=0 runs them in this process.
.venv/bin/python -m pytest --durations=15 -n "${PYTEST_WORKERS:-2}" --dist loadfile \
  -m "(not network or debian) and not gpu and not llamacpp" || status_code=$?
llamacpp_ready
.venv/bin/python -m pytest --durations=5 -m "llamacpp and not network and not gpu" || status_code=$?
exit "$status_code"
