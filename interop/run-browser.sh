#!/usr/bin/env bash
# Runs the dashboard test (interop/browser): the real rmq-namesrv's dashboard
# in a real headless Chromium, a real rmq-broker-sim registering and leaving.
#
#   interop/run-browser.sh
#
# Installs Debian's chromium if /usr/bin/chromium is missing (CI runs as root
# on a fresh machine), installs playwright-core with `npm ci` (no browser
# download: it drives the distribution's Chromium), builds rmq-namesrv and
# rmq-broker-sim, and runs `node --test`. WAYMARK_SCREENSHOT_DIR keeps the
# screenshots. The last line is the one-line result.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR="$ROOT/interop/browser"
started=$SECONDS

banner() { printf '\n==== %s\n' "$*"; }
# shellcheck source=../scripts/lib/stages.sh
. "$ROOT/scripts/lib/stages.sh"
# shellcheck source=../scripts/lib/cargo.sh
. "$ROOT/scripts/lib/cargo.sh"
fail() { echo "interop/browser: FAILED ($1) after $((SECONDS - started)) s" >&2; exit 1; }

install_chromium() {
  if [[ -x /usr/bin/chromium ]]; then
    echo "chromium present"
    return 0
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
}
banner "Chromium (Debian's chromium package)"
timed "browser: chromium" install_chromium || fail "chromium install"
[[ -x /usr/bin/chromium ]] || fail "no /usr/bin/chromium"

banner "playwright-core (npm ci in interop/browser)"
timed "browser: npm ci" npm --prefix "$DIR" ci --no-audit --no-fund || fail "npm ci"

banner "rmq-namesrv and rmq-broker-sim (cargo test --workspace --no-run, scripts/lib/cargo.sh)"
timed "browser: binaries build" workspace_build || fail "cargo build"
WAYMARK_NAMESRV_BIN=$(workspace_bin rmq-namesrv)
WAYMARK_BROKER_SIM_BIN=$(workspace_bin rmq-broker-sim)
export WAYMARK_NAMESRV_BIN WAYMARK_BROKER_SIM_BIN

banner "node --test (interop/browser)"
cd "$DIR"
if timed "browser: dashboard test" timeout --kill-after=10s 180s node --test; then
  echo "interop/browser: PASSED in $((SECONDS - started)) s"
else
  fail "node --test"
fi
