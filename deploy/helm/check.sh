#!/usr/bin/env bash
# Checks the Helm chart deploy/helm/waymark without a Kubernetes cluster:
#
# 1. helm lint --strict with the default values and with
#    values-production.yaml (values.schema.json included), and two values
#    the schema must refuse;
# 2. helm template with each, into the work directory;
# 3. the pods those manifests describe, run as local processes with the real
#    binaries (deploy/helm/run_rendered.py: what it substitutes for the pod
#    network, the downward API and the volumes is in its header, and it
#    prints it for every pod): the probes' paths answer as the probes
#    expect, the NameServers form one cluster, the controllers one group
#    with one leader, and no start-up warning but the authentication notice.
#
#   deploy/helm/check.sh
#
# Needs: helm (on PATH, else built once from its Go module by
# deploy/helm/install-helm.sh, a few minutes), python3 with
# PyYAML (python3-yaml; installed with apt-get when missing and run as root),
# and the binaries: WAYMARK_BIN_DIR (rmq-namesrv, rmq-controller, rmq-admin),
# or, unset, a release build with cargo. Every missing piece is an error.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CHART=$ROOT/deploy/helm/waymark
NAMESPACE=waymark-check

work=$(mktemp -d "${TMPDIR:-/tmp}/waymark-helm.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "helm check: FAIL: $*" >&2
  exit 1
}

echo "== helm"
helm=$("$ROOT/deploy/helm/install-helm.sh")
"$helm" version

echo "== python3 with PyYAML"
if ! python3 -c 'import yaml' 2>/dev/null; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q python3-yaml
  fi
  python3 -c 'import yaml' || fail "python3 with PyYAML is needed (Debian: apt-get install python3-yaml)"
fi
python3 -c 'import sys, yaml; print("python", sys.version.split()[0], "PyYAML", yaml.__version__)'

echo "== binaries"
if [[ -z "${WAYMARK_BIN_DIR:-}" ]]; then
  echo "WAYMARK_BIN_DIR unset: building them (cargo build --release)"
  (cd "$ROOT" && cargo build --release --locked -p rmq-namesrv -p rmq-controller -p rmq-admin)
  WAYMARK_BIN_DIR=${CARGO_TARGET_DIR:-$ROOT/target}/release
fi
# Stands in for the image's /usr/local/bin: the binaries and the entrypoint
# under the names the Dockerfile gives them.
bin=$work/bin
mkdir -p "$bin"
for binary in rmq-namesrv rmq-controller rmq-admin; do
  [[ -x "$WAYMARK_BIN_DIR/$binary" ]] || fail "$WAYMARK_BIN_DIR/$binary is missing"
  ln -s "$(cd "$WAYMARK_BIN_DIR" && pwd)/$binary" "$bin/$binary"
done
ln -s "$ROOT/deploy/docker/entrypoint.sh" "$bin/waymark-entrypoint"
"$bin/rmq-namesrv" --version

echo "== helm lint"
"$helm" lint --strict "$CHART"
"$helm" lint --strict "$CHART" -f "$CHART/values-production.yaml"

echo "== values.schema.json refuses bad values"
# refused SET...: helm template must fail, naming the schema.
refused() {
  local status=0 output
  output=$("$helm" template waymark "$CHART" "$@" 2>&1) || status=$?
  ((status != 0)) || fail "helm template $* was accepted"
  [[ "$output" == *"schema"* ]] || fail "helm template $* failed, but not on the schema: $output"
  echo "refused: $*"
}
refused --set namesrv.config.listenPort=1
refused --set namesrv.replicas=0
refused --set controller.config.controllerDLegerSelfId=n0
refused --set-string $'namesrv.config.supportActingMaster=true\nlistenPort=1'

echo "== helm template"
"$helm" template waymark "$CHART" --namespace "$NAMESPACE" >"$work/default.yaml"
"$helm" template waymark "$CHART" --namespace "$NAMESPACE" \
  -f "$CHART/values-production.yaml" >"$work/production.yaml"
for values in default production; do
  kinds=$(python3 -c 'import sys, yaml; print(" ".join(sorted(d["kind"] for d in yaml.safe_load_all(open(sys.argv[1])) if d)))' "$work/$values.yaml")
  echo "$values: $kinds"
done

for values in default production; do
  echo "== the $values values' pods as local processes"
  started=$SECONDS
  python3 "$ROOT/deploy/helm/run_rendered.py" \
    --manifests "$work/$values.yaml" --namespace "$NAMESPACE" --cluster-domain cluster.local \
    --bin-dir "$bin" --dockerfile "$ROOT/Dockerfile" --work "$work/run-$values" \
    --deadline "${WAYMARK_CHECK_DEADLINE_SECONDS:-60}"
  echo "$values: $((SECONDS - started))s"
done
echo "helm check: OK"
