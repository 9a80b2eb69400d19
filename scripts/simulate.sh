#!/usr/bin/env bash
# Runs the controller simulation (crates/rmq-controller/tests/simulation) over
# many seeds in release mode, split into one shard per core, and prints every
# failing seed with the command that reproduces it.
#
#   scripts/simulate.sh                 10 000 seeds from seed 0
#   scripts/simulate.sh 2000 50000      2 000 seeds from seed 50 000
#
# Environment: JOBS (shards, default: the number of cores);
# WAYMARK_SIM_COMMIT_WAIT=forever makes the leader wait for every commit
# instead of answering SYSTEM_ERROR after node.rs's 5 s (the default).
# Shards run under `nice`. Exits 1 if any seed failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

SEEDS=${1:-10000}
FIRST=${2:-0}
JOBS=${JOBS:-$(nproc)}
((JOBS > SEEDS)) && JOBS=$SEEDS

build_log=$(mktemp "${TMPDIR:-/tmp}/waymark-sim-build.XXXXXX")
logs=$(mktemp -d "${TMPDIR:-/tmp}/waymark-sim.XXXXXX")
trap 'rm -rf "$build_log" "$logs"' EXIT

if ! nice cargo test --release --locked -p rmq-controller --test simulation --no-run >"$build_log" 2>&1; then
  cat "$build_log" >&2
  exit 1
fi
# "Executable tests/simulation/main.rs (target/release/deps/simulation-<hash>)"
binary=$(sed -n 's/.*Executable tests\/simulation\/main.rs (\(.*\))$/\1/p' "$build_log")
[[ "$binary" == /* ]] || binary="$ROOT/$binary"
if [[ ! -x "$binary" ]]; then
  echo "cannot find the simulation test binary in the cargo output:" >&2
  cat "$build_log" >&2
  exit 1
fi

start=$SECONDS
per=$(((SEEDS + JOBS - 1) / JOBS))
pids=()
for ((job = 0; job < JOBS; job++)); do
  first=$((FIRST + job * per))
  count=$((FIRST + SEEDS - first))
  ((count > per)) && count=$per
  ((count <= 0)) && break
  (
    cd crates/rmq-controller
    WAYMARK_SIM_FIRST=$first WAYMARK_SIM_SEEDS=$count \
      nice "$binary" seeds --exact --nocapture >"$logs/$job.log" 2>&1
  ) &
  pids+=("$!")
done

status=0
for pid in "${pids[@]}"; do
  wait "$pid" || status=1
done

printf '\n==== seeds %d..%d in %d shards, %d s wall\n' "$FIRST" "$((FIRST + SEEDS - 1))" "${#pids[@]}" "$((SECONDS - start))"
grep -h '^simulated ' "$logs"/*.log || true
failures=$(grep -h -e '^seed [0-9]* broke' -e '^reproduce: ' "$logs"/*.log || true)
if [[ -n "$failures" ]]; then
  printf '\n==== failing seeds\n%s\n' "$failures"
fi
if ((status != 0)); then
  if [[ -z "$failures" ]]; then
    echo "a shard failed without naming a seed; its output:" >&2
    cat "$logs"/*.log >&2
  fi
  exit 1
fi
echo "all seeds passed"
