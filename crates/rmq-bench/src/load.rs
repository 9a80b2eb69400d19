//! The load generator: connections, closed-loop and fixed-rate request
//! streams, latency recording, the server's CPU over the measured window
//! and the progress line.
//!
//! Closed loop: every worker keeps exactly one request in flight on its
//! connection (`depth` workers per connection give a pipeline depth of
//! `depth`), so the server sets the pace. A request counts (rate, latency,
//! errors) only if its answer arrived inside the measured window
//! ([`Span::holds`]); at the window's end every worker stops and the
//! requests still in flight are abandoned, so no answer from after the
//! window is divided by the window's length.
//!
//! Fixed rate: request `i` is due `i / rate` seconds after the start, on
//! connection `i mod n`, whatever the answers do (one driver per
//! connection). Latency runs from the moment a request is handed to the
//! connection, and how late each went out behind its schedule is recorded
//! separately, so a stalled generator cannot pass for a fast server. The
//! requests due inside the window are followed to their answers (or their
//! timeout) for latency and errors; the rate achieved counts the answers
//! that arrived inside the window.
//!
//! Latencies go into per-worker histograms merged at the end, so recording
//! takes no lock on the hot path. With a server pid, the server's CPU is
//! read at the exact start and end of the window ([`crate::cpu`]).

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use futures::stream::{FuturesUnordered, StreamExt};
use hdrhistogram::Histogram;
use rmq_transport::{ClientConfig, ClientError, RpcClient};
use rmq_wire::{RemotingCommand, ResponseCode};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use crate::cpu::ServerCpu;
use crate::pin::CpuSnapshot;
use crate::stats;

/// Opens `count` connections to `addr`.
///
/// # Errors
/// The first connection that fails.
pub async fn connect(addr: SocketAddr, count: usize) -> anyhow::Result<Vec<RpcClient>> {
    let config = ClientConfig {
        inbound_capacity: 0,
        ..ClientConfig::default()
    };
    connect_with(addr, count, &config).await
}

/// Opens `count` connections to `addr` made with `config` (TLS, a request
/// hook that signs).
///
/// # Errors
/// The first connection that fails (for TLS: whose handshake fails).
pub async fn connect_with(
    addr: SocketAddr,
    count: usize,
    config: &ClientConfig,
) -> anyhow::Result<Vec<RpcClient>> {
    let mut clients = Vec::with_capacity(count);
    for _ in 0..count {
        let client = RpcClient::connect(addr, config.clone())
            .await
            .with_context(|| format!("cannot connect to {addr}"))?;
        clients.push(client);
    }
    Ok(clients)
}

/// Counters shown by the progress line and read by the scenarios.
#[derive(Debug)]
pub struct Progress {
    label: String,
    started: Instant,
    total: Duration,
    /// Successful requests.
    pub ok: AtomicU64,
    /// Failed requests (error response, timeout, closed connection).
    pub errors: AtomicU64,
    /// A second stream (e.g. registrations during a storm); 0 hides it.
    pub side: AtomicU64,
}

impl Progress {
    /// Counters for a phase labelled `label` expected to last `total`.
    pub fn new(label: impl Into<String>, total: Duration) -> Arc<Progress> {
        Arc::new(Progress {
            label: label.into(),
            started: Instant::now(),
            total,
            ok: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            side: AtomicU64::new(0),
        })
    }

    /// Prints the progress line to stderr every second (a rewritten line on a
    /// terminal, one line every 5 s otherwise) until the handle is aborted.
    pub fn spawn_printer(self: &Arc<Self>) -> ProgressPrinter {
        let progress = self.clone();
        let tty = std::io::stderr().is_terminal();
        let handle = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.tick().await;
            let (mut last_ok, mut last_side, mut n) = (0, 0, 0u64);
            loop {
                tick.tick().await;
                n += 1;
                let ok = progress.ok.load(Ordering::Relaxed);
                let side = progress.side.load(Ordering::Relaxed);
                let errors = progress.errors.load(Ordering::Relaxed);
                let mut line = format!(
                    "[{}] {:5.1}/{:.0} s  {:>9} req/s  errors {}",
                    progress.label,
                    progress.started.elapsed().as_secs_f64(),
                    progress.total.as_secs_f64(),
                    ok - last_ok,
                    errors
                );
                if side > 0 {
                    line.push_str(&format!("  registrations {:>6}/s", side - last_side));
                }
                (last_ok, last_side) = (ok, side);
                let mut err = std::io::stderr().lock();
                if tty {
                    let _ = write!(err, "\r{line}\x1b[K");
                } else if n % 5 == 0 {
                    let _ = writeln!(err, "{line}");
                }
                let _ = err.flush();
            }
        });
        ProgressPrinter { handle, tty }
    }
}

/// The running progress line; [`finish`](ProgressPrinter::finish) ends it.
#[derive(Debug)]
pub struct ProgressPrinter {
    handle: tokio::task::JoinHandle<()>,
    tty: bool,
}

impl ProgressPrinter {
    /// Stops printing and ends the rewritten line.
    pub fn finish(self) {
        self.handle.abort();
        if self.tty {
            let _ = writeln!(std::io::stderr());
        }
    }
}

/// Makes a worker's next request.
pub type Maker = Box<dyn FnMut() -> RemotingCommand + Send>;

/// One closed-loop worker: a connection and its request stream.
pub struct Worker {
    /// The connection (shared with other workers for pipelining).
    pub client: RpcClient,
    /// The requests.
    pub make: Maker,
}

/// When a load phase measures.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Run but do not record for this long first.
    pub warmup: Duration,
    /// Then record for this long.
    pub duration: Duration,
    /// Per-request timeout.
    pub timeout: Duration,
}

impl Window {
    /// The measured part of this window for a load phase that starts at
    /// `started`.
    pub fn span(&self, started: Instant) -> Span {
        let from = started + self.warmup;
        Span {
            from,
            end: from + self.duration,
        }
    }
}

/// The measured part of a load phase: `[from, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First instant measured.
    pub from: Instant,
    /// First instant no longer measured.
    pub end: Instant,
}

impl Span {
    /// Whether something that happened `at` (a closed-loop answer's
    /// arrival, a fixed-rate request's due time) is measured. Counting
    /// closed-loop requests by when they were *sent* instead would count
    /// each worker's last request, answered up to one latency after `end`,
    /// into a window whose length stays `end − from`.
    pub fn holds(&self, at: Instant) -> bool {
        at >= self.from && at < self.end
    }
}

/// What a load phase measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Successful requests counted in the window (closed loop: answered
    /// inside it; fixed rate: due inside it).
    pub ok: u64,
    /// Failed requests counted in the window.
    pub errors: u64,
    /// The first failure, for the report.
    pub first_error: Option<String>,
    /// Latencies of the successful requests counted (ns).
    pub latency: Histogram<u64>,
    /// Body bytes of the successful responses counted.
    pub response_bytes: u64,
    /// Successful answers that arrived inside the window (closed loop:
    /// `ok`; fixed rate: the rate achieved, whenever they were due).
    pub answered_in_window: u64,
    /// Fixed rate only: requests due inside the window (offered).
    pub offered: u64,
    /// Length of the window actually measured.
    pub elapsed: Duration,
    /// Fixed rate only: the latest a request went out behind its schedule.
    pub max_schedule_lag: Duration,
    /// Fixed rate only: how late each request of the window went out
    /// behind its schedule (ns).
    pub schedule_lag: Histogram<u64>,
    /// The server's CPU over the window, when its pid was given and
    /// `/proc` could be read.
    pub server_cpu: Option<ServerCpu>,
}

impl Outcome {
    fn empty() -> Outcome {
        Outcome {
            ok: 0,
            errors: 0,
            first_error: None,
            latency: stats::histogram(),
            response_bytes: 0,
            answered_in_window: 0,
            offered: 0,
            elapsed: Duration::ZERO,
            max_schedule_lag: Duration::ZERO,
            schedule_lag: stats::histogram(),
            server_cpu: None,
        }
    }

    fn merge(&mut self, other: Outcome) {
        self.ok += other.ok;
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
        self.latency
            .add(&other.latency)
            .expect("histograms share their bounds");
        self.schedule_lag
            .add(&other.schedule_lag)
            .expect("histograms share their bounds");
        self.response_bytes += other.response_bytes;
        self.answered_in_window += other.answered_in_window;
        self.offered += other.offered;
        self.max_schedule_lag = self.max_schedule_lag.max(other.max_schedule_lag);
    }

    /// Successful requests counted per second of the window.
    pub fn rate(&self) -> f64 {
        per_second(self.ok, self.elapsed)
    }

    /// Successful answers that arrived inside the window, per second of it.
    pub fn achieved_rate(&self) -> f64 {
        per_second(self.answered_in_window, self.elapsed)
    }

    /// Mean response body size.
    pub fn mean_response_bytes(&self) -> f64 {
        if self.ok == 0 {
            0.0
        } else {
            self.response_bytes as f64 / self.ok as f64
        }
    }

    /// Counts one answer (or failure); `false` if the connection closed
    /// and the worker should stop.
    fn account(&mut self, result: Result<RemotingCommand, ClientError>, nanos: u128) -> bool {
        match result {
            Ok(response) if response.response_code() == ResponseCode::Success => {
                self.ok += 1;
                self.response_bytes += response.body.as_ref().map_or(0, |b| b.len() as u64);
                stats::record(&mut self.latency, nanos);
                true
            }
            Ok(response) => {
                self.errors += 1;
                self.first_error.get_or_insert_with(|| {
                    format!(
                        "response code {} ({})",
                        response.code,
                        response.remark.unwrap_or_default()
                    )
                });
                true
            }
            Err(error) => {
                self.errors += 1;
                let closed = matches!(error, ClientError::Closed { .. });
                self.first_error.get_or_insert_with(|| error.to_string());
                !closed
            }
        }
    }
}

fn per_second(count: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        count as f64 / secs
    } else {
        0.0
    }
}

/// Reads the CPU of `pid` at `span.from` and at `span.end`.
fn cpu_over(span: Span, pid: u32) -> JoinHandle<Option<ServerCpu>> {
    tokio::spawn(async move {
        tokio::time::sleep_until(span.from).await;
        let before = CpuSnapshot::take(pid)?;
        tokio::time::sleep_until(span.end).await;
        let after = CpuSnapshot::take(pid)?;
        Some(ServerCpu::between(&before, &after))
    })
}

/// Runs `workers` closed-loop for `window`, counting successes into
/// `progress.ok` (or `progress.side` with `side`). A worker whose
/// connection closes stops (counted once as an error). Returns once the
/// window has ended (requests then in flight are abandoned).
pub async fn closed_loop(
    workers: Vec<Worker>,
    window: Window,
    progress: &Arc<Progress>,
    side: bool,
) -> Outcome {
    closed_loop_on(workers, window, progress, side, None).await
}

/// [`closed_loop`], also reading the CPU of the server process
/// `server_pid` at the start and the end of the measured window into
/// [`Outcome::server_cpu`].
pub async fn closed_loop_with_cpu(
    workers: Vec<Worker>,
    window: Window,
    progress: &Arc<Progress>,
    side: bool,
    server_pid: u32,
) -> Outcome {
    closed_loop_on(workers, window, progress, side, Some(server_pid)).await
}

async fn closed_loop_on(
    workers: Vec<Worker>,
    window: Window,
    progress: &Arc<Progress>,
    side: bool,
    server_pid: Option<u32>,
) -> Outcome {
    let span = window.span(Instant::now());
    let cpu = server_pid.map(|pid| cpu_over(span, pid));
    let mut tasks = JoinSet::new();
    for Worker { client, mut make } in workers {
        let progress = progress.clone();
        tasks.spawn(async move {
            let mut outcome = Outcome::empty();
            let mut scratch = Outcome::empty();
            loop {
                let sent = Instant::now();
                if sent >= span.end {
                    break;
                }
                let call = client.invoke(make(), window.timeout);
                let Ok(result) = tokio::time::timeout_at(span.end, call).await else {
                    break; // the window ended first: not counted
                };
                let answered = Instant::now();
                let nanos = answered.duration_since(sent).as_nanos();
                let target = if span.holds(answered) {
                    &mut outcome
                } else {
                    &mut scratch
                };
                let (ok_before, errors_before) = (target.ok, target.errors);
                let go_on = target.account(result, nanos);
                let counter = if side { &progress.side } else { &progress.ok };
                counter.fetch_add(target.ok - ok_before, Ordering::Relaxed);
                progress
                    .errors
                    .fetch_add(target.errors - errors_before, Ordering::Relaxed);
                if !go_on {
                    break;
                }
            }
            outcome
        });
    }
    let mut total = Outcome::empty();
    while let Some(done) = tasks.join_next().await {
        if let Ok(outcome) = done {
            total.merge(outcome);
        }
    }
    total.answered_in_window = total.ok;
    total.elapsed = Instant::now()
        .saturating_duration_since(span.from)
        .min(window.duration);
    if let Some(cpu) = cpu {
        // All workers gone before the window ended: the reading would wait
        // for its end and cover time nobody measured.
        total.server_cpu = if total.elapsed >= window.duration {
            cpu.await.ok().flatten()
        } else {
            cpu.abort();
            None
        };
    }
    total
}

/// Makes fixed-rate request number `i` (counted from 0 over all connections).
pub type Numbered = Arc<dyn Fn(u64) -> RemotingCommand + Send + Sync>;

/// Sends `rate` requests per second, request `i` due `i / rate` after the
/// start on `clients[i mod n]`, for `window` (after its warmup), and waits
/// for the answers to the requests due inside the window. With
/// `server_pid`, the server's CPU over the window is read too.
pub async fn fixed_rate(
    clients: &[RpcClient],
    rate: f64,
    window: Window,
    make: Numbered,
    progress: &Arc<Progress>,
    server_pid: Option<u32>,
) -> Outcome {
    let started = Instant::now();
    let span = window.span(started);
    let cpu = server_pid.map(|pid| cpu_over(span, pid));
    let schedule = Schedule {
        started,
        rate: rate.max(1e-3),
        stride: clients.len().max(1) as u64,
        span,
        timeout: window.timeout,
    };
    let mut tasks = JoinSet::new();
    for (first, client) in clients.iter().enumerate() {
        tasks.spawn(drive(
            client.clone(),
            first as u64,
            schedule,
            make.clone(),
            progress.clone(),
        ));
    }
    let mut total = Outcome::empty();
    while let Some(done) = tasks.join_next().await {
        if let Ok(outcome) = done {
            total.merge(outcome);
        }
    }
    total.elapsed = window.duration;
    if let Some(cpu) = cpu {
        total.server_cpu = cpu.await.ok().flatten();
    }
    total
}

/// The fixed-rate schedule shared by every connection's driver.
#[derive(Debug, Clone, Copy)]
struct Schedule {
    started: Instant,
    rate: f64,
    /// Connections: request `i` goes to connection `i mod stride`.
    stride: u64,
    span: Span,
    timeout: Duration,
}

impl Schedule {
    fn due(&self, i: u64) -> Instant {
        self.started + Duration::from_secs_f64(i as f64 / self.rate)
    }
}

/// One answered (or failed) fixed-rate request.
struct Answered {
    due: Instant,
    sent: Instant,
    at: Instant,
    result: Result<RemotingCommand, ClientError>,
}

async fn timed(
    client: &RpcClient,
    request: RemotingCommand,
    due: Instant,
    timeout: Duration,
) -> Answered {
    let sent = Instant::now();
    let result = client.invoke(request, timeout).await;
    Answered {
        due,
        sent,
        at: Instant::now(),
        result,
    }
}

/// Sends requests `first`, `first + stride`, … of `schedule` on `client`,
/// each as soon as it is due (all that are overdue at once when the
/// generator ran late), and follows them to their answers.
async fn drive(
    client: RpcClient,
    first: u64,
    schedule: Schedule,
    make: Numbered,
    progress: Arc<Progress>,
) -> Outcome {
    let span = schedule.span;
    let mut outcome = Outcome::empty();
    let mut in_flight = FuturesUnordered::new();
    let mut next = first;
    let sleep = tokio::time::sleep_until(schedule.due(next));
    tokio::pin!(sleep);
    loop {
        let more = schedule.due(next) < span.end;
        if !more && in_flight.is_empty() {
            break;
        }
        tokio::select! {
            biased;
            Some(done) = in_flight.next(), if !in_flight.is_empty() => {
                let done: Answered = done;
                let ok = matches!(&done.result, Ok(r) if r.response_code() == ResponseCode::Success);
                let counter = if ok { &progress.ok } else { &progress.errors };
                counter.fetch_add(1, Ordering::Relaxed);
                if ok && span.holds(done.at) {
                    outcome.answered_in_window += 1;
                }
                if span.holds(done.due) {
                    let lag = done.sent.saturating_duration_since(done.due);
                    outcome.max_schedule_lag = outcome.max_schedule_lag.max(lag);
                    stats::record(&mut outcome.schedule_lag, lag.as_nanos());
                    let nanos = done.at.duration_since(done.sent).as_nanos();
                    outcome.account(done.result, nanos);
                }
            }
            () = &mut sleep, if more => {
                let now = Instant::now();
                loop {
                    let due = schedule.due(next);
                    if due > now || due >= span.end {
                        break;
                    }
                    if span.holds(due) {
                        outcome.offered += 1;
                    }
                    in_flight.push(timed(&client, make(next), due, schedule.timeout));
                    next += schedule.stride;
                }
                sleep.as_mut().reset(schedule.due(next));
            }
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use rmq_wire::frame::{self, FrameStatus};
    use rmq_wire::RequestCode;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;
    use tokio::sync::mpsc;

    /// A server that answers every request with SUCCESS `delay` after it
    /// arrived, requests of one connection independently of each other.
    async fn slow_server(delay: Duration) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (mut read, mut write) = stream.into_split();
                let (tx, mut rx) = mpsc::unbounded_channel::<RemotingCommand>();
                tokio::spawn(async move {
                    while let Some(response) = rx.recv().await {
                        let bytes = frame::encode_to_bytes(&response);
                        if write.write_all(&bytes).await.is_err() {
                            return;
                        }
                    }
                });
                tokio::spawn(async move {
                    let mut input = BytesMut::new();
                    loop {
                        while let Ok(FrameStatus::Complete { len }) = frame::check(&input) {
                            let request = frame::decode(input.split_to(len).freeze()).unwrap();
                            let tx = tx.clone();
                            tokio::spawn(async move {
                                tokio::time::sleep(delay).await;
                                let _ = tx.send(RemotingCommand::response_to(
                                    &request,
                                    ResponseCode::Success,
                                ));
                            });
                        }
                        if matches!(read.read_buf(&mut input).await, Ok(0) | Err(_)) {
                            return;
                        }
                    }
                });
            }
        });
        addr
    }

    fn at(base: Instant, ms: u64) -> Instant {
        base + Duration::from_millis(ms)
    }

    #[test]
    fn a_window_holds_what_happens_inside_it() {
        let base = Instant::now();
        let window = Window {
            warmup: Duration::from_millis(200),
            duration: Duration::from_millis(500),
            timeout: Duration::from_secs(1),
        };
        let span = window.span(base);
        assert_eq!(span.from, at(base, 200));
        assert_eq!(span.end, at(base, 700));
        // Sent during the warmup, answered inside: counted.
        assert!(span.holds(at(base, 250)));
        // Sent inside, answered after the end: not counted.
        assert!(!span.holds(at(base, 700)) && !span.holds(at(base, 900)));
        assert!(!span.holds(at(base, 199)));
    }

    /// One worker against a server that takes 1 s, measured for 1.5 s from
    /// the start: the first answer (at 1 s) is inside the window, the second
    /// (at 2 s) is not. Counting by send time would count both requests
    /// (both were sent before 1.5 s) and wait for the second. Each bound
    /// leaves 400 ms or more for a busy machine's scheduling.
    #[tokio::test]
    async fn closed_loop_counts_the_answers_that_arrive_inside_the_window() {
        let addr = slow_server(Duration::from_millis(1_000)).await;
        let clients = connect(addr, 1).await.unwrap();
        let window = Window {
            warmup: Duration::ZERO,
            duration: Duration::from_millis(1_500),
            timeout: Duration::from_secs(5),
        };
        let workers = vec![Worker {
            client: clients[0].clone(),
            make: Box::new(|| RemotingCommand::request(RequestCode::GetRouteInfoByTopic, 0)),
        }];
        let progress = Progress::new("test", window.duration);
        let started = std::time::Instant::now();
        let outcome =
            closed_loop_with_cpu(workers, window, &progress, false, std::process::id()).await;
        let took = started.elapsed();
        assert_eq!(outcome.ok, 1, "{outcome:?}");
        assert_eq!(outcome.answered_in_window, 1);
        assert_eq!(outcome.errors, 0);
        assert_eq!(outcome.elapsed, window.duration);
        assert!((outcome.rate() - 1.0 / 1.5).abs() < 1e-9);
        assert!(
            took < Duration::from_millis(1_900),
            "the worker waited for an answer after the window: {took:?}"
        );
        // This process's CPU over the window was read (too few ticks for a
        // figure per request).
        let cpu = outcome.server_cpu.expect("CPU read at both ends");
        assert!((cpu.window_s - 1.5).abs() < 0.2, "{cpu:?}");
        assert_eq!(cpu.us_per(outcome.ok), None);
    }

    /// Ten requests a second for a second against a server that takes
    /// 450 ms: all ten due inside the window are followed to their
    /// answers, six of which arrive inside it (at 450 … 950 ms).
    #[tokio::test]
    async fn fixed_rate_follows_every_request_due_and_counts_the_answers_inside() {
        let addr = slow_server(Duration::from_millis(450)).await;
        let clients = connect(addr, 2).await.unwrap();
        let window = Window {
            warmup: Duration::ZERO,
            duration: Duration::from_secs(1),
            timeout: Duration::from_secs(5),
        };
        let progress = Progress::new("test", window.duration);
        let make: Numbered =
            Arc::new(|_| RemotingCommand::request(RequestCode::GetRouteInfoByTopic, 0));
        let outcome = fixed_rate(&clients, 10.0, window, make, &progress, None).await;
        assert_eq!(outcome.offered, 10, "{outcome:?}");
        assert_eq!(outcome.ok, 10);
        assert_eq!(outcome.latency.len(), 10);
        assert_eq!(outcome.answered_in_window, 6);
        assert!((outcome.achieved_rate() - 6.0).abs() < 1e-9);
        assert_eq!(outcome.schedule_lag.len(), 10);
        assert!(outcome.max_schedule_lag < Duration::from_millis(100));
        assert_eq!(progress.ok.load(Ordering::Relaxed), 10);
    }
}
