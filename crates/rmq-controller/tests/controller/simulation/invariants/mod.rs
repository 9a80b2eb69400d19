//! The invariants, one per file, each checked after every happening. The
//! replicated state changes only when a node applies an entry, and every
//! application is observed with the state it produced ([`Obs::Applied`]),
//! so judging the observations of each happening judges every state every
//! node passes through. Each invariant keeps whatever history it needs.

pub mod committed_entries_survive;
pub mod elected_are_registered_and_alive;
pub mod epochs_never_decrease;
pub mod liveness;
pub mod master_in_sync_state_set;
pub mod one_master_per_epoch;
pub mod unique_broker_ids;

use crate::simulation::observe::Obs;
use crate::simulation::world::World;

/// A safety property of every run.
pub trait Invariant {
    /// Its name in failure reports.
    fn name(&self) -> &'static str;

    /// Judges the world after one happening, given what it observed.
    fn check(&mut self, world: &World, obs: &[Obs]) -> Result<(), String>;
}

/// Every invariant, each with an empty history.
pub fn all() -> Vec<Box<dyn Invariant>> {
    vec![
        Box::new(one_master_per_epoch::OneMasterPerEpoch::default()),
        Box::new(epochs_never_decrease::EpochsNeverDecrease::default()),
        Box::new(master_in_sync_state_set::MasterInSyncStateSet),
        Box::new(committed_entries_survive::CommittedEntriesSurvive::default()),
        Box::new(unique_broker_ids::UniqueBrokerIds::default()),
        Box::new(elected_are_registered_and_alive::ElectedAreRegisteredAndAlive::default()),
    ]
}
