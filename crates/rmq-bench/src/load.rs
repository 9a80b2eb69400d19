//! The load generator: closed-loop and fixed-rate request streams, counted only inside the
//! measured window, latencies per worker, the server's CPU over the window, the progress line.

use crate::pin::CpuSnapshot;
use crate::sample::ServerCpu;
use crate::stats;
use anyhow::Context;
use futures::stream::{self, FuturesUnordered, StreamExt, TryStreamExt};
use hdrhistogram::Histogram;
use rmq_transport::{ClientConfig, ClientError, RpcClient};
use rmq_wire::{RemotingCommand, ResponseCode};
use std::net::SocketAddr;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

/// Every generator connection's configuration: nothing the server sends unasked is kept.
pub fn client_config() -> ClientConfig {
    ClientConfig {
        inbound_capacity: 0,
        ..ClientConfig::default()
    }
}

/// A readiness probe's configuration: connects fail fast.
pub fn probe_config() -> ClientConfig {
    ClientConfig {
        connect_timeout: Duration::from_millis(500),
        ..client_config()
    }
}

pub async fn connect(addr: SocketAddr, count: usize) -> anyhow::Result<Vec<RpcClient>> {
    connect_with(addr, count, &client_config()).await
}

/// Opens `count` connections to `addr` one after the other (`config`: TLS, a signing hook).
pub async fn connect_with(
    addr: SocketAddr,
    count: usize,
    config: &ClientConfig,
) -> anyhow::Result<Vec<RpcClient>> {
    let clients = stream::iter(0..count).then(|_| RpcClient::connect(addr, config.clone()));
    let clients = clients.try_collect::<Vec<_>>().await;
    clients.with_context(|| format!("cannot connect to {addr}"))
}

/// A load phase's counters: successes, failures, and a second stream's successes
/// (registrations during a storm).
#[derive(Debug, Default)]
pub struct Progress {
    pub ok: AtomicU64,
    pub errors: AtomicU64,
    pub side: AtomicU64,
}

impl Progress {
    /// One line of what was counted over the phase `label`, which began at `started`.
    pub fn print(&self, label: &str, started: Instant) {
        let [ok, errors, side] =
            [&self.ok, &self.errors, &self.side].map(|c| c.load(Ordering::Relaxed));
        let side = if side > 0 {
            format!(", {side} registrations")
        } else {
            String::new()
        };
        let took = started.elapsed().as_secs_f64();
        eprintln!("[{label}] {ok} answered, {errors} errors{side} in {took:.1} s");
    }
}

/// Runs `phase` with fresh counters and prints one line of what they counted when it ends.
pub async fn shown<T>(label: impl Into<String>, phase: impl AsyncFnOnce(&Arc<Progress>) -> T) -> T {
    let (progress, started) = (Arc::new(Progress::default()), Instant::now());
    let result = phase(&progress).await;
    progress.print(&label.into(), started);
    result
}

pub type Maker = Box<dyn FnMut() -> RemotingCommand + Send>;

/// One closed-loop worker: a connection (shared with others for pipelining), its requests.
pub struct Worker {
    pub client: RpcClient,
    pub make: Maker,
}

/// When a load phase measures: `warmup` unrecorded, then `duration`; each request times out after `timeout`.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub warmup: Duration,
    pub duration: Duration,
    pub timeout: Duration,
}

impl Window {
    pub fn secs(warmup_s: f64, duration_s: f64, timeout: Duration) -> Window {
        let secs = Duration::from_secs_f64;
        Window {
            warmup: secs(warmup_s),
            duration: secs(duration_s),
            timeout,
        }
    }

    /// The measured part of this window for a load phase that starts at `started`: what happens
    /// inside it (a closed-loop answer's arrival, a fixed-rate request's due time) is measured.
    pub fn span(&self, started: Instant) -> Range<Instant> {
        let from = started + self.warmup;
        from..from + self.duration
    }
}

/// What a load phase measured: requests counted in the window (closed loop: answered inside it;
/// fixed rate: due inside it), answers inside it, and for fixed rate the offered requests and
/// their lag (ns).
#[derive(Debug, Clone)]
pub struct Outcome {
    pub ok: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub latency: Histogram<u64>,
    pub response_bytes: u64,
    pub answered_in_window: u64,
    pub offered: u64,
    /// Length of the window actually measured.
    pub elapsed: Duration,
    pub max_schedule_lag: Duration,
    pub schedule_lag: Histogram<u64>,
    pub server_cpu: Option<ServerCpu>,
}

impl Outcome {
    pub fn empty() -> Outcome {
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
        self.first_error = self.first_error.take().or(other.first_error);
        let bounds = "histograms share their bounds";
        self.latency.add(&other.latency).expect(bounds);
        self.schedule_lag.add(&other.schedule_lag).expect(bounds);
        self.response_bytes += other.response_bytes;
        self.answered_in_window += other.answered_in_window;
        self.offered += other.offered;
        self.max_schedule_lag = self.max_schedule_lag.max(other.max_schedule_lag);
    }

    /// Successful requests counted per second of the window.
    pub fn rate(&self) -> f64 {
        per(self.ok, self.elapsed.as_secs_f64())
    }

    /// Successful answers that arrived inside the window, per second of it.
    pub fn achieved_rate(&self) -> f64 {
        per(self.answered_in_window, self.elapsed.as_secs_f64())
    }

    pub fn mean_response_bytes(&self) -> f64 {
        per(self.response_bytes, self.ok as f64)
    }

    fn account(&mut self, result: Result<RemotingCommand, ClientError>, nanos: u128) {
        let response = match result {
            Ok(r) if r.response_code() == ResponseCode::Success => r,
            failed => {
                self.errors += 1;
                self.first_error.get_or_insert_with(|| match failed {
                    Ok(r) => format!(
                        "response code {} ({})",
                        r.code,
                        r.remark.unwrap_or_default()
                    ),
                    Err(error) => error.to_string(),
                });
                return;
            }
        };
        self.ok += 1;
        self.response_bytes += response.body.as_ref().map_or(0, |b| b.len() as u64);
        stats::record(&mut self.latency, nanos);
    }
}

/// `count / of`, 0 when `of` is not positive.
fn per(count: u64, of: f64) -> f64 {
    if of > 0.0 {
        count as f64 / of
    } else {
        0.0
    }
}

fn succeeded(result: &Result<RemotingCommand, ClientError>) -> bool {
    matches!(result, Ok(r) if r.response_code() == ResponseCode::Success)
}

/// Reads the CPU of `pid` at the start and at the end of `span`.
fn cpu_over(span: Range<Instant>, pid: u32) -> JoinHandle<Option<ServerCpu>> {
    tokio::spawn(async move {
        tokio::time::sleep_until(span.start).await;
        let before = CpuSnapshot::take(pid)?;
        tokio::time::sleep_until(span.end).await;
        Some(ServerCpu::between(&before, &CpuSnapshot::take(pid)?))
    })
}

/// The workers' outcomes merged over `elapsed` (of at most the window's duration), with the
/// server's CPU read by `cpu` if the window was measured to its end.
async fn merged(
    mut tasks: JoinSet<Outcome>,
    window: Window,
    elapsed: impl FnOnce() -> Duration,
    cpu: Option<JoinHandle<Option<ServerCpu>>>,
) -> Outcome {
    let mut total = Outcome::empty();
    while let Some(done) = tasks.join_next().await {
        if let Ok(outcome) = done {
            total.merge(outcome);
        }
    }
    total.elapsed = elapsed().min(window.duration);
    if let Some(cpu) = cpu {
        // All workers gone before the window ended: the reading would wait for its end and
        // cover time nobody measured.
        total.server_cpu = if total.elapsed >= window.duration {
            cpu.await.ok().flatten()
        } else {
            cpu.abort();
            None
        };
    }
    total
}

/// Runs `workers` closed-loop for `window`, counting successes into `progress.ok`
/// (`progress.side` with `side`), with `server_pid` reading its CPU over the measured window;
/// requests in flight at its end are abandoned.
pub async fn closed_loop(
    workers: Vec<Worker>,
    window: Window,
    progress: &Arc<Progress>,
    side: bool,
    server_pid: Option<u32>,
) -> Outcome {
    let span = window.span(Instant::now());
    let cpu = server_pid.map(|pid| cpu_over(span.clone(), pid));
    let mut tasks = JoinSet::new();
    for Worker { client, mut make } in workers {
        let (progress, span) = (progress.clone(), span.clone());
        tasks.spawn(async move {
            let mut outcome = Outcome::empty();
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
                let counter = match succeeded(&result) {
                    true if side => &progress.side,
                    true => &progress.ok,
                    false => &progress.errors,
                };
                counter.fetch_add(1, Ordering::Relaxed);
                let closed = matches!(result, Err(ClientError::Closed { .. }));
                if span.contains(&answered) {
                    outcome.account(result, answered.duration_since(sent).as_nanos());
                }
                if closed {
                    break;
                }
            }
            outcome
        });
    }
    let elapsed = || Instant::now().saturating_duration_since(span.start);
    let mut total = merged(tasks, window, elapsed, cpu).await;
    total.answered_in_window = total.ok;
    total
}

/// A fixed-rate request's due, sent and answer times, and its answer.
type Answered = (
    Instant,
    Instant,
    Instant,
    Result<RemotingCommand, ClientError>,
);

/// Makes fixed-rate request number `i` (counted from 0 over all connections).
pub type Numbered = Arc<dyn Fn(u64) -> RemotingCommand + Send + Sync>;

/// Sends `rate` requests per second, request `i` due `i / rate` after the start on
/// `clients[i mod n]`, and follows those due inside the window to their answers; with
/// `server_pid`, its CPU over the window too.
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
    let cpu = server_pid.map(|pid| cpu_over(span.clone(), pid));
    let (rate, stride) = (rate.max(1e-3), clients.len().max(1) as u64);
    let due_at = move |i: u64| started + Duration::from_secs_f64(i as f64 / rate);
    let mut tasks = JoinSet::new();
    for (first, client) in clients.iter().enumerate() {
        let (client, make, progress) = (client.clone(), make.clone(), progress.clone());
        let span = span.clone();
        // Requests `first`, `first + stride`, … sent as they fall due (all overdue ones at
        // once), each followed to its answer.
        tasks.spawn(async move {
            let mut outcome = Outcome::empty();
            let mut in_flight = FuturesUnordered::new();
            let mut next = first as u64;
            let sleep = tokio::time::sleep_until(due_at(next));
            tokio::pin!(sleep);
            loop {
                let more = due_at(next) < span.end;
                if !more && in_flight.is_empty() {
                    break;
                }
                tokio::select! {
                    biased;
                    Some(done) = in_flight.next(), if !in_flight.is_empty() => {
                        let (due, sent, at, result): Answered = done;
                        let ok = succeeded(&result);
                        let counter = if ok { &progress.ok } else { &progress.errors };
                        counter.fetch_add(1, Ordering::Relaxed);
                        outcome.answered_in_window += u64::from(ok && span.contains(&at));
                        if span.contains(&due) {
                            let lag = sent.saturating_duration_since(due);
                            outcome.max_schedule_lag = outcome.max_schedule_lag.max(lag);
                            stats::record(&mut outcome.schedule_lag, lag.as_nanos());
                            outcome.account(result, at.duration_since(sent).as_nanos());
                        }
                    }
                    () = &mut sleep, if more => {
                        let now = Instant::now();
                        while due_at(next) <= now && due_at(next) < span.end {
                            let (due, request, client) = (due_at(next), make(next), &client);
                            outcome.offered += u64::from(span.contains(&due));
                            in_flight.push(async move {
                                let sent = Instant::now();
                                let result = client.invoke(request, window.timeout).await;
                                (due, sent, Instant::now(), result)
                            });
                            next += stride;
                        }
                        sleep.as_mut().reset(due_at(next));
                    }
                }
            }
            outcome
        });
    }
    merged(tasks, window, || window.duration, cpu).await
}
