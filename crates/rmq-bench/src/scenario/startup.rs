//! `startup`: from exec to the first answered request, and idle memory.

use super::fleet::{millis, START_LIMIT, TINY};
use super::{Ctx, Record, Scenario};
use crate::cli::secs;
use crate::peer::{self, PeerKind, PeerOptions, PeerSetup};
use crate::report::charts::Panel;
use crate::report::format::{mib_of, or_na};
use crate::report::{of, Col, Ratio, Section, OTHERS};
use crate::sample::ServerSample;
use crate::stats::median;
use clap::Args;
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub struct Startup;

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Params {
    /// Starts measured per peer.
    #[arg(long, default_value_t = 3)]
    pub samples: usize,
    /// Idle time before reading RSS.
    #[arg(long = "idle", default_value_t = 1.0, value_parser = secs)]
    pub idle_s: f64,
}

/// What one peer did: exec → first answer and idle RSS per sample, with their medians.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub params: Params,
    pub ready_ms: Vec<f64>,
    pub median_ms: Option<f64>,
    pub idle_rss_kib: Vec<u64>,
    pub median_rss_kib: Option<f64>,
    #[serde(flatten)]
    pub server: ServerSample,
}

impl Scenario for Startup {
    const ID: &'static str = "startup";
    const ABOUT: &'static str = "Exec to the first answered request, and idle RSS";
    type Params = Params;
    fn quick(p: &mut Params) {
        (p.samples, p.idle_s) = (1, 0.5);
    }
    async fn run(ctx: &Ctx<'_>, p: &Params, record: &mut Record) -> anyhow::Result<()> {
        for kind in ctx.peers::<Self>() {
            record.add(kind, "", startup(ctx.setup, kind, p).await);
        }
        Ok(())
    }
    fn report(s: &mut Section<'_>) {
        let rows = s.rows::<Outcome>("");
        let start = of(&rows, PeerKind::Waymark).and_then(|x| x.median_ms);
        let shown = start.map(|v| format!("{v:.1} ms"));
        s.target("startup ≤ 50 ms", shown, start.map(|v| v <= 50.0));
        s.table(&rows, COLUMNS);
        s.ratios(&rows, &OTHERS, RATIOS);
        let rss = Panel::Bars {
            title: "idle RSS after start (MiB, log)".into(),
            log: true,
            unit: "MiB",
            value: |x: &Outcome| x.median_rss_kib.map(|k| k / 1024.0),
        };
        s.chart(&rows, &[rss]);
    }
}

const RATIOS: &[Ratio<Outcome>] = &[
    Ratio::cost("exec → first answer (peer ÷ Waymark)", |x| x.median_ms),
    Ratio::cost("idle RSS (peer ÷ Waymark)", |x| x.median_rss_kib),
];

const COLUMNS: &[Col<Outcome>] = &[
    ("exec → first answer", |x| {
        or_na(x.median_ms, |v| format!("{v:.1} ms"))
    }),
    ("samples", |x| {
        let samples: Vec<String> = x.ready_ms.iter().map(|v| format!("{v:.0}")).collect();
        format!("{} ms", samples.join(", "))
    }),
    ("idle RSS", |x| mib_of(x.median_rss_kib)),
];

async fn startup(setup: &PeerSetup, kind: PeerKind, p: &Params) -> anyhow::Result<Outcome> {
    let (mut ready_ms, mut idle_rss_kib) = (Vec::new(), Vec::new());
    let mut server = ServerSample::default();
    let (options, probe_every) = (PeerOptions::default(), Duration::from_millis(1));
    for sample in 0..p.samples.max(1) {
        let peer = peer::start(setup, kind, &TINY, &options, probe_every, START_LIMIT).await?;
        let ready = millis(peer.ready_after);
        ready_ms.push(ready);
        tokio::time::sleep(Duration::from_secs_f64(p.idle_s)).await;
        server = ServerSample::of(&peer, None);
        idle_rss_kib.extend(server.rss_kib);
        let (id, rss) = (kind.id(), server.rss_kib);
        eprintln!(
            "[startup {id}] sample {sample}: {ready:.1} ms to first answer, idle RSS {rss:?} KiB"
        );
        peer.stop();
    }
    Ok(Outcome {
        params: p.clone(),
        median_ms: median(ready_ms.iter().copied()),
        ready_ms,
        median_rss_kib: median(idle_rss_kib.iter().map(|&k| k as f64)),
        idle_rss_kib,
        server,
    })
}
