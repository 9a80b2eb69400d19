//! The server loop: bind with Java's socket options ([`bind`]), accept,
//! enforce the connection limit, run each connection against a [`Service`],
//! and shut down gracefully. A connection's PROXY protocol header and TLS
//! handshake come first (`proxy_protocol`, `tls`), in `session`.
//!
//! What a request means is the service's business; this module only decides
//! when requests are read (backpressure), that one-way requests are never
//! answered, and how the server stops. The per-connection machinery is in
//! `connection`.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use rmq_wire::{RemotingCommand, SerializeType};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::budget::FrameBudget;
use crate::connection::{ConnectionInfo, DisconnectReason};
use crate::frames::FrameLimits;
use crate::keepalive::Keepalive;
use crate::proxy_protocol::ProxyProtocol;
use crate::session::{self, Lifecycle};
use crate::stats::{Refusal, ServerStats};
use crate::tls::ServerTls;

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
    /// Connections served at once from one IP address; more are accepted
    /// and closed at once. Default 4096.
    pub max_connections_per_ip: usize,
    /// Bytes of partially received frames on all connections together.
    /// Frames up to 4 KiB need none of it; a larger one is read only once its
    /// whole length is granted, and otherwise waits (that connection is not
    /// read). Default 128 MiB.
    pub frame_budget: usize,
    /// How long a frame larger than 4 KiB may take to arrive whole, the wait
    /// for the frame budget included; then its connection is closed, so that
    /// slow senders cannot hold the budget. Default 60 s.
    pub frame_timeout: Duration,
    /// Largest whole frame, length prefix included, as Java's
    /// `com.rocketmq.remoting.frameMaxLength` counts it; a longer length word
    /// closes its connection before anything of the frame is read. Default
    /// 16 MiB, Java's. A raised limit lets a broker with more topics than
    /// 16 MiB of JSON register; such a frame is still read only within
    /// [`frame_budget`](ServerConfig::frame_budget).
    pub max_frame_bytes: usize,
    /// Largest request header, in bytes; a larger one closes its connection
    /// before it is decoded. Default 64 KiB.
    pub max_header_bytes: usize,
    /// Longest header field (key or value), in bytes; a request with a longer
    /// one is answered INVALID_PARAMETER without reaching the service.
    /// Default 32 KiB.
    pub max_header_field_bytes: usize,
    /// Bytes of responses queued on one connection above which it is not
    /// read until the peer has read them. Default 32 MiB.
    pub response_budget_per_connection: usize,
    /// Bytes of responses queued on all connections above which the
    /// connections with answers waiting are not read. Default 256 MiB.
    pub response_budget: usize,
    /// TLS on the same port (Java's `tls.server.mode` and its certificate):
    /// in permissive and enforcing mode the first byte of a connection tells
    /// a TLS handshake (0x16) from a plain frame; waiting for it and the
    /// handshake together take at most [`frame_timeout`] (or the idle
    /// timeout if shorter), and the connection reaches the service only
    /// after both. Every limit above holds for TLS connections too. Default
    /// [`ServerTls::Disabled`]: plain only, the first byte not looked at.
    ///
    /// [`frame_timeout`]: ServerConfig::frame_timeout
    pub tls: ServerTls,
    /// The peers whose PROXY protocol header (v1 or v2, as HAProxy and most
    /// load balancers send it) is believed: from them a connection may start
    /// with one, before TLS detection and within the same deadline, and the
    /// client it names is the address the services see
    /// ([`ConnectionInfo::peer`]; the proxy's own is
    /// [`ConnectionInfo::proxied_by`]). From any other peer a header closes
    /// the connection, with a rate-limited warning. Connections without one
    /// are served as ever; from a trusted peer, or with TLS on, they reach the
    /// service once their first byte has arrived. The per-IP connection limit
    /// counts the proxy. Default: nobody trusted (Java believes a header
    /// from anyone, which would let any peer choose the address the
    /// allow-lists see).
    pub proxy_protocol: ProxyProtocol,
    /// TCP keepalive and TCP_USER_TIMEOUT on every accepted connection, so
    /// that a peer gone without FIN or RST is closed within seconds (its
    /// `on_disconnect` follows) instead of at the idle timeout or never.
    /// Default: found within 15 s ([`Keepalive::default`]); Java's server
    /// sets neither ([`Keepalive::DISABLED`]).
    pub keepalive: Keepalive,
    /// Where the server counts connections, bytes and refusals; shared with
    /// whoever exports them (a fresh set by default).
    pub stats: Arc<ServerStats>,
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
            max_connections_per_ip: 4096,
            frame_budget: 128 << 20,
            frame_timeout: Duration::from_secs(60),
            max_frame_bytes: rmq_wire::frame::DEFAULT_MAX_FRAME_BYTES,
            max_header_bytes: 64 * 1024,
            max_header_field_bytes: 32 * 1024,
            response_budget_per_connection: 32 << 20,
            response_budget: 256 << 20,
            tls: ServerTls::Disabled,
            proxy_protocol: ProxyProtocol::default(),
            keepalive: Keepalive::default(),
            stats: Arc::new(ServerStats::default()),
        }
    }
}

/// How [`bind`] sets up a listening socket: Java's `serverSocketBacklog`,
/// `serverSocketSndBufSize` and `serverSocketRcvBufSize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenOptions {
    /// How many connections the kernel completes before the server accepts
    /// them (listen(2)'s backlog; the kernel caps it, Linux at
    /// `net.core.somaxconn`). Default 1024, as Java's.
    pub backlog: u32,
    /// SO_SNDBUF of every accepted connection, in bytes; `None` keeps the
    /// kernel's default and its auto-tuning.
    pub send_buffer: Option<u32>,
    /// SO_RCVBUF of every accepted connection, in bytes; `None` keeps the
    /// kernel's default and its auto-tuning.
    pub recv_buffer: Option<u32>,
}

impl Default for ListenOptions {
    fn default() -> ListenOptions {
        ListenOptions {
            backlog: 1024,
            send_buffer: None,
            recv_buffer: None,
        }
    }
}

/// Binds a listener on `address` (`host:port`, resolved as
/// [`TcpListener::bind`] does, trying each address in turn) with `options`.
///
/// The buffer sizes are set on the listening socket, before listen(2):
/// accepted connections inherit them (Linux, the BSDs and Windows all copy
/// them), and a receive buffer above 64 KiB only widens the TCP window if it
/// is in place before the handshake, which for an accepted connection is
/// only possible this way. SO_REUSEADDR is set except on Windows, as
/// [`TcpListener::bind`] does, so that a restarted server can bind while its
/// old connections linger in TIME_WAIT.
///
/// # Errors
/// The last address's error if none could be bound, or `InvalidInput` if
/// `address` resolves to nothing.
pub async fn bind(address: &str, options: ListenOptions) -> io::Result<TcpListener> {
    let mut last_error = None;
    for addr in tokio::net::lookup_host(address).await? {
        match bind_one(addr, options) {
            Ok(listener) => return Ok(listener),
            Err(error) => last_error = Some(error),
        }
    }
    Err(last_error.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{address} resolves to no address"),
        )
    }))
}

fn bind_one(addr: std::net::SocketAddr, options: ListenOptions) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    #[cfg(not(windows))]
    socket.set_reuseaddr(true)?;
    if let Some(size) = options.send_buffer {
        socket.set_send_buffer_size(size)?;
    }
    if let Some(size) = options.recv_buffer {
        socket.set_recv_buffer_size(size)?;
    }
    socket.bind(addr)?;
    socket.listen(options.backlog)
}

/// Serves `listener` with `service` until `shutdown` resolves.
///
/// Then it stops accepting (the listener is closed, so new connections are
/// refused), stops reading, lets in-flight requests finish and their responses
/// flush for at most [`ServerConfig::drain_timeout`], closes every connection
/// (`on_disconnect` with [`DisconnectReason::Shutdown`]) and returns.
///
/// Accepted sockets get TCP_NODELAY and [`ServerConfig::keepalive`]. A malformed frame or socket error closes
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
    let life = Arc::new(Lifecycle {
        stop: CancellationToken::new(),
        force: CancellationToken::new(),
        frame_limits: Arc::new(FrameLimits {
            budget: FrameBudget::new(config.frame_budget),
            frame_timeout: config.frame_timeout,
            max_length_field: rmq_wire::frame::max_length_field(config.max_frame_bytes),
            max_header_bytes: config.max_header_bytes,
            stats: config.stats.clone(),
        }),
        queued_responses: Arc::new(AtomicUsize::new(0)),
    });
    let per_ip = Arc::new(PerIpCount::default());
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
            config.stats.refused(Refusal::ConnectionLimit);
            tracing::warn!(%peer, max = config.max_connections, "connection limit reached, closing new connection");
            drop(stream);
            continue;
        };
        let Some(ip_slot) = per_ip.try_add(peer.ip(), config.max_connections_per_ip) else {
            config.stats.refused(Refusal::ConnectionLimitPerIp);
            tracing::warn!(%peer, max = config.max_connections_per_ip,
                "connection limit per IP address reached, closing new connection");
            drop(stream);
            continue;
        };
        let (service, config, life) = (service.clone(), config.clone(), life.clone());
        let held = (slot, ip_slot);
        tracker.spawn(session::serve(stream, peer, service, config, life, held));
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

/// Open connections per source address.
#[derive(Debug, Default)]
struct PerIpCount {
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl PerIpCount {
    /// Counts a connection from `ip` unless `max` are open already.
    fn try_add(self: &Arc<Self>, ip: IpAddr, max: usize) -> Option<IpSlot> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(ip).or_insert(0);
        if *count >= max {
            return None;
        }
        *count += 1;
        Some(IpSlot {
            counts: self.clone(),
            ip,
        })
    }
}

/// One open connection's place in [`PerIpCount`].
struct IpSlot {
    counts: Arc<PerIpCount>,
    ip: IpAddr,
}

impl Drop for IpSlot {
    fn drop(&mut self) {
        let mut open = self
            .counts
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpStream;

    /// How many of `attempts` connections to `listener` complete their
    /// handshake within a moment, while nothing accepts them.
    async fn handshakes_without_accept(listener: &TcpListener, attempts: usize) -> usize {
        let addr = listener.local_addr().unwrap();
        let mut open = Vec::new();
        for _ in 0..attempts {
            let connect = TcpStream::connect(addr);
            if let Ok(Ok(stream)) = tokio::time::timeout(Duration::from_millis(300), connect).await
            {
                open.push(stream);
            }
        }
        open.len()
    }

    // Linux completes at most backlog + 1 handshakes that the server has not
    // accepted and drops further SYNs, so those connects hang; other systems
    // count differently.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_backlog_bounds_connections_waiting_to_be_accepted() {
        let small = ListenOptions {
            backlog: 1,
            ..ListenOptions::default()
        };
        let listener = bind("127.0.0.1:0", small).await.unwrap();
        assert_eq!(handshakes_without_accept(&listener, 4).await, 2);
        let listener = bind("127.0.0.1:0", ListenOptions::default()).await.unwrap();
        assert_eq!(handshakes_without_accept(&listener, 4).await, 4);
    }

    #[tokio::test]
    async fn accepted_connections_get_the_configured_buffer_sizes() {
        let options = ListenOptions {
            backlog: 8,
            send_buffer: Some(100_000),
            recv_buffer: Some(180_000),
        };
        // The kernel adjusts what is set (Linux doubles it, within its
        // maxima); a socket given the same sizes shows what to expect.
        // Without the options an accepted connection has the auto-tuned
        // sizes instead.
        let reference = TcpSocket::new_v4().unwrap();
        reference.set_send_buffer_size(100_000).unwrap();
        reference.set_recv_buffer_size(180_000).unwrap();
        let listener = bind("127.0.0.1:0", options).await.unwrap();
        let _client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        let accepted = TcpSocket::from_std_stream(accepted.into_std().unwrap());
        assert_eq!(
            accepted.send_buffer_size().unwrap(),
            reference.send_buffer_size().unwrap()
        );
        assert_eq!(
            accepted.recv_buffer_size().unwrap(),
            reference.recv_buffer_size().unwrap()
        );
    }
}
