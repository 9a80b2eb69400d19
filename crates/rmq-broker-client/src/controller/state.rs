//! The replica's view of its broker set and the role rules of Java's
//! `ReplicasManager` (`changeToMaster`, `changeToSlave`, the periodic
//! GET_REPLICA_INFO of `schedulingSyncBrokerMetadata`, the sync-state-set
//! check): which controller
//! decision to accept, what role follows, what a master proposes as its
//! sync-state set.
//!
//! Plain data with synchronous methods, no I/O: the agent feeds in what the
//! controller said (REGISTER, ELECT, NOTIFY, GET_REPLICA_INFO answers) and
//! carries out the [`RoleChange`] it gets back. Nothing here depends on the
//! clock: a decision is ordered by its master epoch alone.

use std::collections::BTreeSet;
use std::fmt;

use rmq_protocol::SyncStateSet;

use crate::role::{MasterInfo, Role};

/// What the controller said about the set's master, whichever request
/// carried it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RoleDecision {
    /// The master's controller id; `None` while the set has none (alive).
    pub master_id: Option<i64>,
    /// The master's address.
    pub master_addr: Option<String>,
    /// The master epoch the decision belongs to.
    pub master_epoch: i32,
    /// The sync-state set and its epoch.
    pub sync_state_set: SyncStateSet,
}

impl RoleDecision {
    /// The master's address when it is a usable one.
    fn addr(&self) -> Option<&str> {
        self.master_addr.as_deref().filter(|a| !a.is_empty())
    }
}

/// Where a decision came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// The CONTROLLER_REGISTER_BROKER answer.
    Register,
    /// The CONTROLLER_ELECT_MASTER answer (SUCCESS or MASTER_STILL_EXIST).
    Elect,
    /// A NOTIFY_BROKER_ROLE_CHANGED from the controller.
    Notify,
    /// The periodic CONTROLLER_GET_REPLICA_INFO.
    Sync,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Register => "register",
            Source::Elect => "elect",
            Source::Notify => "notify",
            Source::Sync => "sync",
        })
    }
}

/// The role of this replica.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ReplicaRole {
    /// No decision accepted yet: the broker is fenced and registers nowhere.
    #[default]
    Unknown,
    /// The set's master: NameServer `brokerId` 0.
    Master,
    /// A slave of `master_id`: NameServer `brokerId` = own controller id.
    Slave {
        /// The master's controller id.
        master_id: i64,
        /// The master's address.
        master_addr: String,
    },
}

impl fmt::Display for ReplicaRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplicaRole::Unknown => f.write_str("unknown"),
            ReplicaRole::Master => f.write_str("master"),
            ReplicaRole::Slave { master_id, .. } => write!(f, "slave(of {master_id})"),
        }
    }
}

/// An accepted decision: the caller re-registers with every NameServer
/// under [`RoleChange::registrar_role`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleChange {
    /// The role before.
    pub from: ReplicaRole,
    /// The role now (may equal `from`: same role, newer epoch).
    pub to: ReplicaRole,
    /// The new master epoch.
    pub master_epoch: i32,
    /// This replica's controller id.
    pub controller_id: i64,
    /// What carried the decision.
    pub source: Source,
}

impl RoleChange {
    /// What the NameServers get: id 0 for the master, the controller id for
    /// a slave (with its master's address), and a DataVersion bump with
    /// `stateVersion` = master epoch either way (so a NameServer keeps the
    /// newer master when two claim id 0).
    pub fn registrar_role(&self) -> Role {
        let state_version = Some(i64::from(self.master_epoch));
        match &self.to {
            ReplicaRole::Slave { master_addr, .. } => Role {
                broker_id: self.controller_id,
                master: MasterInfo {
                    master_addr: Some(master_addr.clone()),
                    ha_server_addr: None,
                },
                state_version,
            },
            ReplicaRole::Master | ReplicaRole::Unknown => Role {
                broker_id: 0,
                master: MasterInfo::default(),
                state_version,
            },
        }
    }
}

/// What a periodic GET_REPLICA_INFO answer asks of the replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncStep {
    /// Nothing new.
    Nothing,
    /// A newer decision was accepted.
    Changed(RoleChange),
    /// The controller has a newer epoch but no master: ask for an election.
    Elect,
    /// The master adopted a newer sync-state set.
    AdoptedSyncStateSet,
}

/// One replica's view: its controller id, role, the master epoch it knows
/// and (as master) its sync-state set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplicaState {
    controller_id: Option<i64>,
    role: ReplicaRole,
    master_epoch: i32,
    sync_state_set: SyncStateSet,
}

impl ReplicaState {
    /// A replica that knows nothing yet (epoch 0, as a restarted Java broker).
    pub fn new() -> ReplicaState {
        ReplicaState::default()
    }

    /// Records the controller id obtained from the controller or the identity file.
    pub fn set_controller_id(&mut self, id: i64) {
        self.controller_id = Some(id);
    }

    /// The controller id, once known.
    pub fn controller_id(&self) -> Option<i64> {
        self.controller_id
    }

    /// The role now.
    pub fn role(&self) -> &ReplicaRole {
        &self.role
    }

    /// Whether this replica is the master.
    pub fn is_master(&self) -> bool {
        self.role == ReplicaRole::Master
    }

    /// The newest master epoch accepted (0 before any).
    pub fn master_epoch(&self) -> i32 {
        self.master_epoch
    }

    /// The sync-state set as this replica last adopted it (a master's own;
    /// a slave keeps what it had, as in Java).
    pub fn sync_state_set(&self) -> &SyncStateSet {
        &self.sync_state_set
    }

    /// The epoch of the last epoch-file entry Java would report in
    /// heartbeats: the accepted master epoch, −1 before any.
    pub fn last_epoch(&self) -> i32 {
        if self.role == ReplicaRole::Unknown && self.master_epoch == 0 {
            -1
        } else {
            self.master_epoch
        }
    }

    /// Java's `changeBrokerRole`: accepts `decision` only if it names a
    /// master and its epoch is newer than the known one, and only once the
    /// controller id is known. A slave decision needs the master's address.
    pub fn apply(&mut self, decision: &RoleDecision, source: Source) -> Option<RoleChange> {
        let own = self.controller_id?;
        let master = decision.master_id?;
        if decision.master_epoch <= self.master_epoch {
            return None;
        }
        let to = if master == own {
            ReplicaRole::Master
        } else {
            ReplicaRole::Slave {
                master_id: master,
                master_addr: decision.addr()?.to_owned(),
            }
        };
        if to == ReplicaRole::Master {
            self.adopt_sync_state_set(&decision.sync_state_set);
        }
        self.master_epoch = decision.master_epoch;
        let from = std::mem::replace(&mut self.role, to.clone());
        Some(RoleChange {
            from,
            to,
            master_epoch: decision.master_epoch,
            controller_id: own,
            source,
        })
    }

    /// What a periodic GET_REPLICA_INFO answer means (Java
    /// `ReplicasManager.schedulingSyncBrokerMetadata`): a newer epoch
    /// with a master is a role decision, a newer epoch without one asks for
    /// an election, the same epoch may carry a newer set for the master.
    pub fn on_replica_info(&mut self, decision: &RoleDecision) -> SyncStep {
        if decision.master_epoch > self.master_epoch {
            if decision.master_id.is_some() && decision.addr().is_some() {
                return self
                    .apply(decision, Source::Sync)
                    .map_or(SyncStep::Nothing, SyncStep::Changed);
            }
            return SyncStep::Elect;
        }
        if decision.master_epoch == self.master_epoch
            && self.is_master()
            && self.adopt_sync_state_set(&decision.sync_state_set)
        {
            return SyncStep::AdoptedSyncStateSet;
        }
        SyncStep::Nothing
    }

    /// Adopts `set` if its epoch is newer (Java's `changeSyncStateSet`);
    /// whether it did.
    pub fn adopt_sync_state_set(&mut self, set: &SyncStateSet) -> bool {
        if set.sync_state_set_epoch > self.sync_state_set.sync_state_set_epoch {
            self.sync_state_set = set.clone();
            true
        } else {
            false
        }
    }

    /// The master's proposal for its sync-state set (Java's HA service decides
    /// who caught up; here the caller says so): itself
    /// plus every replica in `caught_up`, carrying the current set's epoch as
    /// CONTROLLER_ALTER_SYNC_STATE_SET expects. `None` when this replica is
    /// not the master or the set would not change.
    pub fn proposal(&self, caught_up: impl IntoIterator<Item = i64>) -> Option<SyncStateSet> {
        let own = self.controller_id?;
        if !self.is_master() {
            return None;
        }
        let mut set: BTreeSet<i64> = caught_up.into_iter().collect();
        set.insert(own);
        if set == self.sync_state_set.sync_state_set {
            return None;
        }
        Some(SyncStateSet {
            sync_state_set: set,
            sync_state_set_epoch: self.sync_state_set.sync_state_set_epoch,
        })
    }
}

#[cfg(test)]
mod tests;
