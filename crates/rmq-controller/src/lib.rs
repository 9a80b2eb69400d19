//! The AutoSwitch-HA controller: for every broker set (the brokers sharing
//! one `brokerName`) it assigns controller broker ids, elects the master,
//! keeps the sync-state set (SSS) and the epochs that fence stale masters,
//! and tells brokers when their role changed (docs/controller.md).
//!
//! Two halves, split where I/O begins:
//!
//! * [`core`]: the replicated state ([`Replicas`], changed only by
//!   [`Event`]s), the decisions, each node's liveness table, the election
//!   policy. Sans-IO, in the same shape as the NameServer's `RouteTable`.
//! * [`node`]: a running node over openraft and tokio — the Raft store and
//!   peer network, the transport service, the background tasks, the HTTP
//!   API and metrics, and [`server::run`].

pub mod config;
pub mod core;
pub mod node;

pub use crate::core::{
    Answer, BrokerSet, Decision, Event, Heartbeat, LiveInfo, LiveKey, LiveTable, Millis, Replica,
    Replicas, FIRST_BROKER_ID,
};
pub use config::ControllerConfig;
/// The paths the NameServer's embedded controller uses.
pub use node::{http, metrics, server};
pub use node::{ControllerNode, ControllerService};
