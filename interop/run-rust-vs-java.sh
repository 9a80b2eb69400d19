#!/usr/bin/env bash
# Runs the Rust integration tests of the routing libraries (rmq-broker-client,
# rmq-route-client, rmq-broker-sim) and rmq-admin's `route watch` against the
# Java NameServer instead of Waymark's: the same tests, the NameServer under
# test chosen by WAYMARK_JAVA_NAMESRV_CLASSPATH (see crates/rmq-testkit).
#
#   interop/run-rust-vs-java.sh
#
# Builds the Java class path of interop/java (profile WAYMARK_JAVA_PROFILE,
# default rmq5 = RocketMQ 5.5.1), then `cargo test --workspace --test <crate>
# -- <module>::...`: the modules of each crate's one integration-test target
# that start a NameServer (picked by name, so that nothing is compiled again
# after `cargo test --workspace`; see scripts/lib/cargo.sh). Tests of
# Waymark-only behaviour inside them still run against Waymark. Needs cargo,
# Java 17+ and Maven 3.6+.
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
# The modules of one crate's integration-test target (tests/<target>/main.rs), the target
# picked by name across the workspace (--workspace, never -p: the build `cargo test
# --workspace` made, nothing compiled again; scripts/lib/cargo.sh). Each module is a
# filter `<module>::`, which matches the tests of that module only.
run() {
  local group=$1 target=$2
  shift 2
  local args=(--locked --workspace --test "$target" --)
  for module in "$@"; do args+=("$module::"); done
  banner "cargo test ${args[*]} ($group, Java NameServer)"
  local test_started=$SECONDS
  timed "Rust vs Java: cargo test, $group" cargo test "${args[@]}" \
    || fail "cargo test, $group"
  echo "$group: passed in $((SECONDS - test_started)) s"
}
run rmq-broker-client broker_client address_service heartbeat namesrv_failures need_register \
  register_bodies register_master_slave unregister controller_ids controller_failover \
  controller_group controller_expiry
run rmq-route-client route_client namesrv_failover route_fetch route_watch route_push
# rmq-admin's route_watch starts the NameServer under test; its namesrv_failures (which ran
# here while test targets were picked by file name) always starts Waymark's.
run rmq-admin admin route_watch
run rmq-broker-sim broker_sim lifecycle sim_once sim_routes sim_controller

echo "interop/rust-vs-java: PASSED (profile $profile, $((SECONDS - started)) s)"
