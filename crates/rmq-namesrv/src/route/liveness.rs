//! Unregistration, connection loss and expiry: Java's
//! `BrokerHousekeepingService` (connection events),
//! `RouteInfoManager.scanNotActiveBroker` (expiry) and
//! `BatchUnregistrationService` (the queue whose batches
//! `RouteInfoManager.unRegisterBroker` runs).
//!
//! Java decides a removal (a closed connection, an expired heartbeat) and
//! executes it later from a queue; a broker that re-registered in between is
//! then removed although it is alive (apache/rocketmq#11043). Here every
//! decided removal carries the table's registration sequence number at the
//! time it was decided, and is skipped if the broker registered again since.

use std::collections::{BTreeMap, BTreeSet};

use std::sync::Arc;

use super::register::MinIdNotification;
use super::table::{BrokerKey, LiveBroker, RouteTable};
use super::{perm, ConnId, Millis, RELAYED_CONN};

/// One queued unregistration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unregistration {
    /// (cluster, addr) of the broker.
    pub key: BrokerKey,
    /// Broker name, as the broker sent it or as found in the group table.
    pub broker_name: String,
    /// Broker id.
    pub broker_id: i64,
    /// Registration sequence number when the removal was decided: a live
    /// entry registered after it survives.
    pub fence: u64,
}

/// A broker whose heartbeat timed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired {
    /// The removal to queue.
    pub unregistration: Unregistration,
    /// Its connection, to close.
    pub conn: ConnId,
}

/// What an unregistration batch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnregisterOutcome {
    /// Broker addresses whose live entry was removed.
    pub removed_brokers: Vec<BrokerKey>,
    /// Removals skipped because the broker registered again after they were decided.
    pub fenced: Vec<BrokerKey>,
    /// Broker groups that disappeared.
    pub removed_groups: Vec<String>,
    /// Notifications to send.
    pub notifications: Vec<MinIdNotification>,
}

impl RouteTable {
    /// The unregistration for a broker found by (cluster, addr): the first
    /// member of a group of that cluster with that address. `None` if no
    /// group has it.
    pub fn unregistration_for(&self, key: &BrokerKey) -> Option<Unregistration> {
        self.groups
            .values()
            .filter(|group| group.cluster == key.cluster)
            .find_map(|group| {
                group
                    .addrs
                    .iter()
                    .find(|(_, addr)| **addr == key.addr)
                    .map(|(id, _)| Unregistration {
                        key: key.clone(),
                        broker_name: group.name.clone(),
                        broker_id: *id,
                        fence: self.generation,
                    })
            })
    }

    /// A connection closed: the unregistrations of every broker whose latest
    /// registration used it. Connections of clients, or an older connection of
    /// a broker that has re-registered since, give nothing.
    pub fn connection_closed(&self, conn: ConnId) -> Vec<Unregistration> {
        self.live
            .iter()
            .filter(|(_, live)| live.conn == conn && live.is_direct())
            .filter_map(|(key, _)| self.unregistration_for(key))
            .collect()
    }

    /// The expiry scan: brokers silent past their timeout. The live entries
    /// stay until the unregistrations run.
    pub fn expired(&self, now: Millis) -> Vec<Expired> {
        self.live
            .iter()
            .filter(|(_, live)| live.is_expired(now))
            .filter_map(|(key, live)| {
                self.unregistration_for(key).map(|unregistration| Expired {
                    unregistration,
                    conn: live.conn,
                })
            })
            .collect()
    }

    /// Runs a batch of unregistrations atomically, as Java's
    /// `RouteInfoManager.unRegisterBroker` runs the batches its
    /// `BatchUnregistrationService` drains: the live and filter-server
    /// entries go, each group loses every id at the address, empty groups
    /// leave their cluster and topics, and an acting-master group left
    /// without master loses write permission. An unregistration decided
    /// before its broker registered again is skipped (its `fence`).
    pub fn unregister_batch(
        &mut self,
        batch: &[Unregistration],
        notify_min_id: bool,
    ) -> UnregisterOutcome {
        let mut outcome = UnregisterOutcome::default();
        let mut removed_names = BTreeSet::new();
        let mut reduced_names = BTreeSet::new();
        // One notification per group, as Java's map keyed by broker name: a
        // later request of the same batch replaces the offline address.
        let mut pending_notify = BTreeMap::new();

        for request in batch {
            if self
                .live
                .get(&request.key)
                .is_some_and(|live| live.generation > request.fence)
            {
                outcome.fenced.push(request.key.clone());
                continue;
            }
            if self.live.remove(&request.key).is_some() {
                outcome.removed_brokers.push(request.key.clone());
            }
            self.filter_servers.remove(&request.key);

            let Some(group) = self.groups.get_mut(&request.broker_name) else {
                reduced_names.insert(request.broker_name.clone());
                continue;
            };
            let min_changed = group.min_id() == Some(request.broker_id);
            group.addrs.retain(|_, addr| *addr != request.key.addr);
            if group.addrs.is_empty() {
                self.groups.remove(&request.broker_name);
                self.tombstones.forget_group(&request.broker_name);
                if let Some(names) = self.clusters.get_mut(&request.key.cluster) {
                    names.remove(&request.broker_name);
                    if names.is_empty() {
                        self.clusters.remove(&request.key.cluster);
                    }
                }
                removed_names.insert(request.broker_name.clone());
            } else {
                reduced_names.insert(request.broker_name.clone());
                if min_changed {
                    pending_notify.insert(request.broker_name.clone(), request.key.addr.clone());
                }
            }
        }

        self.clean_topics(&removed_names, &reduced_names);
        outcome.removed_groups = removed_names.into_iter().collect();

        if notify_min_id {
            for (name, offline) in pending_notify {
                let Some(group) = self.groups.get(&name).filter(|g| g.enable_acting_master) else {
                    continue;
                };
                if let Some((&min_id, min_addr)) = group.addrs.iter().next() {
                    outcome.notifications.push(MinIdNotification {
                        min_broker_id: min_id,
                        min_broker_addr: min_addr.clone(),
                        offline_broker_addr: Some(offline),
                        ha_broker_addr: None,
                        targets: group.addrs.values().cloned().collect(),
                    });
                }
            }
        }
        outcome
    }

    /// Topic clean-up after a batch: queue data of removed groups goes; a
    /// reduced acting-master group without master loses write permission.
    fn clean_topics(&mut self, removed: &BTreeSet<String>, reduced: &BTreeSet<String>) {
        let read_only: BTreeSet<&String> = reduced
            .iter()
            .filter(|name| {
                self.groups
                    .get(*name)
                    .is_some_and(|group| group.enable_acting_master && group.lacks_master())
            })
            .collect();
        if removed.is_empty() && read_only.is_empty() {
            return;
        }
        self.topics.edit().retain(|_, queues| {
            queues.retain(|name, _| !removed.contains(&**name));
            for name in &read_only {
                if let Some(queue) = queues.get_mut(name.as_str()) {
                    queue.perm &= !perm::WRITE;
                }
            }
            !queues.is_empty()
        });
    }

    /// Keeps the broker at `key` as relayed from `from` instead of removing
    /// it: the cluster says another NameServer holds it directly. Its
    /// routes stay as they are; its liveness is that node's from now on.
    /// Nothing when it registered again after `fence` (as an unregistration
    /// would be skipped) or is not here. Returns whether it was demoted.
    pub fn demote(&mut self, key: &BrokerKey, from: Arc<str>, fence: u64) -> bool {
        match self.live.get_mut(key) {
            Some(live) if live.generation <= fence => {
                live.relayed_from = Some(from);
                live.provisional = false;
                live.conn = RELAYED_CONN;
                live.held_topics = None;
                true
            }
            _ => false,
        }
    }

    /// Whether the broker at `key` is held directly (registered by itself).
    pub fn is_direct(&self, key: &BrokerKey) -> bool {
        self.live.get(key).is_some_and(LiveBroker::is_direct)
    }

    /// Whether a broker with this key is live and uses `conn` (for logging).
    pub fn is_connection_of(&self, key: &BrokerKey, conn: ConnId) -> bool {
        self.live.get(key).is_some_and(|live| live.conn == conn)
    }

    /// Live entries and their expiry, for housekeeping logs.
    pub fn live_count(&self) -> usize {
        self.live.len()
    }

    /// Entries restored from the route snapshot whose broker has not
    /// registered since.
    pub fn provisional_count(&self) -> usize {
        self.live.values().filter(|live| live.provisional).count()
    }

    /// The last update time of a live broker.
    pub fn last_update(&self, key: &BrokerKey) -> Option<Millis> {
        self.live.get(key).map(|live| live.last_update)
    }
}
