#!/usr/bin/env bash
# What CI checks of the packaging (the Docker image itself needs a Docker
# daemon, which CI machines do not have):
#
# 1. The systemd units pass `systemd-analyze verify` (the systemd package is
#    installed when missing; CI runs as root on a fresh Debian machine).
# 2. packaging/build-binaries.sh, the Dockerfile's build step, builds the
#    release binaries; each answers --version, and rmq-namesrv and
#    rmq-controller read the example configurations in conf/.
# 3. With those binaries: the image's entrypoint as rocketmq-operator runs it
#    (deploy/docker/check-entrypoint.sh), the Helm chart linted, rendered and
#    its pods run as processes (deploy/helm/check.sh; helm is built from its
#    Go module beside the release build, deploy/helm/install-helm.sh), and the
#    Grafana dashboard and Prometheus rules (deploy/monitoring/check.sh).
#
#   packaging/check.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
work=$(mktemp -d "${TMPDIR:-/tmp}/waymark-packaging.XXXXXX")
# shellcheck source=../scripts/lib/stages.sh
. scripts/lib/stages.sh
helm_pid=
trap '[[ -z "$helm_pid" ]] || kill_tree "$helm_pid"; rm -rf "$work"' EXIT

# helm's build (minutes of Go compiling on a fresh machine) goes on beside the
# release build; its output is shown when the chart check needs it.
deploy/helm/install-helm.sh >"$work/helm-path" 2>"$work/helm-install.log" &
helm_pid=$!

if ! command -v systemd-analyze >/dev/null; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q systemd
fi

echo "== building the release binaries as the Dockerfile does"
# Under CI the release build's target directory (about 1.5 GB) goes as soon as
# the binaries are installed: this check runs beside the Java stages, whose
# brokers refuse writes once the disk is 90 % full. Elsewhere it stays under
# target/packaging so that a second run compiles nothing.
if [[ "${CI:-}" == "true" && -z "${WAYMARK_PACKAGING_TARGET_DIR:-}" ]]; then
  WAYMARK_PACKAGING_TARGET_DIR=$work/target packaging/build-binaries.sh "$work/install"
  rm -rf "$work/target"
else
  packaging/build-binaries.sh "$work/install"
fi
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

echo "== helm (built beside the release build)"
helm_status=0
wait "$helm_pid" || helm_status=$?
helm_pid=
cat "$work/helm-install.log"
((helm_status == 0)) || { echo "deploy/helm/install-helm.sh failed ($helm_status)" >&2; exit 1; }
helm_bin=$(<"$work/helm-path")

echo "== the image's entrypoint as rocketmq-operator runs it"
WAYMARK_BIN_DIR=$bin deploy/docker/check-entrypoint.sh
echo "== the Helm chart"
PATH="$(dirname "$helm_bin"):$PATH" WAYMARK_BIN_DIR=$bin deploy/helm/check.sh
echo "== the Grafana dashboard and the Prometheus rules"
WAYMARK_BIN_DIR=$bin deploy/monitoring/check.sh
