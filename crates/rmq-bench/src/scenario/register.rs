//! `register`: absorbing a large fleet.
//!
//! 100 brokers × 10,000 topics (each topic on 10 brokers: 100,000 topics,
//! 1,000,000 topic-queue entries) send their first registrations all at
//! once; the time until the last is answered is the absorb time. Then every
//! broker re-registers (full body, new DataVersion) closed-loop: 2 s of
//! warmup, so that the window does not include the pipeline filling, then
//! 10 s measured: the steady rate. After a short settle the server's RSS is
//! read.
//!
//! The server's CPU is read before the first registrations are sent and
//! after the last is answered, and at the start and end of the steady
//! window: CPU per registration is that time ÷ registrations answered in it
//! ([`crate::cpu`]; none when the first round is too short to span enough
//! clock ticks, as it is for small fleets).

use std::time::Duration;

use rmq_broker_client::wall_ms;
use serde::{Deserialize, Serialize};

use super::{secs, start_peer, verify_routes, Fleet, REGISTER_TIMEOUT};
use crate::cpu::ServerCpu;
use crate::load::{self, Progress, Window, Worker};
use crate::peer::{PeerKind, PeerSetup};
use crate::pin::CpuSnapshot;
use crate::stats::{self, Latency};
use crate::workload::{Layout, Registration};

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Brokers and topics.
    pub layout: Layout,
    /// Steady re-registration time, seconds.
    pub steady_s: f64,
    /// Unmeasured re-registrations before the steady window, seconds
    /// (0 in results from before it existed).
    #[serde(default)]
    pub steady_warmup_s: f64,
    /// Wait before reading RSS, seconds.
    pub settle_s: f64,
}

impl Params {
    /// The defaults (a small fleet and a short run with `quick`).
    pub fn defaults(quick: bool) -> Params {
        Params {
            layout: Layout {
                brokers: if quick { 10 } else { 100 },
                topics_per_broker: if quick { 1_000 } else { 10_000 },
                spread: 10,
                queues: 8,
            },
            steady_s: if quick { 1.0 } else { 10.0 },
            steady_warmup_s: if quick { 0.3 } else { 2.0 },
            settle_s: if quick { 0.5 } else { 2.0 },
        }
    }
}

/// What one peer did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Register {
    /// What ran.
    pub params: Params,
    /// Body size of one broker's registration, bytes.
    pub body_bytes: usize,
    /// From the first send to the last answer of the first registrations, s.
    pub first_round_s: f64,
    /// First registrations absorbed per second (brokers / absorb time).
    pub first_per_s: f64,
    /// Latency of each first registration.
    pub first_latency: Latency,
    /// Steady re-registrations answered per second.
    pub steady_per_s: f64,
    /// Topic-queue entries re-registered per second in the steady phase.
    pub steady_entries_per_s: f64,
    /// Latency of the steady re-registrations.
    pub steady_latency: Latency,
    /// Failed steady re-registrations.
    pub steady_errors: u64,
    /// The first steady failure.
    pub steady_first_error: Option<String>,
    /// Server RSS right after start, KiB.
    pub rss_idle_kib: Option<u64>,
    /// Server RSS right after the first registrations were absorbed, KiB.
    pub rss_first_kib: Option<u64>,
    /// Server RSS holding every entry, after the steady phase, KiB.
    pub rss_kib: Option<u64>,
    /// CPUs the server was allowed.
    pub server_cpus: Option<String>,
    /// The server's CPU from the first send to the last answer of the
    /// first registrations.
    #[serde(default)]
    pub first_server_cpu: Option<ServerCpu>,
    /// Server CPU per first registration, µs.
    #[serde(default)]
    pub first_cpu_us_per_registration: Option<f64>,
    /// The server's CPU over the steady window.
    #[serde(default)]
    pub steady_server_cpu: Option<ServerCpu>,
    /// Steady re-registrations answered inside the window.
    #[serde(default)]
    pub steady_answered: u64,
    /// Server CPU per steady re-registration, µs.
    #[serde(default)]
    pub steady_cpu_us_per_registration: Option<f64>,
}

impl Register {
    /// CPU other processes used, % of one CPU: the more disturbed of the
    /// first round and the steady window.
    pub fn others_cpu_percent(&self) -> Option<f64> {
        [&self.first_server_cpu, &self.steady_server_cpu]
            .into_iter()
            .flatten()
            .map(|cpu| cpu.others_cpu_percent)
            .reduce(f64::max)
    }
}

/// Runs the scenario against a fresh `kind` with prepared `registrations`
/// (building 100 bodies of 10,000 topics takes a while, so callers build
/// them once for every peer).
///
/// # Errors
/// The peer does not start, refuses the first registrations or routes wrongly.
pub async fn run(
    setup: &PeerSetup,
    kind: PeerKind,
    params: &Params,
    registrations: Vec<Registration>,
) -> anyhow::Result<Register> {
    let layout = params.layout;
    layout.validate()?;
    let body_bytes = registrations.first().map_or(0, Registration::body_len);
    let peer = start_peer(setup, kind, &layout).await?;
    let rss_idle_kib = peer.rss_kib();
    let mut fleet = Fleet::connect(peer.addr, registrations).await?;
    eprintln!(
        "[register {}] {} first registrations of {} topics ({:.1} MB each)",
        kind.id(),
        layout.brokers,
        layout.topics_per_broker,
        body_bytes as f64 / 1e6
    );
    let cpu_before = CpuSnapshot::take(peer.pid());
    let round = fleet.register_all().await?;
    let first_server_cpu = cpu_before
        .zip(CpuSnapshot::take(peer.pid()))
        .map(|(before, after)| ServerCpu::between(&before, &after));
    let rss_first_kib = peer.rss_kib();
    let query = load::connect(peer.addr, 1).await?;
    verify_routes(&query[0], &layout, kind).await?;
    let mut first = stats::histogram();
    for latency in &round.latencies {
        stats::record(&mut first, latency.as_nanos());
    }

    let workers: Vec<Worker> = fleet
        .clients
        .iter()
        .cloned()
        .zip(std::mem::take(&mut fleet.registrations))
        .map(|(client, mut registration)| Worker {
            client,
            make: Box::new(move || registration.next_request(wall_ms())),
        })
        .collect();
    let window = Window {
        warmup: Duration::from_secs_f64(params.steady_warmup_s),
        duration: Duration::from_secs_f64(params.steady_s),
        timeout: REGISTER_TIMEOUT,
    };
    let progress = Progress::new(
        format!("register {}", kind.id()),
        window.warmup + window.duration,
    );
    let printer = progress.spawn_printer();
    let steady = load::closed_loop_with_cpu(workers, window, &progress, true, peer.pid()).await;
    printer.finish();
    tokio::time::sleep(Duration::from_secs_f64(params.settle_s)).await;

    let first_round_s = secs(round.elapsed);
    let result = Register {
        params: params.clone(),
        body_bytes,
        first_round_s,
        first_per_s: layout.brokers as f64 / first_round_s.max(f64::EPSILON),
        first_latency: Latency::of(&first),
        steady_per_s: steady.rate(),
        steady_entries_per_s: steady.rate() * layout.topics_per_broker as f64,
        steady_latency: Latency::of(&steady.latency),
        steady_errors: steady.errors,
        steady_first_error: steady.first_error.clone(),
        rss_idle_kib,
        rss_first_kib,
        rss_kib: peer.rss_kib(),
        server_cpus: peer.cpus_allowed(),
        first_cpu_us_per_registration: first_server_cpu
            .as_ref()
            .and_then(|cpu| cpu.us_per(round.latencies.len() as u64)),
        first_server_cpu,
        steady_cpu_us_per_registration: steady
            .server_cpu
            .as_ref()
            .and_then(|cpu| cpu.us_per(steady.ok)),
        steady_server_cpu: steady.server_cpu.clone(),
        steady_answered: steady.ok,
    };
    drop(fleet);
    peer.stop();
    Ok(result)
}
