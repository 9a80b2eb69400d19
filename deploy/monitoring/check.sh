#!/usr/bin/env bash
# Checks deploy/monitoring:
#   1. the generated files (PrometheusRule, rule tests, dashboard) match their
#      sources (tools/generate.py --check);
#   2. promtool check rules and promtool test rules (every alert fires where it
#      should and stays silent where it should not);
#   3. every metric name and label the rules and the dashboard use is one the
#      servers export: two NameServers with the NameServer cluster on, a broker
#      registered with one of them (relayed to the other), route queries, and a
#      one-node controller group with a broker replica joined to it are
#      started, and their /metrics compared with the rules and the dashboard
#      (tools/metric_check.py compare).
#
# Binaries: $WAYMARK_BIN_DIR (rmq-namesrv, rmq-controller); unset, they are
# built with cargo into ${CARGO_TARGET_DIR:-target}/release.
# promtool (Debian's prometheus package) and PyYAML (python3-yaml) are
# installed with apt-get when missing and this runs as root; when they cannot
# be had, the steps needing them are skipped, or, with CI=true, the check fails.
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
started=$(date +%s)
skipped=()

work=$(mktemp -d "${TMPDIR:-/tmp}/waymark-monitoring.XXXXXX")
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "FAIL: deploy/monitoring/check.sh line $LINENO: $BASH_COMMAND" >&2' ERR

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# Without a tool: fail under CI, else note the step as skipped.
unavailable() {
    if [[ "${CI:-}" == "true" ]]; then
        fail "$1 is needed and cannot be installed here"
    fi
    echo "SKIPPED: $2 ($1 is missing and cannot be installed here)"
    skipped+=("$2")
}

apt_updated=false
apt_install() {
    if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
        return 1
    fi
    if [[ $apt_updated == false ]]; then
        apt-get update -qq || return 1
        apt_updated=true
    fi
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@" >/dev/null
}

# --- tools -------------------------------------------------------------------

if ! command -v promtool >/dev/null; then
    echo "promtool is missing: installing Debian's prometheus package"
    apt_install prometheus || true
fi
have_promtool=false
command -v promtool >/dev/null && have_promtool=true

python=""
for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import yaml' 2>/dev/null; then
        python=$candidate
        break
    fi
done
if [[ -z $python ]]; then
    echo "PyYAML is missing: installing Debian's python3-yaml"
    if apt_install python3 python3-yaml && /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
        python=/usr/bin/python3
    fi
fi

# --- 1. generated files ------------------------------------------------------

if [[ -n $python ]]; then
    "$python" "$here/tools/generate.py" --check || fail "generated files are stale"
    echo "ok: generated files match their sources"
else
    unavailable "PyYAML (python3-yaml)" "generated files"
fi

# --- 2. promtool -------------------------------------------------------------

if [[ $have_promtool == true ]]; then
    promtool check rules "$here/prometheus/waymark-rules.yaml"
    (cd "$here/prometheus" && promtool test rules waymark-rules.test.yaml)
else
    unavailable promtool "promtool check rules and test rules"
fi

# --- 3. metric names against running servers ---------------------------------

if [[ -z $python ]]; then
    unavailable "PyYAML (python3-yaml)" "metric names against running servers"
else
    if [[ -n ${WAYMARK_BIN_DIR:-} ]]; then
        bin=$WAYMARK_BIN_DIR
    else
        echo "building rmq-namesrv and rmq-controller (set WAYMARK_BIN_DIR to use built ones)"
        (cd "$root" && cargo build --release --locked -p rmq-namesrv -p rmq-controller)
        bin=${CARGO_TARGET_DIR:-$root/target}/release
    fi
    for binary in rmq-namesrv rmq-controller; do
        [[ -x $bin/$binary ]] || fail "$bin/$binary is not an executable"
    done
    tool=("$python" "$here/tools/metric_check.py")

    # start NAME BINARY ARGS...: runs it with its output in $work/NAME.{out,err}.
    declare -A pid_of
    start() {
        local name=$1
        shift
        mkdir -p "$work/$name"
        : >"$work/$name.out"
        : >"$work/$name.err"
        "$@" >>"$work/$name.out" 2>>"$work/$name.err" &
        pids+=("$!")
        pid_of[$name]=$!
    }

    # wait_line NAME REGEX: waits up to 30 s for REGEX in NAME's stdout and
    # prints the first match's group 1 (sed -E syntax, one group).
    wait_line() {
        local name=$1 regex=$2 deadline=$((SECONDS + 30)) value pid=${pid_of[$1]}
        while ((SECONDS < deadline)); do
            value=$(sed -n -E "s|.*${regex}.*|\\1|p" "$work/$name.out")
            if [[ -n $value ]]; then
                echo "${value%%$'\n'*}"
                return 0
            fi
            if ! kill -0 "$pid" 2>/dev/null; then
                cat "$work/$name.err" >&2
                fail "$name exited before printing /$regex/"
            fi
            sleep 0.1
        done
        cat "$work/$name.err" >&2
        fail "$name printed no /$regex/ within 30 s"
    }

    namesrv() {
        local name=$1
        shift
        start "$name" "$bin/rmq-namesrv" \
            --set bindAddress=127.0.0.1 --set listenPort=0 \
            --set httpListenAddr=127.0.0.1:0 \
            --set "kvConfigPath=$work/$name/kvConfig.json" \
            --set "routeSnapshotPath=$work/$name/routes.snapshot" \
            --set clusterGossipAddr=127.0.0.1:0 --set clusterId=monitoring-check "$@"
        wait_line "$name" 'Waymark cluster gossip on .*\(bound ([0-9.]+:[0-9]+)\)' >/dev/null
    }

    namesrv a
    a_remoting=$(wait_line a 'boot success.* address ([0-9.]+:[0-9]+)')
    a_http=$(wait_line a 'Waymark HTTP listening on (http://[0-9.]+:[0-9]+)')
    a_gossip=$(wait_line a 'Waymark cluster gossip on .*\(bound ([0-9.]+:[0-9]+)\)')
    namesrv b --set "clusterSeeds=$a_gossip"
    b_remoting=$(wait_line b 'boot success.* address ([0-9.]+:[0-9]+)')
    b_http=$(wait_line b 'Waymark HTTP listening on (http://[0-9.]+:[0-9]+)')

    start controller "$bin/rmq-controller" \
        --set controllerDLegerGroup=monitoring-check \
        --set controllerDLegerPeers=n0-127.0.0.1:0 --set controllerDLegerSelfId=n0 \
        --set "controllerStorePath=$work/controller/store" \
        --set "configStorePath=$work/controller/controller.properties" \
        --set bindAddress=127.0.0.1 --set httpListenAddr=127.0.0.1:0
    c_remoting=$(wait_line controller 'boot success.* address ([0-9.]+:[0-9]+)')
    c_http=$(wait_line controller 'Waymark HTTP listening on (http://[0-9.]+:[0-9]+)')

    # A broker registers with a, keeping its connection open; b relays it.
    start broker "${tool[@]}" register "$a_remoting" 600
    wait_line broker '(registered) broker' >/dev/null
    "${tool[@]}" wait "$a_http/metrics" '^waymark_brokers 1$' 30
    "${tool[@]}" wait "$b_http/metrics" '^waymark_cluster_ready 1$' 30
    "${tool[@]}" wait "$b_http/metrics" '^waymark_cluster_brokers\{source="relayed"\} 1$' 30
    "${tool[@]}" wait "$a_http/metrics" '^waymark_cluster_digests_behind\{peer=' 30
    # Route queries (GET_ROUTEINFO_BY_TOPIC, 105) at both, and one request
    # (GET_CONTROLLER_METADATA_INFO, 1005) at the controller once it leads.
    "${tool[@]}" request "$a_remoting" 105 topic=MonitoringCheck
    "${tool[@]}" request "$b_remoting" 105 topic=MonitoringCheck
    "${tool[@]}" wait "$c_http/metrics" '^waymark_controller_is_leader 1$' 30
    "${tool[@]}" request "$c_remoting" 1005
    # A replica joins the controller: the broker-set gauges get samples.
    "${tool[@]}" join-controller "$c_remoting"
    "${tool[@]}" wait "$c_http/metrics" '^waymark_controller_broker_sets 1$' 30

    for name in a b controller; do
        url_var=${name:0:1}_http
        "${tool[@]}" scrape "${!url_var}/metrics" "$work/$name.metrics"
    done
    "${tool[@]}" compare "$here/prometheus/waymark-rules.yaml" "$here/grafana/waymark.json" \
        "$work/a.metrics" "$work/b.metrics" "$work/controller.metrics" ||
        fail "the rules or the dashboard use metrics or labels the servers do not export"
    echo "ok: metric names and labels checked against running servers"
fi

if ((${#skipped[@]} > 0)); then
    echo "deploy/monitoring checked in $(($(date +%s) - started)) s, SKIPPED: ${skipped[*]}"
else
    echo "deploy/monitoring checked in $(($(date +%s) - started)) s"
fi
