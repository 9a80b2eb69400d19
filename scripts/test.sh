#!/usr/bin/env bash
# The project's test command: every Rust test, the dashboard in a real
# headless Chromium, the packaging check (release binaries built as the
# Dockerfile builds them, systemd units verified), a minute of fuzzing, then
# the interop tests: the Java suites, the Rust routing tests against the Java
# NameServer, the Go client.
#   ./scripts/test.sh
# (The packaging check and the fuzz targets' build go on in the background from the start;
# the fuzzing runs after the Java stages.) Set WAYMARK_SKIP_JAVA=1 to run only the Rust tests,
# the browser test, the packaging check and the fuzz smoke run; WAYMARK_SKIP_FUZZ=1,
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
packaging=1
[[ "${WAYMARK_SKIP_PACKAGING:-}" != "1" ]] || { packaging=0; printf '\n==== packaging check skipped (WAYMARK_SKIP_PACKAGING=1)\n'; }

# About a minute of fuzzing per run after a 3.5-minute build from clean (docs/fuzzing.md);
# WAYMARK_SKIP_FUZZ=1 leaves it out of a quick local run.
fuzz_smoke() {
  printf '\n==== fuzz smoke (scripts/fuzz-smoke.sh)\n'
  timed "fuzz smoke" scripts/fuzz-smoke.sh
}
fuzz=1
[[ "${WAYMARK_SKIP_FUZZ:-}" != "1" ]] || { fuzz=0; printf '\n==== fuzz smoke skipped (WAYMARK_SKIP_FUZZ=1)\n'; }

# The two release-mode builds — the packaging check (release binaries as the Dockerfile builds
# them, then the checks that run them) and the fuzz targets' sanitizer build (the longest step
# of the fuzz smoke stage) — start first and go on at the lowest priority (nice 19), one
# compiler process each, beside every stage up to the end of the Java stages. They take only
# the CPU the foreground leaves idle: the test runs of `cargo test --workspace` and the Java
# stages mostly wait on timers and brokers. Started after the Rust tests, they outlasted the
# Java stages by seven minutes. Their exit statuses are collected after the Java stages (or
# after the Rust tests when those are skipped); the fuzzing itself (timed inputs) runs after,
# alone.
builds_stage="packaging check and fuzz targets build, in the background (nice 19)"
fuzz_build_name="fuzz targets build (scripts/fuzz-smoke.sh --build-only)"
if ((packaging)); then
  printf '\n==== packaging check (packaging/check.sh), in the background at nice 19\n'
  concurrent_start "packaging check (packaging/check.sh)" \
    env CARGO_BUILD_JOBS=1 nice -n 19 packaging/check.sh
fi
if ((fuzz)); then
  printf '\n==== fuzz targets build (scripts/fuzz-smoke.sh --build-only), in the background at nice 19\n'
  concurrent_start "$fuzz_build_name" env CARGO_BUILD_JOBS=1 nice -n 19 scripts/fuzz-smoke.sh --build-only
fi

# A failing foreground stage ends the run at once, as it did before the builds moved to the
# background: they are stopped rather than waited for.
fail_now() {
  echo "scripts/test.sh: FAILED ($*)" >&2
  concurrent_kill
  exit 1
}

# The background builds' statuses, then the fuzzing.
builds_status=0 fuzz_status=0
collect_builds() {
  ((packaging || fuzz)) || return 0
  printf '\n==== packaging check and fuzz targets build (background): collecting them\n'
  concurrent_wait "$builds_stage" || builds_status=1
  if ((fuzz)); then
    if [[ " ${CONCURRENT_FAILED[*]} " == *" $fuzz_build_name "* ]]; then
      fuzz_status=1
    else
      fuzz_smoke || fuzz_status=$?
    fi
  fi
}

printf '\n==== cargo test --workspace --locked\n'
timed "cargo test --workspace" cargo test --workspace --locked || fail_now "cargo test --workspace"

if [[ "${WAYMARK_SKIP_BROWSER:-}" == "1" ]]; then
  printf '\n==== dashboard browser test skipped (WAYMARK_SKIP_BROWSER=1)\n'
else
  "$ROOT/interop/run-browser.sh" || fail_now "interop/run-browser.sh"
fi

java_status=0
if [[ "${WAYMARK_SKIP_JAVA:-}" == "1" ]]; then
  printf '\n==== Java interop tests skipped (WAYMARK_SKIP_JAVA=1)\n'
else
  "$ROOT/interop/run-java.sh" || java_status=$?
fi
collect_builds
if ((java_status != 0 || builds_status != 0 || fuzz_status != 0)); then
  echo "scripts/test.sh: FAILED (interop/run-java.sh exit status $java_status, background builds ${CONCURRENT_FAILED[*]:-passed}, fuzz smoke $fuzz_status)" >&2
  exit 1
fi
[[ "${WAYMARK_SKIP_JAVA:-}" == "1" ]] && exit 0
"$ROOT/interop/run-rust-vs-java.sh"
"$ROOT/interop/run-go.sh"
