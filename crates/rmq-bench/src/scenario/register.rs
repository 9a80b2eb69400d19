//! `register`: a large fleet's first registrations, steady re-registration, and the memory of
//! the table; then the two-CPU pass.

use super::fleet::{registrations, start_peer, verify_routes, Fleet, REGISTER_TIMEOUT};
use super::{two_cpus, Ctx, Record, Scenario};
use crate::cli::secs;
use crate::load::{self, Window};
use crate::peer::{PeerKind, PeerOptions, PeerSetup};
use crate::pin::CpuSnapshot;
use crate::report::charts::Panel;
use crate::report::format::{cpu_share, mib, ms, noise, num, seconds, us};
use crate::report::{over, Col, Ratio, Row, Section, TwoCpuMeasure, OTHERS};
use crate::sample::{ServerCpu, ServerSample};
use crate::stats::{self, Latency};
use crate::workload::{Layout, Registration};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::time::Instant;

pub struct Register;

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Params {
    /// Brokers.
    #[arg(long, default_value_t = 100)]
    pub brokers: usize,
    /// Topics per broker.
    #[arg(long = "topics", default_value_t = 10_000)]
    pub topics_per_broker: usize,
    /// Brokers per topic.
    #[arg(long, default_value_t = 10)]
    pub spread: usize,
    /// Steady re-registration time.
    #[arg(long = "steady", default_value_t = 10.0, value_parser = secs)]
    pub steady_s: f64,
    /// Unmeasured re-registrations before the steady window.
    #[arg(long = "steady-warmup", default_value_t = 2.0, value_parser = secs)]
    pub steady_warmup_s: f64,
    /// Wait before reading RSS after the steady phase.
    #[arg(long = "settle", default_value_t = 2.0, value_parser = secs)]
    pub settle_s: f64,
}

impl Params {
    pub fn layout(&self) -> Layout {
        Layout::new(self.brokers, self.topics_per_broker, self.spread)
    }
}

/// What one peer did: the first round, the steady phase, and RSS idle and after each phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub params: Params,
    pub body_bytes: usize,
    pub first_round_s: f64,
    pub first_per_s: f64,
    pub first_latency: Latency,
    pub steady_per_s: f64,
    pub steady_entries_per_s: f64,
    pub steady_latency: Latency,
    pub steady_errors: u64,
    pub steady_first_error: Option<String>,
    pub rss_idle_kib: Option<u64>,
    pub rss_first_kib: Option<u64>,
    pub first_server_cpu: Option<ServerCpu>,
    pub first_cpu_us_per_registration: Option<f64>,
    pub steady_server_cpu: Option<ServerCpu>,
    pub steady_answered: u64,
    pub steady_cpu_us_per_registration: Option<f64>,
    #[serde(flatten)]
    pub server: ServerSample,
}

impl Outcome {
    /// The more disturbed of the first round and the steady window.
    fn others_cpu_percent(&self) -> Option<f64> {
        let cpus = [&self.first_server_cpu, &self.steady_server_cpu];
        let others = cpus.into_iter().flatten().map(|c| c.others_cpu_percent);
        others.reduce(f64::max)
    }
}

impl Scenario for Register {
    const ID: &'static str = "register";
    const ABOUT: &'static str = "First registrations of a large fleet, then steady \
                                 re-registration, and RSS; then Waymark and Java again with the \
                                 server on two CPUs";
    type Params = Params;
    fn quick(p: &mut Params) {
        (p.brokers, p.topics_per_broker) = (10, 1_000);
        (p.steady_s, p.steady_warmup_s, p.settle_s) = (1.0, 0.3, 0.5);
    }
    async fn run(ctx: &Ctx<'_>, p: &Params, record: &mut Record) -> anyhow::Result<()> {
        let layout = p.layout();
        layout.validate()?;
        let built = Instant::now();
        let bodies = registrations(&layout)?;
        let (count, took) = (bodies.len(), built.elapsed().as_secs_f64());
        let topics = layout.topics_per_broker;
        eprintln!("[register] built {count} bodies of {topics} topics in {took:.1} s");
        for kind in ctx.peers::<Self>() {
            record.add(kind, "", register(ctx.setup, kind, p, bodies.clone()).await);
        }
        two_cpus(ctx, record, None, async |setup, kind| {
            register(setup, kind, p, bodies.clone()).await
        })
        .await;
        Ok(())
    }
    fn report(s: &mut Section<'_>) {
        let rows = s.rows::<Outcome>("");
        let (w, j) = (PeerKind::Waymark, PeerKind::Java);
        let (steady_rate, first_rate) = (over(&rows, steady, w, j), over(&rows, first, w, j));
        s.at_least("register steady rate ≥ 3× Java", steady_rate, 3.0);
        s.at_least("register first-round rate ≥ 3× Java", first_rate, 3.0);
        let what = "registration CPU (steady) ≤ 1/3 of Java's (Java ÷ Waymark ≥ 3)";
        s.at_least(what, over(&rows, steady_cpu, j, w), 3.0);
        let layout = s.params::<Params>().map(|p| p.layout());
        let entries = num(layout.map_or(0, |l| l.entries()) as f64);
        let rss = over(&rows, |x| x.server.rss_kib.map(|k| k as f64), j, w);
        let what = format!(
            "RSS with {entries} entries, after the steady phase, ≤ 1/10 of Java's (Java ÷ Waymark ≥ 10)"
        );
        s.at_least(&what, rss, 10.0);
        if let Some(x) = rows.iter().find_map(Row::ok) {
            let mb = x.body_bytes as f64 / 1e6;
            s.text(format!(
                "{entries} topic-queue entries; {mb:.1} MB of JSON per broker."
            ));
        }
        s.table(&rows, COLUMNS);
        s.ratios(&rows, &OTHERS, RATIOS);
        if rows.iter().any(|r| r.peer == PeerKind::Ceiling) {
            let why = "The ceiling keeps no routes, so its memory says nothing of a server's.";
            s.text(format!("— : not compared. {why}"));
        }
        let measure = TwoCpuMeasure {
            rate: "steady registrations/s",
            per_request: "CPU per steady registration",
            rate_of: |x: &Outcome| x.steady_per_s,
            cpu_of: |x| x.steady_server_cpu.as_ref(),
            per_request_of: steady_cpu,
        };
        s.two_cpus(&rows, &measure);
        let rss = Panel::Bars {
            title: format!("RSS holding {entries} topic-queue entries (MiB, log)"),
            log: true,
            unit: "MiB",
            value: |x: &Outcome| x.server.rss_kib.map(|k| k as f64 / 1024.0),
        };
        let steady_rate = Panel::bars("register: steady registrations/s", steady);
        s.chart(&rows, &[rss, steady_rate]);
    }
}

fn first(x: &Outcome) -> Option<f64> {
    Some(x.first_per_s)
}

fn steady(x: &Outcome) -> Option<f64> {
    Some(x.steady_per_s)
}

fn steady_cpu(x: &Outcome) -> Option<f64> {
    x.steady_cpu_us_per_registration
}

fn first_cpu(x: &Outcome) -> Option<f64> {
    x.first_cpu_us_per_registration
}

/// The ceiling keeps no routes: its memory is no reference for a server's.
const STATELESS: &[PeerKind] = &[PeerKind::Ceiling];

const RATIOS: &[Ratio<Outcome>] = &[
    Ratio::rate("first registrations/s (Waymark ÷ peer)", first),
    Ratio::cost(
        "server CPU per first registration (peer ÷ Waymark)",
        first_cpu,
    ),
    Ratio::rate("steady registrations/s (Waymark ÷ peer)", steady),
    Ratio::cost(
        "server CPU per steady registration (peer ÷ Waymark)",
        steady_cpu,
    ),
    Ratio {
        not_for: STATELESS,
        ..Ratio::cost("RSS after first round (peer ÷ Waymark)", |x| {
            x.rss_first_kib.map(|k| k as f64)
        })
    },
    Ratio {
        not_for: STATELESS,
        ..Ratio::cost("RSS after steady phase (peer ÷ Waymark)", |x| {
            x.server.rss_kib.map(|k| k as f64)
        })
    },
];

const COLUMNS: &[Col<Outcome>] = &[
    ("first round", |x| seconds(x.first_round_s)),
    ("first registrations/s", |x| format!("{:.1}", x.first_per_s)),
    ("first-round CPU per registration", |x| us(first_cpu(x))),
    ("steady registrations/s", |x| {
        format!("{:.1}", x.steady_per_s)
    }),
    ("steady entries/s", |x| num(x.steady_entries_per_s)),
    ("steady p50", |x| ms(x.steady_latency.p50_us)),
    ("steady p99", |x| ms(x.steady_latency.p99_us)),
    ("steady server CPU", |x| {
        cpu_share(x.steady_server_cpu.as_ref())
    }),
    ("steady CPU per registration", |x| us(steady_cpu(x))),
    ("RSS idle", |x| mib(x.rss_idle_kib)),
    ("RSS after first round", |x| mib(x.rss_first_kib)),
    ("RSS after steady phase", |x| mib(x.server.rss_kib)),
    ("others' CPU", |x| noise(x.others_cpu_percent())),
];

async fn register(
    setup: &PeerSetup,
    kind: PeerKind,
    p: &Params,
    bodies: Vec<Registration>,
) -> anyhow::Result<Outcome> {
    let (layout, id) = (p.layout(), kind.id());
    let body_bytes = bodies.first().map_or(0, Registration::body_len);
    let peer = start_peer(setup, kind, &layout, &PeerOptions::default()).await?;
    let rss_idle_kib = peer.rss_kib();
    let mut fleet = Fleet::connect(peer.addr, bodies).await?;
    let mb = body_bytes as f64 / 1e6;
    let (brokers, topics) = (layout.brokers, layout.topics_per_broker);
    eprintln!("[register {id}] {brokers} first registrations of {topics} topics ({mb:.1} MB each)");
    let before = CpuSnapshot::take(peer.pid());
    let round = fleet.register_all().await?;
    let after = CpuSnapshot::take(peer.pid());
    let first_server_cpu = before.zip(after).map(|(b, a)| ServerCpu::between(&b, &a));
    let rss_first_kib = peer.rss_kib();
    let query = load::connect(peer.addr, 1).await?;
    verify_routes(&query[0], &layout, kind).await?;
    let mut first = stats::histogram();
    for latency in &round.latencies {
        stats::record(&mut first, latency.as_nanos());
    }
    let window = Window::secs(p.steady_warmup_s, p.steady_s, REGISTER_TIMEOUT);
    let (workers, pid) = (fleet.re_registering(), Some(peer.pid()));
    let steady = load::shown(format!("register {id}"), async |progress| {
        load::closed_loop(workers, window, progress, true, pid).await
    })
    .await;
    tokio::time::sleep(Duration::from_secs_f64(p.settle_s)).await;
    let first_round_s = round.elapsed.as_secs_f64();
    let server = ServerSample::of(&peer, None);
    drop(fleet);
    peer.stop();
    let first_count = round.latencies.len() as u64;
    Ok(Outcome {
        params: p.clone(),
        body_bytes,
        first_round_s,
        first_per_s: layout.brokers as f64 / first_round_s.max(f64::EPSILON),
        first_latency: Latency::of(&first),
        steady_per_s: steady.rate(),
        steady_entries_per_s: steady.rate() * layout.topics_per_broker as f64,
        steady_latency: Latency::of(&steady.latency),
        steady_errors: steady.errors,
        steady_first_error: steady.first_error,
        rss_idle_kib,
        rss_first_kib,
        first_cpu_us_per_registration: first_server_cpu
            .as_ref()
            .and_then(|c| c.us_per(first_count)),
        first_server_cpu,
        steady_cpu_us_per_registration: steady
            .server_cpu
            .as_ref()
            .and_then(|c| c.us_per(steady.ok)),
        steady_server_cpu: steady.server_cpu,
        steady_answered: steady.ok,
        server,
    })
}
