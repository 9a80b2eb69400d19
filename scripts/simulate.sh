#!/usr/bin/env bash
# Runs the controller simulation (crates/rmq-controller/tests/controller/simulation,
# the module `simulation` of the crate's test target `controller`) over
# many seeds in release mode, on every core, and prints every failing seed
# with the command that reproduces it. `cargo test` runs seeds 0..999 of it
# in debug mode; this is for the tens of thousands run by hand.
#
#   scripts/simulate.sh                 10 000 seeds from seed 0
#   scripts/simulate.sh 2000 50000      2 000 seeds from seed 50 000
#
# Environment: JOBS (threads, default: the number of cores);
# WAYMARK_SIM_FLAW=<flaw> runs every seed with that deliberate defect
# (tests/controller/simulation/params.rs), to find seeds that show it. The run is
# `nice`d. Exits 1 if any seed failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

SEEDS=${1:-10000}
FIRST=${2:-0}
JOBS=${JOBS:-$(nproc)}

build_log=$(mktemp "${TMPDIR:-/tmp}/waymark-sim-build.XXXXXX")
log=$(mktemp "${TMPDIR:-/tmp}/waymark-sim.XXXXXX")
trap 'rm -f "$build_log" "$log"' EXIT

if ! nice cargo test --release --locked -p rmq-controller --test controller --no-run >"$build_log" 2>&1; then
  cat "$build_log" >&2
  exit 1
fi
# "Executable tests/controller/main.rs (target/release/deps/controller-<hash>)"
binary=$(sed -n 's/.*Executable tests\/controller\/main.rs (\(.*\))$/\1/p' "$build_log")
[[ "$binary" == /* ]] || binary="$ROOT/$binary"
if [[ ! -x "$binary" ]]; then
  echo "cannot find the simulation test binary in the cargo output:" >&2
  cat "$build_log" >&2
  exit 1
fi

start=$SECONDS
status=0
(
  cd crates/rmq-controller
  WAYMARK_SIM_FIRST=$FIRST WAYMARK_SIM_SEEDS=$SEEDS WAYMARK_SIM_THREADS=$JOBS \
    nice "$binary" simulation::seeds --exact --nocapture >"$log" 2>&1
) || status=1

printf '\n==== seeds %d..%d on %d threads, %d s wall\n' "$FIRST" "$((FIRST + SEEDS - 1))" "$JOBS" "$((SECONDS - start))"
grep -h '^simulated ' "$log" || true
failures=$(grep -h -e '^seed [0-9]* broke' -e '^reproduce: ' "$log" || true)
if [[ -n "$failures" ]]; then
  printf '\n==== failing seeds\n%s\n' "$failures"
fi
if ((status != 0)); then
  if [[ -z "$failures" ]]; then
    echo "the run failed without naming a seed; its output:" >&2
    cat "$log" >&2
  fi
  exit 1
fi
echo "all seeds passed"
