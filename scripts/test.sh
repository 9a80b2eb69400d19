#!/usr/bin/env bash
# The project's test command: every Rust test, a minute of fuzzing, then the
# interop tests: the Java suites, the Rust routing tests against the Java
# NameServer, the Go client.
#   ./scripts/test.sh
# Set WAYMARK_SKIP_JAVA=1 to run only the Rust tests and the fuzz smoke run,
# WAYMARK_SKIP_FUZZ=1 to leave out the fuzz smoke run. Ends with the duration of
# every stage (under .ci/run, .ci/run prints that table).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# shellcheck source=lib/stages.sh
. scripts/lib/stages.sh
if stage_log_own; then
  trap 'print_stage_table; rm -f "$WAYMARK_STAGE_LOG"' EXIT
fi

printf '\n==== cargo test --workspace --locked\n'
timed "cargo test --workspace" cargo test --workspace --locked

# About a minute of fuzzing per run after a 3.5-minute build from clean (docs/fuzzing.md);
# WAYMARK_SKIP_FUZZ=1 leaves it out of a quick local run.
if [[ "${WAYMARK_SKIP_FUZZ:-}" == "1" ]]; then
  printf '\n==== fuzz smoke skipped (WAYMARK_SKIP_FUZZ=1)\n'
else
  printf '\n==== fuzz smoke (scripts/fuzz-smoke.sh)\n'
  timed "fuzz smoke" scripts/fuzz-smoke.sh
fi

if [[ "${WAYMARK_SKIP_JAVA:-}" == "1" ]]; then
  printf '\n==== Java interop tests skipped (WAYMARK_SKIP_JAVA=1)\n'
  exit 0
fi
"$ROOT/interop/run-java.sh"
"$ROOT/interop/run-rust-vs-java.sh"
"$ROOT/interop/run-go.sh"
