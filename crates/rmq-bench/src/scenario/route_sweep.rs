//! `route-sweep`: route queries offered at a series of fixed rates.
//!
//! 10 brokers × 100 topics register as for `route-qps`; then
//! GET_ROUTEINFO_BY_TOPIC round-robin over all topics on 64 connections,
//! open loop ([`load::fixed_rate`]: each request is sent when it is due,
//! whatever the answers do), at each offered rate in turn: a short warmup,
//! then a measured window. Per rate: the answers that arrived inside the
//! window per second, the latency of every request due inside it (followed
//! to its answer), errors, how late the generator sent behind the schedule,
//! and the server's CPU per answered query.
//!
//! Closed loop (`route-qps`) finds the most a server answers; this finds
//! how latency grows on the way there. The sweep stops raising the rate for
//! a server once it is saturated ([`Stop::Saturated`]: fewer than 90 % of
//! the offered rate answered in the window, or p99 above 100 ms), or once
//! the generator itself fell behind its schedule ([`Stop::GeneratorBehind`]:
//! then the rate was not really offered, and a higher one would not be
//! either). A step during which other processes used more than
//! [`DISTURBED_PERCENT`] % of a CPU is measured again (up to [`ATTEMPTS`]).

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{registrations, route_qps, start_peer, verify_routes, Fleet, QUERY_TIMEOUT};
use crate::compare::DISTURBED_PERCENT;
use crate::cpu::ServerCpu;
use crate::load::{self, Numbered, Progress, Window};
use crate::peer::{PeerKind, PeerSetup};
use crate::stats::Latency;
use crate::workload::{self, Layout};

/// Share of the offered rate below which a server counts as saturated.
pub const MIN_ACHIEVED: f64 = 0.9;
/// p99 above which a server counts as saturated, µs.
pub const MAX_P99_US: f64 = 100_000.0;
/// p99 of the schedule lag above which the generator counts as behind, µs.
/// Its timer wakes every millisecond and sends what fell due since, so a
/// lag of a millisecond or two is the schedule's grain, not a stall.
pub const MAX_LAG_P99_US: f64 = 5_000.0;
/// Measured windows at most per step.
pub const ATTEMPTS: usize = 3;

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Brokers and topics.
    pub layout: Layout,
    /// Query connections.
    pub connections: usize,
    /// Offered rates, queries per second, in the order run.
    pub rates: Vec<f64>,
    /// Unmeasured lead-in of each rate, seconds.
    pub warmup_s: f64,
    /// Measured time of each rate, seconds.
    pub duration_s: f64,
}

impl Params {
    /// The defaults (three short, low rates with `quick`).
    pub fn defaults(quick: bool) -> Params {
        Params {
            layout: route_qps::LAYOUT,
            connections: 64,
            rates: if quick {
                vec![2_000.0, 5_000.0, 10_000.0]
            } else {
                vec![
                    10_000.0, 25_000.0, 50_000.0, 100_000.0, 150_000.0, 200_000.0, 300_000.0,
                ]
            },
            warmup_s: if quick { 0.3 } else { 1.0 },
            duration_s: if quick { 1.0 } else { 5.0 },
        }
    }

    /// Longest the sweep can take per peer (every rate run once), seconds.
    pub fn max_seconds(&self) -> f64 {
        self.rates.len() as f64 * (self.warmup_s + self.duration_s)
    }
}

/// Why the sweep stopped raising the rate after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// Fewer than [`MIN_ACHIEVED`] of the offered rate answered inside
    /// the window, or p99 above [`MAX_P99_US`].
    Saturated,
    /// The generator sent late (schedule lag p99 above [`MAX_LAG_P99_US`]):
    /// the rate was not really offered.
    GeneratorBehind,
}

/// The stop rule: `None` to go on to the next rate. A lagging generator
/// is named first: then the server was not offered the rate at all.
pub fn stop_after(rate: f64, achieved: f64, p99_us: f64, lag_p99_us: f64) -> Option<Stop> {
    if lag_p99_us > MAX_LAG_P99_US {
        Some(Stop::GeneratorBehind)
    } else if achieved < MIN_ACHIEVED * rate || p99_us > MAX_P99_US {
        Some(Stop::Saturated)
    } else {
        None
    }
}

/// One offered rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Queries per second offered.
    pub rate: f64,
    /// Queries due inside the window.
    pub offered: u64,
    /// Successful answers that arrived inside the window, per second.
    pub achieved_per_s: f64,
    /// Latency of the successful queries due inside the window.
    pub latency: Latency,
    /// Failed queries due inside the window.
    pub errors: u64,
    /// The first failure.
    pub first_error: Option<String>,
    /// How late the queries due inside the window went out behind their
    /// schedule.
    pub schedule_lag: Latency,
    /// The server's CPU over the window.
    pub server_cpu: Option<ServerCpu>,
    /// Server CPU per query answered inside the window, µs (`None` below
    /// [`crate::cpu::MIN_TICKS`]).
    pub cpu_us_per_query: Option<f64>,
    /// CPU other processes used during the window, % of one CPU.
    pub others_cpu_percent: Option<f64>,
    /// Windows measured (more than one: the first were disturbed).
    pub windows: usize,
    /// Why the sweep stopped after this step, if it did.
    pub stop: Option<Stop>,
}

/// What one peer did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteSweep {
    /// What ran.
    pub params: Params,
    /// The rates run, in order.
    pub steps: Vec<Step>,
    /// Mean route body size, bytes.
    pub mean_response_bytes: f64,
    /// Server RSS at the end, KiB.
    pub rss_kib: Option<u64>,
    /// CPUs the server was allowed.
    pub server_cpus: Option<String>,
}

impl RouteSweep {
    /// The highest rate the server held (no stop after it), and whether a
    /// higher one was left untried because the generator fell behind or
    /// the list of rates ended (then the figure is a lower bound).
    pub fn highest_held(&self) -> Option<(f64, bool)> {
        let held = self
            .steps
            .iter()
            .filter(|s| s.stop.is_none())
            .map(|s| s.rate)
            .reduce(f64::max)?;
        let saturated = self.steps.iter().any(|s| s.stop == Some(Stop::Saturated));
        Some((held, !saturated))
    }

    /// The most disturbed kept window, % of one CPU.
    pub fn others_cpu_percent(&self) -> Option<f64> {
        self.steps
            .iter()
            .filter_map(|s| s.others_cpu_percent)
            .reduce(f64::max)
    }
}

/// Runs the sweep against a fresh `kind`.
///
/// # Errors
/// The peer does not start, refuses registrations or routes wrongly.
pub async fn run(setup: &PeerSetup, kind: PeerKind, params: &Params) -> anyhow::Result<RouteSweep> {
    let layout = params.layout;
    layout.validate()?;
    let peer = start_peer(setup, kind, &layout).await?;
    let mut fleet = Fleet::connect(peer.addr, registrations(&layout)?).await?;
    fleet.register_all().await?;
    let fleet = fleet.keep_registered();
    let clients = load::connect(peer.addr, params.connections.max(1)).await?;
    verify_routes(&clients[0], &layout, kind).await?;

    let requests: Arc<Vec<_>> = Arc::new(
        layout
            .all_topics()
            .iter()
            .map(|t| workload::route_request(t))
            .collect(),
    );
    let make: Numbered = Arc::new(move |i| requests[i as usize % requests.len()].clone());
    let window = Window {
        warmup: Duration::from_secs_f64(params.warmup_s),
        duration: Duration::from_secs_f64(params.duration_s),
        timeout: QUERY_TIMEOUT,
    };
    let mut steps = Vec::new();
    let (mut bytes, mut answers) = (0u64, 0u64);
    for &rate in &params.rates {
        let mut kept: Option<Step> = None;
        for attempt in 1..=ATTEMPTS {
            let label = format!("route-sweep {} {:.0}/s", kind.id(), rate);
            let progress = Progress::new(label.clone(), window.warmup + window.duration);
            let printer = progress.spawn_printer();
            let outcome = load::fixed_rate(
                &clients,
                rate,
                window,
                make.clone(),
                &progress,
                Some(peer.pid()),
            )
            .await;
            printer.finish();
            bytes += outcome.response_bytes;
            answers += outcome.ok;
            let step = step_of(rate, &outcome, attempt);
            let noise = step.others_cpu_percent.unwrap_or(0.0);
            eprintln!(
                "[{label}] {:.0}/s answered, p99 {:.2} ms, lag p99 {:.2} ms, {} µs CPU per query, others {noise:.0} %{}",
                step.achieved_per_s,
                step.latency.p99_us / 1e3,
                step.schedule_lag.p99_us / 1e3,
                step.cpu_us_per_query.map_or("n/a".into(), |v| format!("{v:.2}")),
                step.stop.map_or(String::new(), |s| format!(", stop: {s:?}"))
            );
            match kept.as_mut() {
                Some(k) if noise >= k.others_cpu_percent.unwrap_or(0.0) => k.windows = attempt,
                _ => kept = Some(step),
            }
            if noise <= DISTURBED_PERCENT {
                break;
            }
            eprintln!("[{label}] window {attempt} disturbed (others used {noise:.0} % CPU)");
        }
        let Some(step) = kept else { break };
        let stop = step.stop.is_some();
        steps.push(step);
        if stop {
            break;
        }
    }
    let result = RouteSweep {
        params: params.clone(),
        steps,
        mean_response_bytes: if answers == 0 {
            0.0
        } else {
            bytes as f64 / answers as f64
        },
        rss_kib: peer.rss_kib(),
        server_cpus: peer.cpus_allowed(),
    };
    drop(fleet);
    peer.stop();
    Ok(result)
}

/// The figures of one window at `rate`.
fn step_of(rate: f64, outcome: &load::Outcome, windows: usize) -> Step {
    let latency = Latency::of(&outcome.latency);
    let schedule_lag = Latency::of(&outcome.schedule_lag);
    let achieved_per_s = outcome.achieved_rate();
    Step {
        rate,
        offered: outcome.offered,
        achieved_per_s,
        stop: stop_after(rate, achieved_per_s, latency.p99_us, schedule_lag.p99_us),
        latency,
        errors: outcome.errors,
        first_error: outcome.first_error.clone(),
        schedule_lag,
        cpu_us_per_query: outcome
            .server_cpu
            .as_ref()
            .and_then(|cpu| cpu.us_per(outcome.answered_in_window)),
        others_cpu_percent: outcome.server_cpu.as_ref().map(|c| c.others_cpu_percent),
        server_cpu: outcome.server_cpu.clone(),
        windows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_stops_at_saturation_or_a_lagging_generator() {
        // Held: 95 % answered, p99 2 ms, the generator on time.
        assert_eq!(stop_after(100_000.0, 95_000.0, 2_000.0, 1_000.0), None);
        // Fewer than 90 % answered.
        assert_eq!(
            stop_after(100_000.0, 89_000.0, 2_000.0, 1_000.0),
            Some(Stop::Saturated)
        );
        // Everything answered, but p99 over 100 ms.
        assert_eq!(
            stop_after(10_000.0, 10_000.0, 150_000.0, 1_000.0),
            Some(Stop::Saturated)
        );
        assert_eq!(stop_after(10_000.0, 9_000.0, 100_000.0, 5_000.0), None);
        // The generator late: named before whatever the server did.
        assert_eq!(
            stop_after(300_000.0, 200_000.0, 150_000.0, 9_000.0),
            Some(Stop::GeneratorBehind)
        );
    }

    fn step(rate: f64, stop: Option<Stop>) -> Step {
        Step {
            rate,
            offered: 0,
            achieved_per_s: rate,
            latency: Latency::default(),
            errors: 0,
            first_error: None,
            schedule_lag: Latency::default(),
            server_cpu: None,
            cpu_us_per_query: None,
            others_cpu_percent: Some(rate / 10_000.0),
            windows: 1,
            stop,
        }
    }

    #[test]
    fn the_highest_rate_held_is_a_lower_bound_unless_the_server_saturated() {
        let sweep = |steps| RouteSweep {
            params: Params::defaults(true),
            steps,
            mean_response_bytes: 0.0,
            rss_kib: None,
            server_cpus: None,
        };
        let saturated = sweep(vec![
            step(10_000.0, None),
            step(25_000.0, None),
            step(50_000.0, Some(Stop::Saturated)),
        ]);
        assert_eq!(saturated.highest_held(), Some((25_000.0, false)));
        assert_eq!(saturated.others_cpu_percent(), Some(5.0));
        let generator = sweep(vec![
            step(10_000.0, None),
            step(25_000.0, Some(Stop::GeneratorBehind)),
        ]);
        assert_eq!(generator.highest_held(), Some((10_000.0, true)));
        let all = sweep(vec![step(10_000.0, None)]);
        assert_eq!(all.highest_held(), Some((10_000.0, true)));
        assert_eq!(
            sweep(vec![step(10_000.0, Some(Stop::Saturated))]).highest_held(),
            None
        );
    }
}
