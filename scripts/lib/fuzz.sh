# The fuzzing steps shared by scripts/fuzz-smoke.sh and scripts/fuzz-long.sh
# (sourced, not executable on its own; expects ROOT, the repository root).
#
#   fuzz_setup              installs cargo-fuzz $FUZZ_CARGO_FUZZ_VERSION if
#                           missing and checks that the toolchain can build
#                           sanitizer-instrumented code with RUSTC_BOOTSTRAP=1
#   fuzz_build              builds every target once, into fuzz/target
#   fuzz_seed DIR           fills DIR/<target>/ with the hand seeds of
#                           fuzz/seeds/ and the vectors captured from Java
#   fuzz_run TARGET SECONDS CORPUS...
#                           fuzzes TARGET for SECONDS, new inputs into the
#                           first CORPUS dir; records its executions in
#                           FUZZ_EXECS[TARGET]; fails on a crash, leak, timeout
#                           or a memory limit hit, showing the input
#
# Functions check each step (`step || return`): callers run them through
# `timed`, where bash ignores `set -e`.

FUZZ_TARGETS=(frame_decode register_body_decode body_decode java_json_parse config_update register_repeated)
# The newest release, checked to build the targets with rustc 1.95.
FUZZ_CARGO_FUZZ_VERSION=0.13.2
# Above the REGISTER_BROKER decoder's 64 MiB inflate bound plus slack, so a
# decompression bomb that beats the bound fails the run instead of passing.
FUZZ_MALLOC_LIMIT_MB=256
FUZZ_RSS_LIMIT_MB=1024
declare -gA FUZZ_EXECS=()

# cargo-fuzz uses unstable rustc flags (-Zsanitizer, sancov passes); the stable
# toolchain accepts them with RUSTC_BOOTSTRAP=1, which keeps CI on one toolchain.
export RUSTC_BOOTSTRAP=1

fuzz_setup() {
  local have=""
  have=$(cargo fuzz --version 2>/dev/null) || have=""
  if [[ "$have" != "cargo-fuzz $FUZZ_CARGO_FUZZ_VERSION" ]]; then
    echo "installing cargo-fuzz $FUZZ_CARGO_FUZZ_VERSION (found: ${have:-none})"
    cargo install cargo-fuzz --version "$FUZZ_CARGO_FUZZ_VERSION" --locked || return
  fi
  local probe status=0 out
  probe=$(mktemp -d "${TMPDIR:-/tmp}/waymark-fuzz-probe.XXXXXX")
  printf 'fn main() {}\n' >"$probe/probe.rs"
  out=$(rustc -Zsanitizer=address -Cpasses=sancov-module \
    -Cllvm-args=-sanitizer-coverage-level=4 -o "$probe/probe" "$probe/probe.rs" 2>&1) || status=$?
  rm -rf "$probe"
  if ((status != 0)); then
    echo "fuzz: this toolchain cannot build the sanitizer-instrumented targets:" >&2
    echo "$out" >&2
    echo "fuzz: cargo-fuzz needs nightly rustc flags (-Zsanitizer); the scripts enable them" \
      "on stable with RUSTC_BOOTSTRAP=1. Use a toolchain that honours it, or a nightly one" \
      "(rustup run nightly $0)." >&2
    return 1
  fi
  local rustc_version
  rustc_version=$(rustc --version) || return
  echo "fuzz: $(cargo fuzz --version), $rustc_version with RUSTC_BOOTSTRAP=1"
}

fuzz_build() {
  (cd "$ROOT/fuzz" && cargo fuzz build --target-dir "$ROOT/fuzz/target")
}

# hex_bytes HEX: the bytes written as HEX, on stdout.
hex_bytes() {
  local escaped
  escaped=$(sed -e 's/../\\x&/g' <<<"$1") || return
  printf '%b' "$escaped"
}

# Largest vector copied as a seed: libFuzzer sizes its inputs by the largest
# seed, and the 64 KiB frames only test length handling, which small ones do.
FUZZ_MAX_SEED_BYTES=16384

# seed_file DIR NAME [SELECTOR]: writes the byte SELECTOR (two hex digits:
# the first byte of a dispatching target) followed by stdin to DIR/NAME.
seed_file() {
  mkdir -p "$1" || return
  {
    [[ -z "${3:-}" ]] || printf "\\x$3"
    cat
  } >"$1/$2"
}

# The selector byte of body_decode for a Java body type (see its table).
body_selector() {
  case "$1" in
    TopicRouteData) echo 00 ;;
    TopicQueueMappingInfo) echo 01 ;;
    ClusterInfo) echo 02 ;;
    TopicConfig) echo 03 ;;
    TopicConfigSerializeWrapper) echo 05 ;;
    DataVersion) echo 06 ;;
    KVTable) echo 07 ;;
    KVConfigSerializeWrapper) echo 08 ;;
    TopicList) echo 09 ;;
    GetBrokerMemberGroupResponseBody) echo 0a ;;
    *) return 1 ;;
  esac
}

# seed_wire_vectors DIR: Java frames of crates/rmq-wire/tests/vectors, whole
# for frame_decode, and their bodies for the target that decodes them (the
# request code and direction are in the file name).
seed_wire_vectors() {
  local dir=$1 file name hex total header_len body_hex selector count=0
  for file in "$ROOT"/crates/rmq-wire/tests/vectors/*.hex; do
    name=$(basename "$file" .hex)
    # Three characters of text per byte, plus the comment lines.
    (($(wc -c <"$file") <= 4 * FUZZ_MAX_SEED_BYTES)) || continue
    hex=$(sed -e '/^#/d' "$file" | tr -d '[:space:]') || return
    ((${#hex} <= 2 * FUZZ_MAX_SEED_BYTES)) || continue
    hex_bytes "$hex" | seed_file "$dir/frame_decode" "java_$name" || return
    count=$((count + 1))
    # An invalid frame has no reliable body.
    [[ "$name" == *invalid* || ${#hex} -lt 16 ]] && continue
    total=$((16#${hex:0:8}))
    header_len=$((16#${hex:10:6}))
    ((${#hex} == 8 + 2 * total && 4 + header_len <= total)) || continue
    body_hex=${hex:16 + 2 * header_len}
    [[ -n "$body_hex" ]] || continue
    selector=""
    local target=body_decode
    case "$name" in
      103_register_broker_compressed_*) target=register_body_decode selector=01 ;;
      103_register_broker_json_* | 103_register_broker_rocketmq_* | 103_register_broker_acting_master_*)
        target=register_body_decode selector=00 ;;
      105_get_routeinfo_by_topic_response_* | 217_register_topic_in_namesrv_*) selector=00 ;;
      106_get_broker_cluster_info_response_*) selector=02 ;;
      206_*_response_* | 304_*_response_*) selector=09 ;;
      219_get_kvlist_by_namespace_response_*) selector=07 ;;
      322_query_data_version_*) selector=06 ;;
      901_get_broker_member_group_response_*) selector=0a ;;
      318_update_namesrv_config_* | 319_get_namesrv_config_response_*) target=config_update ;;
      *) continue ;;
    esac
    # 5.x senders write the 5.x layout: bit 7 of register_body_decode's mode.
    if [[ "$target" == register_body_decode && "$name" != *_v498_* ]]; then
      selector=$(printf '%02x' $((16#$selector | 0x80)))
    fi
    hex_bytes "$body_hex" | seed_file "$dir/$target" "java_$name" "$selector" || return
    # Every body_decode body of a frame is JSON.
    if [[ "$target" == body_decode ]]; then
      hex_bytes "$body_hex" | seed_file "$dir/java_json_parse" "java_$name" || return
    fi
  done
  ((count > 0)) || { echo "fuzz: no wire vectors in crates/rmq-wire/tests/vectors" >&2; return 1; }
  echo "fuzz: $count Java frames"
}

# seed_body_vectors DIR: Java bodies of crates/rmq-protocol/tests/vectors; the
# `.meta` file's second line names the Java type and form.
seed_body_vectors() {
  local dir=$1 meta base name release kind form selector mode count=0
  for meta in "$ROOT"/crates/rmq-protocol/tests/vectors/*.meta; do
    base=${meta%.meta}
    name=$(basename "$base")
    { IFS=' ' read -r _ release && IFS=' ' read -r kind form; } <"$meta" || continue
    if [[ "$kind" == RegisterBrokerBody ]]; then
      mode=00
      [[ "$form" == compressed ]] && mode=01
      [[ "$release" == 4.* ]] || mode=$(printf '%02x' $((16#$mode | 0x80)))
      local body=$base.json
      [[ "$form" == compressed ]] && body=$base.bin
      seed_file "$dir/register_body_decode" "java_$name" "$mode" <"$body" || return
    elif selector=$(body_selector "$kind"); then
      seed_file "$dir/body_decode" "java_$name" "$selector" <"$base.json" || return
      if [[ "$kind" == TopicConfigSerializeWrapper ]]; then
        # Also as the pre-3.0.11 REGISTER_BROKER body.
        seed_file "$dir/body_decode" "java_${name}_old_register" 0f <"$base.json" || return
      fi
    else
      echo "fuzz: $meta names an unknown body type $kind" >&2
      return 1
    fi
    [[ -f "$base.json" ]] && { seed_file "$dir/java_json_parse" "java_$name" <"$base.json" || return; }
    count=$((count + 1))
  done
  ((count > 0)) || { echo "fuzz: no body vectors in crates/rmq-protocol/tests/vectors" >&2; return 1; }
  echo "fuzz: $count Java bodies"
}

# seed_controller_vectors DIR: the request, response and notification bodies
# of the controller exchanges in crates/rmq-controller/tests/vectors. They are
# JSON strings there (one `"body": "…"` line each); JSON arrays are broker-name
# lists, other JSON is one of three controller bodies, anything else a
# controller config update.
seed_controller_vectors() {
  local dir=$1 file line text n=0 count=0
  for file in "$ROOT"/crates/rmq-controller/tests/vectors/*.json; do
    while IFS= read -r line || [[ -n "$line" ]]; do
      [[ "$line" =~ ^[[:space:]]*\"body\":\ \"(.*)\",?$ ]] || continue
      text=${BASH_REMATCH[1]}
      # JSON string escapes: \" and \/ by hand, the rest (\\ \n \t \uXXXX …)
      # are printf's own.
      text=${text//\\\"/\"}
      text=${text//\\\//\/}
      n=$((n + 1))
      local seed="java_$(basename "$file" .json)_$n"
      case "$text" in
        '['*)
          printf '%b' "$text" | seed_file "$dir/body_decode" "$seed" 0e || return
          printf '%b' "$text" | seed_file "$dir/java_json_parse" "$seed" || return
          ;;
        '{'*)
          local selector
          for selector in 0b 0c 0d; do
            printf '%b' "$text" | seed_file "$dir/body_decode" "${seed}_$selector" "$selector" || return
          done
          printf '%b' "$text" | seed_file "$dir/java_json_parse" "$seed" || return
          ;;
        *) printf '%b' "$text" | seed_file "$dir/config_update" "$seed" || return ;;
      esac
      count=$((count + 1))
    done < <(grep -e '^[[:space:]]*"body": "' "$file")
  done
  ((count > 0)) || { echo "fuzz: no bodies in crates/rmq-controller/tests/vectors" >&2; return 1; }
  echo "fuzz: $count Java controller bodies"
}

fuzz_seed() {
  local dir=$1 target
  for target in "${FUZZ_TARGETS[@]}"; do
    mkdir -p "$dir/$target" || return
    if [[ -d "$ROOT/fuzz/seeds/$target" ]]; then
      cp "$ROOT/fuzz/seeds/$target"/* "$dir/$target/" || return
    fi
  done
  seed_wire_vectors "$dir" || return
  seed_body_vectors "$dir" || return
  seed_controller_vectors "$dir" || return
  local files
  for target in "${FUZZ_TARGETS[@]}"; do
    files=("$dir/$target"/*)
    if [[ ! -e "${files[0]}" ]]; then
      echo "fuzz: no seeds for $target" >&2
      return 1
    fi
    echo "fuzz: $target: ${#files[@]} seeds"
  done
}

fuzz_run() {
  local target=$1 seconds=$2
  shift 2
  local log status=0 line execs="?" saved=()
  log=$(mktemp "${TMPDIR:-/tmp}/waymark-fuzz-$target.XXXXXX")
  (cd "$ROOT/fuzz" && cargo fuzz run --target-dir "$ROOT/fuzz/target" "$target" "$@" -- \
    -max_total_time="$seconds" -malloc_limit_mb="$FUZZ_MALLOC_LIMIT_MB" \
    -rss_limit_mb="$FUZZ_RSS_LIMIT_MB" -timeout=10 -print_final_stats=1) >"$log" 2>&1 || status=$?
  while IFS= read -r line; do
    [[ "$line" =~ ^stat::number_of_executed_units:\ *([0-9]+) ]] && execs=${BASH_REMATCH[1]}
    [[ "$line" =~ Test\ unit\ written\ to\ ([^[:space:]]+) ]] && saved+=("${BASH_REMATCH[1]}")
  done <"$log"
  FUZZ_EXECS[$target]=$execs
  if ((status != 0)); then
    echo "fuzz: $target FAILED (exit $status) after $execs executions; the end of its output:" >&2
    tail -n 80 "$log" >&2
    show_inputs "${saved[@]}"
    rm -f "$log"
    return "$status"
  fi
  rm -f "$log"
  printf 'fuzz: %-22s %12s executions in %s s, no crash\n' "$target" "$execs" "$seconds"
}

# show_inputs FILE...: inputs libFuzzer saved (relative to fuzz/), in hex,
# so that a CI log alone reproduces a failure.
show_inputs() {
  local file
  for file in "$@"; do
    [[ "$file" == /* ]] || file=$ROOT/fuzz/$file
    [[ -f "$file" ]] || continue
    echo "fuzz: $file ($(wc -c <"$file") bytes):" >&2
    od -An -tx1 -v "$file" >&2
  done
}
