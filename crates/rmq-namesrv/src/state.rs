//! The NameServer's state as the server holds it: one part per aggregate,
//! each behind its own lock and owned through an `Arc`, so that a handler is
//! given only the parts it uses and a background task (or any component
//! added beside them) owns only the ones it works on. Assembling them is all
//! this module does; what each part means is its own module's.

use std::sync::Arc;

use rmq_transport::tls::TlsClient;

use crate::clock::{Clock, WallClock};
use crate::cluster::NamesrvCluster;
use crate::config::{NamesrvConfig, SharedConfig};
use crate::housekeeping::{self, Connections, Notifier, Queues, Unregistrations};
use crate::kv::{KvStore, SharedKv};
use crate::limits::Limits;
use crate::metrics::NamesrvMetrics;
use crate::push::{self, RoutePush};
use crate::route::SharedRoutes;
use crate::route_snapshot::SnapshotWriter;
use crate::security::Guard;

/// The parts of a NameServer.
#[derive(Debug)]
pub struct Namesrv {
    /// Route tables, with the cache of encoded route bodies.
    pub routes: Arc<SharedRoutes>,
    /// KV store (durable).
    pub kv: Arc<SharedKv>,
    /// Current configuration; dynamic options change through UPDATE_NAMESRV_CONFIG.
    pub config: Arc<SharedConfig>,
    /// Monotonic time since start: liveness, expiry, every duration.
    pub clock: Clock,
    /// The wall clock, for dates told to others (the cluster's); the
    /// system clock unless a test steps one.
    pub wall: WallClock,
    /// The batch unregistration queue.
    pub unregistrations: Unregistrations,
    /// Min-broker-id notifications to send (outside every lock).
    pub notifier: Notifier,
    /// Open connections, so an expired broker's connection can be closed.
    pub connections: Arc<Connections>,
    /// Bounds on request contents (topics per registration, KV quotas),
    /// fixed at start-up; route push holds its own copy of its bounds.
    pub limits: Limits,
    /// Who may send which request (`authenticationEnabled` and the
    /// accounts file); off unless set.
    pub auth: Guard,
    /// TLS for the connections the NameServer opens (NOTIFY_MIN_BROKER_ID_CHANGE
    /// to brokers); `None`: plain.
    pub outgoing_tls: Option<TlsClient>,
    /// Keeps the route snapshot up to date (`routeSnapshotPath`); `None`:
    /// no snapshot, a restart starts with no routes.
    pub route_snapshot: Option<Arc<SnapshotWriter>>,
    /// Route subscriptions (Waymark's route push).
    pub push: Arc<RoutePush>,
    /// What the NameServer counts (`GET /metrics`).
    pub metrics: NamesrvMetrics,
    /// This node's part in a NameServer cluster (`clusterGossipAddr`);
    /// `None`: it serves alone, as Java's.
    pub cluster: Option<Arc<NamesrvCluster>>,
}

impl Namesrv {
    /// State over a loaded KV store and a configuration, with the default
    /// [`Limits`].
    pub fn new(config: NamesrvConfig, kv: KvStore) -> (Namesrv, Queues) {
        Namesrv::with_limits(config, kv, Limits::default())
    }

    /// State over a loaded KV store and a configuration, with `limits`.
    pub fn with_limits(config: NamesrvConfig, kv: KvStore, limits: Limits) -> (Namesrv, Queues) {
        kv.warn_over_quota(&limits);
        let metrics = NamesrvMetrics::default();
        let capacity = usize::try_from(config.unregister_broker_queue_capacity).unwrap_or(1);
        let (unregistrations, notifier, queues) =
            housekeeping::queues(capacity, metrics.refusals.clone());
        let routes = Arc::new(SharedRoutes::new());
        let kv = Arc::new(SharedKv::new(kv));
        let config = Arc::new(SharedConfig::new(config));
        let sources = push::Sources {
            routes: routes.clone(),
            kv: kv.clone(),
            config: config.clone(),
        };
        let push = Arc::new(RoutePush::new(sources, limits, metrics.refusals.clone()));
        let state = Namesrv {
            routes,
            kv,
            config,
            clock: Clock::start(),
            wall: WallClock::system(),
            unregistrations,
            notifier,
            connections: Arc::default(),
            limits,
            auth: Guard::disabled(rmq_auth::NAMESRV_REQUIREMENTS),
            outgoing_tls: None,
            route_snapshot: None,
            push,
            metrics,
            cluster: None,
        };
        (state, queues)
    }
}
