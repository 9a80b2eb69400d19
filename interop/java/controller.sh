#!/usr/bin/env bash
# Starts one node of the real Apache RocketMQ controller (in-process ControllerManager of the
# chosen release, DLedger type) for tools outside the Maven project, e.g. failover tests that
# kill -9 controller processes. Prints "CONTROLLER READY <addr>" on stdout once the node
# serves CONTROLLER_GET_METADATA_INFO (a one-node group: once it is leader); stops on SIGTERM
# or when its stdin closes.
#
#   interop/java/controller.sh [--profile rmq5|rmq53] [--ignore-stdin] [-c FILE] [key=value ...]
#
# key=value: ControllerConfig / Netty options, e.g. controllerDLegerPeers=n0-127.0.0.1:9878;...
# controllerDLegerSelfId=n0 controllerStorePath=DIR. Without controllerDLegerPeers: a one-node
# group on a free port. The class path comes from interop/java/target/<profile>/classpath.txt
# (built here when missing). JVM options: WAYMARK_CONTROLLER_JAVA_OPTS (default -Xmx256m).
# Logs go to WAYMARK_CONTROLLER_HOME (default: a new temporary directory) as ${user.home}.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
profile=rmq5
if [[ "${1:-}" == "--profile" ]]; then
  profile=${2:?--profile needs a value}
  shift 2
fi
if [[ "$profile" == rmq4 ]]; then
  echo "controller.sh: RocketMQ 4.x has no controller" >&2
  exit 2
fi
CP_FILE="$HERE/target/$profile/classpath.txt"
if [[ ! -s "$CP_FILE" ]]; then
  mvn -B -q -ntp -Dstyle.color=never -f "$HERE/pom.xml" -P "$profile" test-compile >&2
fi
home=${WAYMARK_CONTROLLER_HOME:-$(mktemp -d "${TMPDIR:-/tmp}/waymark-controller-home.XXXXXX")}
# exec: the JVM gets this script's pid, so SIGTERM (or SIGKILL) to it reaches the controller.
exec java ${WAYMARK_CONTROLLER_JAVA_OPTS:--Xmx256m} -XX:MaxDirectMemorySize=128m \
  --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
  --add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED \
  "-Duser.home=$home" \
  -cp "$(cat "$CP_FILE")" dev.waymark.interop.harness.ControllerLauncher "$@"
