//! The load generator: connections, closed-loop and fixed-rate request
//! streams, latency recording and the progress line.
//!
//! Closed loop: every worker keeps exactly one request in flight on its
//! connection (`depth` workers per connection give a pipeline depth of
//! `depth`), so the server sets the pace. Fixed rate: requests are started on
//! a schedule whatever the answers do; latency runs from the moment a request
//! is handed to the connection, and how late the schedule ran is reported
//! separately so a stalled generator cannot pass for a fast server. Latencies
//! go into per-worker histograms merged at the end, so recording takes no
//! lock on the hot path.

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context;
use hdrhistogram::Histogram;
use rmq_transport::{ClientConfig, ClientError, RpcClient};
use rmq_wire::{RemotingCommand, ResponseCode};
use tokio::task::JoinSet;
use tokio::time::Instant;

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

/// What a load phase measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Successful requests inside the window.
    pub ok: u64,
    /// Failed requests inside the window.
    pub errors: u64,
    /// The first failure, for the report.
    pub first_error: Option<String>,
    /// Latencies of the successful requests inside the window (ns).
    pub latency: Histogram<u64>,
    /// Body bytes of the successful responses inside the window.
    pub response_bytes: u64,
    /// Length of the window actually measured.
    pub elapsed: Duration,
    /// Fixed rate only: the latest a request started behind its schedule.
    pub max_schedule_lag: Duration,
}

impl Outcome {
    fn empty() -> Outcome {
        Outcome {
            ok: 0,
            errors: 0,
            first_error: None,
            latency: stats::histogram(),
            response_bytes: 0,
            elapsed: Duration::ZERO,
            max_schedule_lag: Duration::ZERO,
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
        self.response_bytes += other.response_bytes;
        self.max_schedule_lag = self.max_schedule_lag.max(other.max_schedule_lag);
    }

    /// Successful requests per second of the window.
    pub fn rate(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.ok as f64 / secs
        } else {
            0.0
        }
    }

    /// Mean response body size.
    pub fn mean_response_bytes(&self) -> f64 {
        if self.ok == 0 {
            0.0
        } else {
            self.response_bytes as f64 / self.ok as f64
        }
    }

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

/// Runs `workers` closed-loop for `window`, counting successes into
/// `progress.ok` (or `progress.side` with `side`). A worker whose
/// connection closes stops (counted once as an error).
pub async fn closed_loop(
    workers: Vec<Worker>,
    window: Window,
    progress: &Arc<Progress>,
    side: bool,
) -> Outcome {
    let started = Instant::now();
    let measure_from = started + window.warmup;
    let end = measure_from + window.duration;
    let mut tasks = JoinSet::new();
    for Worker { client, mut make } in workers {
        let progress = progress.clone();
        tasks.spawn(async move {
            let mut outcome = Outcome::empty();
            let mut scratch = Outcome::empty();
            loop {
                let sent = Instant::now();
                if sent >= end {
                    break;
                }
                let result = client.invoke(make(), window.timeout).await;
                let nanos = sent.elapsed().as_nanos();
                let target = if sent >= measure_from {
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
    total.elapsed = Instant::now()
        .saturating_duration_since(measure_from)
        .min(window.duration);
    total
}

/// Sends `rate` requests per second, round-robin over `clients`, for
/// `window` (after its warmup), and waits for the last answers.
pub async fn fixed_rate(
    clients: &[RpcClient],
    rate: f64,
    window: Window,
    mut make: impl FnMut() -> RemotingCommand,
    progress: &Arc<Progress>,
) -> Outcome {
    let started = Instant::now();
    let measure_from = started + window.warmup;
    let end = measure_from + window.duration;
    let shared = Arc::new(Mutex::new(Outcome::empty()));
    let mut tasks = JoinSet::new();
    let mut max_lag = Duration::ZERO;
    for i in 0u64.. {
        let due = started + Duration::from_secs_f64(i as f64 / rate);
        if due >= end {
            break;
        }
        tokio::time::sleep_until(due).await;
        let client = clients[(i as usize) % clients.len()].clone();
        let request = make();
        let measured = due >= measure_from;
        if measured {
            max_lag = max_lag.max(Instant::now().saturating_duration_since(due));
        }
        let shared = shared.clone();
        let progress = progress.clone();
        tasks.spawn(async move {
            let sent = Instant::now();
            let result = client.invoke(request, window.timeout).await;
            let nanos = sent.elapsed().as_nanos();
            let ok = matches!(&result, Ok(r) if r.response_code() == ResponseCode::Success);
            let counter = if ok { &progress.ok } else { &progress.errors };
            counter.fetch_add(1, Ordering::Relaxed);
            if measured {
                let mut outcome = shared.lock().unwrap_or_else(PoisonError::into_inner);
                outcome.account(result, nanos);
            }
        });
        // Reap finished tasks so the set stays small at high rates.
        while tasks.try_join_next().is_some() {}
    }
    while tasks.join_next().await.is_some() {}
    let mut total = std::mem::replace(
        &mut *shared.lock().unwrap_or_else(PoisonError::into_inner),
        Outcome::empty(),
    );
    total.elapsed = window.duration;
    total.max_schedule_lag = max_lag;
    total
}
