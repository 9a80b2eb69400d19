//! `route-under-storm`: route queries at a fixed rate while every broker of a large fleet
//! re-registers closed loop.

use super::fleet::{millis, start_peer, verify_routes, Fleet, QUERY_TIMEOUT, REGISTER_TIMEOUT};
use super::{route_qps, settle, Ctx, Record, Scenario};
use crate::cli::secs;
use crate::load::{self, Numbered, Progress, Window};
use crate::peer::{PeerKind, PeerOptions};
use crate::report::charts::{curve, Panel};
use crate::report::format::{cpu_share, mib, ms, noise, num, us};
use crate::report::{of, over, Col, Ratio, Section, OTHERS};
use crate::sample::{self, ServerSample};
use crate::stats::Latency;
use crate::workload::{self, Layout};
use anyhow::Context;
use clap::Args;
use serde::{Deserialize, Serialize};
use std::ffi::OsStr;
use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use tokio::runtime::Builder;
use tokio::sync::oneshot::{self, Receiver, Sender};
use tokio::time::Instant;

pub struct RouteUnderStorm;

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Params {
    /// Brokers.
    #[arg(long, default_value_t = 100)]
    pub brokers: usize,
    /// Topics per broker.
    #[arg(long = "topics", default_value_t = 2_000)]
    pub topics_per_broker: usize,
    /// Brokers per topic.
    #[arg(long, default_value_t = 10)]
    pub spread: usize,
    /// Route queries per second.
    #[arg(long, default_value_t = 1_000.0)]
    pub query_rate: f64,
    /// Query connections.
    #[arg(long, default_value_t = 16)]
    pub query_connections: usize,
    /// Unmeasured lead-in.
    #[arg(long = "warmup", default_value_t = 2.0, value_parser = secs)]
    pub warmup_s: f64,
    /// Measured time.
    #[arg(long = "duration", default_value_t = 20.0, value_parser = secs)]
    pub duration_s: f64,
}

/// What one peer did: route queries at a fixed rate, and registrations closed loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub params: Params,
    pub queries: Latency,
    pub query_errors: u64,
    pub query_first_error: Option<String>,
    pub query_schedule_lag_max_ms: f64,
    pub query_thread: String,
    pub registrations_per_s: f64,
    pub entries_per_s: f64,
    pub registration_latency: Latency,
    pub registration_errors: u64,
    pub registration_first_error: Option<String>,
    pub queries_answered: u64,
    pub registrations_answered: u64,
    /// Server CPU per registration, µs ([`sample::attribute`]).
    pub cpu_us_per_registration: Option<f64>,
    /// The CPU per query taken off for each answered query, µs (the same server's in
    /// route-qps); `None`: the queries' share is in.
    pub cpu_us_per_query_subtracted: Option<f64>,
    #[serde(flatten)]
    pub server: ServerSample,
}

impl Scenario for RouteUnderStorm {
    const ID: &'static str = "route-under-storm";
    const ABOUT: &'static str =
        "Route queries at a fixed rate while every broker of a large fleet re-registers closed loop";
    type Params = Params;
    fn quick(p: &mut Params) {
        (p.brokers, p.topics_per_broker) = (10, 200);
        (p.warmup_s, p.duration_s) = (0.5, 2.0);
    }
    async fn run(ctx: &Ctx<'_>, p: &Params, record: &mut Record) -> anyhow::Result<()> {
        for kind in ctx.peers::<Self>() {
            let label = format!("route-under-storm {}", kind.id());
            let noise = |x: &Outcome| x.server.others_cpu_percent.unwrap_or(0.0);
            let outcome = settle(&label, noise, async || storm(ctx, kind, p).await).await;
            record.add(kind, "", outcome.map(|(x, _)| x));
        }
        Ok(())
    }
    fn report(s: &mut Section<'_>) {
        let rows = s.rows::<Outcome>("");
        let (w, j) = (PeerKind::Waymark, PeerKind::Java);
        let p99 = of(&rows, w).map(|x| x.queries.p99_us);
        let what = "route-under-storm query p99 ≤ 2 ms";
        s.target(what, p99.map(ms), p99.map(|v| v <= 2_000.0));
        let what = "route-under-storm p99 ≤ 1/5 of Java's (Java ÷ Waymark ≥ 5)";
        s.at_least(what, over(&rows, |x| Some(x.queries.p99_us), j, w), 5.0);
        let what = "registration CPU under storm ≤ 1/3 of Java's (Java ÷ Waymark ≥ 3)";
        s.at_least(what, over(&rows, |x| x.cpu_us_per_registration, j, w), 3.0);
        s.table(&rows, COLUMNS);
        s.ratios(&rows, &OTHERS, RATIOS);
        let title = "route-under-storm: query latency (fixed rate)";
        let latency = Panel::curves(title, |x: &Outcome| curve(&x.queries));
        let registrations = |x: &Outcome| Some(x.registrations_per_s);
        let registrations = Panel::bars("storm: registrations/s", registrations);
        s.chart(&rows, &[latency, registrations]);
    }
}

const RATIOS: &[Ratio<Outcome>] = &[
    Ratio::cost("query p99 (peer ÷ Waymark)", |x| Some(x.queries.p99_us)),
    Ratio::rate("registrations/s (Waymark ÷ peer)", |x| {
        Some(x.registrations_per_s)
    }),
    Ratio::cost("server CPU per registration (peer ÷ Waymark)", |x| {
        x.cpu_us_per_registration
    }),
];

const COLUMNS: &[Col<Outcome>] = &[
    ("query p50", |x| ms(x.queries.p50_us)),
    ("p99", |x| ms(x.queries.p99_us)),
    ("p99.9", |x| ms(x.queries.p999_us)),
    ("max", |x| ms(x.queries.max_us)),
    ("query errors", |x| x.query_errors.to_string()),
    ("lag", |x| format!("{:.1} ms", x.query_schedule_lag_max_ms)),
    ("registrations/s", |x| num(x.registrations_per_s)),
    ("entries/s", |x| num(x.entries_per_s)),
    ("registration p50", |x| ms(x.registration_latency.p50_us)),
    ("p99", |x| ms(x.registration_latency.p99_us)),
    ("server CPU", |x| cpu_share(x.server.server_cpu.as_ref())),
    ("CPU per registration", |x| {
        // Marked where route-qps did not run for the server: the queries' share is in.
        let in_it = x.cpu_us_per_registration.is_some() && x.cpu_us_per_query_subtracted.is_none();
        us(x.cpu_us_per_registration) + if in_it { " *" } else { "" }
    }),
    ("server RSS", |x| mib(x.server.rss_kib)),
    ("others' CPU", |x| noise(x.server.others_cpu_percent)),
];

/// Route queries for each of `topics` in turn.
pub(super) fn route_queries(topics: Vec<String>) -> Numbered {
    Arc::new(move |i| workload::route_request(&topics[i as usize % topics.len()]))
}

/// Puts the calling thread under `SCHED_FIFO` 1; says what it got.
fn realtime_priority() -> String {
    let link = std::fs::read_link("/proc/thread-self").unwrap_or_default();
    let Some(tid) = link.file_name().and_then(OsStr::to_str) else {
        return "normal (no thread id)".into();
    };
    match Command::new("chrt").args(["-f", "-p", "1", tid]).output() {
        Ok(out) if out.status.success() => "SCHED_FIFO 1 (chrt)".into(),
        Ok(out) => {
            let why = String::from_utf8_lossy(&out.stderr);
            format!("normal (chrt failed: {})", why.trim())
        }
        Err(error) => format!("normal (no chrt: {error})"),
    }
}

/// Connects the query connections on a thread and runtime of their own (not queued behind
/// registration tasks), under `SCHED_FIFO` 1 if `chrt` allows; returns once they are open, with
/// the priority it got, the sender that starts the stream, and the stream's outcome.
async fn query_thread(
    addr: SocketAddr,
    p: &Params,
    query: Numbered,
    progress: &Arc<Progress>,
) -> anyhow::Result<(String, Sender<()>, Receiver<load::Outcome>)> {
    let (connections, rate) = (p.query_connections.max(1), p.query_rate.max(1.0));
    let window = Window::secs(p.warmup_s, p.duration_s, QUERY_TIMEOUT);
    let (ready_tx, ready_rx) = oneshot::channel::<anyhow::Result<String>>();
    let (go_tx, go_rx) = oneshot::channel::<()>();
    let (done_tx, done_rx) = oneshot::channel();
    let progress = progress.clone();
    let runtime = Builder::new_current_thread().enable_all().build()?;
    std::thread::Builder::new()
        .name("storm-queries".into())
        .spawn(move || {
            let priority = realtime_priority();
            runtime.block_on(async move {
                let clients = match load::connect(addr, connections).await {
                    Ok(clients) => clients,
                    Err(error) => return drop(ready_tx.send(Err(error))),
                };
                let _ = ready_tx.send(Ok(priority));
                if go_rx.await.is_ok() {
                    let queried = load::fixed_rate(&clients, rate, window, query, &progress, None);
                    let _ = done_tx.send(queried.await);
                }
            });
        })?;
    let priority = ready_rx.await.context("the query thread died")??;
    Ok((priority, go_tx, done_rx))
}

async fn storm(ctx: &Ctx<'_>, kind: PeerKind, p: &Params) -> anyhow::Result<Outcome> {
    // The queries' CPU at the rate this server showed alone, if route-qps ran it.
    let alone = ctx.results.scenarios.get(route_qps::RouteQps::ID);
    let alone = alone.and_then(|q| q.of::<route_qps::Outcome>("", kind));
    let query_us = alone.and_then(|q| q.cpu_us_per_query);
    let layout = Layout::new(p.brokers, p.topics_per_broker, p.spread);
    layout.validate()?;
    let peer = start_peer(ctx.setup, kind, &layout, &PeerOptions::default()).await?;
    let mut fleet = Fleet::registered(peer.addr, &layout).await?;
    let check = load::connect(peer.addr, 1).await?;
    verify_routes(&check[0], &layout, kind).await?;
    let registering = fleet.re_registering();
    let register_window = Window::secs(p.warmup_s, p.duration_s, REGISTER_TIMEOUT);
    let label = format!("route-under-storm {}", kind.id());
    let (progress, started) = (Arc::new(Progress::default()), Instant::now());
    let (query_thread, go, done) =
        query_thread(peer.addr, p, route_queries(layout.all_topics()), &progress).await?;
    let pid = Some(peer.pid());
    let (registered, queried) = tokio::join!(
        load::closed_loop(registering, register_window, &progress, true, pid),
        async {
            let _ = go.send(());
            done.await.context("the query thread died")
        },
    );
    progress.print(&label, started);
    let queried = queried?;
    let server = ServerSample::of(&peer, registered.server_cpu.clone());
    let cpu = server.server_cpu.as_ref();
    let (queries, registrations) = (queried.answered_in_window, registered.ok);
    let attribute = |cpu| sample::attribute(cpu, queries, query_us, registrations);
    Ok(Outcome {
        params: p.clone(),
        queries: Latency::of(&queried.latency),
        query_errors: queried.errors,
        query_first_error: queried.first_error,
        query_schedule_lag_max_ms: millis(queried.max_schedule_lag),
        query_thread,
        registrations_per_s: registered.rate(),
        entries_per_s: registered.rate() * layout.topics_per_broker as f64,
        registration_latency: Latency::of(&registered.latency),
        registration_errors: registered.errors,
        registration_first_error: registered.first_error,
        queries_answered: queries,
        registrations_answered: registrations,
        cpu_us_per_registration: cpu.and_then(attribute),
        cpu_us_per_query_subtracted: cpu.and(query_us),
        server,
    })
}
