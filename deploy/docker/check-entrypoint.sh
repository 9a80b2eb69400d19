#!/usr/bin/env bash
# Checks the image's entrypoint (deploy/docker/entrypoint.sh) the way
# rocketmq-operator uses it, without a container runtime:
#
# 1. Three entrypoints run side by side as local processes, each with nothing
#    but PATH, HOME and the operator's variables (controllerDLegerGroup,
#    controllerDLegerPeers, controllerStorePath, MY_POD_NAME), the peers on
#    127.0.0.1. They must form one controller group with one leader, which
#    every node names (rmq-admin controller metadata, polled to a deadline).
# 2. Peers that do not parse, peers without the pod's own id and missing
#    variables are refused: exit status 2, a message naming the variable,
#    nothing started.
# 3. Without controller variables the NameServer starts, with the arguments
#    appended (as `docker run IMAGE --set k=v` has always done).
#
#   deploy/docker/check-entrypoint.sh
#
# The binaries come from WAYMARK_BIN_DIR (rmq-namesrv, rmq-controller,
# rmq-admin); unset, they are built with cargo (release). The image's
# /usr/local/bin is stood in for by a directory of links, first on PATH.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DEADLINE_SECONDS=${WAYMARK_CHECK_DEADLINE_SECONDS:-60}

work=$(mktemp -d "${TMPDIR:-/tmp}/waymark-entrypoint.XXXXXX")
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

fail() {
  echo "check-entrypoint: FAIL: $*" >&2
  exit 1
}

if [[ -z "${WAYMARK_BIN_DIR:-}" ]]; then
  echo "== WAYMARK_BIN_DIR unset: building the binaries (cargo build --release)"
  (cd "$ROOT" && cargo build --release --locked -p rmq-namesrv -p rmq-controller -p rmq-admin)
  WAYMARK_BIN_DIR=${CARGO_TARGET_DIR:-$ROOT/target}/release
fi
bin=$work/bin
mkdir -p "$bin"
for binary in rmq-namesrv rmq-controller rmq-admin; do
  [[ -x "$WAYMARK_BIN_DIR/$binary" ]] || fail "$WAYMARK_BIN_DIR/$binary is missing"
  ln -s "$(cd "$WAYMARK_BIN_DIR" && pwd)/$binary" "$bin/$binary"
done
ln -s "$ROOT/deploy/docker/entrypoint.sh" "$bin/waymark-entrypoint"
path=$bin:/usr/local/bin:/usr/bin:/bin

# The entrypoint logs to rocketmq-operator's log mount when it exists; here
# the logs must reach the files this script reads.
if [[ -d /root/logs && -w /root/logs ]]; then
  fail "/root/logs exists on this machine: the entrypoint would log there (the operator's log mount); remove it or run elsewhere"
fi

# A port below the kernel's ephemeral range (where outgoing connections
# never land) that no socket of any state uses now, TCP or UDP, from
# /proc/net (as crates/rmq-testkit/src/ports.rs chooses; a bind that fails
# anyway is retried with fresh ports below).
low=10000 high=32767
read -r ephemeral_low _ </proc/sys/net/ipv4/ip_local_port_range || true
if [[ "${ephemeral_low:-}" =~ ^[0-9]+$ ]] && ((ephemeral_low - 1 - low >= 2000)); then
  high=$((ephemeral_low - 1))
fi
port_taken() {
  local hex table
  printf -v hex '%04X' "$1"
  for table in /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6; do
    [[ -r "$table" ]] || continue
    if grep -q -E "^ *[0-9]+: [0-9A-F]+:$hex " "$table"; then
      return 0
    fi
  done
  return 1
}
# Sets $port; never hands out the same port twice in one run.
chosen=()
choose_port() {
  local attempt
  for ((attempt = 0; attempt < 200; attempt++)); do
    port=$((low + (RANDOM * 32768 + RANDOM) % (high - low + 1)))
    if ! port_taken "$port" && [[ " ${chosen[*]} " != *" $port "* ]]; then
      chosen+=("$port")
      return 0
    fi
  done
  fail "no free port found in $low-$high"
}

# Runs the entrypoint with only PATH and HOME, passing it the arguments.
entrypoint() {
  env -i "PATH=$path" "HOME=$HOME_DIR" waymark-entrypoint "$@"
}
HOME_DIR=$work/home
mkdir -p "$HOME_DIR"

echo "== refusals"
# expect_refusal NAME_IN_MESSAGE VAR=VALUE...: exit status 2, the message names
# the variable, and nothing was started (timeout would end a started server).
expect_refusal() {
  local needle=$1 status=0 err=$work/refusal.err
  shift
  timeout 10 env -i "PATH=$path" "HOME=$HOME_DIR" "$@" waymark-entrypoint >"$work/refusal.out" 2>"$err" || status=$?
  local message
  message=$(<"$err")
  ((status == 2)) || fail "expected exit status 2 for ${*}, got $status: $message"
  [[ "$message" == *"$needle"* ]] || fail "the refusal of ${*} does not name $needle: $message"
  echo "refused (status 2): $message"
}
good_peers='controller0-127.0.0.1:19878;controller1-127.0.0.1:19879;controller2-127.0.0.1:19880'
expect_refusal controllerDLegerPeers controllerDLegerGroup=g MY_POD_NAME=controller-0 \
  controllerStorePath="$work/x" 'controllerDLegerPeers=controller0-127.0.0.1'
expect_refusal controllerDLegerPeers controllerDLegerGroup=g MY_POD_NAME=controller-0 \
  controllerStorePath="$work/x" 'controllerDLegerPeers=controller0-127.0.0.1:notaport'
expect_refusal controllerDLegerPeers controllerDLegerGroup=g MY_POD_NAME=controller-0 \
  controllerStorePath="$work/x" 'controllerDLegerPeers=controller0127.0.0.1:9878'
expect_refusal controllerDLegerPeers controllerDLegerGroup=g MY_POD_NAME=controller-0 \
  controllerStorePath="$work/x" 'controllerDLegerPeers=controller0-a:1;controller0-b:2'
# The pod's own id (controller3) is not among the peers.
expect_refusal controller3 controllerDLegerGroup=g MY_POD_NAME=controller-3 \
  controllerStorePath="$work/x" "controllerDLegerPeers=$good_peers"
# A resource name with a dash gives ids the peers cannot carry (the id ends
# at the first dash): refused, not started with a wrong id.
expect_refusal controllerDLegerPeers controllerDLegerGroup=g MY_POD_NAME=my-ctl-0 \
  controllerStorePath="$work/x" 'controllerDLegerPeers=my-ctl0-my-ctl-0.my-ctl-svc-headless:9878'
expect_refusal MY_POD_NAME controllerDLegerGroup=g controllerStorePath="$work/x" \
  "controllerDLegerPeers=$good_peers"
expect_refusal controllerDLegerGroup MY_POD_NAME=controller-0 controllerStorePath="$work/x" \
  "controllerDLegerPeers=$good_peers"
expect_refusal controllerDLegerPeers controllerDLegerGroup=g MY_POD_NAME=controller-0 \
  controllerStorePath="$work/x"
expect_refusal WAYMARK_NAMESRV_CONFIG WAYMARK_NAMESRV_CONFIG="$work/missing.properties"
[[ ! -e "$work/x" ]] || fail "a refused start created its store $work/x"

echo "== without controller variables: the NameServer, arguments appended"
status=0
entrypoint -p >"$work/namesrv.out" 2>"$work/namesrv.err" || status=$?
((status == 0)) || fail "waymark-entrypoint -p exited $status: $(<"$work/namesrv.err")"
printed=$(<"$work/namesrv.out")
[[ "$printed" == *$'\nlistenPort=9876'* && "$printed" == *"enableControllerInNamesrv="* ]] ||
  fail "waymark-entrypoint -p did not print rmq-namesrv's configuration"
echo "rmq-namesrv -p ran through the entrypoint"

echo "== three controllers from the operator's variables"
# start_group: three entrypoints on fresh ports; sets ports, pids, logs.
start_group() {
  ports=()
  local i
  for i in 0 1 2; do
    choose_port
    ports+=("$port")
  done
  peers="controller0-127.0.0.1:${ports[0]};controller1-127.0.0.1:${ports[1]};controller2-127.0.0.1:${ports[2]}"
  addrs="127.0.0.1:${ports[0]};127.0.0.1:${ports[1]};127.0.0.1:${ports[2]}"
  group_pids=()
  for i in 0 1 2; do
    rm -rf "$work/store-$i"
    env -i "PATH=$path" "HOME=$HOME_DIR" \
      controllerDLegerGroup=ControllerGroup-controller \
      "controllerDLegerPeers=$peers" \
      "controllerStorePath=$work/store-$i" \
      "MY_POD_NAME=controller-$i" \
      waymark-entrypoint >"$work/controller-$i.out" 2>"$work/controller-$i.err" &
    group_pids+=("$!")
    pids+=("$!")
  done
}
stop_group() {
  local pid
  for pid in "${group_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}

# One leader: every node answers metadata, all name the same leader id and
# address, and exactly one says it is the leader, the node at that address.
one_leader() {
  local table status=0
  table=$("$bin/rmq-admin" --timeout-ms 1000 controller -a "$addrs" metadata 2>/dev/null) || status=$?
  ((status == 0)) || return 1
  awk -v want=3 '
    $1 == "#Controller" { next }
    NF >= 6 { rows++; ids[$3]++; addrs[$4]++; if ($5 == "true") { leaders++; self = $1 } ; leader = $4 }
    END {
      n_ids = 0; for (k in ids) n_ids++
      n_addrs = 0; for (k in addrs) n_addrs++
      exit !(rows == want && n_ids == 1 && n_addrs == 1 && leaders == 1 && self == leader)
    }' <<<"$table" || return 1
  echo "$table"
}

started=$SECONDS
formed=0
for attempt in 1 2 3; do
  start_group
  deadline=$((SECONDS + DEADLINE_SECONDS))
  retry=0
  while ((SECONDS < deadline)); do
    if table=$(one_leader); then
      formed=1
      break
    fi
    for i in 0 1 2; do
      if ! kill -0 "${group_pids[$i]}" 2>/dev/null; then
        log=$(<"$work/controller-$i.err")
        if [[ "$log" == *"Address already in use"* || "$log" == *"address already in use"* ]]; then
          echo "controller-$i could not bind port ${ports[$i]} (taken meanwhile): trying fresh ports"
          retry=1
          break 2
        fi
        fail "controller-$i exited: $log"
      fi
    done
    sleep 0.2
  done
  if ((formed || !retry)); then
    break
  fi
  stop_group
done
if ((formed == 0)); then
  for i in 0 1 2; do
    echo "--- controller-$i stderr" >&2
    cat "$work/controller-$i.err" >&2 || true
  done
  fail "the three controllers did not form one group with one leader within ${DEADLINE_SECONDS}s"
fi
echo "$table"
echo "one group, one leader, after $((SECONDS - started))s"

for i in 0 1 2; do
  first=$(head -n 1 "$work/controller-$i.err")
  [[ "$first" == "waymark-entrypoint: starting controller controller$i of group ControllerGroup-controller"* ]] ||
    fail "controller-$i did not start as controller$i: $first"
  [[ -f "$HOME_DIR/controller-controller$i.properties" ]] || fail "no $HOME_DIR/controller-controller$i.properties"
  [[ -f "$work/store-$i/raft.redb" ]] || fail "controller-$i keeps no Raft store in its controllerStorePath"
done
echo "each node: its own id (the pod name without dashes), its properties file in HOME, its store in controllerStorePath"
echo "check-entrypoint: OK"
