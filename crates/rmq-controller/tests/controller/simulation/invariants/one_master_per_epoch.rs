//! Invariant 1: at most one master per (broker set, master epoch), across
//! every node and all time. The first state any node applies with a given
//! epoch fixes its master (or its absence, for the epoch that fenced a lost
//! master); every later state on any node must agree. Brokers are held to
//! the same record: a running broker that believes itself master at an
//! epoch must be the master the controller gave that epoch to.

use std::collections::BTreeMap;

use super::Invariant;
use crate::simulation::broker::{Process, Role};
use crate::simulation::observe::Obs;
use crate::simulation::world::World;

/// History: who was master at each (set, epoch).
#[derive(Default)]
pub struct OneMasterPerEpoch {
    masters: BTreeMap<(String, i32), Option<i64>>,
    /// Per broker, the (life, epoch) whose belief was last checked.
    checked: BTreeMap<usize, (u64, i32)>,
}

impl Invariant for OneMasterPerEpoch {
    fn name(&self) -> &'static str {
        "one master per (broker set, master epoch)"
    }

    fn check(&mut self, world: &World, obs: &[Obs]) -> Result<(), String> {
        for o in obs {
            let Obs::Applied {
                node,
                index,
                replicas,
                ..
            } = o
            else {
                continue;
            };
            for set in replicas.sets().filter(|s| s.master_epoch > 0) {
                let key = (set.name.clone(), set.master_epoch);
                let recorded = *self.masters.entry(key).or_insert(set.master);
                if recorded != set.master {
                    return Err(format!(
                        "n{node} after index {index}: {} epoch {} has master {:?}, but {:?} held that epoch before",
                        set.name, set.master_epoch, set.master, recorded
                    ));
                }
            }
        }
        for broker in &world.brokers {
            let life = &broker.life;
            if matches!(broker.process, Process::Down) || life.role != Role::Master {
                continue;
            }
            let belief = (broker.inc, life.master_epoch);
            if self.checked.get(&broker.index) == Some(&belief) {
                continue;
            }
            self.checked.insert(broker.index, belief);
            let key = (broker.set.clone(), life.master_epoch);
            let recorded = self.masters.get(&key).copied();
            if recorded != Some(life.id) {
                let holder = match recorded {
                    Some(Some(id)) => format!("gave to {id}"),
                    Some(None) => "gave to nobody (the master was lost)".to_owned(),
                    None => "never reached".to_owned(),
                };
                return Err(format!(
                    "b{} (id {}) believes it is master of {} at epoch {}, which the controller {holder}",
                    broker.index,
                    life.id.unwrap_or(-1),
                    broker.set,
                    life.master_epoch
                ));
            }
        }
        Ok(())
    }
}
