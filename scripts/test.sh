#!/usr/bin/env bash
# The project's test command: every Rust test, the dashboard in a real
# headless Chromium, the packaging check (release binaries built as the
# Dockerfile builds them, systemd units verified), a minute of fuzzing, then
# the interop tests: the Java suites, the Rust routing tests against the Java
# NameServer, the Go client.
#   ./scripts/test.sh
# (The fuzz targets are built in the background of the Java stages and fuzzed
# after them.) Set WAYMARK_SKIP_JAVA=1 to run only the Rust tests, the browser test, the
# packaging check and the fuzz smoke run; WAYMARK_SKIP_FUZZ=1,
# WAYMARK_SKIP_BROWSER=1 and WAYMARK_SKIP_PACKAGING=1 leave those out. Ends with
# the duration of every stage (under .ci/run, .ci/run prints that table).
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

if [[ "${WAYMARK_SKIP_BROWSER:-}" == "1" ]]; then
  printf '\n==== dashboard browser test skipped (WAYMARK_SKIP_BROWSER=1)\n'
else
  "$ROOT/interop/run-browser.sh"
fi

if [[ "${WAYMARK_SKIP_PACKAGING:-}" == "1" ]]; then
  printf '\n==== packaging check skipped (WAYMARK_SKIP_PACKAGING=1)\n'
else
  printf '\n==== packaging check (packaging/check.sh)\n'
  timed "packaging check" packaging/check.sh
fi

# About a minute of fuzzing per run after a 3.5-minute build from clean (docs/fuzzing.md);
# WAYMARK_SKIP_FUZZ=1 leaves it out of a quick local run.
fuzz_smoke() {
  printf '\n==== fuzz smoke (scripts/fuzz-smoke.sh)\n'
  timed "fuzz smoke" scripts/fuzz-smoke.sh
}
fuzz=1
[[ "${WAYMARK_SKIP_FUZZ:-}" != "1" ]] || { fuzz=0; printf '\n==== fuzz smoke skipped (WAYMARK_SKIP_FUZZ=1)\n'; }

if [[ "${WAYMARK_SKIP_JAVA:-}" == "1" ]]; then
  ((fuzz == 0)) || fuzz_smoke
  printf '\n==== Java interop tests skipped (WAYMARK_SKIP_JAVA=1)\n'
  exit 0
fi

# The Java stages mostly wait on brokers: the fuzz targets' sanitizer build (the longest
# step of the fuzz smoke stage) goes on beside them at the lowest priority (nice 19), so
# it takes only the CPU they leave idle. Its exit status is collected after them; the
# fuzzing itself (timed inputs) runs after, alone.
fuzz_build_stage="fuzz targets build, beside the Java stages (nice 19)"
if ((fuzz)); then
  printf '\n==== fuzz targets build (scripts/fuzz-smoke.sh --build-only), in the background at nice 19\n'
  concurrent_start "$fuzz_build_stage" nice -n 19 scripts/fuzz-smoke.sh --build-only
fi
java_status=0
"$ROOT/interop/run-java.sh" || java_status=$?
fuzz_status=0
if ((fuzz)); then
  printf '\n==== fuzz targets build (background): collecting it\n'
  if concurrent_wait "$fuzz_build_stage"; then
    fuzz_smoke || fuzz_status=$?
  else
    fuzz_status=1
  fi
fi
if ((java_status != 0 || fuzz_status != 0)); then
  echo "scripts/test.sh: FAILED (interop/run-java.sh exit status $java_status, fuzz smoke $fuzz_status)" >&2
  exit 1
fi
"$ROOT/interop/run-rust-vs-java.sh"
"$ROOT/interop/run-go.sh"
