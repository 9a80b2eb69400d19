//! Integration tests of `rmq-wire`: frames against Java's bytes and limits,
//! the JSON header decoder's leniency and property tests of the codecs
//! (helpers in `common`).
//!
//! Every test of the crate's `tests/` is a module of this one target, so
//! the workspace links one test executable per crate instead of one per
//! file (docs/testing.md). A module runs alone with
//! `cargo test -p rmq-wire --test wire -- <module>::`; a new test goes
//! into the module of its concern, or a new file here with its `mod`
//! line below.

mod common;
mod frame_limits;
mod java_vectors;
mod json_leniency;
mod proptest;
mod wire_vectors;
