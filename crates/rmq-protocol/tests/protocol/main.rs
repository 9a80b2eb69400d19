//! Integration tests of `rmq-protocol`: bodies captured from Java, property
//! round trips and the fast REGISTER_BROKER decoder against the general one.
//!
//! Every test of the crate's `tests/` is a module of this one target, so
//! the workspace links one test executable per crate instead of one per
//! file (docs/testing.md). A module runs alone with
//! `cargo test -p rmq-protocol --test protocol -- <module>::`; a new test goes
//! into the module of its concern, or a new file here with its `mod`
//! line below.

mod java_vectors;
mod proptest;
mod register_common_shape;
