//! Integration tests of `rmq-controller`: controller groups over real
//! sockets (helpers in `common`), Java's recorded request sequences, and
//! `simulation`, the seeded simulation of a group and its brokers over the
//! sans-IO code.
//!
//! Every test of the crate's `tests/` is a module of this one target, so
//! the workspace links one test executable per crate instead of one per
//! file (docs/testing.md). A module runs alone with
//! `cargo test -p rmq-controller --test controller -- <module>::`; a new test goes
//! into the module of its concern, or a new file here with its `mod`
//! line below. The simulation's settings come from `WAYMARK_SIM_*`, read when
//! its tests run, not at start (`scripts/simulate.sh` runs
//! `simulation::seeds` of this target's release build).

mod authentication;
mod bad_input;
mod cluster;
mod common;
mod conf_example;
mod http_port;
mod java_controller_vectors;
mod simulation;
mod tls;
