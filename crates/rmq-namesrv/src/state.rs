//! The NameServer's shared state: one lock per aggregate (routes, KV,
//! configuration), never held across an `.await`, plus the queues that
//! carry work to the background tasks.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use rmq_transport::tls::TlsClient;
use rmq_transport::ConnectionHandle;
use tokio::sync::mpsc;

use crate::clock::Clock;
use crate::config::NamesrvConfig;
use crate::kv::KvStore;
use crate::limits::Limits;
use crate::metrics::{NamesrvMetrics, RemovalReason};
use crate::push::RoutePush;
use crate::route::{ConnId, MinIdNotification, SharedRoutes, Unregistration};
use crate::route_snapshot::SnapshotWriter;
use crate::security::Guard;

/// Everything the request handlers share.
#[derive(Debug)]
pub struct Namesrv {
    /// Route tables, with the cache of encoded route bodies.
    pub routes: SharedRoutes,
    /// KV store (durable). Readers never wait for a disk write: writers
    /// stage on a copy under `kv_write` and swap it in once it is on disk.
    pub kv: RwLock<KvStore>,
    /// Serializes KV writers.
    pub kv_write: Mutex<()>,
    /// Current configuration; dynamic options change through UPDATE_NAMESRV_CONFIG.
    pub config: RwLock<NamesrvConfig>,
    /// Keys UPDATE_NAMESRV_CONFIG refuses, fixed at start-up.
    pub black_list: Vec<String>,
    /// Serializes config updates with their persistence, so the file always
    /// holds the latest update.
    pub config_write: Mutex<()>,
    /// Monotonic time since start.
    pub clock: Clock,
    /// Batch unregistration queue (bounded, `unRegisterBrokerQueueCapacity`).
    pub unregistrations: mpsc::Sender<(Unregistration, RemovalReason)>,
    /// Min-broker-id notifications to send (outside every lock).
    pub notifications: mpsc::UnboundedSender<MinIdNotification>,
    /// Open connections, so an expired broker's connection can be closed.
    pub connections: Mutex<HashMap<ConnId, ConnectionHandle>>,
    /// Bounds on request contents (topics per registration, KV quotas),
    /// fixed at start-up.
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
    pub push: RoutePush,
    /// What the NameServer counts (`GET /metrics`).
    pub metrics: NamesrvMetrics,
}

/// The receiving ends of the state's queues, for the background tasks.
#[derive(Debug)]
pub struct Queues {
    /// Unregistrations to run in batches, with why each was decided.
    pub unregistrations: mpsc::Receiver<(Unregistration, RemovalReason)>,
    /// Notifications to send.
    pub notifications: mpsc::UnboundedReceiver<MinIdNotification>,
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
        let capacity = usize::try_from(config.unregister_broker_queue_capacity)
            .unwrap_or(1)
            .max(1);
        let (unregister_tx, unregister_rx) = mpsc::channel(capacity);
        let (notify_tx, notify_rx) = mpsc::unbounded_channel();
        let state = Namesrv {
            routes: SharedRoutes::new(),
            kv: RwLock::new(kv),
            kv_write: Mutex::new(()),
            black_list: config.black_list(),
            config: RwLock::new(config),
            config_write: Mutex::new(()),
            clock: Clock::start(),
            unregistrations: unregister_tx,
            notifications: notify_tx,
            connections: Mutex::new(HashMap::new()),
            limits,
            auth: Guard::disabled(rmq_auth::NAMESRV_REQUIREMENTS),
            outgoing_tls: None,
            route_snapshot: None,
            push: RoutePush::new(),
            metrics: NamesrvMetrics::default(),
        };
        (
            state,
            Queues {
                unregistrations: unregister_rx,
                notifications: notify_rx,
            },
        )
    }

    /// Queues an unregistration decided for `reason`; `false` when the
    /// queue is full.
    pub fn submit_unregistration(
        &self,
        unregistration: Unregistration,
        reason: RemovalReason,
    ) -> bool {
        match self.unregistrations.try_send((unregistration, reason)) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full((dropped, _))) => {
                self.metrics
                    .refusals
                    .refused(crate::metrics::refusal::UNREGISTRATION_QUEUE_FULL);
                tracing::warn!(broker = %dropped.key.addr, cluster = %dropped.key.cluster, "unregistration queue full, dropping");
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    /// Closes a connection if it is still open (an expired broker's, as Java does).
    pub fn close_connection(&self, conn: ConnId) {
        if let Some(handle) = self.connections.lock().get(&conn) {
            handle.close();
        }
    }

    /// Hands notifications to the sender task.
    pub fn notify(&self, notifications: Vec<MinIdNotification>) {
        for notification in notifications {
            let _ = self.notifications.send(notification);
        }
    }
}
