#!/usr/bin/env bash
# What CI checks of the packaging (the Docker image itself needs a Docker
# daemon, which CI machines do not have):
#
# 1. The systemd units pass `systemd-analyze verify` (the systemd package is
#    installed when missing; CI runs as root on a fresh Debian machine).
# 2. packaging/build-binaries.sh, the Dockerfile's build step, builds the
#    release binaries; each answers --version, and rmq-namesrv and
#    rmq-controller read the example configurations in conf/.
#
#   packaging/check.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
work=$(mktemp -d "${TMPDIR:-/tmp}/waymark-packaging.XXXXXX")
trap 'rm -rf "$work"' EXIT

if ! command -v systemd-analyze >/dev/null; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q systemd
fi

echo "== building the release binaries as the Dockerfile does"
packaging/build-binaries.sh "$work/install"
bin=$work/install/bin

echo "== systemd-analyze verify"
# verify wants ExecStart's binary where the unit says; the copies point at
# the binaries just built, everything else is the unit as shipped.
for unit in rmq-namesrv rmq-controller; do
  sed -e "s|/usr/local/bin/|$bin/|g" "packaging/systemd/$unit.service" >"$work/$unit.service"
  systemd-analyze verify "$work/$unit.service"
  echo "$unit.service: verified"
done

echo "== the binaries"
for binary in rmq-namesrv rmq-controller rmq-admin; do
  "$bin/$binary" --version
done
HOME=$work "$bin/rmq-namesrv" -c conf/namesrv.properties -p >"$work/namesrv.txt"
HOME=$work "$bin/rmq-controller" -c conf/controller.properties -p >"$work/controller.txt"
echo "conf/namesrv.properties and conf/controller.properties read"
