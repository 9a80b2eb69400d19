# Stage timing for the test run, sourced by .ci/run, scripts/test.sh and the
# interop scripts (not executable on its own).
#
#   timed NAME COMMAND...   runs COMMAND and returns its status; appends
#                           "<seconds><TAB><passed|FAILED><TAB><free MiB><TAB>NAME"
#                           to the file $WAYMARK_STAGE_LOG when that is set
#   free_disk_mib [DIR]     free space under DIR (default .) in MiB, or "?"
#   stage_log_own           when WAYMARK_STAGE_LOG is unset, points it at a new
#                           file and succeeds: the caller then prints the table
#   print_stage_table       the recorded stages and their total, in run order
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

print_stage_table() {
  [[ -n "${WAYMARK_STAGE_LOG:-}" && -f "$WAYMARK_STAGE_LOG" ]] || return 0
  local seconds result free name total=0
  printf '\n==== Stage timings\n'
  printf '%-58s %8s  %-7s %s\n' "stage" "seconds" "result" "free disk after (MiB)"
  while IFS=$'\t' read -r seconds result free name; do
    printf '%-58s %8s  %-7s %s\n' "$name" "$seconds" "$result" "$free"
    total=$((total + seconds))
  done <"$WAYMARK_STAGE_LOG"
  printf '%-58s %8s  (%dm%02ds)\n' "total" "$total" "$((total / 60))" "$((total % 60))"
}
