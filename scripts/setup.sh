#!/usr/bin/env bash
# Sets up llm-compiler on Debian 12 / Ubuntu: installs Debian's LLVM 19 when no LLVM >= 17
# is found, bubblewrap and Csmith for validation, creates the virtual environment .venv
# and installs the package into it. With --dev it also installs LLVM 19 (the tests'
# reference) and, where apt offers it, LLVM 22.
#   bash scripts/setup.sh          # the package
#   bash scripts/setup.sh --dev    # the package, the test tools (pytest, hypothesis, ruff, mypy) and
#                                  # the [hf], [train], [gym] and [gym-agents] extras the model,
#                                  # training and environment tests use (torch for the CPU,
#                                  # transformers, TRL, peft, gymnasium, ir2vec, stable-baselines3)
# It is idempotent: a second run installs nothing new. Set LLVM_BIN to use another LLVM.
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[[ "${1:-}" == "--dev" ]] && extras="[dev,hf,train,gym,gym-agents]"

sudo_cmd=()
if [[ "$(id -u)" -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install packages" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
apt_updated=0
apt_update() {
  if [[ $apt_updated -eq 0 ]]; then "${sudo_cmd[@]}" apt-get update -q; apt_updated=1; fi
}
apt_install() {
  apt_update
  # scripts/fresh-check.sh reads which packages the scripts asked for.
  [[ -n "${LLM_COMPILER_APT_LOG:-}" ]] && printf '%s\n' "$@" >>"$LLM_COMPILER_APT_LOG"
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "$@"
}
installed() { dpkg-query -W -f '${Status}' "$1" 2>/dev/null | grep -q '^install ok installed'; }

llvm_major() { "$1/opt" --version 2>/dev/null | sed -n 's/.*LLVM version \([0-9][0-9]*\).*/\1/p' | head -n 1; }
have_llvm() {
  local dir major
  for dir in ${LLVM_BIN:-} /usr/lib/llvm-*/bin; do
    [[ -x "$dir/opt" && -x "$dir/llc" && -x "$dir/clang" && -x "$dir/clang++" && -x "$dir/llvm-size" ]] || continue
    major=$(llvm_major "$dir")
    [[ -n "$major" && "$major" -ge 17 ]] && { echo "setup: using LLVM $major in $dir"; return 0; }
  done
  return 1
}

# The tests' exact figures are for LLVM 19, the reference (tests/conftest.py); they cover
# LLVM 22 too where apt offers it (Debian 12's security suite does).
if [[ -n "$extras" ]]; then
  llvm_packages=()
  for package in clang-19 llvm-19 llvm-19-tools lld-19 llvm-19-dev; do
    [[ -n "${LLM_COMPILER_APT_LOG:-}" ]] && echo "$package" >>"$LLM_COMPILER_APT_LOG"
    installed "$package" || llvm_packages+=("$package")
  done
  llvm22=()
  for package in clang-22 llvm-22 llvm-22-tools lld-22 llvm-22-dev; do
    [[ -n "${LLM_COMPILER_APT_LOG:-}" ]] && echo "$package" >>"$LLM_COMPILER_APT_LOG"
    installed "$package" || llvm22+=("$package")
  done
  if [[ ${#llvm22[@]} -gt 0 ]]; then
    apt_update
    # Read the whole answer first: with pipefail, `grep -q` closing the pipe early fails it.
    policy=$(apt-cache policy clang-22 2>/dev/null || true)
    if grep -q 'Candidate: [0-9]' <<<"$policy"; then
      llvm_packages+=("${llvm22[@]}")
    else
      echo "setup: apt offers no clang-22; the LLVM 22 tests will be skipped"
    fi
  fi
  if [[ ${#llvm_packages[@]} -gt 0 ]]; then
    echo "setup: installing ${llvm_packages[*]} for the tests"
    apt_install "${llvm_packages[@]}"
  fi
fi

if ! have_llvm; then
  echo "setup: no LLVM >= 17 found; installing Debian's clang-19 llvm-19 llvm-19-tools lld-19"
  apt_install clang-19 llvm-19 llvm-19-tools lld-19
  have_llvm || { echo "setup: LLVM 19 was installed but is not usable" >&2; exit 1; }
fi

# Test programs run under bubblewrap and prlimit; Csmith makes a random-program suite;
# LLVM's C++ headers let the in-process engine generate code exactly as llc does.
missing=()
# need PACKAGE TEST...: PACKAGE is wanted, and missing when TEST fails.
need() {
  local package=$1
  shift
  [[ -n "${LLM_COMPILER_APT_LOG:-}" ]] && echo "$package" >>"$LLM_COMPILER_APT_LOG"
  "$@" >/dev/null 2>&1 || missing+=("$package")
}
has_file() { local path; for path in "$@"; do [[ -f "$path" ]] && return 0; done; return 1; }
for dir in ${LLVM_BIN:-} $(ls -d /usr/lib/llvm-*/bin 2>/dev/null | sort -V -r); do
  major=$(llvm_major "$dir")
  if [[ -x "$dir/llvm-config" && -n "$major" && "$major" -ge 17 ]]; then
    need "llvm-$major-dev" has_file "$("$dir/llvm-config" --includedir)/llvm/Target/TargetMachine.h"
    break
  fi
done
need bubblewrap command -v bwrap
need util-linux command -v prlimit
need csmith command -v csmith
need libcsmith-dev has_file /usr/include/csmith/csmith.h /usr/include/csmith-*/csmith.h
# The corpus builds source packages (apt-get source needs dpkg-source) and records
# their compile commands with bear or CMake.
need make command -v make
# Disassembly data for AArch64 compiles with clang's cross target, against Debian's
# cross C library (a native arm64 machine has its own).
if [[ "$(dpkg --print-architecture 2>/dev/null)" != arm64 ]]; then
  need libc6-dev-arm64-cross test -d /usr/aarch64-linux-gnu/include
fi
need bear command -v bear
need cmake command -v cmake
need dpkg-dev command -v dpkg-source
# GCC is the reference `evaluate --system gcc-os` and the real-project bench compare with;
# the tests also compare on a Cortex-M target (arm-none-eabi-gcc with newlib).
need gcc command -v gcc
[[ -n "$extras" ]] && need gcc-arm-none-eabi command -v arm-none-eabi-gcc
[[ -n "$extras" ]] && need libnewlib-arm-none-eabi has_file /usr/lib/arm-none-eabi/include/stdio.h
# The tests open evaluate's HTML report in a headless browser.
[[ -n "$extras" ]] && need chromium command -v chromium
# LightGBM (the predictor's training, in the dev extras) needs OpenMP's runtime.
[[ -n "$extras" ]] && need libgomp1 has_file /usr/lib/*/libgomp.so.1
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "setup: installing ${missing[*]}"
  apt_install "${missing[@]}"
fi

if ! command -v python3 >/dev/null; then
  apt_install python3
fi
if [[ ! -x .venv/bin/python ]]; then
  # Debian's python3 creates virtual environments only with python3-venv installed.
  if ! python3 -m venv .venv 2>/dev/null; then
    rm -rf .venv
    apt_install python3-venv
    python3 -m venv .venv
  fi
fi
.venv/bin/python -m pip install -q --upgrade pip
if [[ -n "$extras" ]] && ! .venv/bin/python -c "import torch" 2>/dev/null; then
  # The tests run tiny models on the CPU: take torch's CPU build where the machine has one
  # (PyPI's default torch wheel brings the CUDA libraries, several GB).
  .venv/bin/python -m pip install -q "torch==${LLM_COMPILER_TORCH_VERSION:-2.13.0}"
fi
.venv/bin/python -m pip install -q -e ".${extras}"
echo "setup: ready (.venv/bin/llm-compiler)"
