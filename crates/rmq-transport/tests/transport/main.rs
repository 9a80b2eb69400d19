//! Integration tests of `rmq-transport` over real sockets: the server loop,
//! its budgets, keepalive, the PROXY protocol, TLS and the RPC client
//! (helpers in `common`).
//!
//! Every test of the crate's `tests/` is a module of this one target, so
//! the workspace links one test executable per crate instead of one per
//! file (docs/testing.md). A module runs alone with
//! `cargo test -p rmq-transport --test transport -- <module>::`; a new test goes
//! into the module of its concern, or a new file here with its `mod`
//! line below. The keepalive tests' network namespaces are
//! numbered per process and counter (`rmq_testkit::netns`), so they share
//! this process with the others.

mod budgets;
mod common;
mod keepalive;
mod proxy_protocol;
mod rpc_client;
mod server_loop;
mod tls;
mod tls_openssl_files;
