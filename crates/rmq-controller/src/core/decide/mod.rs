//! Requests → decisions: each controller request that reads or changes the
//! replicated state is a function from the state, this node's liveness and
//! the time to an [`Answer`](crate::Answer) and the [`Event`](crate::Event)s
//! that carry it out, as Java's `ReplicasInfoManager` methods return a
//! response and events. Nothing here changes state; the node commits the
//! events through Raft, applies them, and only then sends the answer.
//!
//! Codes and remarks are Java's. Where Waymark decides differently on
//! purpose, the function says so; docs/compatibility.md lists every such
//! difference.

mod admin;
mod election;
mod ids;
mod sync_state;

pub use admin::{clean_broker_data, replica_info, sync_state_data};
pub use election::{elect_master, sets_to_reelect};
pub use ids::{apply_broker_id, next_broker_id, register_broker};
pub use sync_state::alter_sync_state_set;

use crate::{LiveTable, Millis, Replicas};

/// What a decision reads.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// The replicated state (as applied on this node).
    pub replicas: &'a Replicas,
    /// This node's liveness table.
    pub live: &'a LiveTable,
    /// The time of the decision.
    pub now: Millis,
    /// `enableElectUncleanMaster`: elect outside the SSS when nobody in it
    /// is alive (messages acknowledged only by the SSS may be lost).
    pub elect_unclean: bool,
}

impl View<'_> {
    /// Whether replica `id` of set `name` heartbeats in time (of the set's
    /// own cluster).
    fn is_alive(&self, name: &str, id: i64) -> bool {
        self.replicas
            .get(name)
            .is_some_and(|set| self.live.is_alive(&set.cluster, name, id, self.now))
    }
}

#[cfg(test)]
pub(crate) mod tests;
