//! A node that reports itself ready because it holds its peers' routes
//! (bootstrap, not its timeout) routes every live broker that a node it
//! could reach the whole time has routed the whole time since it started
//! (held directly there, or relayed: the node that held it directly may be
//! the very node restarting). Not a broker whose last direct holder
//! removed it (its connection closed, it expired, it unregistered) and
//! that has registered nowhere since: it is on its way out everywhere,
//! peers that still route it have not yet heard of the removal, and a
//! node that starts without it is right.

use super::Invariant;
use crate::world::{Broker, World};

/// Nodes already judged at their readiness.
#[derive(Default)]
pub struct ReadyHoldsPeersRoutes {
    judged: Vec<(usize, u64)>,
}

impl Invariant for ReadyHoldsPeersRoutes {
    fn name(&self) -> &'static str {
        "ready means holding the peers' routes"
    }

    fn check(&mut self, world: &World) -> Result<(), String> {
        for (i, node) in world.nodes.iter().enumerate() {
            let Some((at, true)) = node.ready else {
                continue;
            };
            if !node.up || self.judged.contains(&(i, node.generation)) {
                continue;
            }
            self.judged.push((i, node.generation));
            if at != world.now {
                continue;
            }
            let removed_everywhere = |broker: &Broker| {
                broker.removed_at.is_some() && broker.direct.iter().all(Option::is_none)
            };
            for broker in world
                .brokers
                .iter()
                .filter(|broker| broker.alive && !removed_everywhere(broker))
            {
                let routed_by_a_steady_peer =
                    broker.routed_since.iter().enumerate().any(|(h, since)| {
                        h != i
                            && since.is_some_and(|since| since < node.started)
                            && world.steadily_linked(i, h, node.started)
                    });
                if routed_by_a_steady_peer && node.holds(&broker.key).is_none() {
                    return Err(format!(
                        "n{i} reported ready (synced) without {}, routed since before it started by a peer it could reach all along",
                        broker.name
                    ));
                }
            }
        }
        Ok(())
    }
}
