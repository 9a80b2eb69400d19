//! Liveness, judged once at the end of a run, after every fault healed
//! and the system had a while to settle: one node serves as leader, every
//! node applied the same `Replicas`, every broker runs with an id, and
//! every broker set has a master that knows it, followed by every other
//! replica of the set at the same master epoch.

use crate::simulation::broker::{Phase, Role};
use crate::simulation::world::World;

/// Whether the healed system converged.
pub fn check(world: &World) -> Result<(), String> {
    let Some(leader) = world.leader() else {
        return Err("no serving leader".into());
    };
    let state = &world.nodes[leader].replicas;
    for node in &world.nodes {
        if !node.up {
            return Err(format!("n{} is down", node.id));
        }
        if node.replicas != *state {
            return Err(format!(
                "n{} (applied {}) disagrees with leader n{leader} (applied {}): {:?} vs {:?}",
                node.id, node.applied, world.nodes[leader].applied, node.replicas, state
            ));
        }
    }
    for broker in &world.brokers {
        let life = &broker.life;
        if !world.broker_running(broker.index) || life.phase != Phase::Running {
            return Err(format!(
                "b{} is not running ({:?}, {:?})",
                broker.index, broker.process, life.phase
            ));
        }
        let Some(id) = life.id else {
            return Err(format!("b{} has no id", broker.index));
        };
        let Some(set) = state.get(&broker.set) else {
            return Err(format!("{} is unknown to the controller", broker.set));
        };
        let Some(master) = set.master else {
            return Err(format!("{} has no master: {set:?}", set.name));
        };
        let expected = if master == id {
            Role::Master
        } else {
            Role::Slave
        };
        if (life.role, life.master_epoch, life.master_id)
            != (expected, set.master_epoch, Some(master))
        {
            return Err(format!(
                "b{} (id {id}) is {:?} of master {:?} at epoch {}, but {} has master {master} at epoch {}",
                broker.index, life.role, life.master_id, life.master_epoch, set.name, set.master_epoch
            ));
        }
    }
    Ok(())
}
