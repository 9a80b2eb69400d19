//! Invariant 3: in every state any node applies, a set's master is a
//! registered replica and a member of its SSS (elections make the SSS
//! `{master}`, and ALTER_SYNC_STATE_SET must keep the master in it).

use super::Invariant;
use crate::simulation::observe::Obs;
use crate::simulation::world::World;

/// Stateless: every applied state is judged on its own.
pub struct MasterInSyncStateSet;

impl Invariant for MasterInSyncStateSet {
    fn name(&self) -> &'static str {
        "the master is in its SSS"
    }

    fn check(&mut self, _world: &World, obs: &[Obs]) -> Result<(), String> {
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
            for set in replicas.sets() {
                let Some(master) = set.master else { continue };
                if !set.sync_state_set.contains(&master) || !set.replicas.contains_key(&master) {
                    return Err(format!(
                        "n{node} after index {index}: {} has master {master} (epoch {}), SSS {:?} (epoch {}), replicas {:?}",
                        set.name,
                        set.master_epoch,
                        set.sync_state_set,
                        set.sync_state_set_epoch,
                        set.replicas.keys().collect::<Vec<_>>()
                    ));
                }
            }
        }
        Ok(())
    }
}
