//! `failover`: how fast a dead broker leaves the routes.
//!
//! An anchor broker and the victims register the same two topics, each on
//! its own connection. *Connection close*: a victim closes its connection;
//! the time until a route query no longer lists it. *Silent broker*: victims
//! register with `heartbeatTimeoutMillis` (what a 5.x broker with
//! `enableSlaveActingMaster` sends), keep their connections open and send
//! nothing; the time from the moment their timeout ran out (answer of the
//! last registration + timeout) until they are gone from the route. The
//! victims register staggered so the samples fall at different points of a
//! periodic scan. The ceiling keeps no brokers: not applicable there.

use std::time::Duration;

use rmq_broker_client::{wall_ms, BrokerConfig};
use rmq_transport::RpcClient;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{millis, route, start_peer, Fleet};
use crate::load;
use crate::peer::{PeerKind, PeerSetup};
use crate::stats::median;
use crate::workload::{self, Layout, Registration, CLUSTER};

const TOPICS: [&str; 2] = ["FailoverTopic-0", "FailoverTopic-1"];

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Connection-close samples (one victim each, one after the other).
    pub close_samples: usize,
    /// Silent-broker samples (victims registered `silent_stagger_ms` apart).
    pub silent_samples: usize,
    /// `heartbeatTimeoutMillis` of the silent victims.
    pub silent_timeout_ms: u64,
    /// Time between the silent victims' registrations.
    pub silent_stagger_ms: u64,
    /// Route polling interval, ms.
    pub poll_ms: u64,
    /// Give up on a sample after this long, seconds.
    pub give_up_s: f64,
}

impl Params {
    /// The defaults (fewer samples and a short timeout with `quick`).
    pub fn defaults(quick: bool) -> Params {
        Params {
            close_samples: if quick { 2 } else { 5 },
            silent_samples: if quick { 1 } else { 3 },
            silent_timeout_ms: if quick { 1_000 } else { 3_000 },
            silent_stagger_ms: 1_700,
            poll_ms: 2,
            give_up_s: if quick { 8.0 } else { 20.0 },
        }
    }
}

/// What one peer did. `None` samples: still routed when the harness gave up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failover {
    /// What ran.
    pub params: Params,
    /// Connection close → gone from the route, ms per sample.
    pub close_ms: Vec<Option<f64>>,
    /// Median of the completed close samples.
    pub close_median_ms: Option<f64>,
    /// Timeout ran out → gone from the route, ms per sample.
    pub silent_lag_ms: Vec<Option<f64>>,
    /// Median of the completed silent samples.
    pub silent_median_lag_ms: Option<f64>,
    /// CPUs the server was allowed.
    pub server_cpus: Option<String>,
}

fn victim(
    name: &str,
    index: usize,
    silent_timeout: Option<Duration>,
) -> anyhow::Result<Registration> {
    let mut config = BrokerConfig::new(CLUSTER, name, workload::broker_addr(1_000 + index));
    if let Some(timeout) = silent_timeout {
        config.enable_slave_acting_master = true;
        config.broker_not_active_timeout = timeout;
    }
    let topics = TOPICS
        .iter()
        .map(|t| rmq_protocol::TopicConfig::new(*t))
        .collect();
    Registration::new(config, topics, wall_ms())
}

async fn routed(query: &RpcClient, name: &str) -> anyhow::Result<bool> {
    Ok(route(query, TOPICS[0])
        .await?
        .is_some_and(|r| r.broker_datas.iter().any(|b| b.broker_name == name)))
}

/// Runs the scenario against a fresh `kind`.
///
/// # Errors
/// The peer does not start or refuses a registration.
pub async fn run(setup: &PeerSetup, kind: PeerKind, params: &Params) -> anyhow::Result<Failover> {
    let tiny = Layout {
        brokers: 1,
        topics_per_broker: 2,
        spread: 1,
        queues: 8,
    };
    let peer = start_peer(setup, kind, &tiny).await?;
    let mut anchor = Fleet::connect(peer.addr, vec![victim("failover-anchor", 999, None)?]).await?;
    anchor.register_all().await?;
    let query = load::connect(peer.addr, 1).await?.remove(0);
    let poll = Duration::from_millis(params.poll_ms);
    let give_up = Duration::from_secs_f64(params.give_up_s);

    let mut close_ms = Vec::new();
    for k in 0..params.close_samples {
        let name = format!("failover-close-{k}");
        let mut fleet = Fleet::connect(peer.addr, vec![victim(&name, k, None)?]).await?;
        fleet.register_all().await?;
        anyhow::ensure!(
            routed(&query, &name).await?,
            "{name} is not routed after registering"
        );
        let closed = Instant::now();
        fleet.clients[0].close();
        let mut sample = None;
        while closed.elapsed() < give_up {
            if !routed(&query, &name).await? {
                sample = Some(millis(closed.elapsed()));
                break;
            }
            tokio::time::sleep(poll).await;
        }
        eprintln!(
            "[failover {}] connection close sample {k}: {sample:?} ms",
            kind.id()
        );
        close_ms.push(sample);
    }

    let timeout = Duration::from_millis(params.silent_timeout_ms);
    let mut silent = Vec::new();
    for k in 0..params.silent_samples {
        if k > 0 {
            tokio::time::sleep(Duration::from_millis(params.silent_stagger_ms)).await;
        }
        let name = format!("failover-silent-{k}");
        let mut fleet =
            Fleet::connect(peer.addr, vec![victim(&name, 100 + k, Some(timeout))?]).await?;
        fleet.register_all().await?;
        silent.push((name, Instant::now() + timeout, fleet, None::<f64>));
    }
    let deadline = Instant::now() + timeout + give_up;
    while Instant::now() < deadline && silent.iter().any(|s| s.3.is_none()) {
        let route = route(&query, TOPICS[0]).await?;
        let now = Instant::now();
        for (name, expires, _, gone) in silent.iter_mut().filter(|s| s.3.is_none()) {
            let present = route
                .as_ref()
                .is_some_and(|r| r.broker_datas.iter().any(|b| &b.broker_name == name));
            if !present {
                let lag = now.saturating_duration_since(*expires);
                *gone = Some(if now >= *expires {
                    millis(lag)
                } else {
                    -millis(*expires - now)
                });
            }
        }
        tokio::time::sleep(poll).await;
    }
    let silent_lag_ms: Vec<Option<f64>> = silent.iter().map(|s| s.3).collect();
    eprintln!(
        "[failover {}] silent broker samples (ms after timeout): {silent_lag_ms:?}",
        kind.id()
    );

    let done =
        |samples: &[Option<f64>]| median(&samples.iter().flatten().copied().collect::<Vec<_>>());
    let result = Failover {
        params: params.clone(),
        close_median_ms: done(&close_ms),
        close_ms,
        silent_median_lag_ms: done(&silent_lag_ms),
        silent_lag_ms,
        server_cpus: peer.cpus_allowed(),
    };
    drop(silent);
    drop(anchor);
    peer.stop();
    Ok(result)
}
