//! Route push, Waymark's extension (docs/protocol-extensions.md): routes
//! sent by the NameServer as they change instead of polled.
//!
//! [`RouteSubscription`] is one subscription connection, for callers that
//! want the pushes themselves (`rmq-admin route watch`); a started
//! [`RouteClient`](crate::RouteClient) keeps one for every topic it follows
//! and falls back to polling when the NameServer has no route push.

mod subscription;

pub use subscription::{PushConfig, PushError, PushEvent, RouteSubscription};

/// How a started [`RouteClient`](crate::RouteClient) follows route changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushState {
    /// Route push is off ([`RouteClientConfig::route_push`](crate::RouteClientConfig::route_push)
    /// false, or the client was not started): routes are polled.
    Off,
    /// Not subscribed yet, or subscribing again after a lost connection;
    /// polling meanwhile.
    Connecting,
    /// Subscribed: changes arrive as the NameServer applies them.
    Pushing {
        /// The NameServer pushing.
        addr: String,
    },
    /// The NameServer has no route push (a Java NameServer): polling every
    /// `poll_name_server_interval`, asking again later.
    Polling {
        /// The NameServer that answered REQUEST_CODE_NOT_SUPPORTED.
        addr: String,
    },
}
