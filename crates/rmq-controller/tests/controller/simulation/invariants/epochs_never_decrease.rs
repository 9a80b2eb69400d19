//! Invariant 2: on every node's applied state, a set's master epoch and
//! SSS epoch never decrease. A restart starts the node's state again from
//! nothing (it re-applies its log), so the history of a node restarts
//! with it.

use std::collections::BTreeMap;

use super::Invariant;
use crate::simulation::observe::Obs;
use crate::simulation::world::World;

/// The latest (master epoch, SSS epoch) of each set on each node.
#[derive(Default)]
pub struct EpochsNeverDecrease {
    seen: BTreeMap<(usize, String), (i32, i32)>,
}

impl Invariant for EpochsNeverDecrease {
    fn name(&self) -> &'static str {
        "master and SSS epochs never decrease"
    }

    fn check(&mut self, _world: &World, obs: &[Obs]) -> Result<(), String> {
        for o in obs {
            match o {
                Obs::Restarted { node } => self.seen.retain(|(n, _), _| n != node),
                Obs::Applied {
                    node,
                    index,
                    replicas,
                    ..
                } => {
                    for set in replicas.sets() {
                        let now = (set.master_epoch, set.sync_state_set_epoch);
                        let before = self.seen.insert((*node, set.name.clone()), now);
                        if let Some(before) = before {
                            if now.0 < before.0 || now.1 < before.1 {
                                return Err(format!(
                                    "n{node} after index {index}: {} went from (master epoch, SSS epoch) {before:?} to {now:?}",
                                    set.name
                                ));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}
