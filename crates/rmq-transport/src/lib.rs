//! Tokio plumbing for RocketMQ remoting: codec, connections, server loop, RPC client.
//!
//! Owns moving frames: [`RemotingCodec`] adapts `rmq_wire::frame` to tokio-util,
//! [`run`] serves a [`Service`] over a listener (connection limit, per-connection
//! backpressure, idle timeout, pipelining, graceful drain), and [`RpcClient`]
//! makes pipelined calls; [`durable`] replaces a server's files so that an
//! acknowledged write is on disk. It knows no NameServer semantics: what a request
//! means is the service's business, typed headers are `rmq-protocol`'s.

mod budget;
pub mod client;
pub mod codec;
pub mod connection;
pub mod durable;
pub mod error;
mod frames;
pub mod limits;
pub mod server;
mod session;
pub mod shutdown;

pub use client::{ClientConfig, RpcClient};
pub use codec::RemotingCodec;
pub use connection::{ConnId, ConnectionHandle, ConnectionInfo, DisconnectReason, Outbox};
pub use error::{ClientError, CodecError, ConnectionClosed};
pub use limits::ServerLimits;
pub use server::{run, Reply, ServerConfig, Service};
pub use session::panic_message;
