//! Raft replication of the controller state with openraft 0.9 (the stable
//! line): the type configuration, the durable store ([`store`]: log, vote
//! and snapshots in one redb file under `controllerStorePath`) and the peer
//! network over the remoting port ([`network`]).
//!
//! The log carries [`Command`]s: the events of one decision, taken on the
//! leader. Every node applies them to its [`Replicas`](crate::Replicas) in
//! log order; openraft's `client_write` returns after the leader applied
//! the entry, so the next decision always sees the previous one's effect.

pub mod network;
pub mod store;

use std::io::Cursor;

use serde::{Deserialize, Serialize};

use crate::Event;

/// A Raft node id. Derived from the peer id of `controllerDLegerPeers`
/// (`n0` → 0), the same on every node whatever order the peers are listed
/// in.
pub type NodeId = u64;

/// One log entry's payload: the events of one decision, applied together.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Command {
    /// In order.
    pub events: Vec<Event>,
}

openraft::declare_raft_types!(
    /// The controller's Raft types.
    pub TypeConfig:
        D = Command,
        R = (),
        NodeId = NodeId,
        Node = openraft::BasicNode,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = Cursor<Vec<u8>>,
        AsyncRuntime = openraft::TokioRuntime,
);

/// The controller's Raft handle.
pub type Raft = openraft::Raft<TypeConfig>;

/// The node id of a peer id: `n<k>` is `k`; any other id hashes (FNV-1a) to
/// a number, so that every node derives the same id from the same name.
pub fn node_id_of(peer_id: &str) -> NodeId {
    if let Some(number) = peer_id
        .strip_prefix('n')
        .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|digits| digits.parse::<u32>().ok())
    {
        return NodeId::from(number);
    }
    // Above every `n<k>` id, so a hashed name never collides with one.
    const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const FNV_PRIME: u64 = 0x0100_0000_01b3;
    let hash = peer_id.bytes().fold(FNV_OFFSET, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
    });
    hash | (1 << 63)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_of_peer_ids() {
        assert_eq!(node_id_of("n0"), 0);
        assert_eq!(node_id_of("n12"), 12);
        let named = node_id_of("controller-east");
        assert!(named >= 1 << 63);
        assert_eq!(named, node_id_of("controller-east"));
        assert_ne!(node_id_of("n"), node_id_of("nx"));
    }
}
