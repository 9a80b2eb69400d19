#!/usr/bin/env bash
# Smoke-fuzzes every cargo-fuzz target of fuzz/ (docs/fuzzing.md): installs
# cargo-fuzz if missing, builds all targets once, seeds a fresh corpus per
# target with fuzz/seeds/ and the vectors captured from Java, then fuzzes each
# target for an equal share of WAYMARK_FUZZ_SECONDS (default 60). Fails if any
# target crashes, leaks, times out or passes the memory limits; prints each
# target's executions. The corpus is thrown away: CI starts from the Java
# vectors every time, so a run is about as strong as the previous one.
#   scripts/fuzz-smoke.sh
#   scripts/fuzz-smoke.sh --build-only   installs cargo-fuzz and builds the targets, no more
#                                        (./scripts/test.sh builds them beside the Java stages)
# Run by ./scripts/test.sh as the stage "fuzz smoke".
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=lib/fuzz.sh
. scripts/lib/fuzz.sh

total=${WAYMARK_FUZZ_SECONDS:-60}
per_target=$((total / ${#FUZZ_TARGETS[@]}))
((per_target >= 1)) || per_target=1

corpus=$(mktemp -d "${TMPDIR:-/tmp}/waymark-fuzz-corpus.XXXXXX")
trap 'rm -rf "$corpus"' EXIT

case "${1:-}" in
  "") build_only=0 ;;
  --build-only) build_only=1 ;;
  *) echo "usage: $0 [--build-only]" >&2; exit 2 ;;
esac

start=$SECONDS
fuzz_setup
fuzz_build
built=$SECONDS
if ((build_only)); then
  printf 'fuzz targets built in %d s\n' "$((built - start))"
  exit 0
fi
fuzz_seed "$corpus"

failed=()
for target in "${FUZZ_TARGETS[@]}"; do
  fuzz_run "$target" "$per_target" "$corpus/$target" || failed+=("$target")
done

printf '\nfuzz smoke: build %d s, fuzzing %d s (%d s per target)\n' \
  "$((built - start))" "$((SECONDS - built))" "$per_target"
for target in "${FUZZ_TARGETS[@]}"; do
  printf '  %-22s %12s executions\n' "$target" "${FUZZ_EXECS[$target]:-?}"
done
if ((${#failed[@]} > 0)); then
  echo "fuzz smoke: FAILED: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
  exit 1
fi
