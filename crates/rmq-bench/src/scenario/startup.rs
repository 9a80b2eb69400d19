//! `startup`: from exec to the first answered request, and idle memory.
//!
//! Each sample spawns a fresh server and probes it every millisecond
//! (connect, then GET_ROUTEINFO_BY_TOPIC for a missing topic) until an
//! answer arrives; then it idles for a second and its RSS is read.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::millis;
use crate::peer::{self, PeerKind, PeerSetup};
use crate::stats::median;
use crate::workload::Layout;

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Starts measured.
    pub samples: usize,
    /// Idle time before reading RSS, seconds.
    pub idle_s: f64,
}

impl Params {
    /// The defaults (one sample with `quick`).
    pub fn defaults(quick: bool) -> Params {
        Params {
            samples: if quick { 1 } else { 3 },
            idle_s: if quick { 0.5 } else { 1.0 },
        }
    }
}

/// What one peer did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Startup {
    /// What ran.
    pub params: Params,
    /// Exec → first answer, ms per sample.
    pub ready_ms: Vec<f64>,
    /// Median of `ready_ms`.
    pub median_ms: Option<f64>,
    /// Idle RSS per sample, KiB.
    pub idle_rss_kib: Vec<u64>,
    /// Median idle RSS, KiB.
    pub median_rss_kib: Option<f64>,
    /// CPUs the server was allowed.
    pub server_cpus: Option<String>,
}

/// Runs the scenario against `kind`.
///
/// # Errors
/// A start fails.
pub async fn run(setup: &PeerSetup, kind: PeerKind, params: &Params) -> anyhow::Result<Startup> {
    let layout = Layout {
        brokers: 1,
        topics_per_broker: 2,
        spread: 1,
        queues: 8,
    };
    let mut ready_ms = Vec::new();
    let mut idle_rss_kib = Vec::new();
    let mut server_cpus = None;
    for sample in 0..params.samples {
        let peer = peer::start(
            setup,
            kind,
            &layout,
            Duration::from_millis(1),
            Duration::from_secs(120),
        )
        .await?;
        ready_ms.push(millis(peer.ready_after));
        tokio::time::sleep(Duration::from_secs_f64(params.idle_s)).await;
        if let Some(rss) = peer.rss_kib() {
            idle_rss_kib.push(rss);
        }
        server_cpus = peer.cpus_allowed();
        eprintln!(
            "[startup {}] sample {sample}: {:.1} ms to first answer, idle RSS {:?} KiB",
            kind.id(),
            millis(peer.ready_after),
            idle_rss_kib.last()
        );
        peer.stop();
    }
    let rss: Vec<f64> = idle_rss_kib.iter().map(|&k| k as f64).collect();
    Ok(Startup {
        params: params.clone(),
        median_ms: median(&ready_ms),
        ready_ms,
        median_rss_kib: median(&rss),
        idle_rss_kib,
        server_cpus,
    })
}
