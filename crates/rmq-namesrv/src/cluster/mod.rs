//! The NameServer's side of the cluster (docs/architecture.md, "The
//! NameServer cluster"): the core of `rmq-cluster` fed with this node's
//! direct registrations and removals, its gossip task, the pulls it asks
//! for and the relayed brokers it applies or drops in the route table.
//!
//! Off unless `clusterGossipAddr` is set: then `Namesrv::cluster` is
//! `None`, and nothing here runs.
//!
//! Who calls what: the REGISTER_BROKER handler reports each applied direct
//! registration ([`NamesrvCluster::registered`]), BROKER_HEARTBEAT and
//! QUERY_DATA_VERSION report a direct broker seen ([`NamesrvCluster::seen`]),
//! the unregistration worker runs its batches through
//! [`NamesrvCluster::remove_batch`] (a direct broker another node still
//! holds stays, as relayed); the gossip task ([`run`]) does the rest. What
//! touches the route table is in [`table`], shared with the cluster
//! simulation. Locks: whoever needs both takes the route table's lock
//! before the core's, never the other way round.

pub mod generation;
pub mod held_topics;
mod host;
pub mod keys;
pub mod metrics;
pub mod pull;
mod relay;
pub mod status;
pub mod table;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::Mutex;
use rmq_cluster::core::{BrokerRef, ClusterCore, ClusterStatus, CoreConfig, MemberId};
use rmq_cluster::gossip::{Gossip, GossipStats};
use rmq_transport::tls::TlsClient;
use tokio::sync::Notify;

pub use keys::{ClusterKeys, ClusterSettings};
pub use metrics::ClusterCounters;
pub use table::Registered;

use crate::clock::{Clock, WallClock};
use crate::metrics::{NamesrvMetrics, RemovalReason};
use crate::route::{BrokerKey, Millis, SharedRoutes, Unregistration};

/// How often the gossip task looks for members' changes: a change a peer
/// gossips reaches the core within this.
const POLL: Duration = Duration::from_millis(20);

/// The parts of the NameServer the cluster works on.
#[derive(Debug, Clone)]
pub struct ClusterParts {
    /// The route table relayed brokers go into.
    pub routes: Arc<SharedRoutes>,
    /// The server's monotonic clock.
    pub clock: Clock,
    /// The server's wall clock: when a registration changed, as published.
    pub wall: WallClock,
    /// Where removals of relayed brokers are counted.
    pub metrics: NamesrvMetrics,
    /// TLS for pulls, as for the server's other outgoing connections.
    pub outgoing_tls: Option<TlsClient>,
    /// `maxTopicsPerRegistration`: a pulled registration is held to it too.
    pub max_topics: usize,
}

/// One node's part in the cluster.
#[derive(Debug)]
pub struct NamesrvCluster {
    core: Arc<Mutex<ClusterCore>>,
    published: Arc<Notify>,
    settings: ClusterSettings,
    parts: ClusterParts,
    ready: AtomicBool,
    gossip_stats: OnceLock<Arc<GossipStats>>,
    /// The gossip socket, bound at start-up and taken by [`run`].
    socket: Mutex<Option<std::net::UdpSocket>>,
    /// What the cluster counts (docs/metrics.md).
    pub counters: ClusterCounters,
    /// The topic lists pulls were answered with ([`held_topics`]).
    held_topics: held_topics::HeldTopicLists,
}

impl NamesrvCluster {
    /// The cluster part of a node, gossiping on `socket` once [`run`]
    /// runs.
    pub fn new(
        settings: ClusterSettings,
        socket: std::net::UdpSocket,
        parts: ClusterParts,
    ) -> NamesrvCluster {
        let config = CoreConfig {
            has_seeds: settings.has_seeds,
            bootstrap_timeout_ms: settings.bootstrap_timeout.as_millis() as u64,
            pull_timeout_ms: settings.pull_timeout.as_millis() as u64,
            ..CoreConfig::default()
        };
        let me = MemberId::new(settings.gossip.node.clone(), settings.gossip.generation);
        let core = ClusterCore::new(me, &settings.gossip.node, config, parts.clock.now());
        NamesrvCluster {
            core: Arc::new(Mutex::new(core)),
            published: Arc::new(Notify::new()),
            settings,
            parts,
            ready: AtomicBool::new(false),
            gossip_stats: OnceLock::new(),
            socket: Mutex::new(Some(socket)),
            counters: ClusterCounters::default(),
            held_topics: held_topics::HeldTopicLists::default(),
        }
    }

    /// This node's settings.
    pub fn settings(&self) -> &ClusterSettings {
        &self.settings
    }

    /// The parts of the NameServer it works on.
    pub fn parts(&self) -> &ClusterParts {
        &self.parts
    }

    /// The topic lists pulls were answered with, for [`table::held`].
    pub fn held_topics(&self) -> &held_topics::HeldTopicLists {
        &self.held_topics
    }

    /// The core, for [`table`]'s functions.
    pub fn core(&self) -> &Mutex<ClusterCore> {
        &self.core
    }

    /// Whether bootstrap is over: route queries are answered.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    fn set_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    /// The gossip socket's counters, once gossip runs.
    pub fn gossip_stats(&self) -> Option<&Arc<GossipStats>> {
        self.gossip_stats.get()
    }

    /// What this node knows of the cluster.
    pub fn status(&self) -> ClusterStatus {
        self.core.lock().status(self.parts.clock.now())
    }

    /// The member a relayed broker came from (for the API).
    pub fn relayed_from(&self, key: &BrokerKey) -> Option<MemberId> {
        self.core.lock().relayed_from(&broker_ref(key)).cloned()
    }

    /// A direct registration was applied: published if it changed.
    pub fn registered(&self, registered: &Registered, now: Millis) {
        table::direct_registered(
            &self.parts.routes,
            &self.core,
            registered,
            now,
            self.parts.wall.now_ms(),
        );
        self.published.notify_one();
    }

    /// A direct broker was heard from without registering.
    pub fn seen(&self, key: &BrokerKey, now: Millis) {
        self.core.lock().direct_seen(&broker_ref(key), now);
        self.published.notify_one();
    }

    /// A batch of removals ([`table::remove_batch`]), then the gossip task
    /// woken to publish what changed.
    pub fn remove_batch(
        &self,
        batch: &[Unregistration],
        reasons: &[RemovalReason],
        notify: bool,
    ) -> table::BatchOutcome {
        let outcome = table::remove_batch(
            &self.parts.routes,
            &self.core,
            batch,
            reasons,
            notify,
            self.parts.clock.now(),
        );
        self.published.notify_one();
        outcome
    }

    /// Adds the cluster's metrics to `registry` (docs/metrics.md).
    pub fn register_metrics(
        self: &Arc<Self>,
        registry: &mut prometheus_client::registry::Registry,
    ) {
        registry.register_collector(Box::new(metrics::ClusterCollector {
            cluster: self.clone(),
        }));
    }
}

/// Runs the cluster of a node that has one: gossip, and the core driven
/// over it, until the task is dropped (the server stops). Should gossip
/// stop by itself (its socket failed, or a peer's message broke it), the
/// node goes on serving what it holds, and says so.
pub async fn run(cluster: Option<Arc<NamesrvCluster>>) {
    let Some(cluster) = cluster else {
        return;
    };
    let Some(socket) = cluster.socket.lock().take() else {
        return;
    };
    let applier = relay::Applier::start(cluster.clone());
    let host = Arc::new(host::NamesrvHost::new(cluster.clone(), applier));
    let initial = initial_keys(&cluster);
    let gossip = match Gossip::spawn(&cluster.settings.gossip, socket, initial).await {
        Ok(gossip) => gossip,
        Err(error) => {
            tracing::error!(%error, "cluster gossip could not start: this node serves alone");
            return;
        }
    };
    let _ = cluster.gossip_stats.set(gossip.stats().clone());
    tracing::info!(
        gossip = %cluster.settings.gossip.advertise,
        node = %cluster.settings.gossip.node,
        cluster_id = %cluster.settings.gossip.cluster_id,
        seeds = ?cluster.settings.gossip.seeds,
        "cluster gossip started"
    );
    let result = rmq_cluster::gossip::run(
        cluster.core.clone(),
        gossip,
        host,
        cluster.published.clone(),
        POLL,
        std::future::pending(),
    )
    .await;
    if let Err(error) = result {
        tracing::error!(%error, "cluster gossip stopped: this node serves alone until restarted");
    }
}

/// The core's first publications, which gossip starts with.
fn initial_keys(cluster: &NamesrvCluster) -> Vec<(String, String)> {
    cluster
        .core
        .lock()
        .take_publications()
        .into_iter()
        .filter_map(|effect| match effect {
            rmq_cluster::core::Effect::Publish { key, value } => Some((key, value)),
            _ => None,
        })
        .collect()
}

/// The core's name of a broker.
pub fn broker_ref(key: &BrokerKey) -> BrokerRef {
    BrokerRef::new(key.cluster.clone(), key.addr.clone())
}

/// The route table's name of a broker.
pub fn broker_key(broker: &BrokerRef) -> BrokerKey {
    BrokerKey::new(broker.cluster.clone(), broker.addr.clone())
}
