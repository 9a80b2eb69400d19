//! Identity of a connection and the means to write to it: `ConnId`,
//! `ConnectionInfo`, the `ConnectionHandle` a service keeps to send on it
//! later, and the batching writer loop that server and client share.
//!
//! Reading, dispatch and the connection's lifetime are `session`'s; the accept
//! loop and shutdown sequencing are `server`'s.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::BytesMut;
use rmq_wire::{RemotingCommand, SerializeType};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::codec::Encoder;
use tokio_util::sync::CancellationToken;

use crate::budget::{Charge, ResponseQueue};
use crate::codec::RemotingCodec;
use crate::error::{CodecError, ConnectionClosed};
use crate::outgoing::{self, Receiver, Sender};
use crate::tls::{TlsIdentity, TlsSession};

static NEXT_CONN_ID: AtomicU64 = AtomicU64::new(1);

/// Identifies one connection for as long as the process runs: ids are never
/// reused, across servers too. State keyed by it (a broker's live channel)
/// stays valid data after the connection is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub u64);

impl ConnId {
    pub(crate) fn next() -> ConnId {
        ConnId(NEXT_CONN_ID.fetch_add(1, Ordering::Relaxed))
    }
}

impl fmt::Display for ConnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Why a connection ended, as passed to
/// [`Service::on_disconnect`](crate::Service::on_disconnect).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DisconnectReason {
    /// The peer closed the connection.
    Closed,
    /// Nothing was read or written for the configured idle timeout.
    Idle,
    /// The server shut down.
    Shutdown,
    /// The service closed it through [`ConnectionHandle::close`].
    ClosedByService,
    /// A malformed frame or a socket error; the text says which.
    Error(String),
}

/// What a service knows about the connection a request came on.
#[derive(Debug, Clone)]
pub struct ConnectionInfo {
    pub(crate) id: ConnId,
    /// The client: the TCP peer, or the client a trusted proxy named.
    pub(crate) peer: SocketAddr,
    /// The trusted proxy whose PROXY protocol header named `peer`.
    pub(crate) proxied_by: Option<SocketAddr>,
    pub(crate) local: SocketAddr,
    pub(crate) handle: ConnectionHandle,
    /// What the TLS handshake established; `None` for a plain connection.
    pub(crate) tls: Option<Arc<TlsSession>>,
}

impl ConnectionInfo {
    /// A connection that is not backed by a socket: what is sent on its handle
    /// arrives in the returned [`Outbox`]. For unit-testing services.
    pub fn detached(
        peer: SocketAddr,
        local: SocketAddr,
        serialize_type: SerializeType,
    ) -> (ConnectionInfo, Outbox) {
        let (tx, rx) = outgoing::queue();
        let id = ConnId::next();
        let handle = ConnectionHandle {
            id,
            tx,
            serialize_type,
            closer: CancellationToken::new(),
            queue: None,
        };
        (
            ConnectionInfo {
                id,
                peer,
                proxied_by: None,
                local,
                handle,
                tls: None,
            },
            Outbox(rx),
        )
    }

    /// This connection as if it had come over TLS, with `identity` from the
    /// client certificate (`None`: none was sent). For unit-testing services
    /// with [`detached`](ConnectionInfo::detached) connections.
    pub fn with_tls_identity(mut self, identity: Option<TlsIdentity>) -> ConnectionInfo {
        self.tls = Some(Arc::new(TlsSession { identity }));
        self
    }

    /// This connection as if its peer were a trusted proxy that relayed it
    /// for `client` (a PROXY protocol header). For unit-testing services with
    /// [`detached`](ConnectionInfo::detached) connections.
    pub fn relayed_for(mut self, client: SocketAddr) -> ConnectionInfo {
        self.proxied_by = Some(self.peer);
        self.peer = client;
        self
    }

    /// The connection's id.
    pub fn id(&self) -> ConnId {
        self.id
    }

    /// The client's address: the remote address, or, when a trusted proxy
    /// relayed the connection, the client its PROXY protocol header named
    /// ([`ServerConfig::proxy_protocol`](crate::ServerConfig::proxy_protocol)).
    /// The address to decide on and to log.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// The remote address when it is a trusted proxy that named another
    /// client as [`peer`](ConnectionInfo::peer); `None` otherwise (also for
    /// a proxy's own connections: v1 `UNKNOWN`, v2 `LOCAL`). For logs.
    pub fn proxied_by(&self) -> Option<SocketAddr> {
        self.proxied_by
    }

    /// The local address the connection was accepted on.
    pub fn local(&self) -> SocketAddr {
        self.local
    }

    /// A handle for sending on this connection later.
    pub fn handle(&self) -> &ConnectionHandle {
        &self.handle
    }

    /// True if the connection came over TLS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// The names in the client certificate, verified in the TLS handshake;
    /// `None` for a plain connection or a TLS client that sent none.
    pub fn tls_identity(&self) -> Option<&TlsIdentity> {
        self.tls.as_ref()?.identity.as_ref()
    }
}

/// Sends server-initiated commands on one connection. Cheap to clone; keeping
/// one does not keep the connection open.
#[derive(Clone)]
pub struct ConnectionHandle {
    pub(crate) id: ConnId,
    pub(crate) tx: Sender,
    pub(crate) serialize_type: SerializeType,
    pub(crate) closer: CancellationToken,
    /// The connection's queued-response accounting (server connections only).
    pub(crate) queue: Option<Arc<ResponseQueue>>,
}

impl ConnectionHandle {
    /// The connection's id.
    pub fn id(&self) -> ConnId {
        self.id
    }

    /// Queues `command` as it is (set the one-way flag and opaque yourself),
    /// re-encoded in the server's configured serialize type. A response to it
    /// is dropped by the server, so send one-way requests.
    ///
    /// # Errors
    /// [`ConnectionClosed`] once the connection has closed.
    pub fn send(&self, mut command: RemotingCommand) -> Result<(), ConnectionClosed> {
        command.serialize_type = self.serialize_type;
        let charge = self.queue.as_ref().map(|queue| queue.charge(&command));
        self.tx
            .send(Box::new(Outbound {
                command,
                permit: None,
                charge,
            }))
            .map_err(|_| ConnectionClosed(self.id))
    }

    /// Closes the connection: reading stops at once, nothing more is written,
    /// and the service gets `on_disconnect` with
    /// [`DisconnectReason::ClosedByService`]. Used to drop a broker whose
    /// heartbeat expired, as Java closes its channel.
    pub fn close(&self) {
        self.closer.cancel();
    }

    /// True once the connection's writer has stopped.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// Bytes queued for writing and not yet written (responses and what
    /// [`send`](Self::send) queued), by their approximate frame length: how
    /// far behind the peer's reading is. 0 for a detached connection.
    pub fn queued_bytes(&self) -> usize {
        self.queue.as_ref().map_or(0, |queue| queue.queued())
    }
}

impl fmt::Debug for ConnectionHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectionHandle")
            .field("id", &self.id)
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// What was sent on a [`ConnectionInfo::detached`] connection.
#[derive(Debug)]
pub struct Outbox(Receiver);

impl Outbox {
    /// The next command sent, if one is queued.
    pub fn try_recv(&mut self) -> Option<RemotingCommand> {
        self.0.try_recv().map(|out| out.command)
    }

    /// Waits for the next command; `None` once every handle is dropped.
    pub async fn recv(&mut self) -> Option<RemotingCommand> {
        self.0.recv().await.map(|out| out.command)
    }
}

/// A command queued for a writer. A response holds its request's in-flight
/// permit until it has been encoded, so queued responses count as in flight;
/// its bytes count against the connection's response budget until written.
///
/// Queues carry it boxed: a queue's slots are then a pointer each, so one
/// that has held a few commands keeps only a few words while idle, for one
/// small allocation per command sent.
#[derive(Debug)]
pub(crate) struct Outbound {
    pub(crate) command: RemotingCommand,
    pub(crate) permit: Option<OwnedSemaphorePermit>,
    pub(crate) charge: Option<Charge>,
}

/// Writer buffers that grew past this (a huge body) are not kept.
const SHRINK_ABOVE: usize = 1 << 20;

/// Writes queued commands (`first`, the one already taken off the queue that
/// started the writer, before them) until `close` is cancelled or every
/// sender is gone.
/// Everything ready is encoded into one buffer (up to `high_water` bytes) and
/// written with one `write_all`; a batch that has started is always finished.
pub(crate) async fn write_loop<W: AsyncWrite + Unpin>(
    mut io: W,
    rx: &mut Receiver,
    mut first: Option<Box<Outbound>>,
    close: &CancellationToken,
    high_water: usize,
    mut on_write: impl FnMut(usize),
) -> io::Result<()> {
    let mut codec = RemotingCodec;
    // Allocated on the first write: many connections (one-way heartbeats,
    // notices) never write anything.
    let mut buf = BytesMut::new();
    // The charges of the commands in `buf`: given back once written.
    let mut charges = Vec::new();
    loop {
        let first = match first.take() {
            // Closed already: dropped, as what is still queued is.
            Some(item) if !close.is_cancelled() => item,
            _ => tokio::select! {
                biased;
                () = close.cancelled() => break,
                item = rx.recv() => match item {
                    Some(item) => item,
                    None => break,
                },
            },
        };
        encode_releasing(&mut codec, *first, &mut buf, &mut charges)?;
        while buf.len() < high_water {
            let Some(next) = rx.try_recv() else { break };
            encode_releasing(&mut codec, *next, &mut buf, &mut charges)?;
        }
        io.write_all(&buf).await?;
        // A TLS stream may keep encrypted records back until flushed; for a
        // TCP stream this is a no-op.
        io.flush().await?;
        charges.clear();
        on_write(buf.len());
        if buf.capacity() > SHRINK_ABOVE {
            buf = BytesMut::new();
        } else {
            buf.clear();
        }
    }
    io.shutdown().await
}

/// Encodes one queued command, then gives its in-flight permit back.
fn encode_releasing(
    codec: &mut RemotingCodec,
    item: Outbound,
    buf: &mut BytesMut,
    charges: &mut Vec<Charge>,
) -> io::Result<()> {
    let Outbound {
        command,
        permit,
        charge,
    } = item;
    let encoded = codec.encode(&command, buf);
    drop(permit);
    charges.extend(charge);
    encoded.map_err(|error| match error {
        CodecError::Io(error) => error,
        CodecError::Frame(error) => io::Error::new(io::ErrorKind::InvalidData, error),
    })
}
