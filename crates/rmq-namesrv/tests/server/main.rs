//! Integration tests: the real `rmq-namesrv` binary over real TCP, one
//! module per concern. Each test starts its own server (harness in
//! `tests/common`).

#[path = "../common/mod.rs"]
mod common;

mod address_server;
mod authentication;
mod bad_input;
mod broker_requests;
mod cli;
mod clock_steps;
mod cluster_status;
mod conf_example;
mod configuration;
mod deleted_topics;
mod embedded_controller;
mod hostile_peers;
mod http_port;
mod kv_and_config;
mod large_registration;
mod liveness;
mod logging;
mod notify;
mod route_and_topic_requests;
mod tls;
mod vanished_broker;
mod warm_restart;
mod wire_vectors;
