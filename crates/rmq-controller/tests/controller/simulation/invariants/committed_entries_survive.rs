//! Invariant 4: a committed state survives the loss of any minority.
//!
//! * State machine safety: the first node to apply an index fixes the
//!   entry and the `Replicas` it produced; every node that applies that
//!   index later must apply the same entry and hold the same `Replicas`.
//! * An entry acknowledged to a broker had been applied (so committed)
//!   under the term it was decided in.
//! * Leader completeness: the leader of every term after the one an entry
//!   was committed in holds it, unchanged, at its index — acknowledged
//!   entries first among them. (A leader of an older term can still be
//!   elected later, by votes that were delayed; it cannot commit anything.)

use std::collections::{BTreeMap, BTreeSet};

use rmq_controller::Replicas;

use super::Invariant;
use crate::simulation::observe::Obs;
use crate::simulation::raft::{Entry, Index, Term};
use crate::simulation::world::World;

/// Every committed entry with its commit term and the state after it, and
/// which were acked.
#[derive(Default)]
pub struct CommittedEntriesSurvive {
    committed: BTreeMap<Index, (Entry, Term, Replicas)>,
    acked: BTreeSet<Index>,
}

impl Invariant for CommittedEntriesSurvive {
    fn name(&self) -> &'static str {
        "committed entries survive and never change"
    }

    fn check(&mut self, _world: &World, obs: &[Obs]) -> Result<(), String> {
        for o in obs {
            match o {
                Obs::Applied {
                    node,
                    term,
                    index,
                    entry,
                    replicas,
                } => match self.committed.get(index) {
                    Some((first, ..)) if first != entry => {
                        return Err(format!(
                            "n{node} applied {entry:?} at {index}, where {first:?} was applied before"
                        ));
                    }
                    Some((.., state_before)) if state_before != replicas => {
                        return Err(format!(
                            "n{node} holds {replicas:?} after index {index}, another node held {state_before:?}"
                        ));
                    }
                    Some(_) => {}
                    None => {
                        self.committed
                            .insert(*index, (entry.clone(), *term, replicas.clone()));
                    }
                },
                Obs::Acked { node, term, index } => {
                    let applied = self.committed.get(index).map(|(e, ..)| e.term);
                    if applied != Some(*term) {
                        return Err(format!(
                            "n{node} acknowledged ({index}, t{term}), but the entry applied there is of term {applied:?}"
                        ));
                    }
                    self.acked.insert(*index);
                }
                Obs::Leader { node, term, log } => {
                    for (index, (entry, committed_in, _)) in &self.committed {
                        if committed_in >= term {
                            continue;
                        }
                        let held = usize::try_from(*index - 1).ok().and_then(|i| log.get(i));
                        if held != Some(entry) {
                            let acked = if self.acked.contains(index) {
                                "acknowledged"
                            } else {
                                "committed"
                            };
                            return Err(format!(
                                "n{node} leads term {term} without the {acked} entry {index} {entry:?}; it holds {held:?}"
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
