#!/usr/bin/env bash
# Builds the release binaries that packages ship (rmq-namesrv, rmq-controller,
# rmq-admin) into OUT/bin, with `cargo install --locked` as README tells
# operators to. The Dockerfile runs this script, and so does CI
# (packaging/check.sh): what CI checks is what the image ships.
#
#   packaging/build-binaries.sh OUT
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
out=$1
# Without the line tables the release profile keeps for profiling, and
# without debug info: a tenth of the size. Symbols stay, so a panic's
# backtrace still names functions.
export CARGO_PROFILE_RELEASE_DEBUG=false
export CARGO_PROFILE_RELEASE_STRIP=debuginfo
# One target directory for the three installs, so that the dependencies they
# share are compiled once rather than in a fresh temporary directory each
# (cargo install's default); under target/ so the Dockerfile's cache mount
# keeps it between image builds.
target_dir=${WAYMARK_PACKAGING_TARGET_DIR:-$ROOT/target/packaging}
for crate in rmq-namesrv rmq-controller rmq-admin; do
  cargo install --locked --quiet --force --path "$ROOT/crates/$crate" --root "$out" \
    --target-dir "$target_dir"
done
ls -l "$out/bin"
