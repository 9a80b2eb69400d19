//! One controller node: the Raft handle, the applied state, this node's
//! liveness table and configuration, and its request driver — the one
//! path by which a request changes anything: decided on the serving leader,
//! committed through Raft (which applies it), then answered (`drive.rs`).
//!
//! Everything here does I/O (openraft, redb, tokio, sockets); what it
//! decides and in which order comes from [`crate::core`].

pub(crate) mod config_requests;
mod drive;
pub mod http;
pub mod metrics;
pub mod raft;
pub mod server;
mod service;
pub(crate) mod tasks;

pub use service::ControllerService;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::time::Instant;

use openraft::{BasicNode, ServerState};
use rmq_transport::tls::TlsClient;

use crate::config::{ControllerConfig, Peer};
use crate::core::driver::{Driver, Ticket};
use crate::node::raft::network::PeerNetwork;
use crate::node::raft::store::{self, Applied};
use crate::node::raft::{NodeId, Raft};
use crate::{Answer, LiveTable, Millis};

/// Raft timing: a leader heartbeat every 300 ms, an election after 1–2 s of
/// silence (DLedger's defaults are about twice as slow).
fn raft_config(group: &str) -> openraft::Config {
    openraft::Config {
        cluster_name: group.to_owned(),
        heartbeat_interval: 300,
        election_timeout_min: 1_000,
        election_timeout_max: 2_000,
        ..openraft::Config::default()
    }
}

/// A running controller node.
pub struct ControllerNode {
    raft: Raft,
    state: Arc<RwLock<Applied>>,
    live: Mutex<LiveTable>,
    config: RwLock<ControllerConfig>,
    me: Peer,
    peers: Vec<Peer>,
    group: String,
    origin: Instant,
    /// Turns, commit timeouts, serving leadership, the node's own
    /// elections ([`crate::core::driver`]).
    driver: Mutex<Driver>,
    /// The requests waiting for their answer, by the driver's ticket.
    waiting: Mutex<HashMap<Ticket, tokio::sync::oneshot::Sender<Answer>>>,
    /// Set once the node shuts down: it serves no more decisions, so the
    /// connections its own shutdown closes are not taken for dead brokers.
    stopping: std::sync::atomic::AtomicBool,
    /// Gone once Raft dropped the store: a shutdown waits for it.
    store: std::sync::Weak<redb::Database>,
    /// Leader requests admitted at once (`controllerRequestThreadPoolQueueCapacity`);
    /// more are answered SYSTEM_BUSY, as Java's full request queue is.
    admitted: Arc<tokio::sync::Semaphore>,
    /// TLS for the connections the node opens (`None`: plain).
    outgoing_tls: Option<TlsClient>,
    /// What the node counts (`GET /metrics`).
    metrics: crate::node::metrics::ControllerMetrics,
}

impl std::fmt::Debug for ControllerNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerNode")
            .field("me", &self.me)
            .field("group", &self.group)
            .finish_non_exhaustive()
    }
}

/// Why a node could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The configuration.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The Raft store.
    #[error(transparent)]
    Store(#[from] store::OpenError),
    /// openraft refused to start.
    #[error("cannot start Raft: {0}")]
    Raft(String),
}

impl ControllerNode {
    /// Opens the store under `store_dir`, starts Raft with the configured
    /// peers, and bootstraps the group on its first start.
    ///
    /// # Errors
    /// A configuration the node cannot run with, a store it cannot open, or
    /// Raft refusing to start.
    pub async fn start(
        config: ControllerConfig,
        store_dir: &Path,
    ) -> Result<Arc<ControllerNode>, StartError> {
        ControllerNode::start_with_tls(config, store_dir, None).await
    }

    /// As [`ControllerNode::start`], with `tls` for the connections the node
    /// opens: Raft traffic to its peers and role-change notices to brokers
    /// (`None`: plain).
    pub async fn start_with_tls(
        config: ControllerConfig,
        store_dir: &Path,
        tls: Option<TlsClient>,
    ) -> Result<Arc<ControllerNode>, StartError> {
        let (peers, me) = config.peers()?;
        // Java overwrites listenPort with the self peer's port; GET_CONTROLLER_CONFIG
        // then shows where the node listens.
        let mut config = config;
        if let Some(port) = me
            .addr
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse::<i32>().ok())
        {
            config.listen_port = port;
        }
        let capacity = usize::try_from(config.controller_request_thread_pool_queue_capacity)
            .unwrap_or(0)
            .max(1);
        let group = config.controller_dleger_group.clone().unwrap_or_default();
        // A store closed a moment ago (a restart within this process) may
        // still be releasing its file lock.
        let mut attempts = 0;
        let (log, machine) = loop {
            match store::open(store_dir) {
                Err(store::OpenError::AlreadyOpen(_)) if attempts < 50 => {
                    attempts += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                opened => break opened?,
            }
        };
        let state = machine.state();
        let store = log.watch_close();
        let raft_config = Arc::new(
            raft_config(&group)
                .validate()
                .map_err(|e| StartError::Raft(e.to_string()))?,
        );
        let network = PeerNetwork { tls: tls.clone() };
        let raft = Raft::new(me.node_id, raft_config, network, log, machine)
            .await
            .map_err(|e| StartError::Raft(e.to_string()))?;
        if !raft
            .is_initialized()
            .await
            .map_err(|e| StartError::Raft(e.to_string()))?
        {
            let members: std::collections::BTreeMap<NodeId, BasicNode> = peers
                .iter()
                .map(|p| (p.node_id, BasicNode::new(&p.addr)))
                .collect();
            // Every node of a new group does this with the same members;
            // openraft accepts that, and only one of them can win.
            if let Err(error) = raft.initialize(members).await {
                tracing::debug!(%error, "group already initialised by a peer");
            }
        }
        let node = Arc::new(ControllerNode {
            raft,
            state,
            live: Mutex::new(LiveTable::new()),
            config: RwLock::new(config),
            me,
            peers,
            group,
            origin: Instant::now(),
            driver: Mutex::new(Driver::new(Millis(0))),
            waiting: Mutex::new(HashMap::new()),
            stopping: std::sync::atomic::AtomicBool::new(false),
            store,
            admitted: Arc::new(tokio::sync::Semaphore::new(capacity)),
            outgoing_tls: tls,
            metrics: crate::node::metrics::ControllerMetrics::default(),
        });
        tokio::spawn(track_leadership(node.clone()));
        tokio::spawn(crate::node::metrics::count_leader_changes(node.clone()));
        Ok(node)
    }

    /// Milliseconds since this node started: the controller's clock.
    pub fn now(&self) -> Millis {
        Millis(u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX))
    }

    /// The Raft handle.
    pub fn raft(&self) -> &Raft {
        &self.raft
    }

    /// TLS for the connections the node opens (`None`: plain).
    pub fn outgoing_tls(&self) -> Option<&TlsClient> {
        self.outgoing_tls.as_ref()
    }

    /// This node's peer entry.
    pub fn me(&self) -> &Peer {
        &self.me
    }

    /// Every peer.
    pub fn peers(&self) -> &[Peer] {
        &self.peers
    }

    /// `controllerDLegerGroup`.
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The configuration (read it, never hold it across an await).
    pub fn config(&self) -> std::sync::RwLockReadGuard<'_, ControllerConfig> {
        self.config.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces configuration values (UPDATE_CONTROLLER_CONFIG).
    pub fn update_config(&self, change: impl FnOnce(&mut ControllerConfig)) {
        change(&mut self.config.write().unwrap_or_else(|e| e.into_inner()));
    }

    /// The liveness table (never hold it across an await).
    pub fn live(&self) -> std::sync::MutexGuard<'_, LiveTable> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The applied state (never hold it across an await).
    pub fn applied(&self) -> std::sync::RwLockReadGuard<'_, Applied> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    /// What the node counts.
    pub fn metrics(&self) -> &crate::node::metrics::ControllerMetrics {
        &self.metrics
    }

    /// The peer Raft names as leader, if any.
    pub fn leader(&self) -> Option<&Peer> {
        let leader = self.raft.metrics().borrow().current_leader?;
        self.peers.iter().find(|p| p.node_id == leader)
    }

    /// Stops serving as leader for good (the first step of a shutdown).
    pub fn stop_serving(self: &Arc<Self>) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.step(|driver, _| driver.stop_serving());
    }

    fn is_stopping(&self) -> bool {
        self.stopping.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Stops Raft, and returns once its store is closed (within 5 s).
    pub async fn shutdown(self: &Arc<Self>) {
        self.stop_serving();
        if let Err(error) = self.raft.shutdown().await {
            tracing::warn!(%error, "Raft did not shut down cleanly");
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while self.store.strong_count() > 0 {
            if tokio::time::Instant::now() > deadline {
                tracing::warn!("the Raft store is still open 5 s after shutdown");
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Follows Raft's view of leadership: a node that becomes leader serves
/// once the first entry of its term is committed (so it has applied
/// everything its predecessors committed); one that loses leadership stops
/// serving at once.
async fn track_leadership(node: Arc<ControllerNode>) {
    let mut metrics = node.raft.metrics();
    loop {
        let leading = {
            let m = metrics.borrow_and_update();
            m.state == ServerState::Leader
                && m.current_leader == Some(node.me.node_id)
                && m.running_state.is_ok()
        };
        let serving = node.serving_since().is_some();
        if node.is_stopping() {
            return;
        }
        if leading && !serving {
            match node.raft.ensure_linearizable().await {
                Ok(_) if !node.is_stopping() => {
                    node.step(|driver, env| driver.start_serving(env));
                    tracing::info!(node = %node.me.id, group = %node.group, "this controller is the leader");
                }
                Ok(_) => return,
                Err(error) => tracing::debug!(%error, "not yet a serving leader"),
            }
        } else if !leading && serving {
            node.step(|driver, _| driver.stop_serving());
            tracing::info!(node = %node.me.id, "this controller is no longer the leader");
        }
        if metrics.changed().await.is_err() {
            // Raft stopped (a shutdown, or a storage error it cannot go on
            // after): this node leads no more.
            node.step(|driver, _| driver.stop_serving());
            if !node.is_stopping() {
                tracing::error!(node = %node.me.id, "Raft stopped; this controller serves no decisions until it is restarted");
            }
            return;
        }
    }
}
