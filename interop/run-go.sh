#!/usr/bin/env bash
# Runs the Go client interop tests (interop/go) against this checkout: the real
# rocketmq-client-go with Waymark as its NameServer, and a real Java broker.
#
#   interop/run-go.sh
#
# Fetches the Go modules, builds rmq-namesrv and the Java broker launcher (profile
# WAYMARK_JAVA_PROFILE, default rmq5), then runs `go test ./...` in interop/go under a
# timeout (WAYMARK_GO_TIMEOUT seconds, default 110, for the test binary; the whole step, compiling
# included, is cut off 120 s after that). Needs Go, cargo, Java 17+ and Maven 3.6+.
# The last line is the one-line result.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO_DIR="$ROOT/interop/go"
TEST_TIMEOUT=${WAYMARK_GO_TIMEOUT:-110}
started=$SECONDS

banner() { printf '\n==== %s\n' "$*"; }
# shellcheck source=../scripts/lib/stages.sh
. "$ROOT/scripts/lib/stages.sh"
# shellcheck source=../scripts/lib/cargo.sh
. "$ROOT/scripts/lib/cargo.sh"
fail() { echo "interop/go: FAILED ($1) after $((SECONDS - started)) s" >&2; exit 1; }

banner "Go modules (go mod download)"
timed "Go: module download" go -C "$GO_DIR" mod download || fail "go mod download"

banner "rmq-namesrv (cargo test --workspace --no-run, scripts/lib/cargo.sh)"
timed "Go: rmq-namesrv build" workspace_build || fail "cargo build"
WAYMARK_NAMESRV_BIN=$(workspace_bin rmq-namesrv)
export WAYMARK_NAMESRV_BIN
[[ -x "$WAYMARK_NAMESRV_BIN" ]] || fail "no binary at $WAYMARK_NAMESRV_BIN"

profile=${WAYMARK_JAVA_PROFILE:-rmq5}
banner "Java broker launcher (mvn -P $profile test-compile in interop/java)"
# Writes interop/java/target/<profile>/classpath.txt, which interop/java/broker.sh uses
# (interop/java/README.md, "Broker launcher").
# sed reads to the end, so the pipeline's status (pipefail) is Maven's.
build_launcher() {
  mvn -B -q -ntp -Dstyle.color=never -f "$ROOT/interop/java/pom.xml" -P "$profile" test-compile 2>&1 \
    | sed -e 's/\x1b\[[0-9;]*m//g'
}
timed "Go: Java broker launcher build" build_launcher || fail "mvn test-compile"
[[ -s "$ROOT/interop/java/target/$profile/classpath.txt" ]] || fail "no interop/java/target/$profile/classpath.txt"
export WAYMARK_JAVA_PROFILE=$profile WAYMARK_BROKER_SCRIPT="$ROOT/interop/java/broker.sh"

banner "go test ./... (interop/go, timeout ${TEST_TIMEOUT}s)"
export WAYMARK_INTEROP_REQUIRE=1
test_started=$SECONDS
# -count=1: the result depends on the NameServer and broker binaries, which Go's test
# cache does not know about.
if timed "Go: go test ./... (rocketmq-client-go)" timeout --kill-after=10s "$((TEST_TIMEOUT + 120))s" \
    go -C "$GO_DIR" test -count=1 -timeout "${TEST_TIMEOUT}s" ./...; then
  echo "interop/go: PASSED (go test $((SECONDS - test_started)) s, total $((SECONDS - started)) s)"
else
  fail "go test"
fi
