//! The controller's metrics (docs/metrics.md): requests, latency,
//! connections and refusals as every Waymark server counts them, plus, read
//! at each scrape, Raft's view (term, leadership, log and applied index,
//! leader changes) and the broker sets (masters, epochs, sync-state sets,
//! replicas alive on this node).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use rmq_ops::metrics::{Refusals, RequestMetrics, TransportCollector};
use rmq_transport::ServerStats;

use crate::node::ControllerNode;

/// Refusal kinds the controller counts itself.
pub mod refusal {
    /// A leader request beyond `controllerRequestThreadPoolQueueCapacity`:
    /// SYSTEM_BUSY.
    pub const REQUEST_QUEUE_FULL: &str = "request_queue_full";

    /// Every kind.
    pub const ALL: [&str; 1] = [REQUEST_QUEUE_FULL];
}

/// What a controller node counts.
#[derive(Debug)]
pub struct ControllerMetrics {
    /// Requests and latency by code.
    pub requests: RequestMetrics,
    /// The controller's own refusals.
    pub refusals: Arc<Refusals>,
    /// What its remoting server counts.
    pub transport: Arc<ServerStats>,
    /// Times the leader Raft names changed (a leader lost or a new one).
    pub(crate) leader_changes: AtomicU64,
}

impl Default for ControllerMetrics {
    fn default() -> Self {
        ControllerMetrics {
            requests: RequestMetrics::default(),
            refusals: Arc::new(Refusals::new(&refusal::ALL)),
            transport: Arc::default(),
            leader_changes: AtomicU64::new(0),
        }
    }
}

/// Adds a standalone controller's metrics to `registry`: requests,
/// transport, and [`register_state`]'s.
pub fn register(registry: &mut Registry, node: &Arc<ControllerNode>) {
    let metrics = node.metrics();
    metrics.requests.register(registry);
    registry.register_collector(Box::new(TransportCollector::new(
        metrics.transport.clone(),
        metrics.refusals.clone(),
    )));
    register_state(registry, node);
}

/// Adds the `waymark_controller_*` gauges of `node` (Raft and the broker
/// sets) to `registry`. The NameServer registers only these for its
/// embedded controller: its own request and transport families already
/// carry those names.
pub fn register_state(registry: &mut Registry, node: &Arc<ControllerNode>) {
    registry.register_collector(Box::new(StateCollector { node: node.clone() }));
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct SetLabels {
    cluster: String,
    broker_name: String,
}

/// Reads one figure of a broker set.
type SetFigure = fn(&SetFigures) -> i64;

/// One broker set's figures, copied out of the state for a scrape.
struct SetFigures {
    cluster: String,
    broker_name: String,
    master_epoch: i32,
    /// -1 without a master.
    master: i64,
    sync_state_set: u64,
    alive: u64,
}

#[derive(Debug)]
struct StateCollector {
    node: Arc<ControllerNode>,
}

impl Collector for StateCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let node = &self.node;
        let (term, last_log, applied) = {
            let raft = node.raft().metrics();
            let raft = raft.borrow();
            (
                raft.current_term,
                raft.last_log_index.unwrap_or(0),
                raft.last_applied.map_or(0, |log_id| log_id.index),
            )
        };
        let leader = u64::from(node.serving_since().is_some());
        let now = node.now();
        // Copied out, so no lock is held while encoding.
        let sets: Vec<SetFigures> = {
            let state = node.applied();
            let live = node.live();
            state
                .replicas
                .sets()
                .map(|set| {
                    let alive = set
                        .replicas
                        .keys()
                        .filter(|id| live.is_alive(&set.cluster, &set.name, **id, now))
                        .count() as u64;
                    SetFigures {
                        cluster: set.cluster.clone(),
                        broker_name: set.name.clone(),
                        master_epoch: set.master_epoch,
                        master: set.master.unwrap_or(-1),
                        sync_state_set: set.sync_state_set.len() as u64,
                        alive,
                    }
                })
                .collect()
        };
        let gauges = [
            (
                "waymark_controller_raft_term",
                "Raft term this node is in.",
                term,
            ),
            (
                "waymark_controller_is_leader",
                "1 when this node is the serving leader, else 0.",
                leader,
            ),
            (
                "waymark_controller_raft_last_log_index",
                "Index of the last entry in this node's Raft log.",
                last_log,
            ),
            (
                "waymark_controller_raft_applied_index",
                "Index of the last entry applied to this node's state.",
                applied,
            ),
            (
                "waymark_controller_raft_apply_lag",
                "Entries in the log not yet applied (last log index less applied index).",
                last_log.saturating_sub(applied),
            ),
            (
                "waymark_controller_broker_sets",
                "Broker sets (broker names) the controller knows.",
                sets.len() as u64,
            ),
            (
                "waymark_controller_replicas_alive",
                "Replicas heartbeating this node in time.",
                sets.iter().map(|set| set.alive).sum(),
            ),
        ];
        for (name, help, value) in gauges {
            let gauge = ConstGauge::new(value as i64);
            gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
        }
        let changes = ConstCounter::new(node.metrics().leader_changes.load(Ordering::Relaxed));
        changes.encode(encoder.encode_descriptor(
            "waymark_controller_leader_changes",
            "Times the Raft leader this node knows changed since it started.",
            None,
            changes.metric_type(),
        )?)?;
        // Each election raises its set's master epoch by exactly one (a
        // failed retry does not), so their sum counts every election the
        // replicated state holds.
        let elections = ConstCounter::new(
            sets.iter()
                .map(|set| u64::try_from(set.master_epoch).unwrap_or(0))
                .sum::<u64>(),
        );
        elections.encode(encoder.encode_descriptor(
            "waymark_controller_elections",
            "Masters elected, in every broker set (the sum of their master epochs).",
            None,
            elections.metric_type(),
        )?)?;
        let per_set: [(&str, &str, SetFigure); 3] = [
            (
                "waymark_controller_master_epoch",
                "The master epoch of a broker set.",
                |set| i64::from(set.master_epoch),
            ),
            (
                "waymark_controller_master_broker_id",
                "The master's broker id of a broker set; -1 with no master.",
                |set| set.master,
            ),
            (
                "waymark_controller_sync_state_set_size",
                "Replicas in a broker set's sync-state set.",
                |set| set.sync_state_set as i64,
            ),
        ];
        for (name, help, value) in per_set {
            let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
            for set in &sets {
                let labels = SetLabels {
                    cluster: set.cluster.clone(),
                    broker_name: set.broker_name.clone(),
                };
                ConstGauge::new(value(set)).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

/// Counts the leader changes of `node`'s Raft until Raft stops.
pub(crate) async fn count_leader_changes(node: Arc<ControllerNode>) {
    let mut watch = node.raft().metrics();
    let mut leader = watch.borrow().current_leader;
    while watch.changed().await.is_ok() {
        let now = watch.borrow().current_leader;
        if now != leader {
            leader = now;
            node.metrics()
                .leader_changes
                .fetch_add(1, Ordering::Relaxed);
        }
    }
}
