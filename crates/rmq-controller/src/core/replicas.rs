//! The replicated state: every broker set's replicas, master, epochs and
//! SSS (Java's `ReplicasInfoManager`), changed only by [`Replicas::apply`].
//!
//! Java keeps two maps per set (`BrokerReplicaInfo`, `SyncStateInfo`) that
//! can drift apart: a clean that empties the SSS removes one and keeps the
//! other. Here a set is one value, present or absent as a whole.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::Event;

/// The first controller id of a set (Java's `FIRST_BROKER_CONTROLLER_ID`).
pub const FIRST_BROKER_ID: i64 = 1;

/// One registered replica.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Replica {
    /// Its address (`ip:port`), as it last registered.
    pub addr: String,
    /// The check code it applied for its id with (`<addr>;<wall ms>`).
    pub check_code: String,
}

/// One broker set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokerSet {
    /// The cluster its first replica named.
    pub cluster: String,
    /// The set's `brokerName`.
    pub name: String,
    /// The id offered to the next broker that joins; always above every id
    /// ever applied, so ids are never reused.
    pub next_id: i64,
    /// Registered replicas by controller id.
    pub replicas: BTreeMap<i64, Replica>,
    /// The master's controller id.
    pub master: Option<i64>,
    /// Fences stale masters: grows with every election (or loss of the
    /// master); 0 before the first election.
    pub master_epoch: i32,
    /// The master and the replicas in sync with it.
    pub sync_state_set: BTreeSet<i64>,
    /// Versions the SSS (optimistic concurrency for ALTER_SYNC_STATE_SET).
    pub sync_state_set_epoch: i32,
}

impl BrokerSet {
    fn new(cluster: &str, name: &str) -> BrokerSet {
        BrokerSet {
            cluster: cluster.to_owned(),
            name: name.to_owned(),
            next_id: FIRST_BROKER_ID,
            replicas: BTreeMap::new(),
            master: None,
            master_epoch: 0,
            sync_state_set: BTreeSet::new(),
            sync_state_set_epoch: 0,
        }
    }

    /// The address of replica `id`.
    pub fn addr(&self, id: i64) -> Option<&str> {
        self.replicas.get(&id).map(|r| r.addr.as_str())
    }

    /// The master's address.
    pub fn master_addr(&self) -> Option<&str> {
        self.master.and_then(|id| self.addr(id))
    }

    /// Every registered id → address.
    pub fn addrs(&self) -> BTreeMap<i64, String> {
        self.replicas
            .iter()
            .map(|(id, r)| (*id, r.addr.clone()))
            .collect()
    }
}

/// Every broker set, by name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Replicas {
    sets: BTreeMap<String, BrokerSet>,
}

impl Replicas {
    /// No broker sets.
    pub fn new() -> Replicas {
        Replicas::default()
    }

    /// The set called `name`.
    pub fn get(&self, name: &str) -> Option<&BrokerSet> {
        self.sets.get(name)
    }

    /// Every set, by name.
    pub fn sets(&self) -> impl Iterator<Item = &BrokerSet> {
        self.sets.values()
    }

    /// How many sets there are.
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// Whether there is no set.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// Applies one committed event. Deterministic and total: an event about
    /// a set that is gone changes nothing (only ApplyBrokerId creates sets).
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::ApplyBrokerId {
                cluster,
                broker_name,
                broker_addr,
                check_code,
                broker_id,
            } => {
                let set = self
                    .sets
                    .entry(broker_name.clone())
                    .or_insert_with(|| BrokerSet::new(cluster, broker_name));
                set.replicas.entry(*broker_id).or_insert_with(|| Replica {
                    addr: broker_addr.clone(),
                    check_code: check_code.clone(),
                });
                // Java sets next = next + 1, so an id applied out of order
                // (say 5 while next is 2) is offered again later.
                set.next_id = set.next_id.max(broker_id.saturating_add(1));
            }
            Event::UpdateBrokerAddress {
                broker_name,
                broker_id,
                broker_addr,
            } => {
                if let Some(replica) = self
                    .sets
                    .get_mut(broker_name)
                    .and_then(|set| set.replicas.get_mut(broker_id))
                {
                    replica.addr.clone_from(broker_addr);
                }
            }
            Event::ElectMaster {
                broker_name,
                new_master,
            } => {
                if let Some(set) = self.sets.get_mut(broker_name) {
                    set.master = *new_master;
                    set.master_epoch += 1;
                    if let Some(master) = new_master {
                        set.sync_state_set = BTreeSet::from([*master]);
                        set.sync_state_set_epoch += 1;
                    }
                }
            }
            Event::AlterSyncStateSet {
                broker_name,
                sync_state_set,
            } => {
                if let Some(set) = self.sets.get_mut(broker_name) {
                    set.sync_state_set.clone_from(sync_state_set);
                    set.sync_state_set_epoch += 1;
                }
            }
            Event::CleanBrokerData {
                broker_name,
                broker_ids,
            } => {
                let Some(ids) = broker_ids.as_ref().filter(|ids| !ids.is_empty()) else {
                    self.sets.remove(broker_name);
                    return;
                };
                let Some(set) = self.sets.get_mut(broker_name) else {
                    return;
                };
                let mut sss_changed = false;
                for id in ids {
                    set.replicas.remove(id);
                    sss_changed |= set.sync_state_set.remove(id);
                    if set.master == Some(*id) {
                        set.master = None;
                    }
                }
                if set.replicas.is_empty() {
                    self.sets.remove(broker_name);
                } else if sss_changed {
                    // A new epoch makes the master adopt the smaller set on its
                    // next replica-info sync; Java keeps the epoch, and a
                    // master with allAckInSyncStateSet keeps waiting for the
                    // removed replica.
                    set.sync_state_set_epoch += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(replicas: &mut Replicas, broker_id: i64) {
        replicas.apply(&Event::ApplyBrokerId {
            cluster: "DefaultCluster".into(),
            broker_name: "broker-a".into(),
            broker_addr: format!("10.0.0.{broker_id}:30911"),
            check_code: format!("10.0.0.{broker_id}:30911;1700000000000"),
            broker_id,
        });
    }

    #[test]
    fn the_first_apply_creates_the_set_and_ids_are_never_offered_twice() {
        let mut replicas = Replicas::new();
        apply(&mut replicas, 1);
        let set = replicas.get("broker-a").unwrap();
        assert_eq!((set.next_id, set.master, set.master_epoch), (2, None, 0));
        // Out of order: 5 while 2 is next. Java would then offer 3, 4, 5, 6…
        // and 5 again; here the next offer is 6.
        apply(&mut replicas, 5);
        assert_eq!(replicas.get("broker-a").unwrap().next_id, 6);
        apply(&mut replicas, 2);
        assert_eq!(replicas.get("broker-a").unwrap().next_id, 6);
        // The same id again keeps the first registration.
        replicas.apply(&Event::ApplyBrokerId {
            cluster: "DefaultCluster".into(),
            broker_name: "broker-a".into(),
            broker_addr: "elsewhere:1".into(),
            check_code: "elsewhere:1;1".into(),
            broker_id: 1,
        });
        assert_eq!(
            replicas.get("broker-a").unwrap().addr(1),
            Some("10.0.0.1:30911")
        );
    }

    #[test]
    fn an_election_sets_master_epochs_and_sss_and_a_failed_one_keeps_the_sss() {
        let mut replicas = Replicas::new();
        apply(&mut replicas, 1);
        apply(&mut replicas, 2);
        let elect = |master| Event::ElectMaster {
            broker_name: "broker-a".into(),
            new_master: master,
        };
        replicas.apply(&elect(Some(1)));
        replicas.apply(&Event::AlterSyncStateSet {
            broker_name: "broker-a".into(),
            sync_state_set: [1, 2].into(),
        });
        let set = replicas.get("broker-a").unwrap();
        assert_eq!(
            (set.master, set.master_epoch, set.sync_state_set_epoch),
            (Some(1), 1, 2)
        );
        replicas.apply(&elect(None));
        let set = replicas.get("broker-a").unwrap();
        assert_eq!((set.master, set.master_epoch), (None, 2));
        assert_eq!(set.sync_state_set, BTreeSet::from([1, 2]));
        assert_eq!(set.sync_state_set_epoch, 2);
        replicas.apply(&elect(Some(2)));
        let set = replicas.get("broker-a").unwrap();
        assert_eq!(
            (set.master, set.master_epoch, set.sync_state_set_epoch),
            (Some(2), 3, 3)
        );
        assert_eq!(set.sync_state_set, BTreeSet::from([2]));
    }

    #[test]
    fn a_clean_removes_a_replica_from_ids_and_sss_together() {
        let mut replicas = Replicas::new();
        for id in 1..=3 {
            apply(&mut replicas, id);
        }
        replicas.apply(&Event::ElectMaster {
            broker_name: "broker-a".into(),
            new_master: Some(1),
        });
        replicas.apply(&Event::AlterSyncStateSet {
            broker_name: "broker-a".into(),
            sync_state_set: [1, 2, 3].into(),
        });
        replicas.apply(&Event::CleanBrokerData {
            broker_name: "broker-a".into(),
            broker_ids: Some([3].into()),
        });
        let set = replicas.get("broker-a").unwrap();
        assert!(set.addr(3).is_none());
        assert_eq!(set.sync_state_set, BTreeSet::from([1, 2]));
        assert_eq!(
            set.sync_state_set_epoch, 3,
            "the SSS changed, so its epoch did"
        );
        assert_eq!(set.next_id, 4, "3 is not offered again");
        // Cleaning the (dead) master leaves no master behind.
        replicas.apply(&Event::CleanBrokerData {
            broker_name: "broker-a".into(),
            broker_ids: Some([1].into()),
        });
        let set = replicas.get("broker-a").unwrap();
        assert_eq!(set.master, None);
        assert_eq!(set.sync_state_set, BTreeSet::from([2]));
        // The last replica takes the set with it.
        replicas.apply(&Event::CleanBrokerData {
            broker_name: "broker-a".into(),
            broker_ids: Some([2].into()),
        });
        assert!(replicas.get("broker-a").is_none());
    }

    #[test]
    fn a_whole_set_clean_and_events_about_unknown_sets() {
        let mut replicas = Replicas::new();
        apply(&mut replicas, 1);
        let before = replicas.clone();
        for event in [
            Event::ElectMaster {
                broker_name: "broker-x".into(),
                new_master: Some(1),
            },
            Event::AlterSyncStateSet {
                broker_name: "broker-x".into(),
                sync_state_set: [1].into(),
            },
            Event::UpdateBrokerAddress {
                broker_name: "broker-a".into(),
                broker_id: 9,
                broker_addr: "x:1".into(),
            },
            Event::CleanBrokerData {
                broker_name: "broker-x".into(),
                broker_ids: Some([1].into()),
            },
        ] {
            replicas.apply(&event);
        }
        assert_eq!(replicas, before);
        replicas.apply(&Event::CleanBrokerData {
            broker_name: "broker-a".into(),
            broker_ids: None,
        });
        assert!(replicas.is_empty());
    }

    #[test]
    fn events_and_state_survive_json() {
        let event = Event::CleanBrokerData {
            broker_name: "broker-a".into(),
            broker_ids: Some([1, 2].into()),
        };
        let text = serde_json::to_string(&event).unwrap();
        assert_eq!(
            text,
            r#"{"type":"cleanBrokerData","brokerName":"broker-a","brokerIds":[1,2]}"#
        );
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), event);
        let mut replicas = Replicas::new();
        apply(&mut replicas, 1);
        let json = serde_json::to_vec(&replicas).unwrap();
        assert_eq!(serde_json::from_slice::<Replicas>(&json).unwrap(), replicas);
    }
}
