//! Controller mode (AutoSwitch HA): the broker side of the conversation
//! with the controller, Java's `ReplicasManager`.
//!
//! * [`ControllerAgent`] — one replica: obtains its controller id,
//!   registers with the controller leader, heartbeats every controller
//!   node, asks for an election when the set has no master, takes role
//!   decisions (REGISTER and ELECT answers, NOTIFY, the periodic
//!   GET_REPLICA_INFO) and re-registers with the NameServers through its
//!   [`Registrar`](crate::Registrar) under the new role; as master it keeps
//!   the sync-state set.
//! * [`ReplicaState`] — the role rules, plain data: a decision is accepted
//!   only with a newer master epoch.
//! * [`ControllerClient`] — the requests, with leader discovery.
//! * [`IdentityFiles`] — the identity and temporary files, durable.
//! * [`NoticeService`] / [`serve_notices`] — NOTIFY_BROKER_ROLE_CHANGED on
//!   the broker's own address.
//! * [`ControllerModeConfig`] — the options, Java's names and defaults.
//!
//! Not here: a commit log, HA replication and epoch files. A simulated
//! replica reports the master epoch it accepted as its last epoch and the
//! offsets it is given ([`ControllerAgent::set_offsets`]), and treats every
//! replica the controller sees alive as caught up (the master's sync-state
//! set); DNS lookup of `controllerAddr`.

mod agent;
mod client;
mod config;
mod identity;
mod join;
mod notice;
mod state;
mod tasks;

pub use agent::{AgentEvent, AgentView, ControllerAgent, Phase};
pub use client::ControllerClient;
pub use config::{ControllerModeConfig, CONTROLLER_REQUEST_VERSION};
pub use identity::{BrokerIdentity, IdentityFiles, PendingIdentity, Stored};
pub use join::IdOrigin;
pub use notice::{decode_notice, serve_notices, NoticeService};
pub use state::{ReplicaRole, ReplicaState, RoleChange, RoleDecision, Source, SyncStep};
