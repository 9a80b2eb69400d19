//! Tokio plumbing for RocketMQ remoting: codec, connections, server loop, RPC client.
//!
//! Owns moving frames: [`RemotingCodec`] adapts `rmq_wire::frame` to tokio-util,
//! [`run`] serves a [`Service`] over a listener (connection limit, per-connection
//! backpressure, idle timeout, pipelining, graceful drain), and [`RpcClient`]
//! makes pipelined calls; [`durable`] replaces a server's files so that an
//! acknowledged write is on disk. It knows no NameServer semantics: what a request
//! means is the service's business, typed headers are `rmq-protocol`'s.
//!
//! # TLS
//!
//! [`tls`] does TLS as Java's remoting layer does, with rustls (`ring`):
//! plain and TLS clients share one port, told apart by the first byte (0x16
//! starts a TLS handshake), under `tls.server.mode` `disabled`, `permissive`
//! (Java's default) or `enforcing`. [`tls::TlsSettings`] reads Java's
//! `tls.*` keys and `tls.config.file`; [`tls::ServerTls::from_settings`]
//! gives what [`ServerConfig::tls`] takes, and its [`tls::TlsServer`]
//! reloads the certificate when its files change
//! ([`reload_if_changed`](tls::TlsServer::reload_if_changed), polled by the
//! caller); [`tls::TlsClient::from_settings`] gives what
//! [`ClientConfig::tls`] takes. Both return warnings for the caller to log:
//! whatever Waymark does not do as written is said, never ignored. With
//! mutual TLS the service finds the client certificate's names in
//! [`ConnectionInfo::tls_identity`]. Waymark makes up no certificate
//! (`permissive` without one serves plain only), verifies every client
//! certificate it takes an identity from, and verifies servers unless told
//! `tls.client.authServer=false`; see [`tls`] for the rest.
//!
//! # PROXY protocol
//!
//! [`proxy_protocol`] reads the HAProxy PROXY protocol header (v1 and v2)
//! that a load balancer may send first, before TLS detection, as Java 5.x
//! does; unlike Java, only from the peers [`ServerConfig::proxy_protocol`]
//! trusts (nobody by default). The client it names is
//! [`ConnectionInfo::peer`].
//!
//! # Dead peers
//!
//! [`keepalive`] sets TCP keepalive and TCP_USER_TIMEOUT on every accepted
//! connection ([`ServerConfig::keepalive`]), so that a peer gone without FIN
//! or RST (power loss, a cut link) is closed within seconds and its
//! `on_disconnect` runs, where Java's server (SO_KEEPALIVE off) waits for its
//! idle close.

pub mod auth;
mod budget;
pub mod client;
pub mod codec;
pub mod connection;
pub mod durable;
pub mod error;
mod frames;
pub mod keepalive;
pub mod limits;
mod outgoing;
pub mod proxy_protocol;
pub mod server;
mod session;
pub mod shutdown;
pub mod stats;
pub mod tls;

pub use client::{ClientConfig, RequestHook, RpcClient};
pub use codec::RemotingCodec;
pub use connection::{ConnId, ConnectionHandle, ConnectionInfo, DisconnectReason, Outbox};
pub use error::{ClientError, CodecError, ConnectionClosed};
pub use keepalive::Keepalive;
pub use limits::ServerLimits;
pub use proxy_protocol::ProxyProtocol;
pub use server::{run, Reply, ServerConfig, Service};
pub use session::panic_message;
pub use stats::{Refusal, ServerStats, StatsSnapshot};
pub use tls::{ServerTls, TlsClient, TlsIdentity, TlsServer, TlsSettings};
