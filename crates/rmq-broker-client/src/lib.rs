//! The broker side of RocketMQ route registration, wire-compatible with a
//! Java 5.x (or 4.x) broker (`BrokerController`, `BrokerOuterAPI`,
//! `ReplicasManager`).
//!
//! * [`Registrar`] — one broker's `registerBrokerAll` cycle over a list of
//!   NameServers: the topic-config wrapper with its DataVersion, permission
//!   masking, `needRegister` through QUERY_DATA_VERSION, parallel
//!   registration with per-server timeouts, one-way mode, zlib compression,
//!   split registration, merging of answers; heartbeats and unregistration;
//!   the role seam ([`Registrar::set_role`]) for controller-driven HA.
//! * [`TopicTable`] — topics, mappings and the DataVersion, plain data.
//! * [`Schedule`] / [`spawn`] — start-up and periodic registration,
//!   isolation, heartbeats, HTTP address-service polling, shutdown.
//! * [`NameServerList`] / [`AddressService`] — where the NameServers are.
//! * [`controller`] — controller mode (AutoSwitch HA): [`ControllerAgent`]
//!   takes the broker's role from the controller and drives
//!   [`Registrar::set_role`] and the role-change registrations.
//! * [`security`] — request signing (`innerClientAuthenticationCredentials`)
//!   and TLS (`useTLS`, `tls.enable`) for the NameServer and controller
//!   connections; both off by default, as in Java.
//!
//! Not here: storing messages, pre-online and
//! the acting-master member-group sync (the caller drives
//! [`Registrar::set_isolated`] and [`Registrar::set_role`]), DNS-based
//! NameServer discovery, REGISTER_TOPIC_IN_NAMESRV.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use rmq_broker_client::{numbered_topics, wall_ms, BrokerConfig, NameServerList,
//!     Registrar, Schedule, TopicTable};
//!
//! let config = BrokerConfig::new("DefaultCluster", "broker-a", "127.0.0.1:10911");
//! let topics = TopicTable::with_topics(numbered_topics("TopicTest", 4, 8), wall_ms());
//! let namesrv = NameServerList::from_static("127.0.0.1:9876")?;
//! let registrar = Arc::new(Registrar::new(config.clone(), topics, namesrv)?);
//! let running = rmq_broker_client::spawn(registrar, Schedule::java(&config, None), None);
//! // ... serve ...
//! running.shutdown().await;
//! # Ok(()) }
//! ```

pub mod body;
pub mod config;
pub mod controller;
pub mod error;
pub mod http;
pub mod nsaddr;
mod pool;
pub mod registrar;
pub mod report;
pub mod role;
pub mod schedule;
pub mod security;
mod send;
pub mod topics;

pub use config::{BrokerConfig, BrokerRole, Flavor, PERM_INHERIT, PERM_READ, PERM_WRITE};
pub use controller::{
    AgentEvent, AgentView, ControllerAgent, ControllerModeConfig, ReplicaRole, RoleChange, Source,
};
pub use error::{ConfigError, ControllerError, HttpError, NsError};
pub use http::AddressService;
pub use nsaddr::NameServerList;
pub use registrar::{wall_ms, Registrar};
pub use report::{BatchReport, NsReply, NsResult, RegisterReport, Skip};
pub use role::{MasterInfo, Role};
pub use schedule::{clamp_period, spawn, Event, Running, Schedule, SlotSkip, Trigger};
pub use topics::{numbered_topics, system_topics, TopicTable};
