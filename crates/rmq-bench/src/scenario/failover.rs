//! `failover`: how fast a dead broker leaves the routes, after its connection closes and after
//! its heartbeat timeout.

use super::fleet::{ms_until, route, signed_millis, start_peer, Fleet, TINY};
use super::{Ctx, Record, Scenario};
use crate::cli::{millis as ms_arg, secs};
use crate::load;
use crate::peer::{PeerKind, PeerOptions, PeerSetup};
use crate::report::format::{ms_list, ms_or};
use crate::report::{Col, Section};
use crate::sample::ServerSample;
use crate::stats::median;
use crate::workload::{self, Registration, CLUSTER};
use clap::Args;
use rmq_broker_client::{wall_ms, BrokerConfig};
use rmq_protocol::{TopicConfig, TopicRouteData};
use rmq_transport::RpcClient;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::Instant;

pub struct Failover;

const TOPICS: [&str; 2] = ["FailoverTopic-0", "FailoverTopic-1"];

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Params {
    /// Connection-close samples (one victim each, one after the other).
    #[arg(long, default_value_t = 5)]
    pub close_samples: usize,
    /// Silent-broker samples.
    #[arg(long, default_value_t = 3)]
    pub silent_samples: usize,
    /// heartbeatTimeoutMillis of the silent brokers.
    #[arg(long = "silent-timeout", default_value = "3s", value_parser = ms_arg)]
    pub silent_timeout_ms: u64,
    /// Time between the silent brokers' registrations.
    #[arg(long = "silent-stagger", default_value = "1700ms", value_parser = ms_arg)]
    pub silent_stagger_ms: u64,
    /// Route polling interval.
    #[arg(long = "poll", default_value = "2ms", value_parser = ms_arg)]
    pub poll_ms: u64,
    /// Give up on a sample after this long.
    #[arg(long = "give-up", default_value_t = 20.0, value_parser = secs)]
    pub give_up_s: f64,
}

/// What one peer did: close → gone, and timeout ran out → gone, ms per sample (`None`: still
/// routed when the harness gave up), with medians.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub params: Params,
    pub close_ms: Vec<Option<f64>>,
    pub close_median_ms: Option<f64>,
    pub silent_lag_ms: Vec<Option<f64>>,
    pub silent_median_lag_ms: Option<f64>,
    #[serde(flatten)]
    pub server: ServerSample,
}

impl Scenario for Failover {
    const ID: &'static str = "failover";
    const ABOUT: &'static str =
        "Dead brokers leaving the routes: connection close and silent timeout";
    type Params = Params;
    fn quick(p: &mut Params) {
        (p.close_samples, p.silent_samples) = (2, 1);
        (p.silent_timeout_ms, p.give_up_s) = (1_000, 8.0);
    }
    fn runs(kind: PeerKind) -> bool {
        kind.is_real()
    }
    async fn run(ctx: &Ctx<'_>, p: &Params, record: &mut Record) -> anyhow::Result<()> {
        for kind in ctx.peers::<Self>() {
            record.add(kind, "", failover(ctx.setup, kind, p).await);
        }
        Ok(())
    }
    fn report(s: &mut Section<'_>) {
        let rows = s.rows::<Outcome>("");
        s.table(&rows, COLUMNS);
    }
}

const COLUMNS: &[Col<Outcome>] = &[
    ("close → gone (median)", |x| {
        ms_or(x.close_median_ms, "not gone")
    }),
    ("samples", |x| ms_list(&x.close_ms, "not gone")),
    ("silent: timeout → gone (median)", |x| {
        ms_or(x.silent_median_lag_ms, "not gone")
    }),
    ("samples", |x| ms_list(&x.silent_lag_ms, "not gone")),
];

/// A broker registering [`TOPICS`] with `addr` on a connection of its own; with
/// `silent_timeout`, one that goes silent and is dropped that long after its last heartbeat.
async fn victim(
    addr: SocketAddr,
    name: &str,
    index: usize,
    silent_timeout: Option<Duration>,
) -> anyhow::Result<Fleet> {
    let mut config = BrokerConfig::new(CLUSTER, name, workload::broker_addr(1_000 + index));
    if let Some(timeout) = silent_timeout {
        config.enable_slave_acting_master = true;
        config.broker_not_active_timeout = timeout;
    }
    let topics = TOPICS.iter().map(|t| TopicConfig::new(*t)).collect();
    let registration = Registration::new(config, topics, wall_ms())?;
    let mut fleet = Fleet::connect(addr, vec![registration]).await?;
    fleet.register_all().await?;
    Ok(fleet)
}

fn routes_to(route: Option<&TopicRouteData>, name: &str) -> bool {
    route.is_some_and(|r| r.broker_datas.iter().any(|b| b.broker_name == name))
}

async fn routed(query: &RpcClient, name: &str) -> anyhow::Result<bool> {
    Ok(routes_to(route(query, TOPICS[0]).await?.as_ref(), name))
}

async fn failover(setup: &PeerSetup, kind: PeerKind, params: &Params) -> anyhow::Result<Outcome> {
    let peer = start_peer(setup, kind, &TINY, &PeerOptions::default()).await?;
    let anchor = victim(peer.addr, "failover-anchor", 999, None).await?;
    let query = load::connect(peer.addr, 1).await?.remove(0);
    let tag = format!("[failover {}]", kind.id());
    let poll = Duration::from_millis(params.poll_ms);
    let give_up = Duration::from_secs_f64(params.give_up_s);
    let mut close_ms = Vec::new();
    for k in 0..params.close_samples {
        let name = format!("failover-close-{k}");
        let fleet = victim(peer.addr, &name, k, None).await?;
        let is_routed = routed(&query, &name).await?;
        anyhow::ensure!(is_routed, "{name} is not routed after registering");
        let gone = async || Ok(!routed(&query, &name).await?);
        let closed = Instant::now();
        fleet.clients[0].close();
        let sample = ms_until(closed, poll, give_up, gone).await?;
        eprintln!("{tag} connection close sample {k}: {sample:?} ms");
        close_ms.push(sample);
    }
    let timeout = Duration::from_millis(params.silent_timeout_ms);
    let mut silent = Vec::new();
    for k in 0..params.silent_samples {
        if k > 0 {
            tokio::time::sleep(Duration::from_millis(params.silent_stagger_ms)).await;
        }
        let name = format!("failover-silent-{k}");
        let fleet = victim(peer.addr, &name, 100 + k, Some(timeout)).await?;
        silent.push((name, Instant::now() + timeout, fleet, None::<f64>));
    }
    let deadline = Instant::now() + timeout + give_up;
    while Instant::now() < deadline && silent.iter().any(|s| s.3.is_none()) {
        let route = route(&query, TOPICS[0]).await?;
        let now = Instant::now();
        for (name, expires, _, gone) in silent.iter_mut().filter(|s| s.3.is_none()) {
            if !routes_to(route.as_ref(), name) {
                *gone = Some(signed_millis(*expires, now));
            }
        }
        tokio::time::sleep(poll).await;
    }
    let silent_lag_ms: Vec<Option<f64>> = silent.iter().map(|s| s.3).collect();
    eprintln!("{tag} silent broker samples (ms after timeout): {silent_lag_ms:?}");
    let done = |samples: &[Option<f64>]| median(samples.iter().flatten().copied());
    let server = ServerSample::of(&peer, None);
    drop((silent, anchor));
    peer.stop();
    Ok(Outcome {
        params: params.clone(),
        close_median_ms: done(&close_ms),
        close_ms,
        silent_median_lag_ms: done(&silent_lag_ms),
        silent_lag_ms,
        server,
    })
}
