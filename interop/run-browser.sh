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

banner "rmq-namesrv and rmq-broker-sim (cargo build)"
cargo_flags=(-q -p rmq-namesrv -p rmq-broker-sim)
[[ "${CI:-}" == "true" ]] && cargo_flags+=(--locked)
timed "browser: binaries build" cargo build --manifest-path "$ROOT/Cargo.toml" "${cargo_flags[@]}" \
  || fail "cargo build"
target_dir=${CARGO_TARGET_DIR:-target}
[[ "$target_dir" == /* ]] || target_dir="$ROOT/$target_dir"
export WAYMARK_NAMESRV_BIN="$target_dir/debug/rmq-namesrv"
export WAYMARK_BROKER_SIM_BIN="$target_dir/debug/rmq-broker-sim"

banner "node --test (interop/browser)"
cd "$DIR"
if timed "browser: dashboard test" timeout --kill-after=10s 180s node --test; then
  echo "interop/browser: PASSED in $((SECONDS - started)) s"
else
  fail "node --test"
fi
