#!/usr/bin/env bash
# Runs the Rust integration tests of the routing libraries (rmq-broker-client,
# rmq-route-client, rmq-broker-sim) against the Java NameServer instead of
# Waymark's: the same tests, the NameServer under test chosen by
# WAYMARK_JAVA_NAMESRV_CLASSPATH (see crates/rmq-testkit).
#
#   interop/run-rust-vs-java.sh
#
# Builds the Java class path of interop/java (profile WAYMARK_JAVA_PROFILE,
# default rmq5 = RocketMQ 5.5.1), then `cargo test --locked` of the test
# targets that start a NameServer. Tests of Waymark-only behaviour inside them
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
run() {
  local package=$1
  shift
  local args=(-p "$package")
  for target in "$@"; do args+=(--test "$target"); done
  banner "cargo test --locked ${args[*]} (Java NameServer)"
  local test_started=$SECONDS
  timed "Rust vs Java: cargo test -p $package" cargo test --locked "${args[@]}" \
    || fail "cargo test -p $package"
  echo "$package: passed in $((SECONDS - test_started)) s"
}
run rmq-broker-client address_service heartbeat namesrv_failures need_register register_bodies \
  register_master_slave unregister controller_ids controller_failover controller_group controller_expiry
run rmq-route-client namesrv_failover route_fetch route_watch route_push
run rmq-admin route_watch
run rmq-broker-sim lifecycle sim_once sim_routes sim_controller

echo "interop/rust-vs-java: PASSED (profile $profile, $((SECONDS - started)) s)"
