//! `ControllerAgent`: one broker replica in controller mode, the
//! counterpart of Java's broker-side `ReplicasManager`: it joins the broker
//! set, heartbeats every controller node, takes
//! its role from the controller and re-registers with the NameServers
//! under that role.
//!
//! This module owns the agent's shared state and how a decision is carried
//! out; the periodic work is in `tasks`, receiving NOTIFY in `notice`.
//! A decision is accepted by [`ReplicaState`] and applied to the
//! [`Registrar`] under one lock, so two decisions racing (a notice and a
//! periodic sync) reach the registrar in epoch order; the NameServer
//! registration that follows runs on its own task.

use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use rmq_protocol::headers::BrokerHeartbeatRequestHeader;
use rmq_protocol::SyncStateSet;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;

use super::client::ControllerClient;
use super::config::{millis, ControllerModeConfig};
use super::identity::IdentityFiles;
use super::join::IdOrigin;
use super::notice::NoticeService;
use super::state::{ReplicaRole, ReplicaState, RoleChange, RoleDecision, Source, SyncStep};
use super::tasks;
use crate::error::ControllerError;
use crate::registrar::Registrar;
use crate::report::RegisterReport;

/// How far the start-up sequence (Java `ReplicasManager.startBasicService`:
/// the leader's address, a controller id and registration, then a master)
/// has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Phase {
    /// Looking for the controller leader.
    #[default]
    Initial,
    /// The leader is known; obtaining the id and registering with it.
    LeaderKnown,
    /// Registered with the controller; waiting for a master.
    Registered,
    /// A master is known: unfenced, heartbeating, syncing.
    Running,
    /// Stopped.
    Stopped,
}

/// Everything observable about the agent, as one value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AgentView {
    /// The controller broker id, once obtained.
    pub controller_id: Option<i64>,
    /// The role now.
    pub role: ReplicaRole,
    /// The newest master epoch accepted.
    pub master_epoch: i32,
    /// The sync-state set as last adopted (meaningful on the master).
    pub sync_state_set: SyncStateSet,
    /// The start-up phase.
    pub phase: Phase,
}

/// What the agent did; sent to the optional event channel.
#[derive(Debug)]
pub enum AgentEvent {
    /// The controller id is known.
    IdObtained {
        /// The id.
        controller_id: i64,
        /// Where it came from.
        origin: IdOrigin,
    },
    /// A role decision was accepted.
    RoleChanged(RoleChange),
    /// The master adopted a new sync-state set.
    SyncStateSetChanged(SyncStateSet),
    /// The NameServer registration after a role change finished.
    Registered(RegisterReport),
    /// The replica is unfenced: its periodic NameServer registrations run.
    Running,
    /// An attempt of the start-up sequence failed; it is retried.
    StartFailed(ControllerError),
}

/// The agent's state, shared by its tasks and the notice listener.
#[derive(Debug)]
pub(super) struct Inner {
    pub(super) registrar: Arc<Registrar>,
    pub(super) config: ControllerModeConfig,
    pub(super) client: ControllerClient,
    pub(super) files: IdentityFiles,
    state: Mutex<ReplicaState>,
    offsets: Mutex<(i64, i64)>,
    view: watch::Sender<AgentView>,
    events: Option<UnboundedSender<AgentEvent>>,
    /// Wakes the NameServer registration task (coalescing).
    pub(super) register_kick: Notify,
    /// Wakes the master's sync-state-set check.
    pub(super) sss_kick: Notify,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl Inner {
    pub(super) fn emit(&self, event: AgentEvent) {
        if let Some(tx) = &self.events {
            let _ = tx.send(event);
        }
    }

    pub(super) fn phase(&self) -> Phase {
        self.view.borrow().phase
    }

    pub(super) fn set_phase(&self, phase: Phase) {
        self.view
            .send_if_modified(|v| std::mem::replace(&mut v.phase, phase) != phase);
    }

    fn publish(&self, state: &ReplicaState) {
        self.view.send_if_modified(|v| {
            let before = v.clone();
            v.controller_id = state.controller_id();
            v.role = state.role().clone();
            v.master_epoch = state.master_epoch();
            v.sync_state_set = state.sync_state_set().clone();
            *v != before
        });
    }

    pub(super) fn set_controller_id(&self, id: i64) {
        let mut state = self.state.lock();
        state.set_controller_id(id);
        self.publish(&state);
    }

    pub(super) fn controller_id(&self) -> Option<i64> {
        self.state.lock().controller_id()
    }

    pub(super) fn role(&self) -> ReplicaRole {
        self.state.lock().role().clone()
    }

    pub(super) fn is_master(&self) -> bool {
        self.state.lock().is_master()
    }

    /// Runs `f` on the state; a change it accepts goes to the registrar and
    /// out as an event before the lock is released, so that racing
    /// decisions (a notice, a periodic sync) arrive in epoch order; the
    /// NameServer registration follows on its own task.
    fn decide<R>(
        &self,
        f: impl FnOnce(&mut ReplicaState) -> R,
        change_of: impl Fn(&R) -> Option<&RoleChange>,
    ) -> R {
        let mut state = self.state.lock();
        let result = f(&mut state);
        self.publish(&state);
        if let Some(change) = change_of(&result) {
            self.registrar.set_role(change.registrar_role());
            tracing::info!(broker = %self.registrar.config().broker_name, id = change.controller_id,
                from = %change.from, to = %change.to, epoch = change.master_epoch, source = %change.source,
                "role changed");
            self.emit(AgentEvent::RoleChanged(change.clone()));
            self.register_kick.notify_one();
            if change.to == ReplicaRole::Master {
                self.sss_kick.notify_one();
            }
        }
        result
    }

    /// Java's `changeBrokerRole` for a decision from `source`.
    pub(super) fn apply(&self, decision: &RoleDecision, source: Source) -> Option<RoleChange> {
        self.decide(|s| s.apply(decision, source), Option::as_ref)
    }

    /// A periodic GET_REPLICA_INFO answer.
    pub(super) fn apply_sync(&self, decision: &RoleDecision) -> SyncStep {
        let step = self.decide(
            |s| s.on_replica_info(decision),
            |step| match step {
                SyncStep::Changed(change) => Some(change),
                _ => None,
            },
        );
        if step == SyncStep::AdoptedSyncStateSet {
            self.emit(AgentEvent::SyncStateSetChanged(
                decision.sync_state_set.clone(),
            ));
        }
        step
    }

    /// The master's set as the controller confirmed it.
    pub(super) fn adopt_sync_state_set(&self, set: &SyncStateSet) {
        let adopted = {
            let mut state = self.state.lock();
            let adopted = state.adopt_sync_state_set(set);
            self.publish(&state);
            adopted
        };
        if adopted {
            self.emit(AgentEvent::SyncStateSetChanged(set.clone()));
        }
    }

    /// `(own id, master epoch, proposal)` when this replica is the master and
    /// `caught_up` changes its set.
    pub(super) fn proposal(
        &self,
        caught_up: impl IntoIterator<Item = i64>,
    ) -> Option<(i64, i32, SyncStateSet)> {
        let state = self.state.lock();
        let proposal = state.proposal(caught_up)?;
        Some((state.controller_id()?, state.master_epoch(), proposal))
    }

    /// The one-way BROKER_HEARTBEAT to every controller node (controller id,
    /// last epoch, max offset, election priority); `None` before the
    /// controller id is known.
    pub(super) fn heartbeat_header(&self) -> Option<BrokerHeartbeatRequestHeader> {
        let (id, epoch) = {
            let state = self.state.lock();
            (state.controller_id()?, state.last_epoch())
        };
        let (max_offset, confirm_offset) = *self.offsets.lock();
        let broker = self.registrar.config();
        Some(BrokerHeartbeatRequestHeader {
            cluster_name: broker.cluster_name.clone(),
            broker_addr: broker.broker_addr.clone(),
            broker_name: broker.broker_name.clone(),
            broker_id: Some(id),
            epoch: Some(epoch),
            max_offset: Some(max_offset),
            confirm_offset: Some(confirm_offset),
            heartbeat_timeout_mills: Some(millis(self.config.controller_heart_beat_timeout)),
            election_priority: Some(self.config.broker_election_priority),
        })
    }
}

/// One broker replica in controller mode. Dropping it (or
/// [`ControllerAgent::stop`]) stops its tasks and closes its controller
/// connections, which the controller sees as the replica dying; the
/// registrar and its schedule are the caller's.
#[derive(Debug)]
pub struct ControllerAgent {
    inner: Arc<Inner>,
}

impl ControllerAgent {
    /// Fences `registrar` (no periodic NameServer registration until a
    /// master is known) and starts the agent's tasks on the current tokio
    /// runtime: the start-up sequence, heartbeats, leader refresh,
    /// replica-info sync, the master's sync-state-set check and the
    /// role-change registrations. `events` receives what happens.
    ///
    /// The registrar's broker address is where the controller sends
    /// NOTIFY_BROKER_ROLE_CHANGED: serve [`Self::notice_service`] there
    /// (see [`serve_notices`](super::serve_notices)), or rely on the
    /// periodic sync alone.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn start(
        registrar: Arc<Registrar>,
        config: ControllerModeConfig,
        events: Option<UnboundedSender<AgentEvent>>,
    ) -> ControllerAgent {
        registrar.set_isolated(true);
        let files = IdentityFiles::new(
            config.store_path_broker_identity.clone(),
            config.temp_identity_path(),
        );
        let inner = Arc::new(Inner {
            client: ControllerClient::new(&config),
            registrar,
            config,
            files,
            state: Mutex::new(ReplicaState::new()),
            offsets: Mutex::new((0, 0)),
            view: watch::Sender::new(AgentView::default()),
            events,
            register_kick: Notify::new(),
            sss_kick: Notify::new(),
            tasks: Mutex::new(Vec::new()),
        });
        let handles = tasks::spawn_all(&inner);
        *inner.tasks.lock() = handles;
        ControllerAgent { inner }
    }

    /// The registrar the agent drives.
    pub fn registrar(&self) -> &Arc<Registrar> {
        &self.inner.registrar
    }

    /// The options.
    pub fn config(&self) -> &ControllerModeConfig {
        &self.inner.config
    }

    /// Everything observable, now.
    pub fn view(&self) -> AgentView {
        self.inner.view.borrow().clone()
    }

    /// A receiver that sees every change of [`Self::view`].
    pub fn watch(&self) -> watch::Receiver<AgentView> {
        self.inner.view.subscribe()
    }

    /// The role now.
    pub fn role(&self) -> ReplicaRole {
        self.inner.view.borrow().role.clone()
    }

    /// The newest master epoch accepted (0 before any).
    pub fn master_epoch(&self) -> i32 {
        self.inner.view.borrow().master_epoch
    }

    /// The controller broker id, once obtained.
    pub fn controller_id(&self) -> Option<i64> {
        self.inner.view.borrow().controller_id
    }

    /// The sync-state set as last adopted.
    pub fn sync_state_set(&self) -> SyncStateSet {
        self.inner.view.borrow().sync_state_set.clone()
    }

    /// The start-up phase.
    pub fn phase(&self) -> Phase {
        self.inner.phase()
    }

    /// The controller leader's address as last learnt.
    pub fn controller_leader(&self) -> Option<String> {
        self.inner.client.leader()
    }

    /// Sets the offsets reported in heartbeats (a simulated broker has no
    /// commit log; both start at 0). The controller elects, among the
    /// in-sync replicas, the one with the highest epoch, then offset.
    pub fn set_offsets(&self, max_offset: i64, confirm_offset: i64) {
        *self.inner.offsets.lock() = (max_offset, confirm_offset);
    }

    /// Feeds in a NOTIFY_BROKER_ROLE_CHANGED received elsewhere; what it
    /// changed, if its epoch was newer.
    pub fn role_notice(&self, decision: &RoleDecision) -> Option<RoleChange> {
        self.inner.apply(decision, Source::Notify)
    }

    /// A transport service answering NOTIFY_BROKER_ROLE_CHANGED for this
    /// agent (it holds the agent weakly: after a stop, notices are ignored).
    pub fn notice_service(&self) -> NoticeService {
        NoticeService::new(Arc::downgrade(&self.inner))
    }

    /// Stops the tasks and closes the controller connections; the
    /// registrar is left as it is (the caller unregisters or not).
    pub async fn stop(self) {
        let tasks = self.halt();
        for task in tasks {
            let _ = task.await;
        }
        // A task may have reconnected between the close and its abort.
        self.inner.client.close();
    }

    fn halt(&self) -> Vec<JoinHandle<()>> {
        self.inner.set_phase(Phase::Stopped);
        let tasks = std::mem::take(&mut *self.inner.tasks.lock());
        for task in &tasks {
            task.abort();
        }
        self.inner.client.close();
        tasks
    }
}

impl Drop for ControllerAgent {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The agent's state for a notice listener.
pub(super) type WeakInner = Weak<Inner>;
