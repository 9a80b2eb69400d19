//! One accepted connection's life, `on_connect` to `on_disconnect`: the reader
//! (decode, in-flight limit, idleness, dispatch to the service), the writer
//! task it starts, and the response rules Java's remoting layer applies.
//!
//! Requests are pipelined: a response is queued the moment its request
//! finishes, in whatever order that is. Identity and the writer loop are
//! `connection`'s; accepting and shutdown sequencing are `server`'s; the
//! PROXY protocol header is `proxy_protocol`'s; telling TLS from plain and
//! the handshake are `tls`'s.

use std::any::Any;
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::FutureExt;
use rmq_wire::{FrameError, RemotingCommand, ResponseCode, FLAG_ONEWAY, FLAG_RESPONSE};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::budget::ResponseQueue;
use crate::connection::{
    write_loop, ConnId, ConnectionHandle, ConnectionInfo, DisconnectReason, Outbound,
};
use crate::frames::{
    FrameLimits, FrameReader, Incoming, OversizedHeader, ReadError, Readiness, Received,
};
use crate::outgoing::{self, Receiver};
use crate::proxy_protocol::{self, accept, accept::Outcome};
use crate::server::{Reply, ServerConfig, Service};
use crate::stats::{Refusal, ServerStats};
use crate::tls::{self, Accepted, ServerTls, TlsSession};

/// Last read or write of a connection, as milliseconds since it opened.
#[derive(Debug)]
pub(crate) struct Activity {
    origin: Instant,
    last_ms: AtomicU64,
}

impl Activity {
    pub(crate) fn new() -> Activity {
        Activity {
            origin: Instant::now(),
            last_ms: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        let ms = self.origin.elapsed().as_millis() as u64;
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.origin + Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }
}

/// Server-wide signals a connection obeys: `stop` (stop reading, drain) and
/// `force` (drain time is up: abandon in-flight work and close); and the
/// server-wide memory budgets it draws on. Shared by the connections.
pub(crate) struct Lifecycle {
    pub(crate) stop: CancellationToken,
    pub(crate) force: CancellationToken,
    /// The frame limits, with the budget of partly received frames.
    pub(crate) frame_limits: Arc<FrameLimits>,
    /// Bytes of responses queued on all connections.
    pub(crate) queued_responses: Arc<std::sync::atomic::AtomicUsize>,
}

/// Runs one accepted connection to its end, `on_connect` to `on_disconnect`:
/// first tells TLS from plain (unless TLS is disabled) and runs the handshake
/// (the service sees only connections that got through it), then serves it.
/// `held` (the connection's slots in the server's limits) is dropped at the
/// end.
///
/// A task holds room for the largest state its future can be in for as long
/// as it lives, and most connections are idle most of their lives, so what
/// this future holds while waiting is kept small. An `async fn` keeps its
/// arguments twice (as received, and where its body moves them): this is a
/// block that uses what it captured in place, the connection is built once,
/// where it is served, and what is awaited below it takes references. The
/// states an idle plain connection is never in are boxed when reached: the
/// PROXY header and the TLS handshake, a TLS connection, the drain at
/// shutdown, and the reader's waits for an in-flight slot or for queued
/// responses to be written.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would keep its arguments twice in every connection's task"
)]
pub(crate) fn serve<S: Service>(
    stream: TcpStream,
    peer: SocketAddr,
    service: Arc<S>,
    config: Arc<ServerConfig>,
    life: Arc<Lifecycle>,
    held: impl Send + 'static,
) -> impl std::future::Future<Output = ()> + Send {
    async move {
        let opened = Box::pin(open(stream, peer, &config, &life)).await;
        // What the handshake gave is consumed here, before the connection is
        // served, so that none of it is held while it is.
        let mut conn = served(opened, service, &config, &life);
        match &mut conn {
            Some(Served::Plain(conn)) => conn.serve(&config, &life).await,
            Some(Served::Tls(conn)) => Box::pin(conn.serve(&config, &life)).await,
            None => {}
        }
        drop(held);
    }
}

/// A connection to serve, plain or TLS (boxed, as it is larger and rarer).
#[allow(
    clippy::large_enum_variant,
    reason = "a plain connection lives in its task's future, not in a block of its own"
)]
enum Served<S: Service> {
    Plain(Connection<S, OwnedReadHalf, OwnedWriteHalf>),
    Tls(Box<TlsConnection<S>>),
}

type TlsConnection<S> = Connection<
    S,
    tokio::io::ReadHalf<tokio_rustls::server::TlsStream<TcpStream>>,
    tokio::io::WriteHalf<tokio_rustls::server::TlsStream<TcpStream>>,
>;

/// The connection an accepted one becomes, if it got through its handshake.
fn served<S: Service>(
    opened: Option<(Accepted, Origin)>,
    service: Arc<S>,
    config: &ServerConfig,
    life: &Lifecycle,
) -> Option<Served<S>> {
    match opened? {
        (Accepted::Plain(stream), origin) => {
            let (read, write) = stream.into_split();
            let conn = Connection::new(read, write, origin, None, service, config, life);
            Some(Served::Plain(conn))
        }
        (Accepted::Tls(stream, session), origin) => {
            let (read, write) = tokio::io::split(*stream);
            let tls = Some(Arc::new(session));
            let conn = Connection::new(read, write, origin, tls, service, config, life);
            Some(Served::Tls(Box::new(conn)))
        }
        (Accepted::Closed, _) => None,
    }
}

/// Who is at the other end of a connection.
struct Origin {
    /// The client (from a trusted proxy's header, or the TCP peer).
    peer: SocketAddr,
    /// The trusted proxy that named `peer`.
    proxied_by: Option<SocketAddr>,
    local: SocketAddr,
}

/// A connection's first steps: socket options, the PROXY header if one may
/// come, telling TLS from plain and the handshake. `None` (or
/// [`Accepted::Closed`]) if it ended there.
async fn open(
    mut stream: TcpStream,
    peer: SocketAddr,
    config: &ServerConfig,
    life: &Lifecycle,
) -> Option<(Accepted, Origin)> {
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%peer, %error, "cannot set TCP_NODELAY");
    }
    config.keepalive.apply(&stream);
    let local = match stream.local_addr() {
        Ok(local) => local,
        Err(error) => {
            tracing::debug!(%peer, %error, "connection gone before it started");
            return None;
        }
    };
    // A peer that sends nothing, or stalls its PROXY header or handshake, is
    // closed after the frame timeout (or the idle timeout if shorter): both
    // bound how long a peer may hold a connection slot without sending a
    // request. Header and handshake share the one deadline.
    let handshake_timeout = config
        .frame_timeout
        .min(config.idle_timeout.unwrap_or(Duration::MAX));
    let deadline = Instant::now()
        .checked_add(handshake_timeout)
        .unwrap_or_else(far_future);
    // The first bytes are looked at where TLS looks at them anyway, or the
    // peer may send a header. Elsewhere a header fails as a frame (see
    // `Reader::run`), and the connection reaches the service at once, as
    // before there was a header to look for.
    let look =
        !matches!(config.tls, ServerTls::Disabled) || config.proxy_protocol.trusts(peer.ip());
    let (client, proxied_by) = if look {
        let header = accept::read_header(
            &mut stream,
            peer,
            &config.proxy_protocol,
            deadline,
            &life.stop,
        );
        match header.await {
            Outcome::Absent => (peer, None),
            Outcome::Header(header) => match header.addresses {
                Some(addresses) => (addresses.source, Some(peer)),
                None => (peer, None),
            },
            Outcome::Closed => return None,
        }
    } else {
        (peer, None)
    };
    let accepted = tls::accept(stream, client, &config.tls, deadline, &life.stop).await;
    let origin = Origin {
        peer: client,
        proxied_by,
        local,
    };
    Some((accepted, origin))
}

/// A deadline no timeout reaches (about 30 years on), for a timeout too
/// large to add to now.
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400 * 365 * 30)
}

/// A connection being served: what its reader holds, and its writer's until
/// that is started. Generic over the stream halves (plain or TLS), so that
/// plain connections pay no dynamic dispatch per read.
struct Connection<S, R, W> {
    reader: Reader<S>,
    frames: FrameReader<R>,
    /// The writer's makings and the queue it takes commands from, until the
    /// first command is queued.
    writer: Option<(WriterStart<W>, Receiver)>,
    /// Whatever ends the connection cancels this one token: the server's
    /// stop (a child token follows its parent), the service closing it, the
    /// writer failing. The reader waits on it through one future made once,
    /// not on three made afresh for every frame: each new wait takes the
    /// token's lock, and the server-wide stop token's lock was shared by
    /// every connection's reader.
    attention: CancellationToken,
}

impl<S, R, W> Connection<S, R, W>
where
    S: Service,
    R: AsyncRead + Readiness + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    fn new(
        read: R,
        write: W,
        origin: Origin,
        tls: Option<Arc<TlsSession>>,
        service: Arc<S>,
        config: &ServerConfig,
        life: &Lifecycle,
    ) -> Connection<S, R, W> {
        let (tx, rx) = outgoing::queue();
        let id = ConnId::next();
        let attention = life.stop.child_token();
        let queue = Arc::new(ResponseQueue::new(
            life.queued_responses.clone(),
            config.response_budget_per_connection,
            config.response_budget,
        ));
        let handle = ConnectionHandle {
            id,
            tx,
            serialize_type: config.serialize_type,
            closer: attention.clone(),
            queue: Some(queue.clone()),
        };
        let info = ConnectionInfo {
            id,
            peer: origin.peer,
            proxied_by: origin.proxied_by,
            local: origin.local,
            handle,
            tls,
        };
        let writer = WriterStart {
            write_half: write,
            shared: queue.clone(),
            attention: attention.clone(),
            high_water: config.write_high_water,
            stats: config.stats.clone(),
        };
        let frames = FrameReader::new(read, life.frame_limits.clone());
        Connection {
            reader: Reader {
                info,
                service,
                in_flight: Arc::new(Semaphore::new(max_in_flight(config))),
                force: life.force.clone(),
                queue,
                max_field_bytes: config.max_header_field_bytes,
                stats: config.stats.clone(),
            },
            frames,
            writer: Some((writer, rx)),
            attention,
        }
    }

    /// Serves the connection, `on_connect` to `on_disconnect`.
    async fn serve(&mut self, config: &ServerConfig, life: &Lifecycle) {
        let Connection {
            reader,
            frames,
            writer,
            attention,
        } = self;
        let info = &reader.info;
        tracing::debug!(conn = %info.id, peer = %info.peer, proxy = ?info.proxied_by,
            tls = info.is_tls(), "connection opened");
        config.stats.opened();
        reader.service.on_connect(info);

        let ends = Ends {
            attention,
            stop: &life.stop,
            write_error: &reader.queue.write_error,
        };
        let (reason, started) = {
            // Pinned where it is made: a future moved into a pinned place
            // keeps its first place in the task too. In a block of its own,
            // so that the room it takes is free for what follows it.
            let mut reading = std::pin::pin!(reader.run(frames, &ends, config.idle_timeout));
            // The writer's task is started by the first command queued:
            // until then the queue holds nothing and no task waits on it,
            // and a connection that is never written to (opened and left,
            // one-way heartbeats) never has a writer at all.
            let first = match writer {
                Some((_, rx)) => tokio::select! {
                    biased;
                    reason = &mut reading => Err(reason),
                    first = rx.recv() => Ok(first),
                },
                None => Err(reading.as_mut().await),
            };
            // Nothing matched on is held across the wait that follows.
            let (ended, started) = match first {
                Ok(first) => (
                    None,
                    writer.take().map(|(start, rx)| start.spawn(rx, first)),
                ),
                Err(reason) => (Some(reason), None),
            };
            let reason = match ended {
                Some(reason) => reason,
                None => reading.as_mut().await,
            };
            (reason, started)
        };

        if reason == DisconnectReason::Shutdown {
            // Boxed, as it is reached once, at the server's end.
            Box::pin(async {
                // Responses still to come are written by the writer, as ever.
                let mut writer = match (started, writer.take()) {
                    (Some(started), _) => started,
                    (None, Some((start, rx))) => start.spawn(rx, None),
                    (None, None) => unreachable!("the writer is started or not"),
                };
                // Every permit back means every in-flight response has been
                // encoded.
                let all = max_in_flight(config) as u32;
                tokio::select! {
                    _ = reader.in_flight.acquire_many(all) => {}
                    () = life.force.cancelled() => {}
                    () = writer.close.cancelled() => {}
                }
                writer.close.cancel();
                tokio::select! {
                    _ = &mut writer.task => {}
                    () = life.force.cancelled() => writer.task.abort(),
                }
            })
            .await;
        } else if let Some(writer) = started {
            writer.task.abort();
        }
        // A writer never started drops what was queued with its queue.

        let info = &reader.info;
        tracing::debug!(conn = %info.id, peer = %info.peer, ?reason, "connection closed");
        reader.service.on_disconnect(info, reason);
        config.stats.closed();
    }
}

/// Requests of one connection handled at once, at most.
fn max_in_flight(config: &ServerConfig) -> usize {
    config.max_in_flight.clamp(1, u32::MAX as usize)
}

/// What a connection's writer task needs, kept until its first command.
struct WriterStart<W> {
    write_half: W,
    /// Where the writer notes its writes, and its error.
    shared: Arc<ResponseQueue>,
    attention: CancellationToken,
    high_water: usize,
    stats: Arc<ServerStats>,
}

impl<W: AsyncWrite + Unpin + Send + 'static> WriterStart<W> {
    /// Starts the writer with `first`, the command that called for it.
    fn spawn(self, mut rx: Receiver, first: Option<Box<Outbound>>) -> Writer {
        let WriterStart {
            write_half,
            shared,
            attention,
            high_water,
            stats,
        } = self;
        let close = CancellationToken::new();
        let stop = close.clone();
        let task = tokio::spawn(async move {
            let wrote = |bytes| {
                shared.activity.touch();
                stats.written(bytes);
            };
            let result = write_loop(write_half, &mut rx, first, &stop, high_water, wrote).await;
            if let Err(error) = result {
                let _ = shared.write_error.set(error.to_string());
                stop.cancel();
                attention.cancel();
            }
        });
        Writer { task, close }
    }
}

/// A connection's running writer.
struct Writer {
    task: JoinHandle<()>,
    /// Cancelled when the writer is to stop (and by the writer when it
    /// fails). Made with the writer: a connection never written to has none.
    close: CancellationToken,
}

/// What can end a connection while its reader runs, and how to tell which did.
struct Ends<'a> {
    /// Cancelled by the writer failing, the server's stop, and the service
    /// closing the connection.
    attention: &'a CancellationToken,
    /// The server is shutting down.
    stop: &'a CancellationToken,
    /// Why the writer failed (set before it cancels `attention`).
    write_error: &'a OnceLock<String>,
}

impl Ends<'_> {
    /// Why `attention` was cancelled; the writer's failure first, then the
    /// server's shutdown, as the reader used to check them.
    fn reason(&self) -> DisconnectReason {
        if let Some(error) = self.write_error.get() {
            DisconnectReason::Error(error.clone())
        } else if self.stop.is_cancelled() {
            DisconnectReason::Shutdown
        } else {
            DisconnectReason::ClosedByService
        }
    }
}

/// What the reader woke up for.
enum Event {
    /// The connection is to end (`Ends::reason` says why).
    Ended,
    /// The idle timer went off (the connection may have been active since).
    IdleTimer,
    /// An in-flight slot came free.
    Permit(Option<OwnedSemaphorePermit>),
    /// Queued responses were written.
    Drained,
    /// A frame was read, or reading failed.
    Frame(Result<Option<Incoming>, ReadError>),
}

/// The reading side of one connection and what it needs to dispatch.
struct Reader<S> {
    info: ConnectionInfo,
    service: Arc<S>,
    in_flight: Arc<Semaphore>,
    force: CancellationToken,
    /// This connection's queued responses (over budget, it is not read),
    /// its last-activity time and its writer's error.
    queue: Arc<ResponseQueue>,
    /// Longest header field value a request may carry.
    max_field_bytes: usize,
    /// Where refusals are counted.
    stats: Arc<ServerStats>,
}

impl<S: Service> Reader<S> {
    async fn run<R: AsyncRead + Readiness + Unpin>(
        &self,
        frames: &mut FrameReader<R>,
        ends: &Ends<'_>,
        idle_timeout: Option<Duration>,
    ) -> DisconnectReason {
        let activity = &self.queue.activity;
        let idle_after = idle_timeout.unwrap_or(Duration::from_secs(86_400));
        let mut idle = std::pin::pin!(tokio::time::sleep(idle_after));
        let mut ended = std::pin::pin!(ends.attention.cancelled());
        let mut permit: Option<OwnedSemaphorePermit> = None;
        let mut was_full = false;
        loop {
            if permit.is_none() {
                permit = self.in_flight.clone().try_acquire_owned().ok();
            }
            let full = self.queue.is_full();
            if full && !was_full {
                self.stats.refused(Refusal::ResponsesOverBudget);
                tracing::debug!(conn = %self.info.id, peer = %self.info.peer, queued = self.queue.queued(),
                    "responses queued over budget, not reading until the peer reads them");
            }
            was_full = full;
            let event = if permit.is_some() && !full {
                tokio::select! {
                    biased;
                    () = &mut ended => Event::Ended,
                    () = &mut idle, if idle_timeout.is_some() => Event::IdleTimer,
                    frame = frames.next() => Event::Frame(frame),
                }
            } else {
                // Boxed: a connection with `max_in_flight` requests open, or
                // with responses queued over its budget, is rare, and these
                // waits would otherwise take room in every connection's
                // task, idle or not.
                let (ended, idle) = (ended.as_mut(), idle.as_mut());
                let in_flight = &self.in_flight;
                let (queue, wants_permit) = (&self.queue, permit.is_none());
                Box::pin(async move {
                    tokio::select! {
                        biased;
                        () = ended => Event::Ended,
                        () = idle, if idle_timeout.is_some() => Event::IdleTimer,
                        acquired = in_flight.clone().acquire_owned(), if wants_permit => {
                            Event::Permit(acquired.ok())
                        }
                        () = queue.drained(), if full => Event::Drained,
                    }
                })
                .await
            };
            match event {
                Event::Ended => return ends.reason(),
                Event::IdleTimer => {
                    let deadline = activity.last() + idle_after;
                    if Instant::now() >= deadline {
                        return DisconnectReason::Idle;
                    }
                    idle.as_mut().reset(deadline);
                }
                Event::Permit(acquired) => permit = acquired,
                Event::Drained => {}
                Event::Frame(frame) => match frame {
                    Ok(None) => return DisconnectReason::Closed,
                    Ok(Some(Incoming::Command(received))) => {
                        activity.touch();
                        permit = self.dispatch(received, permit.take());
                    }
                    Ok(Some(Incoming::HeaderTooLarge(oversized))) => {
                        activity.touch();
                        permit = self.refuse_header(&oversized, permit.take());
                    }
                    Err(ReadError::Io(error)) => return DisconnectReason::Error(error.to_string()),
                    Err(error) if self.untrusted_proxy_header(&error) => {
                        self.stats.refused(Refusal::MalformedFrame);
                        accept::refuse_untrusted(self.info.peer);
                        return DisconnectReason::Error(error.to_string());
                    }
                    Err(error) => {
                        self.stats.refused(match error {
                            ReadError::FrameTimeout { .. } => Refusal::FrameTimeout,
                            _ => Refusal::MalformedFrame,
                        });
                        let hint = tls_hint(&error);
                        tracing::warn!(conn = %self.info.id, peer = %self.info.peer, %error,
                            "closing connection{hint}");
                        return DisconnectReason::Error(error.to_string());
                    }
                },
            }
        }
    }

    /// Hands one request to the service. Gives the in-flight permit back
    /// when nothing was queued with it (a one-way request served at once,
    /// a stray response), for the next frame to use: taking a fresh one for
    /// every frame locks the semaphore's waiter list to give it back.
    fn dispatch(
        &self,
        received: Received,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Option<OwnedSemaphorePermit> {
        // The frame's budget is given back once the request is handled: its
        // body shares the frame's memory until then.
        let Received {
            command: request,
            budget: frame_budget,
        } = received;
        if request.is_response() {
            tracing::debug!(conn = %self.info.id, peer = %self.info.peer, opaque = request.opaque,
                code = request.code, "response matches no outstanding request, dropped");
            return permit;
        }
        let (opaque, oneway) = (request.opaque, request.is_oneway());
        if let Some(refusal) = self.oversized_field(&request) {
            return respond(&self.info.handle, Some(refusal), opaque, oneway, permit);
        }
        let reply = catch_unwind(AssertUnwindSafe(|| self.service.call(&self.info, request)))
            .unwrap_or_else(|panic| {
                Reply::Ready(Some(self.panic_response(panic.as_ref(), opaque)))
            });
        match reply {
            Reply::Ready(response) => {
                drop(frame_budget);
                respond(&self.info.handle, response, opaque, oneway, permit)
            }
            Reply::Pending(future) => {
                let handle = self.info.handle.clone();
                let force = self.force.clone();
                let (id, peer) = (self.info.id, self.info.peer);
                tokio::spawn(async move {
                    let outcome = force
                        .run_until_cancelled(AssertUnwindSafe(future).catch_unwind())
                        .await;
                    drop(frame_budget);
                    let response = match outcome {
                        None => return,
                        Some(Ok(response)) => response,
                        Some(Err(panic)) => Some(panic_response(id, peer, panic.as_ref(), opaque)),
                    };
                    respond(&handle, response, opaque, oneway, permit);
                });
                None
            }
        }
    }

    /// Answers a request whose header was over `maxHeaderBytes` (dropped
    /// undecoded) with INVALID_PARAMETER naming the limit and the longest
    /// field, under its opaque, and keeps the connection: the frame was
    /// whole and within the frame limit, so the next one is read as usual.
    /// A one-way request gets no answer and a stray response is dropped, as
    /// any other.
    fn refuse_header(
        &self,
        oversized: &OversizedHeader,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Option<OwnedSemaphorePermit> {
        let OversizedHeader {
            header,
            limit,
            peek,
        } = oversized;
        self.stats.refused(Refusal::HeaderTooLarge);
        let field = peek
            .longest_field
            .as_ref()
            .map_or_else(String::new, |(key, len)| {
                format!("; its longest field is {key:?}, {len} bytes")
            });
        tracing::warn!(conn = %self.info.id, peer = %self.info.peer, code = peek.code, opaque = peek.opaque,
            bytes = header, limit, "header over the limit (maxHeaderBytes){field}, request refused undecoded");
        if peek.flag & FLAG_RESPONSE != 0 {
            return permit;
        }
        let refusal = RemotingCommand::request(ResponseCode::InvalidParameter, peek.opaque).with_remark(
            format!("request header is {header} bytes long, over the limit of {limit} bytes (maxHeaderBytes){field}"),
        );
        let oneway = peek.flag & FLAG_ONEWAY != 0;
        respond(
            &self.info.handle,
            Some(refusal),
            peek.opaque,
            oneway,
            permit,
        )
    }

    /// Whether a frame error is a PROXY protocol header that was not looked
    /// for: the server's first bytes are not inspected when TLS is disabled
    /// and the peer is not a trusted proxy, so its header arrives here, as a
    /// length word far over the limit.
    fn untrusted_proxy_header(&self, error: &ReadError) -> bool {
        let ReadError::Frame(FrameError::TooLong { length, .. }) = error else {
            return false;
        };
        let word = u32::try_from(*length).unwrap_or(0).to_be_bytes();
        self.info.proxied_by.is_none() && proxy_protocol::detect(&word).is_ok()
    }

    fn panic_response(&self, panic: &(dyn Any + Send), opaque: i32) -> RemotingCommand {
        panic_response(self.info.id, self.info.peer, panic, opaque)
    }

    /// The refusal of a request with a header field over the limit; the
    /// service never sees it (a 1 MiB broker name would be copied into every
    /// table entry that names the broker).
    fn oversized_field(&self, request: &RemotingCommand) -> Option<RemotingCommand> {
        let longest = request
            .ext_fields
            .as_ref()?
            .iter()
            .map(|(key, value)| (key, key.len().max(value.len())))
            .find(|(_, len)| *len > self.max_field_bytes);
        let (key, longest) = longest?;
        self.stats.refused(Refusal::HeaderFieldTooLong);
        let shown: String = key.chars().take(64).collect();
        tracing::warn!(conn = %self.info.id, peer = %self.info.peer, code = request.code, field = %shown,
            bytes = longest, limit = self.max_field_bytes, "header field over the limit, request refused");
        Some(
            RemotingCommand::request(ResponseCode::InvalidParameter, request.opaque).with_remark(
                format!(
                    "header field {shown:?} is {longest} bytes long, over the limit of {} bytes (maxHeaderFieldBytes)",
                    self.max_field_bytes
                ),
            ),
        )
    }
}

/// What to add to the log line of a frame error that is most likely a TLS
/// handshake on a server that takes no TLS (a length word starting 0x16).
fn tls_hint(error: &ReadError) -> &'static str {
    match error {
        ReadError::Frame(FrameError::TooLong { length, .. }) if length >> 24 == 0x16 => {
            "; it looks like a TLS handshake, and TLS is not enabled on this server \
             (tls.server.mode disabled, or no tls.server.certPath)"
        }
        _ => "",
    }
}

/// Queues the answer to a request: the server, not the service, fixes the
/// opaque, the response flag and the serialize type (as Java's remoting layer).
/// The in-flight permit goes with the answer; it is given back when there is
/// none to queue (no answer, or the request was one-way).
fn respond(
    handle: &ConnectionHandle,
    response: Option<RemotingCommand>,
    opaque: i32,
    oneway: bool,
    permit: Option<OwnedSemaphorePermit>,
) -> Option<OwnedSemaphorePermit> {
    let Some(mut command) = response else {
        return permit;
    };
    if oneway {
        return permit;
    }
    command.opaque = opaque;
    command.flag |= FLAG_RESPONSE;
    command.serialize_type = handle.serialize_type;
    let charge = handle.queue.as_ref().map(|queue| queue.charge(&command));
    // A closed connection drops the response, as the peer can no longer read it.
    let _ = handle.tx.send(Box::new(Outbound {
        command,
        permit,
        charge,
    }));
    None
}

/// The text a panic was raised with (`panic!("...")` or a formatted one).
pub fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// SYSTEM_ERROR for a request whose handler panicked; the connection lives on.
fn panic_response(
    id: ConnId,
    peer: SocketAddr,
    panic: &(dyn Any + Send),
    opaque: i32,
) -> RemotingCommand {
    let message = panic_message(panic);
    tracing::error!(conn = %id, %peer, opaque, %message, "request handler panicked");
    let mut response = RemotingCommand::request(ResponseCode::SystemError, opaque)
        .with_remark(format!("request handler panicked: {message}"));
    response.flag = FLAG_RESPONSE;
    response
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use rmq_wire::RequestCode;
    use tokio::net::TcpListener;

    use super::*;
    use crate::{ClientConfig, RpcClient};

    /// Answers at once, except CONTROLLER_ELECT_MASTER, which waits for
    /// `gate` (any two-way code would do).
    struct Gated {
        calls: AtomicUsize,
        gate: Arc<Semaphore>,
    }

    impl Service for Gated {
        fn call(&self, _conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let response = RemotingCommand::response_to(&request, ResponseCode::Success);
            if request.code != i32::from(RequestCode::ControllerElectMaster) {
                return Reply::ready(response);
            }
            let gate = self.gate.clone();
            Reply::later(async move {
                gate.acquire().await.ok()?.forget();
                Some(response)
            })
        }
    }

    /// Tells the test about each connection as the server accepts it.
    struct Announces(tokio::sync::mpsc::UnboundedSender<ConnectionHandle>);

    impl Service for Announces {
        fn on_connect(&self, conn: &ConnectionInfo) {
            let _ = self.0.send(conn.handle().clone());
        }

        fn call(&self, _conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
            Reply::ready(RemotingCommand::response_to(
                &request,
                ResponseCode::Success,
            ))
        }
    }

    /// A connection that has sent nothing and been sent nothing runs one
    /// task, its reader's: the writer's is started by the first command
    /// queued. (What the reader holds meanwhile is `frames`' test.)
    #[tokio::test(flavor = "current_thread")]
    async fn the_writer_task_starts_with_the_first_command_queued() {
        let (announce, mut accepted) = tokio::sync::mpsc::unbounded_channel();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let config = ServerConfig {
            tls: ServerTls::Disabled,
            ..ServerConfig::default()
        };
        let server = tokio::spawn(crate::run(listener, Announces(announce), config, async {
            let _ = stopped.await;
        }));
        let tasks = || {
            tokio::runtime::Handle::current()
                .metrics()
                .num_alive_tasks()
        };
        let mut idle = TcpStream::connect(addr).await.unwrap();
        let handle = accepted.recv().await.unwrap();
        // On one thread the connection's task has gone as far as it can
        // (waiting for bytes or a command) before this one runs again: the
        // server's accept loop and that task.
        tokio::task::yield_now().await;
        assert_eq!(tasks(), 2, "the accept loop and the connection's reader");
        let notice = RemotingCommand::request(RequestCode::GetRouteInfoByTopic, 7);
        handle.send(notice).unwrap();
        let mut length = [0u8; 4];
        tokio::io::AsyncReadExt::read_exact(&mut idle, &mut length)
            .await
            .unwrap();
        assert_eq!(
            tasks(),
            3,
            "the writer runs once there was something to write"
        );
        let _ = stop.send(());
        server.await.unwrap().unwrap();
    }

    /// A plain connection's task holds room for its future for as long as
    /// the connection lives: nothing in it is to be held twice again (see
    /// `serve`). 1,128 bytes in a test build when this was written.
    #[tokio::test]
    async fn a_plain_connections_future_stays_small() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let _client = TcpStream::connect(addr).await.unwrap();
        let (stream, peer) = listener.accept().await.unwrap();
        let config = Arc::new(ServerConfig::default());
        let life = Arc::new(Lifecycle {
            stop: CancellationToken::new(),
            force: CancellationToken::new(),
            frame_limits: Arc::new(FrameLimits {
                budget: crate::budget::FrameBudget::new(1 << 20),
                frame_timeout: config.frame_timeout,
                max_length_field: rmq_wire::frame::max_length_field(config.max_frame_bytes),
                max_header_bytes: config.max_header_bytes,
                stats: config.stats.clone(),
            }),
            queued_responses: Arc::default(),
        });
        let (announce, _accepted) = tokio::sync::mpsc::unbounded_channel();
        let service = Arc::new(Announces(announce));
        let serving = serve(stream, peer, service, config, life, ());
        let size = std::mem::size_of_val(&serving);
        assert!(size <= 1_280, "a plain connection's future is {size} bytes");
    }

    /// One-way requests answered at once give their in-flight slot back to
    /// the reader, and the limit still holds after them.
    #[tokio::test]
    async fn oneway_requests_served_at_once_take_no_in_flight_slot() {
        let service = Arc::new(Gated {
            calls: AtomicUsize::new(0),
            gate: Arc::new(Semaphore::new(0)),
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let config = ServerConfig {
            max_in_flight: 2,
            ..ServerConfig::default()
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(crate::run(listener, service.clone(), config, async {
            let _ = stopped.await;
        }));
        let client = RpcClient::connect(addr, ClientConfig::default())
            .await
            .unwrap();
        let heartbeat = RemotingCommand::request(RequestCode::BrokerHeartbeat, 0);
        for _ in 0..10 {
            client.invoke_oneway(heartbeat.clone()).unwrap();
        }
        let wait = Duration::from_secs(5);
        let elections: Vec<_> = (0..5)
            .map(|_| {
                let client = client.clone();
                let elect = RemotingCommand::request(RequestCode::ControllerElectMaster, 0);
                tokio::spawn(async move { client.invoke(elect, wait).await })
            })
            .collect();
        let calls = || service.calls.load(Ordering::SeqCst);
        let deadline = Instant::now() + wait;
        while calls() < 12 {
            assert!(Instant::now() < deadline, "only {} calls", calls());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // The other three elections were written behind these on the same
        // connection, and are taken up within a millisecond once read: in
        // 100 ms one that was read would show.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(calls(), 12, "still only max_in_flight requests taken up");
        service.gate.add_permits(5);
        for election in elections {
            assert!(election.await.unwrap().is_ok());
        }
        assert_eq!(calls(), 15);
        let _ = stop.send(());
        server.await.unwrap().unwrap();
    }
}
