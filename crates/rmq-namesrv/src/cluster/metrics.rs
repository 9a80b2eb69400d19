//! What the cluster counts, and its state read at each scrape
//! (docs/metrics.md, "Cluster"): members by state, brokers direct and
//! relayed, digests behind per peer, time since the last full agreement,
//! pulls and their failures, refusals by kind, gossip bytes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use rmq_cluster::core::{Liveness, RefusalKind};
use rmq_cluster::gossip::GossipStats;

use super::NamesrvCluster;

/// Refusal kinds of peer input, as labels.
const REFUSALS: [RefusalKind; 4] = [
    RefusalKind::BadValue,
    RefusalKind::PullNotHeld,
    RefusalKind::PullMismatch,
    RefusalKind::RemovalAhead,
];

/// The cluster's counters.
#[derive(Debug, Default)]
pub struct ClusterCounters {
    pulls_ok: AtomicU64,
    pulls_failed: AtomicU64,
    pull_micros: AtomicU64,
    applied: AtomicU64,
    refused: [AtomicU64; REFUSALS.len()],
}

impl ClusterCounters {
    /// A pull ended.
    pub fn pulled(&self, ok: bool, took: Duration) {
        let counter = if ok {
            &self.pulls_ok
        } else {
            &self.pulls_failed
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.pull_micros
            .fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    /// A pulled registration was applied.
    pub fn applied(&self) {
        self.applied.fetch_add(1, Ordering::Relaxed);
    }

    /// A peer's input was refused.
    pub fn refused(&self, kind: &str) {
        if let Some(i) = REFUSALS.iter().position(|k| k.as_str() == kind) {
            self.refused[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Pulls that brought a registration, and pulls that failed.
    pub fn pulls(&self) -> (u64, u64) {
        (
            self.pulls_ok.load(Ordering::Relaxed),
            self.pulls_failed.load(Ordering::Relaxed),
        )
    }
}

/// Exports the cluster's state at each scrape.
#[derive(Debug)]
pub struct ClusterCollector {
    /// The node's cluster part.
    pub cluster: Arc<NamesrvCluster>,
}

fn gauge(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    value: i64,
) -> Result<(), std::fmt::Error> {
    let gauge = ConstGauge::new(value);
    gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)
}

impl Collector for ClusterCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let cluster = &self.cluster;
        let status = cluster.status();
        gauge(
            &mut encoder,
            "waymark_cluster_ready",
            "1 once this node's cluster bootstrap is over and it serves routes.",
            i64::from(cluster.is_ready()),
        )?;
        {
            let mut family = encoder.encode_descriptor(
                "waymark_cluster_members",
                "Other members of the NameServer cluster, by state (live, unknown, dead).",
                None,
                MetricType::Gauge,
            )?;
            for state in [Liveness::Live, Liveness::Unknown, Liveness::Dead] {
                let count = status
                    .members
                    .iter()
                    .filter(|m| m.liveness == state)
                    .count();
                let labels = [("state", state.as_str())];
                ConstGauge::new(count as i64).encode(family.encode_family(&labels)?)?;
            }
        }
        {
            let mut family = encoder.encode_descriptor(
                "waymark_cluster_brokers",
                "Brokers this node holds, by source: registered with it directly, or relayed from another node.",
                None,
                MetricType::Gauge,
            )?;
            for (source, count) in [("direct", status.direct), ("relayed", status.relayed)] {
                let labels = [("source", source)];
                ConstGauge::new(count as i64).encode(family.encode_family(&labels)?)?;
            }
        }
        {
            let mut family = encoder.encode_descriptor(
                "waymark_cluster_digests_behind",
                "Brokers a live peer publishes that this node does not hold as it should yet, per peer.",
                None,
                MetricType::Gauge,
            )?;
            for member in status.members.iter().filter(|m| m.liveness.is_up()) {
                let labels = [("peer", member.id.node.as_str())];
                ConstGauge::new(member.behind as i64).encode(family.encode_family(&labels)?)?;
            }
        }
        {
            // In seconds with the milliseconds kept: agreement comes back
            // within a second, which whole seconds would show as 0.
            let seconds = status
                .since_agreement_ms
                .map_or(-1.0, |ms| ms as f64 / 1_000.0);
            let gauge = ConstGauge::new(seconds);
            gauge.encode(encoder.encode_descriptor(
                "waymark_cluster_since_agreement_seconds",
                "Seconds since this node last held every live peer's brokers as they publish them (-1: not yet).",
                None,
                gauge.metric_type(),
            )?)?;
        }
        let counters = &cluster.counters;
        {
            let mut family = encoder.encode_descriptor(
                "waymark_cluster_pulls",
                "Pulls of a registration from a peer, by result (ok, failed).",
                None,
                MetricType::Counter,
            )?;
            let (ok, failed) = counters.pulls();
            for (result, value) in [("ok", ok), ("failed", failed)] {
                let labels = [("result", result)];
                ConstCounter::new(value).encode(family.encode_family(&labels)?)?;
            }
        }
        {
            let micros = counters.pull_micros.load(Ordering::Relaxed);
            let counter = ConstCounter::new(micros as f64 / 1_000_000.0);
            counter.encode(encoder.encode_descriptor(
                "waymark_cluster_pull_seconds",
                "Time pulls took, from connecting to the answer or the failure, summed.",
                None,
                counter.metric_type(),
            )?)?;
        }
        {
            let counter = ConstCounter::new(counters.applied.load(Ordering::Relaxed));
            counter.encode(encoder.encode_descriptor(
                "waymark_cluster_relayed_applied",
                "Pulled registrations applied to the route table as relayed brokers.",
                None,
                counter.metric_type(),
            )?)?;
        }
        {
            let stats = cluster.gossip_stats();
            let mut family = encoder.encode_descriptor(
                "waymark_cluster_refusals",
                "Peer input refused, by kind (bad_value, pull_not_held, pull_mismatch, removal_ahead, garbage, foreign_cluster).",
                None,
                MetricType::Counter,
            )?;
            for (kind, counter) in REFUSALS.iter().zip(&counters.refused) {
                let labels = [("kind", kind.as_str())];
                ConstCounter::new(counter.load(Ordering::Relaxed))
                    .encode(family.encode_family(&labels)?)?;
            }
            let gossip = [
                ("garbage", stats.map_or(0, |s| GossipStats::get(&s.garbage))),
                (
                    "foreign_cluster",
                    stats.map_or(0, |s| GossipStats::get(&s.foreign_cluster)),
                ),
            ];
            for (kind, value) in gossip {
                let labels = [("kind", kind)];
                ConstCounter::new(value).encode(family.encode_family(&labels)?)?;
            }
        }
        {
            // At 0 until gossip has started, as every counter.
            let stats = cluster.gossip_stats();
            let mut family = encoder.encode_descriptor(
                "waymark_cluster_gossip_bytes",
                "Bytes of gossip sent and received (UDP payloads).",
                None,
                MetricType::Counter,
            )?;
            let directions = [
                ("sent", stats.map_or(0, |s| GossipStats::get(&s.bytes_sent))),
                (
                    "received",
                    stats.map_or(0, |s| GossipStats::get(&s.bytes_received)),
                ),
            ];
            for (direction, value) in directions {
                let labels = [("direction", direction)];
                ConstCounter::new(value).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}
