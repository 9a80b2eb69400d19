#!/usr/bin/env bash
# Prints the path of a helm to check the chart with: the one on PATH, else
# helm v4.3.2, built once with `go install` from its Go module (helm ships
# only as a Go program here: no release download is reachable) into
# ${XDG_CACHE_HOME:-$HOME/.cache}/waymark-tools. The build takes about five
# minutes of CPU; GOFLAGS (default -p=1, one compiler) sets its parallelism.
#
#   deploy/helm/install-helm.sh        the path on stdout, the build's output on stderr
#
# packaging/check.sh starts it beside the release build, deploy/helm/check.sh
# runs it when it has no helm.
set -euo pipefail

HELM_VERSION=v4.3.2

if command -v helm >/dev/null; then
  command -v helm
  exit 0
fi
cache=${XDG_CACHE_HOME:-$HOME/.cache}/waymark-tools/helm-$HELM_VERSION
if [[ ! -x "$cache/helm" ]]; then
  command -v go >/dev/null || { echo "helm is not on PATH and go is not installed to build it" >&2; exit 1; }
  echo "building helm $HELM_VERSION into $cache (once; a few minutes)" >&2
  started=$SECONDS
  mkdir -p "$cache"
  # go install writes the binary last, so an interrupted build leaves none.
  # The build's module and compile caches (3.2 GB at their peak in a build
  # from empty, of no use once the binary exists) are private to it and
  # removed after, so that the build leaves only the binary on a disk the
  # Java brokers beside it need free.
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/waymark-helm-build.XXXXXX")
  trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
  GOBIN=$cache GOCACHE=$scratch/cache GOMODCACHE=$scratch/mod GOFLAGS="${GOFLAGS:--p=1} -modcacherw" \
    nice -n 10 go install "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" >&2
  echo "built in $((SECONDS - started))s" >&2
fi
echo "$cache/helm"
