//! Waymark's NameServer: a drop-in Apache RocketMQ NameServer.
//!
//! Layout: `route` holds the pure route tables (no I/O, time as an
//! argument); `kv` the KV store, written durably with
//! `rmq_transport::durable`; `config` Java's option set; `push` route
//! subscriptions; `route_snapshot` the file that lets a restarted server
//! answer routes at once; `housekeeping` the background tasks and their
//! queues. `state` assembles those parts. At the edge, `request` decodes and
//! checks each request into its type, `handlers` has one plain function per
//! request code over the parts it uses and that type, and `dispatch` picks
//! the function and turns its answer or error into the response.
//! `server::run` ties them to a listener; the binary
//! (`src/bin/rmq-namesrv.rs`) only parses flags and calls `run`.

pub mod address_server;
pub mod answer;
pub mod clock;
pub mod cluster;
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
pub mod request;
pub mod route;
pub mod route_snapshot;
pub mod security;
pub mod server;
pub mod state;

pub use config::NamesrvConfig;
pub use housekeeping::Queues;
pub use kv::{KvStore, SharedKv};
pub use limits::Limits;
pub use state::Namesrv;
