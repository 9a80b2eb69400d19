//! Integration tests of the built `rmq-admin` binary against real
//! `rmq-namesrv` and `rmq-controller` processes (helpers in `common`).
//!
//! Every test of the crate's `tests/` is a module of this one target, so
//! the workspace links one test executable per crate instead of one per
//! file (docs/testing.md). A module runs alone with
//! `cargo test -p rmq-admin --test admin -- <module>::`; a new test goes
//! into the module of its concern, or a new file here with its `mod`
//! line below. `interop/run-rust-vs-java.sh` runs `namesrv_failures` and
//! `route_watch` against Java's NameServer by these names.

mod common;
mod controller_commands;
mod namesrv_commands;
mod namesrv_diff;
mod namesrv_diff_cluster;
mod namesrv_failures;
mod route_watch;
mod signing_and_tls;
