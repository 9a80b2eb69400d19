//! The server loop: accept, enforce the connection limit, run each connection
//! against a [`Service`], and shut down gracefully.
//!
//! What a request means is the service's business; this module only decides
//! when requests are read (backpressure), that one-way requests are never
//! answered, and how the server stops. The per-connection machinery is in
//! `connection`.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use rmq_wire::{RemotingCommand, SerializeType};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::connection::{ConnectionInfo, DisconnectReason};
use crate::session::{self, Lifecycle};

/// What the server asks of the code that answers requests.
///
/// `call` runs on the connection's reader: a synchronous answer
/// ([`Reply::Ready`]) costs no task spawn but holds up further reads on that
/// one connection while it runs, so slow work belongs in [`Reply::Pending`],
/// which runs as its own task. Requests of one connection are in flight
/// together up to [`ServerConfig::max_in_flight`].
///
/// A panic in any method is caught where the server can catch it: a panicking
/// `call` (or pending future) is answered with SYSTEM_ERROR.
pub trait Service: Send + Sync + 'static {
    /// A connection was accepted. Called before its first request.
    fn on_connect(&self, conn: &ConnectionInfo) {
        let _ = conn;
    }

    /// Answers one request (never a response frame). The server sets the
    /// returned response's opaque, response flag and serialize type, and drops
    /// it for one-way requests, so `RemotingCommand::response_to` or any
    /// command with the right code will do.
    fn call(&self, conn: &ConnectionInfo, request: RemotingCommand) -> Reply;

    /// The connection has closed; nothing more will be read from or written
    /// to it. Called exactly once per `on_connect`.
    fn on_disconnect(&self, conn: &ConnectionInfo, reason: DisconnectReason) {
        let _ = (conn, reason);
    }
}

impl<T: Service> Service for Arc<T> {
    fn on_connect(&self, conn: &ConnectionInfo) {
        (**self).on_connect(conn)
    }

    fn call(&self, conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
        (**self).call(conn, request)
    }

    fn on_disconnect(&self, conn: &ConnectionInfo, reason: DisconnectReason) {
        (**self).on_disconnect(conn, reason)
    }
}

/// A service's answer: now, or later.
pub enum Reply {
    /// Answered synchronously; `None` sends nothing.
    Ready(Option<RemotingCommand>),
    /// Answered when the future completes; `None` sends nothing.
    Pending(BoxFuture<'static, Option<RemotingCommand>>),
}

impl Reply {
    /// No response.
    pub fn none() -> Reply {
        Reply::Ready(None)
    }

    /// Respond with `response` now.
    pub fn ready(response: RemotingCommand) -> Reply {
        Reply::Ready(Some(response))
    }

    /// Respond with what `future` yields, computed on its own task.
    pub fn later(future: impl Future<Output = Option<RemotingCommand>> + Send + 'static) -> Reply {
        Reply::Pending(Box::pin(future))
    }
}

impl From<RemotingCommand> for Reply {
    fn from(response: RemotingCommand) -> Reply {
        Reply::Ready(Some(response))
    }
}

impl From<Option<RemotingCommand>> for Reply {
    fn from(response: Option<RemotingCommand>) -> Reply {
        Reply::Ready(response)
    }
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reply::Ready(response) => f.debug_tuple("Ready").field(response).finish(),
            Reply::Pending(_) => f.write_str("Pending(..)"),
        }
    }
}

/// Limits and behaviour of [`run`]. Defaults follow Java's NameServer.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Connections served at once; more are accepted and closed at once.
    /// Default 65536.
    pub max_connections: usize,
    /// Requests of one connection being processed (or their responses
    /// waiting to be written) at once; at the limit the connection is not read
    /// until one finishes. Default 256; at least 1.
    pub max_in_flight: usize,
    /// Bytes of encoded responses gathered into one write. Default 64 KiB
    /// (Netty's write-buffer high-water mark).
    pub write_high_water: usize,
    /// Close a connection after this long with no read and no write;
    /// `None` never does. Default 120 s (`serverChannelMaxIdleTimeSeconds`).
    pub idle_timeout: Option<Duration>,
    /// Serialize type of everything the server sends, whatever the request
    /// used (Java's `rocketmq.serialize.type`). Default JSON.
    pub serialize_type: SerializeType,
    /// How long shutdown waits for in-flight requests and their responses.
    /// Default 10 s.
    pub drain_timeout: Duration,
}

impl ServerConfig {
    /// The defaults with Java's `serverChannelMaxIdleTimeSeconds` (0 or less:
    /// no idle close) and the server's own serialize type.
    pub fn with_idle_seconds(seconds: i32, serialize_type: SerializeType) -> ServerConfig {
        ServerConfig {
            idle_timeout: u64::try_from(seconds)
                .ok()
                .filter(|s| *s > 0)
                .map(Duration::from_secs),
            serialize_type,
            ..ServerConfig::default()
        }
    }
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            max_connections: 65_536,
            max_in_flight: 256,
            write_high_water: 64 * 1024,
            idle_timeout: Some(Duration::from_secs(120)),
            serialize_type: SerializeType::Json,
            drain_timeout: Duration::from_secs(10),
        }
    }
}

/// Serves `listener` with `service` until `shutdown` resolves.
///
/// Then it stops accepting (the listener is closed, so new connections are
/// refused), stops reading, lets in-flight requests finish and their responses
/// flush for at most [`ServerConfig::drain_timeout`], closes every connection
/// (`on_disconnect` with [`DisconnectReason::Shutdown`]) and returns.
///
/// Accepted sockets get TCP_NODELAY. A malformed frame or socket error closes
/// only its own connection. Accept errors (e.g. out of file descriptors) are
/// logged and retried after a short pause.
///
/// # Errors
/// None at present; the `io::Result` leaves room for listener failures.
pub async fn run<S: Service>(
    listener: TcpListener,
    service: S,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let service = Arc::new(service);
    let config = Arc::new(config);
    let life = Lifecycle {
        stop: CancellationToken::new(),
        force: CancellationToken::new(),
    };
    let connections = Arc::new(Semaphore::new(
        config.max_connections.min(Semaphore::MAX_PERMITS),
    ));
    let tracker = TaskTracker::new();
    let local = listener.local_addr().ok();
    tokio::pin!(shutdown);
    tracing::debug!(?local, "server accepting");

    loop {
        let accepted = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) if is_per_connection(&error) => continue,
            Err(error) => {
                tracing::warn!(?local, %error, "accept failed, retrying");
                tokio::select! {
                    () = &mut shutdown => break,
                    () = tokio::time::sleep(Duration::from_millis(100)) => continue,
                }
            }
        };
        let Ok(slot) = connections.clone().try_acquire_owned() else {
            tracing::warn!(%peer, max = config.max_connections, "connection limit reached, closing new connection");
            drop(stream);
            continue;
        };
        let (service, config, life) = (service.clone(), config.clone(), life.clone());
        tracker.spawn(async move {
            session::serve(stream, peer, service, config, life).await;
            drop(slot);
        });
    }

    drop(listener);
    tracing::info!(
        ?local,
        connections = tracker.len(),
        "shutting down, draining connections"
    );
    life.stop.cancel();
    tracker.close();
    if tokio::time::timeout(config.drain_timeout, tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!(?local, timeout = ?config.drain_timeout, "drain timed out, closing remaining connections");
    }
    life.force.cancel();
    tracker.wait().await;
    tracing::debug!(?local, "server stopped");
    Ok(())
}

/// Accept errors that concern one connection only, not the listener.
fn is_per_connection(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    )
}
