//! The invariants, one per file, each judged after every tick of simulated
//! time. Each keeps whatever history it needs.

pub mod converges_after_healing;
pub mod dead_brokers_routed_nowhere;
pub mod direct_beats_relayed;
pub mod no_resurrection;
pub mod ready_holds_peers_routes;

use crate::world::World;

/// A property of every run.
pub trait Invariant {
    /// Its name in failure reports.
    fn name(&self) -> &'static str;

    /// Judges the world after one tick.
    fn check(&mut self, world: &World) -> Result<(), String>;
}

/// Every invariant, each with an empty history.
pub fn all() -> Vec<Box<dyn Invariant>> {
    vec![
        Box::new(direct_beats_relayed::DirectBeatsRelayed),
        Box::new(no_resurrection::NoResurrection::default()),
        Box::new(dead_brokers_routed_nowhere::DeadBrokersRoutedNowhere),
        Box::new(ready_holds_peers_routes::ReadyHoldsPeersRoutes::default()),
        Box::new(converges_after_healing::ConvergesAfterHealing),
    ]
}
