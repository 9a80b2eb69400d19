//! The changes of the replicated state, one for each of Java's event
//! classes (`ApplyBrokerIdEvent`, `UpdateBrokerAddressEvent`,
//! `ElectMasterEvent`, `AlterSyncStateSetEvent`, `CleanBrokerDataEvent`).
//! The Raft log carries these, never requests: a decision is taken once,
//! on the leader, and every node applies its events in log order.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// One change of [`crate::Replicas`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Event {
    /// A broker got a controller id (`ApplyBrokerIdEvent`); creates the set
    /// on its first id.
    #[serde(rename_all = "camelCase")]
    ApplyBrokerId {
        /// The cluster.
        cluster: String,
        /// The broker set.
        broker_name: String,
        /// The broker's address, from its check code.
        broker_addr: String,
        /// `<brokerAddr>;<wall ms>`, kept to recognise a repeated apply.
        check_code: String,
        /// The id.
        broker_id: i64,
    },
    /// A registered replica moved to another address (`UpdateBrokerAddressEvent`).
    #[serde(rename_all = "camelCase")]
    UpdateBrokerAddress {
        /// The broker set.
        broker_name: String,
        /// The replica.
        broker_id: i64,
        /// Its new address.
        broker_addr: String,
    },
    /// An election's result (`ElectMasterEvent`): `Some(id)` is the new
    /// master (master epoch + 1, SSS = {id}, SSS epoch + 1); `None` means the
    /// master is gone and nobody could replace it (master epoch + 1, which
    /// fences the old master; the SSS is kept).
    #[serde(rename_all = "camelCase")]
    ElectMaster {
        /// The broker set.
        broker_name: String,
        /// The new master.
        new_master: Option<i64>,
    },
    /// The master changed the SSS (`AlterSyncStateSetEvent`); SSS epoch + 1.
    #[serde(rename_all = "camelCase")]
    AlterSyncStateSet {
        /// The broker set.
        broker_name: String,
        /// The new SSS.
        sync_state_set: BTreeSet<i64>,
    },
    /// An operator removed replicas, or the whole set (`CleanBrokerDataEvent`).
    #[serde(rename_all = "camelCase")]
    CleanBrokerData {
        /// The broker set.
        broker_name: String,
        /// The replicas to remove; `None`: the whole set.
        broker_ids: Option<BTreeSet<i64>>,
    },
}

impl Event {
    /// The broker set the event is about.
    pub fn broker_name(&self) -> &str {
        match self {
            Event::ApplyBrokerId { broker_name, .. }
            | Event::UpdateBrokerAddress { broker_name, .. }
            | Event::ElectMaster { broker_name, .. }
            | Event::AlterSyncStateSet { broker_name, .. }
            | Event::CleanBrokerData { broker_name, .. } => broker_name,
        }
    }
}
