//! What an outcome says of the server it measured ([`ServerSample`]), and CPU time turned into
//! CPU per answered request ([`ServerCpu`]; [`attribute`] splits a storm's CPU between streams).

use serde::{Deserialize, Serialize};

use crate::peer::RunningPeer;
use crate::pin::{CpuSnapshot, TICKS_PER_SECOND};

/// Fewest clock ticks a window must span for a CPU figure per request.
pub const MIN_TICKS: u64 = 50;

/// The server's side of one measurement, flattened into every outcome's JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSample {
    /// Resident memory at the end, KiB.
    pub rss_kib: Option<u64>,
    /// The CPUs the kernel let the server run on (`Cpus_allowed_list`).
    pub server_cpus: Option<String>,
    /// CPU other processes used during the measured window, % of one CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_percent: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu: Option<ServerCpu>,
}

impl ServerSample {
    /// What `peer` shows now, with its CPU over the window if it was read.
    pub fn of(peer: &RunningPeer, cpu: Option<ServerCpu>) -> ServerSample {
        ServerSample {
            rss_kib: peer.rss_kib(),
            server_cpus: peer.cpus_allowed(),
            others_cpu_percent: cpu.as_ref().map(|c| c.others_cpu_percent),
            server_cpu: cpu,
        }
    }

    pub fn us_per(&self, requests: u64) -> Option<f64> {
        self.server_cpu.as_ref()?.us_per(requests)
    }
}

/// The server's CPU over one measured window: `ticks` (10 ms each, all threads) in seconds and
/// in % of one CPU, and what other processes used (the machine is shared).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCpu {
    pub window_s: f64,
    pub ticks: u64,
    pub server_cpu_s: f64,
    pub server_cpu_percent: f64,
    pub others_cpu_percent: f64,
}

impl ServerCpu {
    pub fn between(before: &CpuSnapshot, after: &CpuSnapshot) -> ServerCpu {
        ServerCpu::of_ticks(
            after.server_ticks_since(before),
            after.seconds_since(before),
            after.others_percent_since(before),
        )
    }

    pub fn of_ticks(ticks: u64, window_s: f64, others_cpu_percent: f64) -> ServerCpu {
        let server_cpu_s = ticks as f64 / TICKS_PER_SECOND;
        ServerCpu {
            window_s,
            ticks,
            server_cpu_s,
            server_cpu_percent: server_cpu_s * 100.0 / window_s.max(1e-3),
            others_cpu_percent,
        }
    }

    /// Server CPU per answered request, µs; `None` for no answers or fewer than [`MIN_TICKS`].
    pub fn us_per(&self, requests: u64) -> Option<f64> {
        (self.ticks >= MIN_TICKS && requests > 0).then(|| self.server_cpu_s * 1e6 / requests as f64)
    }
}

/// CPU per registration under storm, µs: the window's server CPU less `queries × query_us`,
/// over `registrations`; `None` if not measurable or the two disagree.
pub fn attribute(
    cpu: &ServerCpu,
    queries: u64,
    query_us: Option<f64>,
    registrations: u64,
) -> Option<f64> {
    if cpu.ticks < MIN_TICKS || registrations == 0 {
        return None;
    }
    let left_us = cpu.server_cpu_s * 1e6 - query_us.map_or(0.0, |us| us * queries as f64);
    (left_us > 0.0).then(|| left_us / registrations as f64)
}
