//! The NameServer's metrics (docs/metrics.md): what `rmq-ops` keeps for
//! every server (requests, latency, refusals) plus registrations and their
//! body sizes, broker removals by reason, and, read from the tables at each
//! scrape, their sizes and the KV store's.
//!
//! Counting happens where the event happens (the service wrapper, the
//! unregistration worker); the table gauges take the route table's read
//! lock for one pass over the topics per scrape, never a write lock.

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use rmq_ops::metrics::{Refusals, RequestMetrics, TransportCollector};
use rmq_transport::ServerStats;

use crate::kv::SharedKv;
use crate::route::SharedRoutes;

/// Why a broker left the tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RemovalReason {
    /// Its registration's connection closed.
    Close,
    /// No registration or heartbeat within its timeout.
    Expiry,
    /// UNREGISTER_BROKER.
    Unregister,
    /// A relayed broker that no node of the cluster holds any more.
    Cluster,
}

impl RemovalReason {
    fn label(self) -> &'static str {
        match self {
            RemovalReason::Close => "close",
            RemovalReason::Expiry => "expiry",
            RemovalReason::Unregister => "unregister",
            RemovalReason::Cluster => "cluster",
        }
    }
}

/// Refusal kinds the NameServer counts itself; the transport's are in
/// `rmq_transport::Refusal`.
pub mod refusal {
    /// A heavy request's pool and queue were full: SYSTEM_BUSY.
    pub const POOL_BUSY: &str = "pool_busy";
    /// The unregistration queue was full.
    pub const UNREGISTRATION_QUEUE_FULL: &str = "unregistration_queue_full";
    /// A registration over `maxTopicsPerRegistration`.
    pub const TOPICS_PER_REGISTRATION: &str = "topics_per_registration";
    /// A KV put over a KV quota.
    pub const KV_QUOTA: &str = "kv_quota";
    /// A route subscription over a route push bound.
    pub const ROUTE_SUBSCRIPTIONS: &str = "route_subscriptions";
    /// A route subscriber disconnected for not reading its pushes
    /// (`routePushStallSeconds`).
    pub const ROUTE_PUSH_STALLED: &str = "route_push_stalled";

    /// Every kind, for `Refusals::new`.
    pub const ALL: [&str; 6] = [
        POOL_BUSY,
        UNREGISTRATION_QUEUE_FULL,
        TOPICS_PER_REGISTRATION,
        KV_QUOTA,
        ROUTE_SUBSCRIPTIONS,
        ROUTE_PUSH_STALLED,
    ];
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

/// What the NameServer counts.
#[derive(Debug, Clone)]
pub struct NamesrvMetrics {
    /// Requests and latency by code.
    pub requests: RequestMetrics,
    /// Refusals of the NameServer's own limits.
    pub refusals: Arc<Refusals>,
    /// What the remoting server counts (connections, bytes, its refusals).
    pub transport: Arc<ServerStats>,
    registration_bytes: Histogram,
    removals: Family<ReasonLabel, Counter>,
}

impl Default for NamesrvMetrics {
    fn default() -> Self {
        NamesrvMetrics {
            requests: RequestMetrics::default(),
            refusals: Arc::new(Refusals::new(&refusal::ALL)),
            transport: Arc::default(),
            // 1 KiB to 512 MiB, doubling: a broker's body grows with its topics.
            registration_bytes: Histogram::new(exponential_buckets(1024.0, 2.0, 20)),
            removals: Family::default(),
        }
    }
}

impl NamesrvMetrics {
    /// Counts a REGISTER_BROKER request and the size of its body.
    pub fn registration(&self, body_bytes: usize) {
        self.registration_bytes.observe(body_bytes as f64);
    }

    /// Counts a broker removed from the tables.
    pub fn removed(&self, reason: RemovalReason) {
        self.removals
            .get_or_create(&ReasonLabel {
                reason: reason.label(),
            })
            .inc();
    }

    /// Adds every NameServer metric to `registry`: these counters and the
    /// sizes of `routes` and `kv`, read at each scrape.
    pub fn register(&self, registry: &mut Registry, routes: Arc<SharedRoutes>, kv: Arc<SharedKv>) {
        self.requests.register(registry);
        registry.register(
            "waymark_registration_body_bytes",
            "Body sizes of REGISTER_BROKER requests received (the count is the registrations)",
            self.registration_bytes.clone(),
        );
        for reason in [
            RemovalReason::Close,
            RemovalReason::Expiry,
            RemovalReason::Unregister,
            RemovalReason::Cluster,
        ] {
            // Every reason is exported from the start, at 0.
            let _ = self.removals.get_or_create(&ReasonLabel {
                reason: reason.label(),
            });
        }
        registry.register(
            "waymark_broker_removals",
            "Brokers removed from the route tables, by reason (close, expiry, unregister, cluster: relayed and no node of the cluster holds it any more)",
            self.removals.clone(),
        );
        registry.register_collector(Box::new(TransportCollector::new(
            self.transport.clone(),
            self.refusals.clone(),
        )));
        registry.register_collector(Box::new(TableCollector { routes, kv }));
    }
}

/// The tables' sizes at each scrape.
#[derive(Debug)]
struct TableCollector {
    routes: Arc<SharedRoutes>,
    kv: Arc<SharedKv>,
}

impl Collector for TableCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let sizes = self.routes.read_briefly().sizes();
        let (namespaces, entries) = {
            let kv = self.kv.read();
            kv.namespaces().fold((0, 0), |(n, e), (_, namespace)| {
                (n + 1, e + namespace.len())
            })
        };
        let gauges = [
            ("waymark_clusters", "Clusters.", sizes.clusters),
            (
                "waymark_broker_groups",
                "Broker groups (broker names).",
                sizes.broker_groups,
            ),
            (
                "waymark_brokers",
                "Registered brokers (cluster and address).",
                sizes.brokers,
            ),
            ("waymark_topics", "Topics.", sizes.topics),
            (
                "waymark_topic_queue_entries",
                "Topic-queue entries: one per topic and broker name.",
                sizes.queue_entries,
            ),
            ("waymark_kv_namespaces", "KV namespaces.", namespaces),
            (
                "waymark_kv_entries",
                "KV entries in all namespaces.",
                entries,
            ),
        ];
        for (name, help, value) in gauges {
            let gauge = ConstGauge::new(value as i64);
            gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
        }
        Ok(())
    }
}
