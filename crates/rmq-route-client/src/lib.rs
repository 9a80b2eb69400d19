//! The producer/consumer side of RocketMQ routing, behaving as the Java
//! client does (`MQClientInstance`, `MQClientAPIImpl`, `MQFaultStrategy`,
//! the `AllocateMessageQueueStrategy` implementations).
//!
//! Owns, per client instance ([`RouteClient`]):
//!
//! * NameServer choice ([`nameserver`]): a shuffled list, a sticky choice,
//!   rotation to the next address once the channel breaks;
//! * the route cache ([`route`]): on-demand fetches, periodic refresh
//!   (`pollNameServerInterval`), TOPIC_NOT_EXIST keeping the cached route,
//!   replacement only when Java's change test says so, and
//!   [`RouteClient::watch`] to follow changes;
//! * what a route means ([`view`]): the publish view (write queues of
//!   writable master brokers, or the order conf) and the subscribe view
//!   (read queues of readable brokers), static topics included;
//! * queue choice for a send ([`select`]): Java's per-thread round robin and
//!   the latency fault tolerance tables;
//! * consumer allocation ([`allocate`]): the six Java strategies.
//!
//! NameServer connections are plain and requests unsigned unless
//! [`RouteClientConfig::tls`] and [`RouteClientConfig::credentials`] say
//! otherwise (Java's `tls.enable` and `AclClientRPCHook`).
//!
//! It does not send messages, heartbeat brokers, run a rebalance loop or
//! fetch consumer lists: those belong to a producer or consumer built on
//! top. Pure parts (`view`, `route`, `select`, `allocate`,
//! `nameserver::list`) are plain data and functions; only
//! [`RouteClient`] and [`nameserver::NameServerChannel`] do I/O.
//!
//! ```no_run
//! # async fn demo() -> Result<(), rmq_route_client::RouteError> {
//! use rmq_route_client::{RouteClient, RouteClientConfig};
//!
//! let client = RouteClient::start(RouteClientConfig::with_namesrv_addr("127.0.0.1:9876"));
//! let view = client.publish_view("TopicTest").await?;
//! let queue = client.select_queue(&view, None, false);
//! let mut changes = client.watch("TopicTest").await;
//! changes.changed().await.ok();
//! # let _ = queue; Ok(()) }
//! ```

pub mod allocate;
mod client;
pub mod config;
mod error;
mod message_queue;
pub mod nameserver;
pub mod push;
pub mod route;
pub mod select;
pub mod view;

pub use allocate::{AllocateError, AllocateStrategy};
pub use client::{route_from_response, route_request, RouteClient, RouteWatch};
pub use config::RouteClientConfig;
pub use error::{RouteError, NOT_FOUND_TOPIC_EXCEPTION, NO_NAME_SERVER_EXCEPTION};
pub use message_queue::{java_string_cmp, sort_for_allocation, MessageQueue};
pub use push::PushState;
pub use view::{PublishInfo, TopicView};
