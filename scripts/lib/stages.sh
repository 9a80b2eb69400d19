# Stage timing for the test run, sourced by .ci/run, scripts/test.sh and the
# interop scripts (not executable on its own).
#
#   timed NAME COMMAND...   runs COMMAND and returns its status; appends
#                           "<seconds><TAB><passed|FAILED><TAB><free MiB><TAB>NAME"
#                           to the file $WAYMARK_STAGE_LOG when that is set
#   free_disk_mib [DIR]     free space under DIR (default .) in MiB, or "?"
#   stage_log_own           when WAYMARK_STAGE_LOG is unset, points it at a new
#                           file and succeeds: the caller then prints the table
#   concurrent_kill         stops every command started since the last wait, with
#                           everything it started (a run that fails before the
#                           wait must not leave compilers behind)
#   print_stage_table       the recorded stages and their total, in run order
#   concurrent_start NAME COMMAND...
#                           starts COMMAND in the background, its output (stdout
#                           and stderr) to a file of its own
#   concurrent_wait GROUP   waits for every command started since the last wait
#                           (`wait PID`, so each one's exit status), in start
#                           order, printing each one's output whole as it is
#                           collected; records GROUP with the time it waited (so
#                           the total stays the run's wall time when the commands
#                           went on beside other stages), then each command with
#                           its own time, indented and left out of the total; sets
#                           CONCURRENT_FAILED to the NAMEs that failed and succeeds
#                           only if none did
#
# COMMAND's status is tested, and bash ignores `set -e` inside whatever runs
# in a tested context, subshells included: pass a program, or a function that
# checks each of its steps (`step || return`) and ends with the one whose
# status it returns.

timed() {
  local name=$1 start=$SECONDS status=0
  shift
  "$@" || status=$?
  if [[ -n "${WAYMARK_STAGE_LOG:-}" ]]; then
    local result=passed
    ((status == 0)) || result=FAILED
    printf '%s\t%s\t%s\t%s\n' "$((SECONDS - start))" "$result" "$(free_disk_mib)" "$name" \
      >>"$WAYMARK_STAGE_LOG"
  fi
  return "$status"
}

# The build trees are the suite's largest use of disk, and a machine that runs
# out shows it only as a compiler or linker error deep in some stage: the table
# records what was left after each stage.
free_disk_mib() {
  local out
  out=$(df -Pm -- "${1:-.}" 2>/dev/null) || { echo "?"; return 0; }
  local last=${out##*$'\n'} _fs _size _used avail _rest
  read -r _fs _size _used avail _rest <<<"$last"
  [[ "$avail" =~ ^[0-9]+$ ]] && echo "$avail" || echo "?"
}

stage_log_own() {
  [[ -z "${WAYMARK_STAGE_LOG:-}" ]] || return 1
  WAYMARK_STAGE_LOG=$(mktemp "${TMPDIR:-/tmp}/waymark-stages.XXXXXX")
  export WAYMARK_STAGE_LOG
}

CONCURRENT_PIDS=()
CONCURRENT_NAMES=()
CONCURRENT_FAILED=()
CONCURRENT_DIR=
CONCURRENT_START=0

concurrent_start() {
  local name=$1 index=${#CONCURRENT_PIDS[@]}
  shift
  if [[ -z "$CONCURRENT_DIR" ]]; then
    CONCURRENT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/waymark-concurrent.XXXXXX") || return
    CONCURRENT_START=$SECONDS
  fi
  (
    start=$SECONDS
    status=0
    "$@" >"$CONCURRENT_DIR/$index.log" 2>&1 </dev/null || status=$?
    printf '%s\n' "$((SECONDS - start))" >"$CONCURRENT_DIR/$index.seconds"
    exit "$status"
  ) &
  CONCURRENT_PIDS+=("$!")
  CONCURRENT_NAMES+=("$name")
  printf '%s: started (pid %s); its output follows when it ends\n' "$name" "$!"
}

concurrent_wait() {
  local group=$1 index status seconds result name parts=() waited=$SECONDS
  CONCURRENT_FAILED=()
  for index in "${!CONCURRENT_PIDS[@]}"; do
    status=0
    wait "${CONCURRENT_PIDS[$index]}" || status=$?
    # No time of its own when it was killed before it could write one.
    seconds=$((SECONDS - CONCURRENT_START))
    [[ -f "$CONCURRENT_DIR/$index.seconds" ]] && seconds=$(<"$CONCURRENT_DIR/$index.seconds")
    result=passed
    if ((status != 0)); then
      result=FAILED
      CONCURRENT_FAILED+=("${CONCURRENT_NAMES[$index]}")
    fi
    printf '\n---- %s: %s (exit status %s) after %s s; its output:\n' \
      "${CONCURRENT_NAMES[$index]}" "$result" "$status" "$seconds"
    cat "$CONCURRENT_DIR/$index.log" || true
    printf -- '---- end of the output of %s\n' "${CONCURRENT_NAMES[$index]}"
    parts+=("$seconds"$'\t'"$result"$'\t'"${CONCURRENT_NAMES[$index]}")
  done
  if [[ -n "${WAYMARK_STAGE_LOG:-}" ]]; then
    local free part
    free=$(free_disk_mib)
    result=passed
    ((${#CONCURRENT_FAILED[@]} == 0)) || result=FAILED
    printf '%s\t%s\t%s\t%s\n' "$((SECONDS - waited))" "$result" "$free" "$group" >>"$WAYMARK_STAGE_LOG"
    for part in "${parts[@]}"; do
      IFS=$'\t' read -r seconds result name <<<"$part"
      printf '%s\t%s\t%s\t  | %s\n' "$seconds" "$result" "$free" "$name" >>"$WAYMARK_STAGE_LOG"
    done
  fi
  rm -rf "$CONCURRENT_DIR"
  CONCURRENT_DIR=
  CONCURRENT_PIDS=()
  CONCURRENT_NAMES=()
  ((${#CONCURRENT_FAILED[@]} == 0))
}

# The commands run in subshells that are not process-group leaders, so their
# descendants are found through their parents, deepest first.
concurrent_kill() {
  local pid
  for pid in "${CONCURRENT_PIDS[@]}"; do
    kill_tree "$pid"
  done
  CONCURRENT_PIDS=()
  CONCURRENT_NAMES=()
}

kill_tree() {
  local child
  for child in $(pgrep -P "$1" || true); do
    kill_tree "$child"
  done
  kill -TERM "$1" 2>/dev/null || true
}

print_stage_table() {
  [[ -n "${WAYMARK_STAGE_LOG:-}" && -f "$WAYMARK_STAGE_LOG" ]] || return 0
  local seconds result free name total=0
  printf '\n==== Stage timings\n'
  printf '%-64s %8s  %-7s %s\n' "stage" "seconds" "result" "free disk after (MiB)"
  # A concurrent command's line ("  | NAME") keeps its leading spaces (IFS is only a
  # tab), and its time is already in its group's.
  while IFS=$'\t' read -r seconds result free name; do
    printf '%-64s %8s  %-7s %s\n' "$name" "$seconds" "$result" "$free"
    [[ "$name" == "  | "* ]] || total=$((total + seconds))
  done <"$WAYMARK_STAGE_LOG"
  printf '%-64s %8s  (%dm%02ds)\n' "total" "$total" "$((total / 60))" "$((total % 60))"
}
