//! Integration tests of `rmq-broker-sim`: the built binary and the library
//! against the NameServer under test (Waymark's, or Java's when
//! `WAYMARK_JAVA_NAMESRV_CLASSPATH` is set) and real `rmq-controller`
//! processes (helpers in `common`).
//!
//! Every test of the crate's `tests/` is a module of this one target, so
//! the workspace links one test executable per crate instead of one per
//! file (docs/testing.md). A module runs alone with
//! `cargo test -p rmq-broker-sim --test broker_sim -- <module>::`; a new test goes
//! into the module of its concern, or a new file here with its `mod`
//! line below. `sim_signals` signals the `rmq-broker-sim` child it starts,
//! never this process. `interop/run-rust-vs-java.sh` runs some modules
//! against Java's NameServer by these names.

mod common;
mod lifecycle;
mod sim_controller;
mod sim_once;
mod sim_routes;
mod sim_secured;
mod sim_signals;
