//! A broker registered with a node directly is held there as direct, at
//! the version it last sent there: no relayed copy is ever written over it.

use super::Invariant;
use crate::world::World;

/// See the module.
pub struct DirectBeatsRelayed;

impl Invariant for DirectBeatsRelayed {
    fn name(&self) -> &'static str {
        "a direct registration beats a relayed one"
    }

    fn check(&mut self, world: &World) -> Result<(), String> {
        for broker in &world.brokers {
            for (i, direct) in broker.direct.iter().enumerate() {
                let Some((_, version)) = direct else {
                    continue;
                };
                let node = &world.nodes[i];
                match node.holds(&broker.key) {
                    Some(held) if !held.relayed && held.version == *version => {}
                    other => {
                        return Err(format!(
                            "{} registered with n{i} directly at counter {}, which holds {other:?}",
                            broker.name, version.counter
                        ))
                    }
                }
            }
        }
        Ok(())
    }
}
