#!/usr/bin/env bash
# Guards the CI scripts against failing by chance (run by .ci/run before the
# tests):
#
# 1. Runs scripts/tool-versions.sh (the first part of .ci/run) N times in a row
#    (WAYMARK_SELFTEST_RUNS, default 50) and fails if any run fails.
# 2. Scans every shell script in the repository for pipelines whose reader may
#    exit before its writer is done (`| head`, `| grep -q`, `| grep -m`,
#    `| sed …q`, `| awk …exit`, `| read`). Under `set -o pipefail` the writer
#    then dies of SIGPIPE and fails the script, depending on timing. Capture
#    the output first (`out=$(cmd)`), then cut it.
# 3. Checks scripts/lib/stages.sh's concurrent stages (concurrent_start,
#    concurrent_wait): a command that fails beside one that passes fails the
#    wait and is named, each one's output is printed, and the stage table
#    counts the group once in its total; concurrent_kill leaves nothing a
#    command started running.
#
#   scripts/ci-selftest.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
RUNS=${WAYMARK_SELFTEST_RUNS:-50}

failed=0
log=$(mktemp "${TMPDIR:-/tmp}/waymark-selftest.XXXXXX")
trap 'rm -f "$log"' EXIT
for ((run = 1; run <= RUNS; run++)); do
  status=0
  scripts/tool-versions.sh >"$log" 2>&1 || status=$?
  if ((status != 0)); then
    failed=$((failed + 1))
    echo "run $run of scripts/tool-versions.sh failed with exit code $status:" >&2
    cat "$log" >&2
  fi
done
if ((failed > 0)); then
  echo "scripts/tool-versions.sh failed $failed of $RUNS runs" >&2
  exit 1
fi
echo "scripts/tool-versions.sh passed $RUNS of $RUNS runs"

# Shell scripts: tracked files ending in .sh, and tracked files under .ci/ or
# scripts/ or interop/ whose first line names a shell.
scripts=()
while IFS= read -r -d '' path; do
  case "$path" in
    *.sh) scripts+=("$path") ;;
    .ci/* | scripts/* | interop/*)
      if [[ -f "$path" ]]; then
        IFS= read -r first <"$path" || true
        [[ "$first" == '#!'*sh* ]] && scripts+=("$path")
      fi
      ;;
  esac
done < <(git ls-files -z)

# A pipe, then a reader that can stop before the end of its input. Built in
# pieces so that this line does not match itself.
bar='\|'
early_reader="${bar}[[:space:]]*(head|read|(grep|egrep|fgrep)[[:space:]][^|]*-[a-zA-Z]*[qm]|sed[[:space:]][^|]*[0-9/]q|awk[[:space:]][^|]*exit)([[:space:]]|;|\)|$)"
# The scan must catch the known forms, and leave readers that consume all input alone.
# (The samples spell the pipe as $p so that the scan of this file does not flag them.)
p='|'
for bad in "mvn -v 2>/dev/null $p head -n 1" "java -version 2>&1 $p head -1" "cmd $p grep -q x" \
  "cmd $p grep -m 1 x" "cmd $p sed 1q" "cmd $p awk '{ print; exit }'" "cmd $p read -r first"; do
  [[ "$bad" =~ $early_reader ]] || { echo "ci-selftest: the scan misses: $bad" >&2; exit 1; }
done
for good in "mvn -q test 2>&1 $p sed -e 's/x//g'" "find . $p sort" "cmd $p wc -l" "cmd $p grep -o x"; do
  if [[ "$good" =~ $early_reader ]]; then
    echo "ci-selftest: the scan flags a safe pipeline: $good" >&2
    exit 1
  fi
done

findings=()
for path in "${scripts[@]}"; do
  lineno=0
  while IFS= read -r line || [[ -n "$line" ]]; do
    lineno=$((lineno + 1))
    [[ "$line" =~ ^[[:space:]]*# ]] && continue
    if [[ "$line" =~ $early_reader ]]; then
      findings+=("$path:$lineno: $line")
    fi
  done <"$path"
done
if ((${#findings[@]} > 0)); then
  echo "pipelines whose reader may close early (SIGPIPE under pipefail):" >&2
  printf '  %s\n' "${findings[@]}" >&2
  exit 1
fi
echo "no early-closing pipeline readers in ${#scripts[@]} shell scripts"

# 3. Concurrent stages: run in a child shell with a stage log of its own.
concurrent_check() {
  local out status=0 expected
  out=$(
    # shellcheck source=lib/stages.sh
    . scripts/lib/stages.sh
    WAYMARK_STAGE_LOG=$(mktemp "${TMPDIR:-/tmp}/waymark-selftest-stages.XXXXXX")
    trap 'rm -f "$WAYMARK_STAGE_LOG"' EXIT
    concurrent_start "passes" bash -c 'sleep 1; echo output of the passing one'
    concurrent_start "fails" bash -c 'echo output of the failing one; exit 7'
    if concurrent_wait "both"; then
      echo "RESULT passed"
    else
      echo "RESULT failed: ${CONCURRENT_FAILED[*]}"
    fi
    concurrent_start "alone" true
    concurrent_wait "one" && echo "RESULT2 passed"
    print_stage_table
  ) || status=$?
  ((status == 0)) || { echo "ci-selftest: the concurrent-stage check exited with $status" >&2; return 1; }
  for expected in "output of the passing one" "output of the failing one" "RESULT failed: fails" \
    "RESULT2 passed" "---- fails: FAILED (exit status 7)"; do
    [[ "$out" == *"$expected"* ]] || {
      printf 'ci-selftest: concurrent stages: no "%s" in:\n%s\n' "$expected" "$out" >&2
      return 1
    }
  done
  # Each line of the group and its commands is in the table; the total counts "both" and
  # "one", not the indented "  | passes" (at least 1 s) again.
  local pattern='both +([0-9]+) +FAILED.*  \| passes +([0-9]+) +passed.*  \| fails +[0-9]+ +FAILED.*one +([0-9]+) +passed.*  \| alone.*total +([0-9]+) '
  if [[ "$out" =~ $pattern ]] && ((BASH_REMATCH[4] == BASH_REMATCH[1] + BASH_REMATCH[3] && BASH_REMATCH[2] >= 1)); then
    echo "concurrent stages: failures collected and named, output printed, the total counted once"
  else
    printf 'ci-selftest: concurrent stages: unexpected stage table in:\n%s\n' "$out" >&2
    return 1
  fi
}
concurrent_check

# concurrent_kill: a command whose child starts a grandchild; none of the three survives.
kill_check() {
  local marker left
  marker="waymark-selftest-kill-$$"
  (
    # shellcheck source=lib/stages.sh
    . scripts/lib/stages.sh
    concurrent_start "sleeper" bash -c "bash -c 'exec -a $marker sleep 300' & wait"
    deadline=$((SECONDS + 10))
    until pgrep -f "$marker" >/dev/null; do
      ((SECONDS < deadline)) || { echo "ci-selftest: the grandchild never started" >&2; exit 1; }
      sleep 0.1
    done
    concurrent_kill
  ) >/dev/null || return
  # The kill is sent before concurrent_kill returns; the process may take a moment to go.
  local deadline=$((SECONDS + 10))
  while left=$(pgrep -f "$marker"); do
    if ((SECONDS >= deadline)); then
      echo "ci-selftest: concurrent_kill left ${left//$'\n'/ } running" >&2
      pkill -f "$marker" || true
      return 1
    fi
    sleep 0.1
  done
  echo "concurrent_kill: the command, its child and its grandchild stopped"
}
kill_check
