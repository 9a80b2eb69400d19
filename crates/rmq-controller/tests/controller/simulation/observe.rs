//! What the model reports as it runs, for the invariants to judge: each
//! handled event leaves its observations here, the invariants read them,
//! and they are cleared before the next event. They carry the facts an
//! invariant cannot recover from the state afterwards (the state after
//! each applied index, what the leader saw when it decided).

use rmq_controller::Replicas;

use crate::simulation::raft::{Entry, Index, Term};

/// What the leader saw of a replica it elected, when it decided.
#[derive(Debug, Clone)]
pub struct ElectFact {
    /// The broker set.
    pub set: String,
    /// The elected controller id.
    pub id: i64,
    /// Registered in the set (in the leader's applied state).
    pub registered: bool,
    /// Alive in the leader's LiveTable at the decision's time.
    pub alive: bool,
    /// A member of the SSS.
    pub in_sync_state_set: bool,
    /// The set had no election before (master epoch 0).
    pub first_election: bool,
}

/// One observation.
#[derive(Debug, Clone)]
pub enum Obs {
    /// Node `node`, in `term`, applied `entry` at `index`; `replicas` is
    /// its state after. The first node to apply an index is the leader that
    /// committed it, so its `term` is the term the entry was committed in.
    Applied {
        node: usize,
        term: Term,
        index: Index,
        entry: Entry,
        replicas: Replicas,
    },
    /// Node `node` became leader of `term`; `log` is its log then.
    Leader {
        node: usize,
        term: Term,
        log: Vec<Entry>,
    },
    /// The leader decided a request into the entry at `(term, index)`.
    Decided {
        node: usize,
        term: Term,
        index: Index,
        elected: Vec<ElectFact>,
    },
    /// The leader told a broker its request succeeded, after the entry at
    /// `(term, index)` was applied.
    Acked {
        node: usize,
        term: Term,
        index: Index,
    },
    /// Node `node` restarted: its applied state starts again from nothing.
    Restarted { node: usize },
    /// Broker `broker` wrote `id` of `set` into its identity file.
    Identity { broker: usize, set: String, id: i64 },
}
