//! A snapshot of one node's view of the cluster, for metrics, the JSON API
//! and the dashboard.

use super::members::{Liveness, MemberId};

/// One node's view of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterStatus {
    /// This member.
    pub me: MemberId,
    /// Whether it serves routes (bootstrap over).
    pub ready: bool,
    /// The other members it knows.
    pub members: Vec<MemberStatus>,
    /// Brokers registered with it directly.
    pub direct: usize,
    /// Brokers it holds as relayed.
    pub relayed: usize,
    /// Pulls under way.
    pub pulls_in_flight: usize,
    /// Time since every up member's brokers were last all held as they
    /// should be; `None`: not yet.
    pub since_agreement_ms: Option<u64>,
}

/// One member as a node sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberStatus {
    /// Which.
    pub id: MemberId,
    /// Its gossip address.
    pub gossip_addr: String,
    /// Its remoting address, once published.
    pub remoting: Option<String>,
    /// Up or down.
    pub liveness: Liveness,
    /// Whether it reports itself ready.
    pub ready: bool,
    /// Brokers it holds directly.
    pub brokers: usize,
    /// Of those, how many this node does not hold as it should yet.
    pub behind: usize,
}
