//! Waymark's NameServer: a drop-in Apache RocketMQ NameServer.
//!
//! Layout: `route` holds the pure route tables (no I/O, time as an
//! argument); `kv` the KV store, written durably with
//! `rmq_transport::durable`; `config` Java's option
//! set; `handlers` one plain function per request code, picked by `dispatch`;
//! `housekeeping` the background tasks; `route_snapshot` the file that lets
//! a restarted server answer routes at once; `server::run` ties them to a
//! listener.
//! The binary (`src/bin/rmq-namesrv.rs`) only parses flags and calls `run`.

pub mod clock;
pub mod config;
pub mod dispatch;
pub mod error;
pub mod handlers;
pub mod housekeeping;
pub mod http;
pub mod kv;
pub mod limits;
pub mod metrics;
pub mod push;
pub mod route;
pub mod route_snapshot;
pub mod security;
pub mod server;
pub mod state;

pub use config::NamesrvConfig;
pub use kv::KvStore;
pub use limits::Limits;
pub use state::{Namesrv, Queues};
