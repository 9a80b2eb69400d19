//! Error types of the transport: codec failures, client failures, and the
//! error of sending on a connection that is gone.
//!
//! Framing and I/O errors close a connection; nothing here describes a failed
//! request (that is a response code, decided by the service).

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use rmq_wire::FrameError;

use crate::connection::ConnId;

/// Why a frame could not be read from, or written to, a stream.
///
/// Either way the connection it happened on must be closed.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The bytes are not a valid frame (bad length, serialize type or header).
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The socket failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// A command could not be queued because its connection is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("connection {0} is closed")]
pub struct ConnectionClosed(pub ConnId);

/// Why an [`RpcClient`](crate::RpcClient) call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The TCP connection could not be established (or resolved).
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        /// The address as given to `connect`.
        addr: String,
        /// What the OS said; `TimedOut` when the connect timeout ran out.
        #[source]
        source: io::Error,
    },
    /// No response arrived in time. The connection stays usable; a late
    /// response is dropped.
    #[error("no response from {addr} within {timeout:?}")]
    Timeout {
        /// The peer.
        addr: SocketAddr,
        /// The timeout that ran out.
        timeout: Duration,
    },
    /// The connection closed before the request was sent or answered.
    #[error("connection to {addr} is closed")]
    Closed {
        /// The peer.
        addr: SocketAddr,
    },
}

impl ClientError {
    /// True for [`ClientError::Timeout`].
    pub fn is_timeout(&self) -> bool {
        matches!(self, ClientError::Timeout { .. })
    }

    /// True for [`ClientError::Closed`].
    pub fn is_closed(&self) -> bool {
        matches!(self, ClientError::Closed { .. })
    }
}
