//! Integration tests of `rmq-broker-client` against the NameServer under test
//! (`common`: Waymark's, or Java's when `WAYMARK_JAVA_NAMESRV_CLASSPATH` is
//! set) and, for the controller modules, real `rmq-controller` processes
//! (`replicas`).
//!
//! Every test of the crate's `tests/` is a module of this one target, so
//! the workspace links one test executable per crate instead of one per
//! file (docs/testing.md). A module runs alone with
//! `cargo test -p rmq-broker-client --test broker_client -- <module>::`; a new test goes
//! into the module of its concern, or a new file here with its `mod`
//! line below. `interop/run-rust-vs-java.sh` runs the modules that start a
//! NameServer against Java's by these names.

mod address_service;
mod authenticated_registration;
mod common;
mod controller_expiry;
mod controller_failover;
mod controller_group;
mod controller_ids;
mod heartbeat;
mod namesrv_failures;
mod need_register;
mod register_bodies;
mod register_master_slave;
mod replicas;
mod schedule_timing;
mod unregister;
