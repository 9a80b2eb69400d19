#!/usr/bin/env bash
# A long fuzzing run (docs/fuzzing.md): every target of fuzz/ for SECONDS
# each (default 600), one after the other, starting from and growing the
# kept corpus in fuzz/corpus/<target>/ (ignored by git), which is seeded
# first with fuzz/seeds/ and the vectors captured from Java. Fails if any
# target crashes; prints each target's executions.
#   scripts/fuzz-long.sh [SECONDS]
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=lib/fuzz.sh
. scripts/lib/fuzz.sh

seconds=${1:-600}
if [[ ! "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz-long.sh [SECONDS per target]" >&2
  exit 2
fi

start=$SECONDS
fuzz_setup
fuzz_build
built=$SECONDS
# Seeds are rewritten under the same names each time: the corpus keeps
# what the fuzzer found and never duplicates a seed.
fuzz_seed "$ROOT/fuzz/corpus"

failed=()
for target in "${FUZZ_TARGETS[@]}"; do
  fuzz_run "$target" "$seconds" "$ROOT/fuzz/corpus/$target" || failed+=("$target")
done

printf '\nfuzz long: build %d s, fuzzing %d s (%d s per target)\n' \
  "$((built - start))" "$((SECONDS - built))" "$seconds"
for target in "${FUZZ_TARGETS[@]}"; do
  printf '  %-22s %12s executions\n' "$target" "${FUZZ_EXECS[$target]:-?}"
done
if ((${#failed[@]} > 0)); then
  echo "fuzz long: FAILED: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
  exit 1
fi
