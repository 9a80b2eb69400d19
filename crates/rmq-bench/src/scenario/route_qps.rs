//! `route-qps`: route queries at full speed, closed loop; then the two-CPU pass.

use super::fleet::{route_workers, serving, QUERY_TIMEOUT};
use super::{settle, two_cpus, Ctx, Record, Scenario};
use crate::cli::secs;
use crate::load::{self, Window};
use crate::peer::{PeerKind, PeerSetup};
use crate::report::charts::{curve, Panel};
use crate::report::format::{cpu_share, mib, ms, noise, num, us};
use crate::report::{over, Col, Ratio, Section, TwoCpuMeasure, OTHERS};
use crate::sample::ServerSample;
use crate::stats::Latency;
use crate::workload::Layout;
use clap::Args;
use serde::{Deserialize, Serialize};

pub struct RouteQps;

/// The fleet whose routes are queried, also route-sweep's and security's.
pub const LAYOUT: Layout = Layout::new(10, 100, 10);

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Params {
    /// Brokers.
    #[arg(long, default_value_t = 10)]
    pub brokers: usize,
    /// Topics per broker.
    #[arg(long = "topics", default_value_t = 100)]
    pub topics_per_broker: usize,
    /// Brokers per topic.
    #[arg(long, default_value_t = 10)]
    pub spread: usize,
    /// Query connections.
    #[arg(long, default_value_t = 64)]
    pub connections: usize,
    /// Requests in flight per connection.
    #[arg(long, default_value_t = 4)]
    pub depth: usize,
    /// Unmeasured lead-in (e.g. 2s).
    #[arg(long = "warmup", default_value_t = 2.0, value_parser = secs)]
    pub warmup_s: f64,
    /// Measured time.
    #[arg(long = "duration", default_value_t = 20.0, value_parser = secs)]
    pub duration_s: f64,
}

impl Params {
    pub fn layout(&self) -> Layout {
        Layout::new(self.brokers, self.topics_per_broker, self.spread)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub params: Params,
    /// Queries answered per second of the window.
    pub qps: f64,
    pub latency: Latency,
    pub errors: u64,
    pub first_error: Option<String>,
    /// Mean route body size, bytes (the same workload has the same size).
    pub mean_response_bytes: f64,
    /// Queries answered inside the window.
    pub answered: u64,
    /// Server CPU per answered query, µs.
    pub cpu_us_per_query: Option<f64>,
    #[serde(flatten)]
    pub server: ServerSample,
}

impl Scenario for RouteQps {
    const ID: &'static str = "route-qps";
    const ABOUT: &'static str = "Route queries at full speed, closed loop; then Waymark and Java \
                                 again with the server on two CPUs of its own";
    type Params = Params;
    fn quick(p: &mut Params) {
        (p.warmup_s, p.duration_s) = (0.5, 2.0);
    }
    async fn run(ctx: &Ctx<'_>, p: &Params, record: &mut Record) -> anyhow::Result<()> {
        for kind in ctx.peers::<Self>() {
            record.add(kind, "", settled(ctx.setup, kind, p).await);
        }
        let why = "which needs about as much CPU per query as the server";
        two_cpus(ctx, record, Some(why), async |setup, kind| {
            settled(setup, kind, p).await
        })
        .await;
        Ok(())
    }
    fn report(s: &mut Section<'_>) {
        let rows = s.rows::<Outcome>("");
        let vs = |p| over(&rows, |x| Some(x.qps), PeerKind::Waymark, p);
        s.at_least("route-qps ≥ 3× Java", vs(PeerKind::Java), 3.0);
        s.at_least("route-qps ≥ 1.5× Rust port", vs(PeerKind::RustPort), 1.5);
        let ceiling = vs(PeerKind::Ceiling).map(|v| v * 100.0);
        let (percent, met) = (
            ceiling.map(|v| format!("{v:.2} %")),
            ceiling.map(|v| v >= 70.0),
        );
        s.target("route-qps ≥ 70 % of ceiling", percent, met);
        s.table(&rows, COLUMNS);
        s.ratios(&rows, &OTHERS, RATIOS);
        let measure = TwoCpuMeasure {
            rate: "route queries/s",
            per_request: "CPU per query",
            rate_of: |x: &Outcome| x.qps,
            cpu_of: |x| x.server.server_cpu.as_ref(),
            per_request_of: |x| x.cpu_us_per_query,
        };
        s.two_cpus(&rows, &measure);
        let latency = "route-qps: query latency (closed loop, full speed)";
        let latency = Panel::curves(latency, |x: &Outcome| curve(&x.latency));
        let qps = Panel::bars("route-qps: queries/s", |x: &Outcome| Some(x.qps));
        s.chart(&rows, &[latency, qps]);
    }
}

const COLUMNS: &[Col<Outcome>] = &[
    ("queries/s", |x| num(x.qps)),
    ("p50", |x| ms(x.latency.p50_us)),
    ("p99", |x| ms(x.latency.p99_us)),
    ("p99.9", |x| ms(x.latency.p999_us)),
    ("max", |x| ms(x.latency.max_us)),
    ("errors", |x| x.errors.to_string()),
    ("server CPU", |x| cpu_share(x.server.server_cpu.as_ref())),
    ("CPU per query", |x| us(x.cpu_us_per_query)),
    ("route body", |x| num(x.mean_response_bytes) + " B"),
    ("server RSS", |x| mib(x.server.rss_kib)),
    ("others' CPU", |x| noise(x.server.others_cpu_percent)),
];

const RATIOS: &[Ratio<Outcome>] = &[
    Ratio::rate("queries/s (Waymark ÷ peer)", |x| Some(x.qps)),
    Ratio::cost("p99 (peer ÷ Waymark)", |x| Some(x.latency.p99_us)),
    Ratio::cost("server CPU per query (peer ÷ Waymark)", |x| {
        x.cpu_us_per_query
    }),
];

/// The scenario on a fresh `kind`, repeated while disturbed.
async fn settled(setup: &PeerSetup, kind: PeerKind, p: &Params) -> anyhow::Result<Outcome> {
    let label = format!("route-qps {}", kind.id());
    let noise = |x: &Outcome| x.server.others_cpu_percent.unwrap_or(0.0);
    let once = async || {
        let layout = p.layout();
        let (peer, fleet, clients) = serving(setup, kind, &layout, p.connections).await?;
        let window = Window::secs(p.warmup_s, p.duration_s, QUERY_TIMEOUT);
        let workers = route_workers(&clients, p.depth, &layout);
        let pid = Some(peer.pid());
        let outcome = load::shown(&label, async |progress| {
            load::closed_loop(workers, window, progress, false, pid).await
        })
        .await;
        let server = ServerSample::of(&peer, outcome.server_cpu.clone());
        drop(fleet);
        peer.stop();
        Ok(Outcome {
            params: p.clone(),
            qps: outcome.rate(),
            latency: Latency::of(&outcome.latency),
            errors: outcome.errors,
            mean_response_bytes: outcome.mean_response_bytes(),
            answered: outcome.ok,
            cpu_us_per_query: server.us_per(outcome.ok),
            first_error: outcome.first_error,
            server,
        })
    };
    Ok(settle(&label, noise, once).await?.0)
}
