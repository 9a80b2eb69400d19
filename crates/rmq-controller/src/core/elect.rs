//! The election policy (Java's `DefaultElectPolicy`):
//! who becomes master of a set, from its SSS first and, only when unclean
//! elections are enabled, from every registered replica.
//!
//! Differences from Java, none of which can make a non-candidate master:
//! candidates must be registered as well as alive; offsets compare as 64-bit
//! values (Java casts their difference to 32 bits, so replicas 2 GiB apart
//! could be ranked the wrong way round); and equally ranked replicas are
//! ordered by id instead of by hash-set order.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use crate::{BrokerSet, LiveTable, Millis};

/// What an election may choose from.
#[derive(Debug, Clone, Copy)]
pub struct Ballot<'a> {
    /// The set.
    pub set: &'a BrokerSet,
    /// This node's liveness.
    pub live: &'a LiveTable,
    /// The time of the decision.
    pub now: Millis,
}

impl Ballot<'_> {
    /// Whether `id` is registered in the set and heartbeats in time.
    pub fn is_eligible(&self, id: i64) -> bool {
        self.set.replicas.contains_key(&id)
            && self
                .live
                .is_alive(&self.set.cluster, &self.set.name, id, self.now)
    }

    /// The new master: from the SSS, then (if `unclean`) from every
    /// registered replica; the current master when it is still eligible
    /// and nobody else is preferred; `prefer` (a designated election) only
    /// if it is eligible. `None` when nobody qualifies.
    pub fn elect(&self, unclean: bool, prefer: Option<i64>) -> Option<i64> {
        self.choose(&self.set.sync_state_set, prefer).or_else(|| {
            if unclean {
                let all: BTreeSet<i64> = self.set.replicas.keys().copied().collect();
                self.choose(&all, prefer)
            } else {
                None
            }
        })
    }

    fn choose(&self, candidates: &BTreeSet<i64>, prefer: Option<i64>) -> Option<i64> {
        let eligible: Vec<i64> = candidates
            .iter()
            .copied()
            .filter(|id| self.is_eligible(*id))
            .collect();
        if eligible.is_empty() {
            return None;
        }
        if let Some(master) = self.set.master {
            if eligible.contains(&master) && prefer.is_none_or(|p| p == master) {
                return Some(master);
            }
        }
        if let Some(preferred) = prefer {
            return eligible.contains(&preferred).then_some(preferred);
        }
        eligible.into_iter().min_by_key(|id| {
            let info = self.live.get(&self.set.cluster, &self.set.name, *id);
            let (epoch, offset, priority) = info.map_or((i32::MIN, i64::MIN, i32::MAX), |i| {
                (i.epoch, i.max_offset, i.election_priority)
            });
            (Reverse(epoch), Reverse(offset), priority, *id)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Event, Heartbeat, LiveKey, Replicas};

    fn set_with(ids: &[i64], master: Option<i64>, sss: &[i64]) -> Replicas {
        let mut replicas = Replicas::new();
        for id in ids {
            replicas.apply(&Event::ApplyBrokerId {
                cluster: "c".into(),
                broker_name: "b".into(),
                broker_addr: format!("a{id}"),
                check_code: format!("a{id};1"),
                broker_id: *id,
            });
        }
        if let Some(m) = master {
            replicas.apply(&Event::ElectMaster {
                broker_name: "b".into(),
                new_master: Some(m),
            });
        }
        replicas.apply(&Event::AlterSyncStateSet {
            broker_name: "b".into(),
            sync_state_set: sss.iter().copied().collect(),
        });
        replicas
    }

    fn beat(live: &mut LiveTable, id: i64, epoch: i32, offset: i64, priority: Option<i32>) {
        live.heartbeat(
            Heartbeat {
                key: LiveKey {
                    cluster: "c".into(),
                    broker_name: "b".into(),
                    broker_id: id,
                },
                broker_addr: format!("a{id}"),
                epoch: Some(epoch),
                max_offset: Some(offset),
                confirm_offset: None,
                timeout_ms: Some(1_000),
                election_priority: priority,
            },
            None,
            Millis(0),
        );
    }

    #[test]
    fn the_most_caught_up_alive_sss_member_wins() {
        let replicas = set_with(&[1, 2, 3], Some(1), &[1, 2, 3]);
        let mut live = LiveTable::new();
        beat(&mut live, 2, 1, 100, None);
        beat(&mut live, 3, 1, 300, None);
        let set = replicas.get("b").unwrap();
        let ballot = Ballot {
            set,
            live: &live,
            now: Millis(10),
        };
        assert_eq!(ballot.elect(false, None), Some(3));
        // A higher epoch beats a higher offset.
        beat(&mut live, 2, 2, 0, None);
        let ballot = Ballot {
            set,
            live: &live,
            now: Millis(10),
        };
        assert_eq!(ballot.elect(false, None), Some(2));
    }

    #[test]
    fn offsets_far_apart_compare_as_64_bit_values() {
        let replicas = set_with(&[1, 2], None, &[1, 2]);
        let mut live = LiveTable::new();
        beat(&mut live, 1, 1, 0, None);
        beat(&mut live, 2, 1, 3 << 31, None);
        let set = replicas.get("b").unwrap();
        assert_eq!(
            Ballot {
                set,
                live: &live,
                now: Millis(0)
            }
            .elect(false, None),
            Some(2)
        );
    }

    #[test]
    fn priority_then_id_break_ties() {
        let replicas = set_with(&[1, 2, 3], None, &[1, 2, 3]);
        let mut live = LiveTable::new();
        for id in 1..=3 {
            beat(&mut live, id, 1, 50, None);
        }
        let set = replicas.get("b").unwrap();
        let ballot = Ballot {
            set,
            live: &live,
            now: Millis(0),
        };
        assert_eq!(ballot.elect(false, None), Some(1));
        beat(&mut live, 3, 1, 50, Some(1));
        assert_eq!(
            Ballot {
                set,
                live: &live,
                now: Millis(0)
            }
            .elect(false, None),
            Some(3)
        );
    }

    #[test]
    fn an_alive_master_stays_unless_another_is_designated() {
        let replicas = set_with(&[1, 2], Some(1), &[1, 2]);
        let mut live = LiveTable::new();
        beat(&mut live, 1, 1, 0, None);
        beat(&mut live, 2, 1, 999, None);
        let set = replicas.get("b").unwrap();
        let ballot = Ballot {
            set,
            live: &live,
            now: Millis(0),
        };
        assert_eq!(ballot.elect(false, None), Some(1));
        assert_eq!(ballot.elect(false, Some(2)), Some(2));
        assert_eq!(ballot.elect(false, Some(7)), None, "7 is not registered");
    }

    #[test]
    fn outside_the_sss_only_when_unclean() {
        let replicas = set_with(&[1, 2], Some(1), &[1]);
        let mut live = LiveTable::new();
        beat(&mut live, 2, 1, 0, None);
        let set = replicas.get("b").unwrap();
        let ballot = Ballot {
            set,
            live: &live,
            now: Millis(0),
        };
        assert_eq!(ballot.elect(false, None), None);
        assert_eq!(ballot.elect(true, None), Some(2));
        // Past its heartbeat timeout, a replica is not a candidate.
        let later = Ballot {
            now: Millis(1_001),
            ..ballot
        };
        assert_eq!(later.elect(true, None), None);
    }
}
