//! The AutoSwitch-HA controller (controller.md): for every broker set (the
//! brokers sharing one `brokerName`) it assigns controller broker ids,
//! elects the master, keeps the sync-state set (SSS) and the epochs that
//! fence stale masters, and tells brokers when their role changed.
//!
//! This crate's core is sans-IO, in the same shape as the NameServer's
//! `RouteTable`:
//!
//! * [`Replicas`] is the replicated state: plain data, changed only by
//!   [`Replicas::apply`] of an [`Event`]. Every controller node applies the
//!   same events in the same order (Raft), so every node holds the same
//!   state.
//! * [`decide`] turns a typed request into an [`Answer`] and the events that
//!   carry it out, reading the state, the node's [`LiveTable`] and the time
//!   passed in; it never changes anything itself. Only the leader decides.
//! * [`LiveTable`] is per node and not replicated: which broker replicas
//!   heartbeat this node in time, and how far their logs reach (the
//!   election order).
//! * [`elect`] is the election policy.
//!
//! Around the core: [`raft`] (openraft, its durable store and its peer
//! network on the controller's port), [`node`] (a running node: decide on
//! the leader, commit, answer), the transport service, the background tasks
//! (expiry, dead-master elections, role-change notices) and [`server::run`].

mod answer;
pub mod config;
mod config_requests;
pub mod decide;
pub mod elect;
mod event;
pub mod http;
mod liveness;
pub mod metrics;
pub mod node;
pub mod notice;
pub mod raft;
mod replicas;
pub mod request;
pub mod server;
mod service;
mod tasks;

pub use answer::{Answer, Decision};
pub use config::ControllerConfig;
pub use event::Event;
pub use liveness::{Heartbeat, LiveInfo, LiveKey, LiveTable, Millis};
pub use node::ControllerNode;
pub use replicas::{BrokerSet, Replica, Replicas, FIRST_BROKER_ID};
pub use service::ControllerService;
