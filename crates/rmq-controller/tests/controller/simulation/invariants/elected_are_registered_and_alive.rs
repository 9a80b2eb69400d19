//! Invariant 6: only registered, alive replicas are elected. Every
//! committed `ElectMaster { new_master: Some(id) }` names an id that was
//! registered in its set and alive in the deciding leader's LiveTable at
//! the decision's time — and, unless unclean elections are enabled, a
//! member of the SSS (or the set's first election, which goes to the
//! requester).

use std::collections::{BTreeMap, BTreeSet};

use rmq_controller::Event;

use super::Invariant;
use crate::simulation::observe::{ElectFact, Obs};
use crate::simulation::raft::{Index, Payload, Term};
use crate::simulation::world::World;

/// What each decision saw, and which committed entries were judged.
#[derive(Default)]
pub struct ElectedAreRegisteredAndAlive {
    decided: BTreeMap<(Term, Index), Vec<ElectFact>>,
    judged: BTreeSet<(Term, Index)>,
}

impl Invariant for ElectedAreRegisteredAndAlive {
    fn name(&self) -> &'static str {
        "only registered, alive replicas are elected"
    }

    fn check(&mut self, world: &World, obs: &[Obs]) -> Result<(), String> {
        let unclean = world.ctx.params.elect_unclean;
        for o in obs {
            match o {
                Obs::Decided {
                    term,
                    index,
                    elected,
                    ..
                } => {
                    self.decided.insert((*term, *index), elected.clone());
                }
                Obs::Applied { index, entry, .. } => {
                    let Payload::Decision(events) = &entry.payload else {
                        continue;
                    };
                    let key = (entry.term, *index);
                    if !self.judged.insert(key) {
                        continue;
                    }
                    let elections = events
                        .iter()
                        .filter(|e| {
                            matches!(
                                e,
                                Event::ElectMaster {
                                    new_master: Some(_),
                                    ..
                                }
                            )
                        })
                        .count();
                    let facts = self.decided.get(&key).map_or(&[][..], Vec::as_slice);
                    if facts.len() != elections {
                        return Err(format!(
                            "entry {index} (t{}) elects {elections} masters, but {} were decided",
                            entry.term,
                            facts.len()
                        ));
                    }
                    for fact in facts {
                        let clean = fact.in_sync_state_set || fact.first_election || unclean;
                        if !(fact.registered && fact.alive && clean) {
                            return Err(format!(
                                "entry {index} (t{}) made {}/{} master: {fact:?}",
                                entry.term, fact.set, fact.id
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}
