//! No resurrection: once a broker has stopped (killed or vanished) and no
//! node holds it directly any more, a node that routed it since and then
//! let it go never routes it again, unless it registers again. (A node
//! that did not route it when it stopped — restarted since, or cut off
//! while the broker registered again — may still learn it from the others
//! while its last holder's word lasts: that is no removal undone.) A node's own route snapshot (a warm restart) may restore it as
//! provisional until its timeout passes, as on a lone NameServer; that is
//! not a copy from a peer and is not counted.

use std::collections::BTreeSet;

use super::Invariant;
use crate::world::World;

/// (node, generation, broker) triples: the node routed the broker in this
/// incarnation after the broker stopped, and then let it go.
#[derive(Default)]
pub struct NoResurrection {
    routed: BTreeSet<(usize, u64, usize)>,
    gone: BTreeSet<(usize, u64, usize)>,
}

impl Invariant for NoResurrection {
    fn name(&self) -> &'static str {
        "no resurrection"
    }

    fn check(&mut self, world: &World) -> Result<(), String> {
        for (b, broker) in world.brokers.iter().enumerate() {
            let settled = !broker.alive && broker.direct.iter().all(Option::is_none);
            if !settled {
                self.routed.retain(|(_, _, routed)| *routed != b);
                self.gone.retain(|(_, _, gone)| *gone != b);
                continue;
            }
            for (i, node) in world.nodes.iter().enumerate() {
                if !node.up {
                    continue;
                }
                let here = (i, node.generation, b);
                let held = node.holds(&broker.key).filter(|held| !held.provisional);
                if held.is_some() {
                    self.routed.insert(here);
                }
                match held {
                    None if self.routed.contains(&here) => {
                        self.gone.insert(here);
                    }
                    Some(held) if self.gone.contains(&here) => {
                        return Err(format!(
                            "{} came back at n{i} ({held:?}) after it had gone there, with no node holding it directly",
                            broker.name
                        ));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}
