//! Invariant 5: no controller broker id is ever assigned to two brokers.
//! A broker owns an id once it wrote it into its identity file (after a
//! successful APPLY_BROKER_ID); no other broker of the set may ever own
//! the same id, and a broker never owns two.

use std::collections::BTreeMap;

use super::Invariant;
use crate::simulation::observe::Obs;
use crate::simulation::world::World;

/// Who owns each (set, id), and which id each broker owns.
#[derive(Default)]
pub struct UniqueBrokerIds {
    owners: BTreeMap<(String, i64), usize>,
    ids: BTreeMap<usize, i64>,
}

impl Invariant for UniqueBrokerIds {
    fn name(&self) -> &'static str {
        "no broker id is assigned twice"
    }

    fn check(&mut self, _world: &World, obs: &[Obs]) -> Result<(), String> {
        for o in obs {
            let Obs::Identity { broker, set, id } = o else {
                continue;
            };
            let owner = *self.owners.entry((set.clone(), *id)).or_insert(*broker);
            if owner != *broker {
                return Err(format!(
                    "b{broker} was given {set}/{id}, which b{owner} already owns"
                ));
            }
            let own = *self.ids.entry(*broker).or_insert(*id);
            if own != *id {
                return Err(format!("b{broker} owned id {own} and was given {id}"));
            }
        }
        Ok(())
    }
}
