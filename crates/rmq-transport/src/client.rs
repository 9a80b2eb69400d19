//! `RpcClient`: one pipelined connection to a remoting server.
//!
//! Owns opaque assignment, matching responses to requests by opaque, timeouts,
//! and failing every pending call when the connection dies. It does not
//! reconnect, pick servers or retry: that is policy for the crates above.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use rmq_wire::{RemotingCommand, FLAG_ONEWAY, FLAG_RESPONSE};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, ToSocketAddrs};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;

use crate::codec::RemotingCodec;
use crate::connection::{write_loop, Outbound};
use crate::error::{ClientError, CodecError};
use crate::outgoing::{self, Receiver, Sender};
use crate::tls::TlsClient;

/// Settings of [`RpcClient::connect`].
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Give up connecting after this long. Default 3 s (Java's `connectTimeoutMillis`).
    pub connect_timeout: Duration,
    /// Bytes of encoded requests gathered into one write. Default 64 KiB.
    pub write_high_water: usize,
    /// Requests the server sends (e.g. NOTIFY_MIN_BROKER_ID_CHANGE) buffered
    /// for [`RpcClient::take_inbound`]; beyond that they are dropped. 0 drops
    /// them all. Default 64.
    pub inbound_capacity: usize,
    /// TLS for the connection (Java's `tls.enable` and `tls.client.*`);
    /// the handshake counts against [`connect_timeout`]. Default `None`:
    /// plain.
    ///
    /// [`connect_timeout`]: ClientConfig::connect_timeout
    pub tls: Option<TlsClient>,
    /// Called on every request just before it is queued (Java's `RPCHook`
    /// `doBeforeRequest`), after the header is in the ext fields: where a
    /// client signs its requests. Default `None`.
    pub request_hook: Option<Arc<dyn RequestHook>>,
}

/// Something done to every request a client sends, such as signing it
/// (`rmq_auth::Credentials`). Runs on the caller's task, before the request
/// is queued, so it sees exactly the ext fields and body that go out.
pub trait RequestHook: Send + Sync + std::fmt::Debug {
    /// Changes `request` before it is sent.
    fn before_request(&self, request: &mut RemotingCommand);
}

/// Signs every request as Java's `AclClientRPCHook` does.
impl RequestHook for rmq_auth::Credentials {
    fn before_request(&self, request: &mut RemotingCommand) {
        self.sign_request(request);
    }
}

impl Default for ClientConfig {
    fn default() -> ClientConfig {
        ClientConfig {
            connect_timeout: Duration::from_secs(3),
            write_high_water: 64 * 1024,
            inbound_capacity: 64,
            tls: None,
            request_hook: None,
        }
    }
}

/// A pipelined request/response connection. Clones share the connection; use
/// it from as many tasks as you like. The connection closes when the last
/// clone is dropped, on [`close`](RpcClient::close), or when the peer closes.
#[derive(Clone)]
pub struct RpcClient {
    inner: Arc<Inner>,
}

struct Inner {
    peer: SocketAddr,
    local: SocketAddr,
    next_opaque: AtomicI32,
    tx: Sender,
    shared: Arc<Shared>,
    inbound: Mutex<Option<mpsc::Receiver<RemotingCommand>>>,
    request_hook: Option<Arc<dyn RequestHook>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.shared.close.cancel();
    }
}

/// What the connection's tasks and the callers share.
struct Shared {
    pending: Mutex<Pending>,
    close: CancellationToken,
}

#[derive(Default)]
struct Pending {
    waiting: HashMap<i32, oneshot::Sender<RemotingCommand>>,
    closed: bool,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks the connection closed and fails every waiting call.
    fn fail_all(&self) {
        let waiting = {
            let mut pending = self.pending();
            pending.closed = true;
            std::mem::take(&mut pending.waiting)
        };
        drop(waiting);
    }
}

/// Removes a call's pending entry unless it was answered or failed already,
/// so a timed-out or cancelled `invoke` leaves nothing behind.
struct PendingGuard<'a> {
    shared: &'a Shared,
    opaque: i32,
    armed: bool,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.pending().waiting.remove(&self.opaque);
        }
    }
}

impl RpcClient {
    /// Connects to `addr` and starts the connection's reader and writer tasks.
    ///
    /// # Errors
    /// [`ClientError::Connect`] if resolving or connecting fails, the TLS
    /// handshake (with [`ClientConfig::tls`]) fails, or both take longer
    /// than [`ClientConfig::connect_timeout`].
    pub async fn connect<A>(addr: A, config: ClientConfig) -> Result<RpcClient, ClientError>
    where
        A: ToSocketAddrs + fmt::Display,
    {
        let connect_error = |source| ClientError::Connect {
            addr: addr.to_string(),
            source,
        };
        let deadline = Instant::now() + config.connect_timeout;
        let timed_out = || io::Error::new(io::ErrorKind::TimedOut, "connect timed out");
        let stream = match tokio::time::timeout_at(deadline, TcpStream::connect(&addr)).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(error)) => return Err(connect_error(error)),
            Err(_) => return Err(connect_error(timed_out())),
        };
        let _ = stream.set_nodelay(true);
        let (peer, local) = match (stream.peer_addr(), stream.local_addr()) {
            (Ok(peer), Ok(local)) => (peer, local),
            (Err(error), _) | (_, Err(error)) => return Err(connect_error(error)),
        };
        let (tx, rx) = outgoing::queue();
        let (inbound_tx, inbound_rx) = match config.inbound_capacity {
            0 => (None, None),
            capacity => {
                let (tx, rx) = mpsc::channel(capacity);
                (Some(tx), Some(rx))
            }
        };
        let shared = Arc::new(Shared {
            pending: Mutex::default(),
            close: CancellationToken::new(),
        });
        let tasks = Tasks {
            rx,
            shared: shared.clone(),
            inbound: inbound_tx,
            peer,
            high_water: config.write_high_water,
        };
        match &config.tls {
            None => {
                let (read_half, write_half) = stream.into_split();
                tasks.start(read_half, write_half);
            }
            Some(tls) => {
                let stream =
                    match tokio::time::timeout_at(deadline, tls.connect(stream, peer)).await {
                        Ok(Ok(stream)) => stream,
                        Ok(Err(error)) => {
                            return Err(connect_error(io::Error::new(
                                error.kind(),
                                format!(
                                    "TLS handshake failed: {error}{}",
                                    crate::tls::handshake_hint(&error)
                                ),
                            )))
                        }
                        Err(_) => return Err(connect_error(timed_out())),
                    };
                let (read_half, write_half) = tokio::io::split(stream);
                tasks.start(read_half, write_half);
            }
        }

        let inner = Inner {
            peer,
            local,
            next_opaque: AtomicI32::new(0),
            tx,
            shared,
            inbound: Mutex::new(inbound_rx),
            request_hook: config.request_hook.clone(),
        };
        Ok(RpcClient {
            inner: Arc::new(inner),
        })
    }

    /// Sends `request` and waits up to `timeout` for its response. The opaque
    /// is assigned here and the response/one-way flag bits are cleared; the
    /// request goes out in its own serialize type.
    ///
    /// # Errors
    /// [`ClientError::Timeout`] when no response came in time;
    /// [`ClientError::Closed`] when the connection is or becomes closed.
    pub async fn invoke(
        &self,
        mut request: RemotingCommand,
        timeout: Duration,
    ) -> Result<RemotingCommand, ClientError> {
        let opaque = self.next_opaque();
        request.opaque = opaque;
        request.flag &= !(FLAG_RESPONSE | FLAG_ONEWAY);
        if let Some(hook) = &self.inner.request_hook {
            hook.before_request(&mut request);
        }
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.inner.shared.pending();
            if pending.closed {
                return Err(self.closed());
            }
            pending.waiting.insert(opaque, tx);
        }
        let mut guard = PendingGuard {
            shared: &self.inner.shared,
            opaque,
            armed: true,
        };
        if self
            .inner
            .tx
            .send(Box::new(Outbound {
                command: request,
                permit: None,
                charge: None,
            }))
            .is_err()
        {
            return Err(self.closed());
        }
        let result = tokio::time::timeout(timeout, rx).await;
        match result {
            Ok(Ok(response)) => {
                guard.armed = false;
                Ok(response)
            }
            Ok(Err(_)) => {
                guard.armed = false;
                Err(self.closed())
            }
            Err(_) => Err(ClientError::Timeout {
                addr: self.inner.peer,
                timeout,
            }),
        }
    }

    /// Sends `request` one-way: opaque assigned, one-way flag set, no answer
    /// awaited. Returns once the request is queued for writing.
    ///
    /// # Errors
    /// [`ClientError::Closed`] when the connection is closed.
    pub fn invoke_oneway(&self, mut request: RemotingCommand) -> Result<(), ClientError> {
        request.opaque = self.next_opaque();
        request.flag = (request.flag & !FLAG_RESPONSE) | FLAG_ONEWAY;
        if let Some(hook) = &self.inner.request_hook {
            hook.before_request(&mut request);
        }
        self.send(request)
    }

    /// Writes `command` exactly as given, e.g. a response to an inbound request.
    ///
    /// # Errors
    /// [`ClientError::Closed`] when the connection is closed.
    pub fn send(&self, command: RemotingCommand) -> Result<(), ClientError> {
        if self.is_closed() {
            return Err(self.closed());
        }
        self.inner
            .tx
            .send(Box::new(Outbound {
                command,
                permit: None,
                charge: None,
            }))
            .map_err(|_| self.closed())
    }

    /// The receiver of requests the server sends on this connection; `Some`
    /// once, and only if [`ClientConfig::inbound_capacity`] is not 0.
    pub fn take_inbound(&self) -> Option<mpsc::Receiver<RemotingCommand>> {
        self.inner
            .inbound
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// True once the connection has closed (either side).
    pub fn is_closed(&self) -> bool {
        self.inner.shared.close.is_cancelled()
    }

    /// Closes the connection; pending calls fail with [`ClientError::Closed`].
    pub fn close(&self) {
        self.inner.shared.close.cancel();
    }

    /// The server's address.
    pub fn peer_addr(&self) -> SocketAddr {
        self.inner.peer
    }

    /// This end's address.
    pub fn local_addr(&self) -> SocketAddr {
        self.inner.local
    }

    fn next_opaque(&self) -> i32 {
        self.inner.next_opaque.fetch_add(1, Ordering::Relaxed)
    }

    fn closed(&self) -> ClientError {
        ClientError::Closed {
            addr: self.inner.peer,
        }
    }
}

/// What a connection's reader and writer tasks need.
struct Tasks {
    rx: Receiver,
    shared: Arc<Shared>,
    inbound: Option<mpsc::Sender<RemotingCommand>>,
    peer: SocketAddr,
    high_water: usize,
}

impl Tasks {
    /// Starts the writer and reader tasks over a connection's halves, plain
    /// or TLS.
    fn start<R, W>(self, read_half: R, write_half: W)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let Tasks {
            mut rx,
            shared,
            inbound,
            peer,
            high_water,
        } = self;
        let writer_shared = shared.clone();
        tokio::spawn(async move {
            let close = &writer_shared.close;
            if let Err(error) =
                write_loop(write_half, &mut rx, None, close, high_water, |_| ()).await
            {
                tracing::debug!(%peer, %error, "client write failed");
            }
            close.cancel();
        });
        tokio::spawn(async move {
            let frames = FramedRead::new(read_half, RemotingCodec);
            read_loop(frames, &shared, inbound, peer).await;
            shared.close.cancel();
            shared.fail_all();
        });
    }
}

impl fmt::Debug for RpcClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RpcClient")
            .field("peer", &self.inner.peer)
            .field("local", &self.inner.local)
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// Routes responses to their callers and requests to the inbound channel
/// until the connection ends or is closed.
async fn read_loop<R: AsyncRead + Unpin>(
    mut frames: FramedRead<R, RemotingCodec>,
    shared: &Shared,
    inbound: Option<mpsc::Sender<RemotingCommand>>,
    peer: SocketAddr,
) {
    loop {
        let frame = tokio::select! {
            biased;
            () = shared.close.cancelled() => return,
            frame = frames.next() => frame,
        };
        let command = match frame {
            None => return,
            Some(Ok(command)) => command,
            Some(Err(CodecError::Frame(error))) => {
                tracing::warn!(%peer, %error, "malformed frame from server, closing connection");
                return;
            }
            Some(Err(CodecError::Io(error))) => {
                tracing::debug!(%peer, %error, "client read failed");
                return;
            }
        };
        if command.is_response() {
            let waiter = shared.pending().waiting.remove(&command.opaque);
            match waiter {
                // The caller may have timed out in between; nothing to do then.
                Some(waiter) => drop(waiter.send(command)),
                None => {
                    tracing::debug!(%peer, opaque = command.opaque, "late or unknown response dropped")
                }
            }
        } else if let Some(Err(error)) = inbound.as_ref().map(|tx| tx.try_send(command)) {
            tracing::debug!(%peer, %error, "inbound request dropped");
        } else if inbound.is_none() {
            tracing::debug!(%peer, "inbound request dropped");
        }
    }
}
