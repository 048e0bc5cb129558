#!/usr/bin/env bash
# Runs the README's two set-up commands as a new user would: in a clean clone of the
# committed HEAD in a temporary folder, with a temporary HOME and empty caches (pip's,
# XDG's, npm's, llm-compiler's), and with the apt source entries this project adds
# (deb-src, /etc/apt/sources.list.d/llm-compiler-deb-src.*) moved aside and apt's lists
# refreshed without them; they are put back, and the lists refreshed, however the run ends.
# Prints each command's time and exit status, then the Debian packages the run used that
# the scripts did not install (compared with the image's list of installed packages:
# pass it as the first argument, one `apt<TAB>NAME<TAB>VERSION` line per package).
#   bash scripts/fresh-check.sh [IMAGE_PACKAGES.txt]
# It needs root (apt) and the network (package registries). Packages the scripts install
# stay installed afterwards.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
image_list=${1:-}
[[ "$(id -u)" -eq 0 ]] || { echo "fresh-check: run as root (it moves apt entries aside)" >&2; exit 2; }

work=$(mktemp -d /tmp/llm-compiler-fresh.XXXXXX)
aside="$work/apt-aside"
mkdir -p "$aside" "$work/home" "$work/cache" "$work/data" "$work/config"
moved=()
restore() {
  if [[ ${#moved[@]} -gt 0 ]]; then
    mv "$aside"/* /etc/apt/sources.list.d/ && apt-get update -q >/dev/null 2>&1
    echo "fresh-check: put back ${moved[*]}"
  fi
}
trap restore EXIT
for path in /etc/apt/sources.list.d/llm-compiler-deb-src.sources /etc/apt/sources.list.d/llm-compiler-deb-src.list; do
  if [[ -e "$path" ]]; then
    mv "$path" "$aside/" && moved+=("$path")
  fi
done
if [[ ${#moved[@]} -gt 0 ]]; then
  echo "fresh-check: moved aside ${moved[*]}; refreshing apt's lists without them"
  apt-get update -q >/dev/null 2>&1 || { echo "fresh-check: apt-get update failed" >&2; exit 2; }
fi
if apt-cache showsrc dpkg >/dev/null 2>&1; then
  echo "fresh-check: note: apt still has source entries of the machine's own (not the project's)"
fi

git clone -q "$top" "$work/clone" || exit 2
cd "$work/clone" || exit 2
echo "fresh-check: clean clone of $(git rev-parse --short HEAD) in $work/clone"
apt_log="$work/apt-asked.txt"
: >"$apt_log"
fresh_env=(
  env -u VIRTUAL_ENV -u LLVM_BIN -u PYTHONPATH
  HOME="$work/home" XDG_CACHE_HOME="$work/cache" XDG_DATA_HOME="$work/data"
  XDG_CONFIG_HOME="$work/config" PIP_CACHE_DIR="$work/cache/pip" npm_config_cache="$work/cache/npm"
  LLM_COMPILER_APT_LOG="$apt_log"
)
# The README's two commands, exactly as it gives them (the lines of its first code block).
mapfile -t commands < <(awk '/^```bash$/ {on = 1; next} on && /^```$/ {exit} on' README.md)
[[ ${#commands[@]} -eq 2 ]] || { echo "fresh-check: README does not start with two commands" >&2; exit 2; }
status=0
for index in 0 1; do
  command=${commands[$index]}
  log="$work/command-$((index + 1)).log"
  echo "fresh-check: running \`$command\` (output in $log)"
  started=$(date +%s)
  "${fresh_env[@]}" bash -c "$command" >"$log" 2>&1
  code=$?
  seconds=$(($(date +%s) - started))
  printf 'fresh-check: command %d exited %d after %dm%02ds: %s\n' $((index + 1)) "$code" \
    $((seconds / 60)) $((seconds % 60)) "$command"
  tail -n 4 "$log" | sed 's/^/    /'
  [[ $code -eq 0 ]] || status=1
done

if [[ -n "$image_list" && -f "$image_list" ]]; then
  # Installed now, not in the image, not asked for by the scripts, and installed by hand
  # (apt-mark manual; automatic ones are dependencies of something else).
  comm -23 <(apt-mark showmanual | sort -u) \
    <(sort -u <(awk -F'\t' '$1 == "apt" {print $2}' "$image_list") "$apt_log") >"$work/unexplained.txt"
  if [[ -s "$work/unexplained.txt" ]]; then
    echo "fresh-check: Debian packages installed by hand that the image lacks and the scripts did not ask for:"
    sed 's/^/    /' "$work/unexplained.txt"
  else
    echo "fresh-check: every Debian package beyond the image's was asked for by the scripts"
  fi
else
  echo "fresh-check: no image package list given; packages installed by hand were not compared"
fi
echo "fresh-check: $([[ $status -eq 0 ]] && echo passed || echo FAILED); logs in $work"
exit "$status"
