//! `route-sweep`: route queries offered open loop at rising rates until a server saturates or
//! the generator falls behind.

use super::fleet::{serving, QUERY_TIMEOUT};
use super::route_qps::LAYOUT;
use super::{settle, Ctx, Record, Scenario};
use crate::cli::secs;
use crate::load::{self, Numbered, Window};
use crate::peer::{PeerKind, PeerSetup};
use crate::report::charts::Panel;
use crate::report::format::{answered_ms, cpu_share, div, ms, noise, num, or_na, us};
use crate::report::{Col, Row, Section};
use crate::sample::{ServerCpu, ServerSample};
use crate::stats::Latency;
use crate::workload::{self, Layout};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub struct RouteSweep;

/// Share of the offered rate below which a server counts as saturated.
pub const MIN_ACHIEVED: f64 = 0.9;
/// p99 above which a server counts as saturated, µs.
pub const MAX_P99_US: f64 = 100_000.0;
/// p99 of the schedule lag above which the generator counts as behind, µs (its timer ticks 1 ms).
pub const MAX_LAG_P99_US: f64 = 5_000.0;

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Params {
    /// Brokers.
    #[arg(long, default_value_t = LAYOUT.brokers)]
    pub brokers: usize,
    /// Topics per broker.
    #[arg(long = "topics", default_value_t = LAYOUT.topics_per_broker)]
    pub topics_per_broker: usize,
    /// Brokers per topic.
    #[arg(long, default_value_t = LAYOUT.spread)]
    pub spread: usize,
    /// Query connections.
    #[arg(long, default_value_t = 64)]
    pub connections: usize,
    /// Offered rates, queries per second, in the order run.
    #[arg(long, value_delimiter = ',', default_values_t = [10_000.0, 25_000.0, 50_000.0, 100_000.0, 150_000.0, 200_000.0, 300_000.0])]
    pub rates: Vec<f64>,
    /// Unmeasured lead-in of each rate.
    #[arg(long = "warmup", default_value_t = 1.0, value_parser = secs)]
    pub warmup_s: f64,
    /// Measured time of each rate.
    #[arg(long = "duration", default_value_t = 5.0, value_parser = secs)]
    pub duration_s: f64,
}

/// Why the sweep stopped raising the rate after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    Saturated,
    /// The rate was not really offered.
    GeneratorBehind,
}

/// The stop rule: `None` to go on to the next rate. A lagging generator is named first: then the
/// server was not offered the rate at all.
pub fn stop_after(rate: f64, achieved: f64, p99_us: f64, lag_p99_us: f64) -> Option<Stop> {
    if lag_p99_us > MAX_LAG_P99_US {
        Some(Stop::GeneratorBehind)
    } else if achieved < MIN_ACHIEVED * rate || p99_us > MAX_P99_US {
        Some(Stop::Saturated)
    } else {
        None
    }
}

/// One offered rate: what its window measured, the windows it took, and why the sweep stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub rate: f64,
    pub offered: u64,
    pub achieved_per_s: f64,
    pub latency: Latency,
    pub errors: u64,
    pub first_error: Option<String>,
    pub schedule_lag: Latency,
    pub server_cpu: Option<ServerCpu>,
    pub cpu_us_per_query: Option<f64>,
    pub others_cpu_percent: Option<f64>,
    pub windows: usize,
    pub stop: Option<Stop>,
}

/// What one peer did: the rates run, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub params: Params,
    pub steps: Vec<Step>,
    pub mean_response_bytes: f64,
    #[serde(flatten)]
    pub server: ServerSample,
}

impl Outcome {
    /// The highest rate held, and whether it is a lower bound (the server never saturated).
    pub fn highest_held(&self) -> Option<(f64, bool)> {
        let held = self.steps.iter().filter(|s| s.stop.is_none());
        let saturated = self.steps.iter().any(|s| s.stop == Some(Stop::Saturated));
        Some((held.map(|s| s.rate).reduce(f64::max)?, !saturated))
    }
    fn held_step(&self) -> Option<&Step> {
        let (rate, _) = self.highest_held()?;
        self.steps.iter().find(|s| s.rate == rate)
    }
    fn stopped(&self) -> Option<&Step> {
        self.steps.last().filter(|s| s.stop.is_some())
    }
}

impl Scenario for RouteSweep {
    const ID: &'static str = "route-sweep";
    const ABOUT: &'static str =
        "Route queries offered open loop at rising fixed rates until each server saturates";
    type Params = Params;
    fn quick(p: &mut Params) {
        p.rates = vec![2_000.0, 5_000.0, 10_000.0];
        (p.warmup_s, p.duration_s) = (0.3, 1.0);
    }
    async fn run(ctx: &Ctx<'_>, p: &Params, record: &mut Record) -> anyhow::Result<()> {
        for kind in ctx.peers::<Self>() {
            record.add(kind, "", sweep(ctx.setup, kind, p).await);
        }
        Ok(())
    }
    fn report(s: &mut Section<'_>) {
        let rows = s.rows::<Outcome>("");
        s.table(&rows, SUMMARY);
        for row in &rows {
            let Some(x) = row.ok() else { continue };
            s.text(format!("{}:", row.label));
            let step = |step: &Step| Row::new(row.peer, "", Ok(step.clone()));
            s.table_headed(None, &x.steps.iter().map(step).collect::<Vec<_>>(), STEPS);
        }
        let chart = Panel::Lines {
            title: "route-sweep: p99 query latency against the offered rate (open loop)".into(),
            x: "offered queries/s (thousands)",
            y: "p99 (ms, log)",
            percentiles: false,
            points: |x: &Outcome| {
                let answered = x.steps.iter().filter(|s| s.latency.count > 0);
                let point = |s: &Step| (s.rate / 1e3, s.latency.p99_us / 1e3, s.stop.is_some());
                answered.map(point).collect()
            },
        };
        s.chart(&rows, &[chart]);
    }
}

fn stop_text(stop: Option<Stop>) -> String {
    match stop {
        None => String::new(),
        Some(Stop::Saturated) => "saturated".into(),
        Some(Stop::GeneratorBehind) => "**generator behind** (rate not really offered)".into(),
    }
}

const SUMMARY: &[Col<Outcome>] = &[
    ("highest rate held", |x| match x.highest_held() {
        Some((rate, bound)) => format!("{}{}/s", if bound { "≥ " } else { "" }, num(rate)),
        None => "none".into(),
    }),
    ("p99 there", |x| {
        or_na(x.held_step(), |s| ms(s.latency.p99_us))
    }),
    ("CPU per query there", |x| {
        us(x.held_step().and_then(|s| s.cpu_us_per_query))
    }),
    ("stopped after", |x| {
        let stopped = x.stopped().map(|s| format!("{}/s", num(s.rate)));
        stopped.unwrap_or_else(|| "—".into())
    }),
    ("because", |x| {
        let because = x.stopped().map(|s| stop_text(s.stop));
        because.unwrap_or_else(|| "every rate held".into())
    }),
];

const STEPS: &[Col<Step>] = &[
    ("offered/s", |s| num(s.rate)),
    ("answered/s", |s| num(s.achieved_per_s)),
    ("p50", |s| answered_ms(&s.latency, s.latency.p50_us)),
    ("p99", |s| answered_ms(&s.latency, s.latency.p99_us)),
    ("p99.9", |s| answered_ms(&s.latency, s.latency.p999_us)),
    ("errors", |s| s.errors.to_string()),
    ("lag p99", |s| ms(s.schedule_lag.p99_us)),
    ("lag max", |s| ms(s.schedule_lag.max_us)),
    ("server CPU", |s| cpu_share(s.server_cpu.as_ref())),
    ("CPU per query", |s| us(s.cpu_us_per_query)),
    ("others' CPU", |s| noise(s.others_cpu_percent)),
    ("", |s| stop_text(s.stop)),
];

async fn sweep(setup: &PeerSetup, kind: PeerKind, p: &Params) -> anyhow::Result<Outcome> {
    let layout = Layout::new(p.brokers, p.topics_per_broker, p.spread);
    let (peer, fleet, clients) = serving(setup, kind, &layout, p.connections).await?;
    let topics = layout.all_topics();
    let requests: Vec<_> = topics.iter().map(|t| workload::route_request(t)).collect();
    let make: Numbered = Arc::new(move |i| requests[i as usize % requests.len()].clone());
    let window = Window::secs(p.warmup_s, p.duration_s.max(0.1), QUERY_TIMEOUT);
    let (mut steps, mut bytes, mut answers) = (Vec::new(), 0, 0);
    for &rate in p.rates.iter().filter(|r| **r >= 1.0) {
        let label = format!("route-sweep {} {rate:.0}/s", kind.id());
        let attempt = async || {
            let pid = Some(peer.pid());
            let outcome = load::shown(label.clone(), async |progress| {
                load::fixed_rate(&clients, rate, window, make.clone(), progress, pid).await
            })
            .await;
            bytes += outcome.response_bytes;
            answers += outcome.ok;
            let step = step_of(rate, &outcome);
            let (lag, p99) = (step.schedule_lag.p99_us / 1e3, step.latency.p99_us / 1e3);
            let cpu = or_na(step.cpu_us_per_query, |v| format!("{v:.2}"));
            let stop = step
                .stop
                .map_or(String::new(), |s| format!(", stop: {s:?}"));
            eprintln!(
                "[{label}] {:.0}/s answered, p99 {p99:.2} ms, lag p99 {lag:.2} ms, {cpu} µs CPU \
                 per query{stop}",
                step.achieved_per_s
            );
            anyhow::Ok(step)
        };
        let noise = |s: &Step| s.others_cpu_percent.unwrap_or(0.0);
        let (step, windows) = settle(&label, noise, attempt).await?;
        let stop = step.stop.is_some();
        steps.push(Step { windows, ..step });
        if stop {
            break;
        }
    }
    let server = ServerSample::of(&peer, None);
    drop(fleet);
    peer.stop();
    let mean_response_bytes = div(Some(bytes as f64), Some(answers as f64)).unwrap_or(0.0);
    Ok(Outcome {
        params: p.clone(),
        steps,
        mean_response_bytes,
        server,
    })
}

/// The figures of one window at `rate`.
fn step_of(rate: f64, outcome: &load::Outcome) -> Step {
    let latency = Latency::of(&outcome.latency);
    let schedule_lag = Latency::of(&outcome.schedule_lag);
    let achieved_per_s = outcome.achieved_rate();
    let cpu = outcome.server_cpu.as_ref();
    Step {
        rate,
        offered: outcome.offered,
        achieved_per_s,
        stop: stop_after(rate, achieved_per_s, latency.p99_us, schedule_lag.p99_us),
        latency,
        errors: outcome.errors,
        first_error: outcome.first_error.clone(),
        schedule_lag,
        cpu_us_per_query: cpu.and_then(|c| c.us_per(outcome.answered_in_window)),
        others_cpu_percent: cpu.map(|c| c.others_cpu_percent),
        server_cpu: outcome.server_cpu.clone(),
        windows: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_stops_at_saturation_or_a_lagging_generator() {
        let saturated = Some(Stop::Saturated);
        assert_eq!(stop_after(100_000.0, 95_000.0, 2_000.0, 1_000.0), None);
        // Fewer than 90 % answered, or everything answered with p99 over 100 ms.
        assert_eq!(stop_after(100_000.0, 89_000.0, 2_000.0, 1_000.0), saturated);
        assert_eq!(
            stop_after(10_000.0, 10_000.0, 150_000.0, 1_000.0),
            saturated
        );
        assert_eq!(stop_after(10_000.0, 9_000.0, 100_000.0, 5_000.0), None);
        // The generator late: named before whatever the server did.
        let behind = stop_after(300_000.0, 200_000.0, 150_000.0, 9_000.0);
        assert_eq!(behind, Some(Stop::GeneratorBehind));
    }

    #[test]
    fn the_highest_rate_held_is_a_lower_bound_unless_the_server_saturated() {
        let (saturated, behind) = (Some(Stop::Saturated), Some(Stop::GeneratorBehind));
        let sweep = |steps: &[(f64, Option<Stop>)]| Outcome {
            params: super::super::params::<RouteSweep>(None, true).unwrap(),
            steps: steps
                .iter()
                .map(|&(rate, stop)| Step {
                    stop,
                    ..step_of(rate, &load::Outcome::empty())
                })
                .collect(),
            mean_response_bytes: 0.0,
            server: ServerSample::default(),
        };
        let saturating = sweep(&[(10e3, None), (25e3, None), (50e3, saturated)]);
        assert_eq!(saturating.highest_held(), Some((25_000.0, false)));
        let behind = sweep(&[(10e3, None), (25e3, behind)]);
        assert_eq!(behind.highest_held(), Some((10_000.0, true)));
        assert_eq!(
            sweep(&[(10e3, None)]).highest_held(),
            Some((10_000.0, true))
        );
        let none_held = sweep(&[(10e3, saturated)]);
        assert_eq!(none_held.highest_held(), None);
        assert_eq!(SUMMARY[0].1(&none_held), "none");
        assert_eq!(SUMMARY[0].1(&behind), "≥ 10,000/s");
    }
}
