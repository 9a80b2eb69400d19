//! `route-qps`: route queries at full speed.
//!
//! 10 brokers × 100 topics (each topic on all 10 brokers) register; then
//! GET_ROUTEINFO_BY_TOPIC for every topic in turn over 64 connections, each
//! with `depth` requests in flight, closed-loop for 20 s after a 2 s warmup.
//! Reports queries per second, latency percentiles and the server's CPU
//! per query (its `utime + stime` over the measured window ÷ queries
//! answered in it, [`crate::cpu`]).

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{registrations, start_peer, verify_routes, Fleet, QUERY_TIMEOUT};
use crate::cpu::ServerCpu;
use crate::load::{self, Progress, Window, Worker};
use crate::peer::{PeerKind, PeerSetup};
use crate::stats::Latency;
use crate::workload::{self, Layout};

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Brokers and topics.
    pub layout: Layout,
    /// Query connections.
    pub connections: usize,
    /// Requests in flight per connection.
    pub depth: usize,
    /// Unmeasured lead-in, seconds.
    pub warmup_s: f64,
    /// Measured time, seconds.
    pub duration_s: f64,
}

/// The fleet whose routes are queried: 10 brokers × 100 topics, each topic
/// on all 10 (also `route-sweep`'s, so the two measure the same answers).
pub const LAYOUT: Layout = Layout {
    brokers: 10,
    topics_per_broker: 100,
    spread: 10,
    queues: 8,
};

impl Params {
    /// The defaults (a few seconds in all with `quick`).
    pub fn defaults(quick: bool) -> Params {
        Params {
            layout: LAYOUT,
            connections: 64,
            depth: 4,
            warmup_s: if quick { 0.5 } else { 2.0 },
            duration_s: if quick { 2.0 } else { 20.0 },
        }
    }
}

/// What one peer did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteQps {
    /// What ran.
    pub params: Params,
    /// Successful queries per second.
    pub qps: f64,
    /// Latency of the successful queries.
    pub latency: Latency,
    /// Failed queries.
    pub errors: u64,
    /// The first failure.
    pub first_error: Option<String>,
    /// Mean route body size, bytes (the same workload has the same size).
    pub mean_response_bytes: f64,
    /// Server RSS at the end, KiB.
    pub rss_kib: Option<u64>,
    /// CPUs the server was allowed.
    pub server_cpus: Option<String>,
    /// CPU other processes used during the run, % of one CPU (noise).
    #[serde(default)]
    pub others_cpu_percent: Option<f64>,
    /// The server's CPU over the measured window.
    #[serde(default)]
    pub server_cpu: Option<ServerCpu>,
    /// Queries answered inside the window.
    #[serde(default)]
    pub answered: u64,
    /// Server CPU per answered query, µs (`None` below
    /// [`crate::cpu::MIN_TICKS`]).
    #[serde(default)]
    pub cpu_us_per_query: Option<f64>,
}

/// Runs the scenario against a fresh `kind`.
///
/// # Errors
/// The peer does not start, refuses registrations or routes wrongly.
pub async fn run(setup: &PeerSetup, kind: PeerKind, params: &Params) -> anyhow::Result<RouteQps> {
    let layout = params.layout;
    layout.validate()?;
    let peer = start_peer(setup, kind, &layout).await?;
    let mut fleet = Fleet::connect(peer.addr, registrations(&layout)?).await?;
    fleet.register_all().await?;
    let fleet = fleet.keep_registered();
    let clients = load::connect(peer.addr, params.connections).await?;
    verify_routes(&clients[0], &layout, kind).await?;

    let requests: Arc<Vec<_>> = Arc::new(
        layout
            .all_topics()
            .iter()
            .map(|t| workload::route_request(t))
            .collect(),
    );
    let mut workers = Vec::with_capacity(params.connections * params.depth);
    for client in &clients {
        for _ in 0..params.depth {
            let requests = requests.clone();
            let mut next = workers.len() * 7 % requests.len();
            workers.push(Worker {
                client: client.clone(),
                make: Box::new(move || {
                    next = (next + 1) % requests.len();
                    requests[next].clone()
                }),
            });
        }
    }
    let window = Window {
        warmup: Duration::from_secs_f64(params.warmup_s),
        duration: Duration::from_secs_f64(params.duration_s),
        timeout: QUERY_TIMEOUT,
    };
    let progress = Progress::new(
        format!("route-qps {}", kind.id()),
        window.warmup + window.duration,
    );
    let printer = progress.spawn_printer();
    let outcome = load::closed_loop_with_cpu(workers, window, &progress, false, peer.pid()).await;
    printer.finish();
    let others_cpu_percent = outcome
        .server_cpu
        .as_ref()
        .map(|window| window.others_cpu_percent);

    let result = RouteQps {
        params: params.clone(),
        qps: outcome.rate(),
        latency: Latency::of(&outcome.latency),
        errors: outcome.errors,
        first_error: outcome.first_error.clone(),
        mean_response_bytes: outcome.mean_response_bytes(),
        rss_kib: peer.rss_kib(),
        server_cpus: peer.cpus_allowed(),
        others_cpu_percent,
        cpu_us_per_query: outcome
            .server_cpu
            .as_ref()
            .and_then(|cpu| cpu.us_per(outcome.ok)),
        server_cpu: outcome.server_cpu.clone(),
        answered: outcome.ok,
    };
    drop(fleet);
    peer.stop();
    Ok(result)
}
