#!/usr/bin/env bash
# Runs the Java interop tests (interop/java) against this checkout.
#
#   interop/run-java.sh                  every profile: Rust-encoded frames decoded by real Java,
#                                        and (5.x) the real controller's exchanges, checked against
#                                        the committed controller vectors;
#                                        then the scenario tests (real broker, clients, mqadmin,
#                                        the differential test) once against Waymark and once
#                                        against the Java NameServer, the control
#   interop/run-java.sh --check-vectors  also regenerate the Java vectors (wire frames, bodies,
#                                        controller exchanges) into a temp dir and
#                                        fail if they differ from the committed ones (the default
#                                        when CI=true)
#   interop/run-java.sh --write-vectors  regenerate the committed vectors in place
#
# Profiles (RocketMQ releases) for the vector tests: WAYMARK_JAVA_PROFILES, default
# "rmq5 rmq53 rmq4" (5.5.1, 5.3.3, 4.9.8). Profiles for the scenario tests:
# WAYMARK_SCENARIO_PROFILES, default "rmq5 rmq4" (empty: none); NameServers they run
# against: WAYMARK_SCENARIO_NAMESRVS, default "waymark java". Then the controller scenarios
# (AutoSwitch HA: real 5.5.1 brokers in controller mode, mqadmin's controller commands, the
# live controller differential test), profile rmq5 only, once against each controller of
# WAYMARK_CONTROLLER_KINDS, default "waymark java" (empty: none): Waymark's rmq-controller,
# and Java's controller as the control. A failing scenario run does not stop the others; the
# script ends with a pass/fail matrix of every test class and exits 1 if any run failed.
#
# The runs of a profile against the two NameServers go on at the same time, and so do the
# two controller runs: their tests mostly wait on brokers, so two share the machine's cores
# with little slowing of either. The profile's classes are compiled once first, each run
# then starts surefire on them (no two Mavens compile into one target directory), its own
# report, log and home directories, its ports from its own slice of the port range
# (WAYMARK_PORTS_SLICE, see the harness's Ports), its output printed whole when it ends.
# WAYMARK_SCENARIO_CONCURRENT=0 runs them one after another instead.
# Needs cargo, Java 17+ and Maven 3.6+.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
POM="$ROOT/interop/java/pom.xml"
FRAME_DIR=crates/rmq-wire/tests/vectors
BODY_DIR=crates/rmq-protocol/tests/vectors
CONTROLLER_DIR=crates/rmq-controller/tests/vectors
PROFILES=${WAYMARK_JAVA_PROFILES:-rmq5 rmq53 rmq4}
SCENARIO_PROFILES=${WAYMARK_SCENARIO_PROFILES-rmq5 rmq4}
SCENARIO_NAMESRVS=${WAYMARK_SCENARIO_NAMESRVS:-waymark java}
CONTROLLER_KINDS=${WAYMARK_CONTROLLER_KINDS-waymark java}
CONCURRENT=${WAYMARK_SCENARIO_CONCURRENT:-1}
MVN=(mvn -B -q -ntp -Dstyle.color=never -f "$POM")

mode=run
[[ "${CI:-}" == "true" ]] && mode=check
case "${1:-}" in
  "") ;;
  --check-vectors) mode=check ;;
  --write-vectors) mode=write ;;
  *) echo "usage: $0 [--check-vectors | --write-vectors]" >&2; exit 2 ;;
esac

banner() { printf '\n==== %s\n' "$*"; }
# shellcheck source=../scripts/lib/stages.sh
. "$ROOT/scripts/lib/stages.sh"
# shellcheck source=../scripts/lib/cargo.sh
. "$ROOT/scripts/lib/cargo.sh"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/waymark-interop.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# The binaries (rmq-namesrv, rmq-admin, rmq-controller) and examples (emit_frames,
# allocate) as `cargo test --workspace` built them (scripts/lib/cargo.sh).
banner "Waymark binaries and examples (cargo test --workspace --no-run)"
timed "Waymark binaries for the Java tests" workspace_build
BIN_DIR=$(dirname "$(workspace_bin rmq-namesrv)")

banner "Rust frames for the Java decoder (example emit_frames)"
timed "Rust frames for the Java decoder" "$(workspace_example emit_frames)" "$TMP/rust-frames"

# The surefire report directory of a profile's runs against one kind of NameServer.
reports_of() {
  local version
  case "$1" in
    rmq5) version=5.5.1 ;;
    rmq53) version=5.3.3 ;;
    rmq4) version=4.9.8 ;;
    *) echo "unknown profile $1" >&2; return 1 ;;
  esac
  echo "$ROOT/interop/java/target/rocketmq-$version/surefire-reports/$2"
}

# Maven's output without colour codes: Maven 3.8's -q still prints colour resets.
# sed reads to the end, so the pipeline's status (pipefail) is Maven's.
mvn_plain() {
  "${MVN[@]}" "$@" 2>&1 | sed -e 's/\x1b\[[0-9;]*m//g'
}

# The vector and Rust-frame tests of one profile, and (5.x) the controller vectors and the
# controller harness test, which skip themselves on 4.x.
vector_run() {
  local profile=$1 reports
  local args=(-P "$profile" test "-Dwaymark.rust.frames=$TMP/rust-frames"
    '-Dtest=dev/waymark/interop/vectors/*Test.java,dev/waymark/interop/rust/*Test.java,dev/waymark/interop/harness/*Test.java,dev/waymark/interop/controller/*Test.java')
  case "$mode" in
    check) args+=("-Dwaymark.vectors.dir=$TMP/vectors") ;;
    write) args+=("-Dwaymark.vectors.write=true") ;;
  esac
  reports=$(reports_of "$profile" main) || return
  rm -rf "$reports" || return
  mvn_plain "${args[@]}"
}

# Profiles whose classes (main and test) this run has compiled.
declare -A compiled=()
for profile in $PROFILES; do
  banner "Java interop tests, profile $profile"
  start=$SECONDS
  timed "Java vectors and Rust frames, $profile" vector_run "$profile"
  compiled[$profile]=1
  echo "profile $profile passed in $((SECONDS - start)) s"
done

# The classes of a profile, compiled once before its runs start surefire on them.
compile_profile() {
  local profile=$1
  [[ -z "${compiled[$profile]:-}" ]] || return 0
  banner "Java classes, profile $profile (mvn test-compile)"
  timed "Java classes, $profile" mvn_plain -P "$profile" test-compile || return
  compiled[$profile]=1
}

# $@ in a subshell (a function that changes directory or exits).
run_in_subshell() {
  ("$@")
}

# Committed vectors against freshly generated ones (run in a subshell: it changes directory
# and exits 1 when a vector differs).
compare_vectors() {
  banner "Committed vectors against freshly generated ones"
  # The release a Java-written vector came from: its first line ("# java 5.5.1 ..." in
  # a .hex file, "java 5.5.1" in a .meta file); empty for files Java did not write.
  release_of() {
    local path=$1 first
    case "$path" in
      *.hex) first=$(head -n 1 "$path"); [[ "$first" == "# java "* ]] && { first=${first#\# java }; echo "${first%% *}"; } ;;
      *.meta) first=$(head -n 1 "$path"); [[ "$first" == "java "* ]] && echo "${first#java }" ;;
      *.json | *.bin) [[ -f "${path%.*}.meta" ]] && release_of "${path%.*}.meta" ;;
    esac
    return 0
  }

  # Same zlib stream content, different compressor build: not a vector problem.
  same_inflated() {
    command -v python3 >/dev/null || return 1
    python3 - "$1" "$2" <<'EOF'
import sys, zlib
a, b = (zlib.decompress(open(p, "rb").read()) for p in sys.argv[1:3])
sys.exit(0 if a == b else 1)
EOF
  }

  declare -A releases=()
  problems=0
  cd "$TMP/vectors" || exit 1
  # Directories this run generated into (no controller vectors without a 5.x profile).
  generated=()
  for dir in "$FRAME_DIR" "$BODY_DIR" "$CONTROLLER_DIR"; do
    [[ -d "$dir" ]] && generated+=("$dir")
  done
  while IFS= read -r rel; do
    release=$(release_of "$rel")
    [[ -n "$release" ]] && releases[$release]=1
    committed="$ROOT/$rel"
    if [[ ! -f "$committed" ]]; then
      echo "MISSING  $rel (Java generates it; run interop/run-java.sh --write-vectors and commit)"
      problems=$((problems + 1))
    elif ! cmp -s "$rel" "$committed"; then
      if [[ "$rel" == *.bin ]] && same_inflated "$rel" "$committed"; then
        echo "note     $rel: zlib bytes differ from the committed file, inflated content is equal"
      else
        echo "DIFFERS  $rel"
        # The first lines of the difference (captured whole first: a reader that stops
        # early would kill diff with SIGPIPE).
        differences=$(diff "$committed" "$rel") || true
        printf '%s\n' "$differences" | sed -e '9,$d'
        problems=$((problems + 1))
      fi
    fi
  done < <(find "${generated[@]}" -type f | sort)
  for dir in "$FRAME_DIR" "$BODY_DIR" "$CONTROLLER_DIR"; do
    [[ -d "$ROOT/$dir" ]] || continue
    while IFS= read -r committed; do
      rel=${committed#"$ROOT/"}
      release=$(release_of "$committed")
      if [[ -n "$release" && -n "${releases[$release]:-}" && ! -f "$TMP/vectors/$rel" ]]; then
        echo "STALE    $rel (Java $release no longer generates it)"
        problems=$((problems + 1))
      fi
    done < <(find "$ROOT/$dir" -type f | sort)
  done
  checked=$(find "$TMP/vectors" -type f | wc -l)
  if ((problems > 0)); then
    echo "$problems vector file(s) do not match what Java generates (releases: ${!releases[*]})" >&2
    exit 1
  fi
  echo "all $checked generated vector files match the committed ones (releases: ${!releases[*]})"
}

if [[ "$mode" == check ]]; then
  timed "Java vectors against the committed ones" run_in_subshell compare_vectors
fi

# One scenario run: the scenario and differential tests of a profile against one kind of
# NameServer.
failed_runs=()
scenario_run() {
  local profile=$1 kind=$2 reports
  reports=$(reports_of "$profile" "$kind") || return
  rm -rf "$reports" || return
  mvn_plain -P "$profile" surefire:test -Dsurefire.failIfNoSpecifiedTests=false \
    '-Dtest=dev/waymark/interop/scenario/*Test.java,dev/waymark/interop/diff/*Test.java' \
    "-Dwaymark.namesrv=$kind" "-Dwaymark.reports=$kind" \
    "-Dwaymark.namesrv.bin=$BIN_DIR/rmq-namesrv" "-Dwaymark.admin.bin=$BIN_DIR/rmq-admin"
}

# One controller run: the AutoSwitch-HA scenarios (real brokers in controller mode), the
# mqadmin controller commands and the live controller differential test, profile rmq5,
# against one kind of controller (waymark: rmq-controller; java: the control). The
# NameServer of the scenarios is Waymark's rmq-namesrv (embedded mode: the process that also
# runs the controller).
controller_run() {
  local kind=$1 reports
  reports=$(reports_of rmq5 "controller-$kind") || return
  rm -rf "$reports" || return
  mvn_plain -P rmq5 surefire:test -Dsurefire.failIfNoSpecifiedTests=false \
    '-Dtest=dev/waymark/interop/ha/*Test.java,dev/waymark/interop/controller/ControllerDifferentialTest.java' \
    "-Dwaymark.controller=$kind" "-Dwaymark.reports=controller-$kind" \
    "-Dwaymark.controller.bin=$BIN_DIR/rmq-controller" "-Dwaymark.namesrv.bin=$BIN_DIR/rmq-namesrv"
}

# One matrix line per test class of a surefire report directory.
print_reports() {
  local profile=$1 kind=$2 dir=$3 report name tests failures errors skipped result
  for report in "$dir"/TEST-*.xml; do
    [[ -f "$report" ]] || continue
    name=$(basename "$report" .xml)
    name=${name#TEST-dev.waymark.interop.}
    tests=$(attribute tests "$report")
    failures=$(attribute failures "$report")
    errors=$(attribute errors "$report")
    skipped=$(attribute skipped "$report")
    if [[ "$failures" == 0 && "$errors" == 0 && "$skipped" == "$tests" ]]; then
      result="skipped"
    elif [[ "$failures" == 0 && "$errors" == 0 ]]; then
      result=pass
      [[ "$skipped" != 0 ]] && result="pass, $skipped skipped"
    else
      result="FAIL ($failures failed, $errors errors)"
    fi
    printf '%-6s %-8s %-36s %s run, %s\n' "$profile" "$kind" "$name" "$tests" "$result"
  done
}

# The matrix: one line per profile, NameServer and test class, from the surefire reports.
print_matrix() {
  local profile kind
  banner "Scenario matrix (profile, NameServer, test class: tests run, result)"
  for profile in $SCENARIO_PROFILES; do
    for kind in $SCENARIO_NAMESRVS; do
      print_reports "$profile" "$kind" "$(reports_of "$profile" "$kind")"
    done
  done
}

# The controller matrix: one line per controller kind and test class.
print_controller_matrix() {
  local kind
  banner "Controller scenario matrix (profile, controller, test class: tests run, result)"
  for kind in $CONTROLLER_KINDS; do
    print_reports rmq5 "$kind" "$(reports_of rmq5 "controller-$kind")"
  done
}

# A numeric attribute of a surefire report's <testsuite> element, or ?.
attribute() {
  local report pattern="<testsuite[^>]* $1=\"([0-9]+)\""
  report=$(<"$2")
  if [[ "$report" =~ $pattern ]]; then
    echo "${BASH_REMATCH[1]}"
  else
    echo '?'
  fi
}

# COMMAND with this run's slice of the port range (exported to the JVMs it starts).
with_port_slice() {
  export WAYMARK_PORTS_SLICE=$1
  shift
  "$@"
}

# Starts one run of a group: NAME (its stage), LABEL (its name among the failed runs), SLICE
# (i/n: its part of the port range), COMMAND. The runs of a group go on at the same time,
# collected by collect_runs; with WAYMARK_SCENARIO_CONCURRENT=0 each runs here, its output
# as it comes.
declare -A run_labels=()
start_run() {
  local name=$1 label=$2 slice=$3
  shift 3
  run_labels[$name]=$label
  if [[ "$CONCURRENT" == 1 ]]; then
    concurrent_start "$name" with_port_slice "$slice" "$@"
    return 0
  fi
  banner "$name"
  local start=$SECONDS
  if timed "$name" "$@"; then
    echo "$name: passed in $((SECONDS - start)) s"
  else
    echo "$name: FAILED after $((SECONDS - start)) s"
    failed_runs+=("$label")
  fi
}

# Waits for the runs started since the last collection (GROUP: their line in the stage
# table); each failed run's label goes to failed_runs.
collect_runs() {
  local name
  concurrent_wait "$1" && return 0
  for name in "${CONCURRENT_FAILED[@]}"; do
    failed_runs+=("${run_labels[$name]}")
  done
}

if [[ -n "$SCENARIO_PROFILES" ]]; then
  read -ra kinds <<<"$SCENARIO_NAMESRVS"
  for profile in $SCENARIO_PROFILES; do
    compile_profile "$profile"
    banner "Scenario tests, profile $profile, NameServers: ${kinds[*]}"
    for i in "${!kinds[@]}"; do
      start_run "scenarios, $profile against the ${kinds[$i]} NameServer" "$profile/${kinds[$i]}" \
        "$((i + 1))/${#kinds[@]}" scenario_run "$profile" "${kinds[$i]}"
    done
    [[ "$CONCURRENT" != 1 ]] || collect_runs "scenarios, $profile, at once against: ${kinds[*]}"
  done
  print_matrix
fi
if [[ -n "$CONTROLLER_KINDS" ]]; then
  read -ra kinds <<<"$CONTROLLER_KINDS"
  compile_profile rmq5
  banner "Controller scenarios, profile rmq5, controllers: ${kinds[*]}"
  for i in "${!kinds[@]}"; do
    start_run "controller scenarios, rmq5 against the ${kinds[$i]} controller" "rmq5/controller-${kinds[$i]}" \
      "$((i + 1))/${#kinds[@]}" controller_run "${kinds[$i]}"
  done
  [[ "$CONCURRENT" != 1 ]] || collect_runs "controller scenarios, rmq5, at once against: ${kinds[*]}"
  print_controller_matrix
fi
if ((${#failed_runs[@]} > 0)); then
  echo "scenario runs that failed: ${failed_runs[*]}" >&2
  exit 1
fi

