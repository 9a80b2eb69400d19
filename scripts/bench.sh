#!/usr/bin/env bash
# Runs every rmq-bench scenario on every peer -- Waymark, the Java NameServer,
# the rocketmq-namesrv Rust port and the ceiling server; for the controller
# scenario Waymark's and the Java controller -- in one invocation and rewrites
# the generated sections of docs/benchmarks.md (plus docs/bench-*.png) of the
# scenarios that ran. Raw results: .bench/bench-results.json. About 26 minutes
# (the hostile scenario, peers under attack, takes about 6 of them; route-sweep,
# route queries offered at 10k to 300k/s until each server saturates, about 3:
# at most 7 rates x 6 s per peer, fewer for a server that saturates early).
#
# The docs are rewritten only from a clean work tree (`git status --porcelain`
# empty; .bench/ and the target dirs are ignored by git) and only if no kept
# measurement was disturbed (other processes above 15 % of a CPU). Otherwise
# the results are still written, rmq-bench exits non-zero and the docs stay as
# they are, unless told otherwise: --allow-dirty, --allow-disturbed (then the
# generated sections say so at the top). Each section names the commit measured.
#
# route-change-latency (a broker coming and going until a client sees it:
# Waymark's route push against polling every 30 s) is not in the default set
# of a full run: each polling client takes about 3 minutes, some 10 minutes
# with every peer. Name it to run it; it rewrites only its own section. A
# --quick run, a harness check, runs every scenario.
#
#   scripts/bench.sh                      the full run (measure on an idle machine)
#   scripts/bench.sh --quick --allow-dirty   a few seconds per scenario: harness check only
#   scripts/bench.sh --peers waymark,java --scenarios route-sweep
#   scripts/bench.sh --peers waymark,java --scenarios route-qps,register
#   scripts/bench.sh --peers waymark,java --scenarios controller
#   scripts/bench.sh --peers waymark,java --scenarios hostile
#   scripts/bench.sh --peers waymark,java --scenarios route-change-latency
#
# Any rmq-bench option can follow (see `rmq-bench --help`, `rmq-bench compare --help`).
# Needs cargo, Java 17+ and Maven 3.6+ (for the Java peers: the Java controller
# runs from interop/java, built with `mvn -P rmq5 test-compile`), taskset and
# chrt (util-linux) for pinning. The Rust port is installed into .bench/rust-port
# on first use (cargo install, a few minutes).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target-bench}

cargo build --release -q -p rmq-bench -p rmq-namesrv -p rmq-controller

PORT="$ROOT/.bench/rust-port/bin/rocketmq-namesrv-rust"
if [[ ! -x "$PORT" && " $* " != *" --peers "* ]]; then
  echo "installing the Rust port (rocketmq-namesrv 1.0.0) into .bench/rust-port ..." >&2
  cargo install rocketmq-namesrv --version 1.0.0 --locked --root "$ROOT/.bench/rust-port"
fi

# The hostile scenario's connection flood holds 5,000 connections: the
# generator (and the servers it starts) need that many descriptors.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

read -r load1 _ < /proc/loadavg
echo "load average now: $load1 (measure when it is well below 1)" >&2

exec "$CARGO_TARGET_DIR/release/rmq-bench" compare \
  --command-line "scripts/bench.sh${*:+ $*}" "$@"
