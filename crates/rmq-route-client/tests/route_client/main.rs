//! Integration tests of `rmq-route-client` against real NameServers (Waymark's,
//! or Java's when `WAYMARK_JAVA_NAMESRV_CLASSPATH` is set) and in-process
//! servers speaking real frames (helpers in `common`).
//!
//! Every test of the crate's `tests/` is a module of this one target, so
//! the workspace links one test executable per crate instead of one per
//! file (docs/testing.md). A module runs alone with
//! `cargo test -p rmq-route-client --test route_client -- <module>::`; a new test goes
//! into the module of its concern, or a new file here with its `mod`
//! line below. `interop/run-rust-vs-java.sh` runs some modules against
//! Java's NameServer by these names.

mod channel_faults;
mod common;
mod namesrv_failover;
mod route_fetch;
mod route_push;
mod route_watch;
mod signed_tls_lookup;
