#!/usr/bin/env bash
# Prints the machine and the versions of the tools the test suite uses (the
# first part of .ci/run); exits 1 only when a required tool (cargo, java, mvn)
# is missing.
#
#   scripts/tool-versions.sh
#
# Each tool's output is captured whole before it is cut to one line: a reader
# that stops early (`mvn -v | head -n 1`) kills the writer with SIGPIPE, and
# under `pipefail` that failed whole CI runs by chance. scripts/ci-selftest.sh
# runs this script 50 times in a row to keep it that way.
set -euo pipefail

# The first line of $1 without ANSI colour codes (Maven 3.8 colours its banner).
first_line() {
  local line=${1%%$'\n'*}
  sed -e 's/\x1b\[[0-9;]*m//g' <<<"$line"
}

uname -srm
if [[ -r /etc/os-release ]]; then
  # shellcheck disable=SC1091
  . /etc/os-release
  echo "${PRETTY_NAME:-unknown OS}"
fi
echo "cores: $(nproc)"

for tool in cargo rustc java mvn go; do
  if ! command -v "$tool" >/dev/null; then
    echo "$tool: not installed"
    continue
  fi
  case "$tool" in
    java) query=(java -version) ;;
    mvn) query=(mvn -v) ;;
    go) query=(go version) ;;
    *) query=("$tool" --version) ;;
  esac
  # java prints its version on stderr; Maven may print JVM warnings there first.
  if [[ "$tool" == mvn ]]; then
    status=0 && output=$("${query[@]}" 2>/dev/null) || status=$?
  else
    status=0 && output=$("${query[@]}" 2>&1) || status=$?
  fi
  if ((status == 0)); then
    first_line "$output"
  else
    echo "$tool: '${query[*]}' failed with exit code $status: $(first_line "$output")"
  fi
done

missing=()
for tool in cargo java mvn; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]} > 0)); then
  echo "required tool(s) missing: ${missing[*]}" >&2
  exit 1
fi
