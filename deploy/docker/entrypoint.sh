#!/usr/bin/env bash
# The Waymark image's entrypoint (installed as /usr/local/bin/waymark-entrypoint).
#
# Without controller variables it starts the NameServer, as the image always
# has:
#
#   rmq-namesrv -c "${WAYMARK_NAMESRV_CONFIG:-/etc/waymark/namesrv.properties}" [ARGS...]
#
# (no -c when the default file does not exist), so `docker run IMAGE --set k=v`
# keeps appending options.
#
# With the variables Apache rocketmq-operator gives its controller pods
# (pkg/controller/controller/dledger_controller.go, getENV) it starts
# rmq-controller with the meaning the Java image's runserver.sh gives them:
#
#   controllerDLegerGroup   the group                   -> controllerDLegerGroup
#   controllerDLegerPeers   id-host:port;id-host:port   -> controllerDLegerPeers
#   MY_POD_NAME             the pod's name; without its
#                           dashes it is this node's id -> controllerDLegerSelfId
#                           (controller-0 -> controller0, as `tr -d -` in
#                           the Java image)
#   controllerStorePath     the Raft store's directory  -> controllerStorePath
#
# controllerDLegerSelfId is taken as it is when MY_POD_NAME is not set (the
# Java script does the same). ARGS are appended to rmq-controller's command
# line (--set k=v for any other controller key).
#
# Waymark's own variables, all optional:
#
#   WAYMARK_CONF_DIR   where the controller's properties file is kept (one
#                      file per node id, controller-<id>.properties; it is the
#                      -c file, so UPDATE_CONTROLLER_CONFIG persists there and
#                      a restart keeps what it changed). Default: $HOME.
#   WAYMARK_LOG_DIR    log directory (--log-dir). Unset: the operator's log
#                      mount, /root/logs, when it is a writable directory,
#                      else standard error. Set but empty: standard error. Set
#                      to a directory that cannot be created or written: the
#                      start fails, naming it.
#   WAYMARK_HTTP_ADDR  the controller's httpListenAddr (probes, /metrics),
#                      e.g. 0.0.0.0:9879. Unset: rmq-controller's default
#                      (127.0.0.1:9879); empty: no HTTP port.
#
# A controller variable that is missing or does not parse, or peers that do
# not list this pod's own id, stop the start with exit status 2 and a line
# naming the variable; nothing is started.
set -euo pipefail

# Where rocketmq-operator mounts the log volume of its pods
# (pkg/constants/constants.go, LogMountPath).
readonly OPERATOR_LOG_DIR=/root/logs

fail() {
  echo "waymark-entrypoint: $*" >&2
  exit 2
}

note() {
  echo "waymark-entrypoint: $*" >&2
}

log_args=()
if [[ -v WAYMARK_LOG_DIR ]]; then
  if [[ -n "$WAYMARK_LOG_DIR" ]]; then
    mkdir -p -- "$WAYMARK_LOG_DIR" 2>/dev/null || fail "WAYMARK_LOG_DIR=$WAYMARK_LOG_DIR: cannot create the directory"
    [[ -w "$WAYMARK_LOG_DIR" ]] || fail "WAYMARK_LOG_DIR=$WAYMARK_LOG_DIR: the directory is not writable"
    log_args=(--log-dir "$WAYMARK_LOG_DIR")
  fi
elif [[ -d "$OPERATOR_LOG_DIR" && -w "$OPERATOR_LOG_DIR" ]]; then
  log_args=(--log-dir "$OPERATOR_LOG_DIR")
fi
if ((${#log_args[@]})); then
  log_where="${log_args[1]}"
else
  log_where="standard error"
fi

controller_mode=0
for name in controllerDLegerGroup controllerDLegerPeers controllerStorePath; do
  if [[ -n "${!name:-}" ]]; then
    controller_mode=1
  fi
done

if ((controller_mode == 0)); then
  config=${WAYMARK_NAMESRV_CONFIG:-/etc/waymark/namesrv.properties}
  config_args=()
  if [[ -f "$config" ]]; then
    config_args=(-c "$config")
  elif [[ -v WAYMARK_NAMESRV_CONFIG ]]; then
    fail "WAYMARK_NAMESRV_CONFIG=$WAYMARK_NAMESRV_CONFIG: no such file"
  fi
  note "starting the NameServer (${config_args[1]:-no configuration file}), logging to $log_where"
  exec rmq-namesrv "${config_args[@]}" "${log_args[@]}" "$@"
fi

group=${controllerDLegerGroup:-}
peers=${controllerDLegerPeers:-}
[[ -n "$group" ]] || fail "controllerDLegerGroup is not set (the controller group's name)"
[[ -n "$peers" ]] || fail "controllerDLegerPeers is not set (id-host:port;id-host:port;...)"
[[ "$group" != *[[:cntrl:]]* ]] || fail "controllerDLegerGroup holds a control character"

# This node's id: the pod name without its dashes (the Java image's
# `echo "$MY_POD_NAME" | tr -d -`), which is how the operator names the
# peers (<name><i>-<name>-<i>.<headless service>:9878).
if [[ -n "${MY_POD_NAME:-}" ]]; then
  self_id=${MY_POD_NAME//-/}
  self_from="MY_POD_NAME=$MY_POD_NAME"
elif [[ -n "${controllerDLegerSelfId:-}" ]]; then
  self_id=$controllerDLegerSelfId
  self_from="controllerDLegerSelfId"
else
  fail "MY_POD_NAME is not set: this node's id is the pod name without its dashes (or set controllerDLegerSelfId)"
fi

# The peers, checked here so that a bad value names the operator's variable
# (the id is what precedes the first dash, as Java's DLedger reads it).
ids=()
IFS=';' read -r -a entries <<<"$peers"
for raw in "${entries[@]}"; do
  entry=${raw#"${raw%%[![:space:]]*}"}
  entry=${entry%"${entry##*[![:space:]]}"}
  [[ -n "$entry" ]] || continue
  [[ "$entry" == *-* ]] || fail "controllerDLegerPeers: \"$entry\" is not id-host:port"
  id=${entry%%-*}
  address=${entry#*-}
  host=${address%:*}
  port=${address##*:}
  if [[ -z "$id" || "$address" != *:* || -z "$host" || ! "$port" =~ ^[0-9]{1,5}$ ]] || ((10#$port < 1 || 10#$port > 65535)); then
    fail "controllerDLegerPeers: \"$entry\" is not id-host:port (a peer id holds no dash; the port is 1-65535)"
  fi
  for seen in "${ids[@]}"; do
    [[ "$seen" != "$id" ]] || fail "controllerDLegerPeers: peer id $id is listed twice"
  done
  ids+=("$id")
done
((${#ids[@]} > 0)) || fail "controllerDLegerPeers: \"$peers\" lists no peer"
found=0
for id in "${ids[@]}"; do
  [[ "$id" != "$self_id" ]] || found=1
done
((found)) || fail "controllerDLegerPeers does not list this node's id $self_id (from $self_from); its ids are ${ids[*]}"

conf_dir=${WAYMARK_CONF_DIR:-${HOME:-}}
[[ -n "$conf_dir" ]] || fail "neither WAYMARK_CONF_DIR nor HOME is set: the controller's properties file needs a writable directory"
mkdir -p -- "$conf_dir" 2>/dev/null || fail "${WAYMARK_CONF_DIR:+WAYMARK_CONF_DIR=}$conf_dir: cannot create the directory"
conf_file=$conf_dir/controller-$self_id.properties
if [[ ! -e "$conf_file" ]]; then
  # Kept across restarts: it is also where UPDATE_CONTROLLER_CONFIG
  # persists. The group, peers, id and store come from the environment on
  # every start (--set below wins over the file).
  printf '# rmq-controller %s of group %s: runtime configuration updates (UPDATE_CONTROLLER_CONFIG) are kept here.\n' \
    "$self_id" "$group" >"$conf_file" 2>/dev/null || fail "cannot write $conf_file (WAYMARK_CONF_DIR or HOME must be writable)"
fi

args=(-c "$conf_file"
  --set "controllerDLegerGroup=$group"
  --set "controllerDLegerPeers=$peers"
  --set "controllerDLegerSelfId=$self_id")
if [[ -v controllerStorePath ]]; then
  # Empty keeps Java's meaning: $HOME/DLedgerController.
  args+=(--set "controllerStorePath=$controllerStorePath")
fi
if [[ -v WAYMARK_HTTP_ADDR ]]; then
  args+=(--set "httpListenAddr=$WAYMARK_HTTP_ADDR")
fi
note "starting controller $self_id of group $group (peers $peers), store ${controllerStorePath:-\$HOME/DLedgerController}, configuration $conf_file, logging to $log_where"
exec rmq-controller "${args[@]}" "${log_args[@]}" "$@"
