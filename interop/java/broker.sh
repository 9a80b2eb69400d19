#!/usr/bin/env bash
# Starts one real Apache RocketMQ broker (in-process BrokerController of the chosen
# release, small temporary store) for tools outside the Maven project, e.g. the Go
# interop module. Prints "BROKER READY <addr>" on stdout once every NameServer lists it;
# stops cleanly (UNREGISTER_BROKER, then shutdown) on SIGTERM or when its stdin closes.
#
#   interop/java/broker.sh [--profile rmq5|rmq53|rmq4] --namesrv 127.0.0.1:9876 \
#       [--cluster C] [--name B] [--id N] [--port P] [--store DIR] [--ignore-stdin] [key=value ...]
#
# The class path comes from interop/java/target/<profile>/classpath.txt, which Maven
# writes during `mvn -P <profile> test-compile`; it is built here when missing.
# JVM options: WAYMARK_BROKER_JAVA_OPTS (default -Xmx512m). Logs go to
# WAYMARK_BROKER_HOME (default: a new temporary directory) as RocketMQ's ${user.home}.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
profile=rmq5
if [[ "${1:-}" == "--profile" ]]; then
  profile=${2:?--profile needs a value}
  shift 2
fi
CP_FILE="$HERE/target/$profile/classpath.txt"
if [[ ! -s "$CP_FILE" ]]; then
  mvn -B -q -ntp -Dstyle.color=never -f "$HERE/pom.xml" -P "$profile" test-compile >&2
fi
home=${WAYMARK_BROKER_HOME:-$(mktemp -d "${TMPDIR:-/tmp}/waymark-broker-home.XXXXXX")}
# exec: the JVM gets this script's pid, so SIGTERM to it reaches the broker's shutdown hook.
exec java ${WAYMARK_BROKER_JAVA_OPTS:--Xmx512m} -XX:MaxDirectMemorySize=256m \
  --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
  --add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED \
  "-Duser.home=$home" "-Drocketmq.home.dir=$home" \
  -cp "$(cat "$CP_FILE")" dev.waymark.interop.harness.BrokerLauncher "$@"
