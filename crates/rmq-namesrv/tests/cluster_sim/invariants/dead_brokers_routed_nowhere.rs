//! A broker no node has heard from for its timeout is soon routed nowhere:
//! within half its timeout more, plus the time to find a node dead and a
//! few gossip rounds. (Its holders drop it at its timeout and say so at
//! once; a node that lost a holder keeps it until the timeout counted from
//! the holder's last word — the silence it reported at half the timeout,
//! or the last time the holder was up.) An entry restored from a node's own
//! route snapshot lasts until the broker's timeout after that restart, as
//! on a lone NameServer.

use super::Invariant;
use crate::world::World;

/// See the module.
pub struct DeadBrokersRoutedNowhere;

impl Invariant for DeadBrokersRoutedNowhere {
    fn name(&self) -> &'static str {
        "a broker nobody has seen within its timeout is routed nowhere"
    }

    fn check(&mut self, world: &World) -> Result<(), String> {
        let p = &world.params;
        let slack = p.timeout_ms / 2 + p.dead_after_ms + p.scan_ms + 4 * p.gossip_ms + 2_000;
        for broker in &world.brokers {
            let deadline = broker.last_seen + p.timeout_ms + slack;
            if world.now <= deadline {
                continue;
            }
            for (i, node) in world.nodes.iter().enumerate() {
                let Some(held) = node.holds(&broker.key).filter(|_| node.up) else {
                    continue;
                };
                if held.provisional && world.now <= node.started + p.timeout_ms + p.scan_ms {
                    continue;
                }
                return Err(format!(
                    "{} last seen at {} ms is still routed by n{i} ({held:?}), past {deadline} ms",
                    broker.name, broker.last_seen
                ));
            }
        }
        Ok(())
    }
}
