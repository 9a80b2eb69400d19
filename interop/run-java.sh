#!/usr/bin/env bash
# Runs the Java interop tests (interop/java) against this checkout.
#
#   interop/run-java.sh                  Rust-encoded frames decoded by real Java, every profile
#   interop/run-java.sh --check-vectors  also regenerate the Java vectors into a temp dir and
#                                        fail if they differ from the committed ones (the default
#                                        when CI=true)
#   interop/run-java.sh --write-vectors  regenerate the committed vectors in place
#
# Profiles (RocketMQ releases) to run: WAYMARK_JAVA_PROFILES, default "rmq5 rmq53 rmq4"
# (5.5.1, 5.3.3, 4.9.8). Needs cargo, Java 17+ and Maven 3.6+.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
POM="$ROOT/interop/java/pom.xml"
FRAME_DIR=crates/rmq-wire/tests/vectors
BODY_DIR=crates/rmq-protocol/tests/vectors
PROFILES=${WAYMARK_JAVA_PROFILES:-rmq5 rmq53 rmq4}
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

TMP=$(mktemp -d "${TMPDIR:-/tmp}/waymark-interop.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

banner "Rust frames for the Java decoder (cargo run -p rmq-wire --example emit_frames)"
cargo_flags=(-q -p rmq-wire --example emit_frames)
[[ "${CI:-}" == "true" ]] && cargo_flags+=(--locked)
(cd "$ROOT" && cargo run "${cargo_flags[@]}" -- "$TMP/rust-frames")

for profile in $PROFILES; do
  banner "Java interop tests, profile $profile"
  args=(-P "$profile" test "-Dwaymark.rust.frames=$TMP/rust-frames")
  case "$mode" in
    check) args+=("-Dwaymark.vectors.dir=$TMP/vectors") ;;
    write) args+=("-Dwaymark.vectors.write=true") ;;
  esac
  start=$SECONDS
  # Maven 3.8's -q still prints colour resets; strip them (pipefail keeps Maven's status).
  "${MVN[@]}" "${args[@]}" 2>&1 | sed -e 's/\x1b\[[0-9;]*m//g'
  echo "profile $profile passed in $((SECONDS - start)) s"
done

[[ "$mode" == check ]] || exit 0

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
cd "$TMP/vectors"
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
      diff <(cat "$committed") <(cat "$rel") | head -n 8 || true
      problems=$((problems + 1))
    fi
  fi
done < <(find "$FRAME_DIR" "$BODY_DIR" -type f | sort)
for dir in "$FRAME_DIR" "$BODY_DIR"; do
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
