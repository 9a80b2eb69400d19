# The Rust build the interop stages run against, sourced by the interop scripts (not
# executable on its own); needs ROOT set to the repository.
#
#   workspace_build        cargo test --workspace --no-run (--locked when CI=true):
#                          every test, binary and example of the workspace, built as
#                          `cargo test --workspace` builds them
#   workspace_bin NAME     the path of binary NAME of that build (target/debug/NAME)
#   workspace_example NAME the path of example NAME of that build
#
# Why the whole workspace: Cargo resolves the features of the dependencies once per
# command, over the packages it selects and their dev-dependencies when it builds
# tests. `cargo build -p rmq-namesrv` gets tokio without test-util and serde without
# alloc, and `cargo test -p rmq-broker-client` yet another set, so each such command
# compiled most of the workspace again beside `cargo test --workspace`'s build (on a
# fresh machine, one more debug build per interop script). Selecting the whole
# workspace every time resolves one set: after `cargo test --workspace` this build
# compiles nothing. Tests are picked by name with --test, never by -p.

workspace_build() {
  local flags=(-q --workspace --no-run)
  [[ "${CI:-}" == "true" ]] && flags+=(--locked)
  cargo test --manifest-path "$ROOT/Cargo.toml" "${flags[@]}"
}

workspace_target_dir() {
  local dir=${CARGO_TARGET_DIR:-target}
  [[ "$dir" == /* ]] || dir="$ROOT/$dir"
  echo "$dir"
}

workspace_bin() {
  echo "$(workspace_target_dir)/debug/$1"
}

workspace_example() {
  echo "$(workspace_target_dir)/debug/examples/$1"
}
