#!/usr/bin/env bash
# Runs the Rust integration tests of the routing libraries (rmq-broker-client,
# rmq-route-client, rmq-broker-sim) against the Java NameServer instead of
# Waymark's: the same tests, the NameServer under test chosen by
# WAYMARK_JAVA_NAMESRV_CLASSPATH (see crates/rmq-testkit).
#
#   interop/run-rust-vs-java.sh
#
# Builds the Java class path of interop/java (profile WAYMARK_JAVA_PROFILE,
# default rmq5 = RocketMQ 5.5.1), then `cargo test --workspace --test ...` of
# the test targets that start a NameServer (by name, so that nothing is
# compiled again after `cargo test --workspace`; see scripts/lib/cargo.sh). Tests of Waymark-only behaviour inside them
# still run against Waymark. Needs cargo, Java 17+ and Maven 3.6+.
# The last line is the one-line result.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
profile=${WAYMARK_JAVA_PROFILE:-rmq5}
started=$SECONDS

banner() { printf '\n==== %s\n' "$*"; }
# shellcheck source=../scripts/lib/stages.sh
. "$ROOT/scripts/lib/stages.sh"
fail() { echo "interop/rust-vs-java: FAILED ($1) after $((SECONDS - started)) s" >&2; exit 1; }

banner "Java NameServer class path (mvn -P $profile test-compile in interop/java)"
# sed reads to the end, so the pipeline's status (pipefail) is Maven's.
build_classpath() {
  mvn -B -q -ntp -Dstyle.color=never -f "$ROOT/interop/java/pom.xml" -P "$profile" test-compile 2>&1 \
    | sed -e 's/\x1b\[[0-9;]*m//g'
}
timed "Rust vs Java: Java NameServer class path" build_classpath || fail "mvn test-compile"
classpath="$ROOT/interop/java/target/$profile/classpath.txt"
[[ -s "$classpath" ]] || fail "no $classpath"
export WAYMARK_JAVA_NAMESRV_CLASSPATH=$classpath

cd "$ROOT"
# The test targets of one group, picked by name across the workspace (--workspace, never
# -p: the build `cargo test --workspace` made, nothing compiled again; scripts/lib/cargo.sh).
# A name runs in every package that has a test target of that name.
run() {
  local group=$1
  shift
  local args=(--locked --workspace)
  for target in "$@"; do args+=(--test "$target"); done
  banner "cargo test ${args[*]} ($group, Java NameServer)"
  local test_started=$SECONDS
  timed "Rust vs Java: cargo test, $group" cargo test "${args[@]}" \
    || fail "cargo test, $group"
  echo "$group: passed in $((SECONDS - test_started)) s"
}
# namesrv_failures also names a test target of rmq-admin (a NameServer-less one), which
# runs with them.
run rmq-broker-client address_service heartbeat namesrv_failures need_register register_bodies \
  register_master_slave unregister controller_ids controller_failover controller_group controller_expiry
# route_watch is a test target of rmq-route-client and of rmq-admin: both run.
run "rmq-route-client and rmq-admin" namesrv_failover route_fetch route_watch route_push
run rmq-broker-sim lifecycle sim_once sim_routes sim_controller

echo "interop/rust-vs-java: PASSED (profile $profile, $((SECONDS - started)) s)"
