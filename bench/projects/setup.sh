#!/usr/bin/env bash
# Installs what the real-project benchmark needs beyond scripts/setup.sh: the tools the
# projects' own build systems call (autoreconf and libtool for libyaml, expat and Lua,
# readline for Lua's interpreter, dpkg-architecture for its header), lld for the
# `clang -Oz -flto` mode, GCC (gcc, g++, gcc-ar and its kin) for the `gcc -Os` modes, and
# meson + ninja (serd) into the virtual environment.
#   bash scripts/setup.sh && bash bench/projects/setup.sh
# Idempotent: a second run installs nothing. apt-get source's deb-src entries are added
# by the benchmark itself when it fetches a package (llm_compiler.corpus.debian).
set -euo pipefail
cd "$(dirname "$0")/../.."

[[ -x .venv/bin/python ]] || { echo "bench setup: run scripts/setup.sh first (no .venv)" >&2; exit 1; }
sudo_cmd=()
if [[ "$(id -u)" -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "bench setup: need root or sudo to install packages" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
missing=()
need() {
  local package=$1
  shift
  "$@" >/dev/null 2>&1 || missing+=("$package")
}
need autoconf command -v autoconf
need automake command -v automake
need libtool command -v libtoolize
need make command -v make
need gcc sh -c 'command -v gcc && command -v gcc-ar'
need g++ command -v g++
need cmake command -v cmake
need pkg-config command -v pkg-config
need dpkg-dev command -v dpkg-architecture
need libreadline-dev test -f /usr/include/readline/readline.h
llvm_bin=${LLVM_BIN:-/usr/lib/llvm-19/bin}
major=$("$llvm_bin/opt" --version 2>/dev/null | sed -n 's/.*LLVM version \([0-9][0-9]*\).*/\1/p' | head -n 1)
[[ -n "$major" ]] || { echo "bench setup: no LLVM in $llvm_bin (set LLVM_BIN)" >&2; exit 1; }
need "lld-$major" test -x "$llvm_bin/ld.lld"
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "bench setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
.venv/bin/python -m pip install -q meson ninja
echo "bench setup: ready (LLVM $major in $llvm_bin)"
