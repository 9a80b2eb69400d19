//! Convergence: once every fault has healed, within a bound every node
//! routes every broker that is alive, at the version it last registered,
//! and stays so; by the end, nothing else. The bound: one registration
//! period (a broker cut off during the faults registers again), a found
//! dead peer coming back, pulls and their retry, a few rounds of gossip —
//! `crate::converge_ms`.

use super::Invariant;
use crate::world::World;

/// See the module.
#[derive(Default)]
pub struct ConvergesAfterHealing;

impl Invariant for ConvergesAfterHealing {
    fn name(&self) -> &'static str {
        "converges after healing"
    }

    fn check(&mut self, world: &World) -> Result<(), String> {
        let Some(healed) = world.healed_at else {
            return Ok(());
        };
        let p = &world.params;
        let mut differences = Vec::new();
        for broker in &world.brokers {
            for (i, node) in world.nodes.iter().enumerate() {
                let held = node.holds(&broker.key).map(|held| held.version);
                if broker.alive && held != Some(broker.version) {
                    differences.push(format!("n{i} holds {} at {held:?}", broker.name));
                }
            }
        }
        if world.now > healed + crate::converge_ms(p) && !differences.is_empty() {
            return Err(format!(
                "not converged {} ms after healing: {}",
                world.now - healed,
                differences.join("; ")
            ));
        }
        // Dead brokers are the other invariants' (gone by their deadline);
        // at the very end nothing else may be held.
        if world.now + crate::world::TICK > p.faults_ms + crate::settle_ms(p) + 5_000 {
            for broker in world.brokers.iter().filter(|b| !b.alive) {
                for (i, node) in world.nodes.iter().enumerate() {
                    if let Some(held) = node.holds(&broker.key) {
                        return Err(format!(
                            "{} is dead but n{i} still holds it at the end ({held:?})",
                            broker.name
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}
