//! The cluster's sans-IO core: what one NameServer publishes of the brokers
//! registered with it directly, what it concludes from what its peers
//! publish, and what it should do about it. No sockets, no clock, no gossip
//! library: inputs are calls (a direct registration applied, a peer's state
//! changed, a pull answered, time passed), outputs are [`Effect`]s the
//! caller carries out (publish a key, pull a registration, apply or drop a
//! relayed broker). The NameServer drives it over chitchat and the route
//! table; the cluster simulation drives the same code over a modelled
//! network.
//!
//! The rules it keeps:
//! - A broker registered with this node directly is published as a digest
//!   under its own key; when this node removes it, the key becomes a
//!   removal (a tombstone carrying the version it removes), deleted only
//!   once every member has acknowledged it.
//! - A broker some peer publishes and this node lacks (or holds older) is
//!   pulled from a peer that holds it directly, and applied as *relayed*.
//! - A relayed broker stays while some member vouches for it
//!   ([`Member::vouches`]): it holds it directly and is up, or is down but
//!   its last word still lets the broker be alive. When none does, it goes.
//! - A direct registration always wins: a broker held directly is never
//!   pulled, and a pull answered after the broker registered directly is
//!   not applied.
//! - Only what a member publishes now counts: a removal replaces the
//!   digest under the same key, so no older copy can bring a removed
//!   broker back, and a pull answer is applied only while its holder still
//!   publishes that registration (or a newer one).

mod direct;
mod members;
mod own;
mod peers;
mod published;
mod reconcile;
mod status;
#[cfg(test)]
mod tests;
pub(crate) mod tick;

use std::collections::{BTreeMap, BTreeSet};

pub use members::{Held, Liveness, Member, MemberId, MemberUpdate};
pub use published::{
    Acks, BrokerDigest, BrokerRef, Entry, Lost, Manifest, Published, Removal, RemovalCause,
    Version, BROKER_PREFIX, LOST_KEY, MANIFEST_KEY, READY_KEY, REMOTING_KEY, SEEN_KEY,
};
pub use status::{ClusterStatus, MemberStatus};

/// Milliseconds of a monotonic clock the caller owns.
pub type Millis = u64;

/// Numbers the pulls of one core.
pub type PullId = u64;

/// Settings of the core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreConfig {
    /// Whether the node was given seeds. Without, it is the cluster's
    /// first node and serves at once; with, it waits to hold its peers'
    /// routes.
    pub has_seeds: bool,
    /// How long a node with seeds waits for its peers' routes before it
    /// serves anyway.
    pub bootstrap_timeout_ms: u64,
    /// Pulls in flight at once.
    pub max_pulls: usize,
    /// A pull not answered within this is counted failed.
    pub pull_timeout_ms: u64,
    /// After a failed pull of a broker from a member, how long before
    /// pulling it from that member again.
    pub pull_retry_ms: u64,
    /// Least time between two publications of this node's
    /// acknowledgements.
    pub ack_interval_ms: u64,
    /// How often every broker is reconciled, not only those that changed
    /// (down members' brokers leave on a deadline, not on an event).
    pub sweep_interval_ms: u64,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            has_seeds: false,
            bootstrap_timeout_ms: 10_000,
            max_pulls: 32,
            pull_timeout_ms: 5_000,
            pull_retry_ms: 1_000,
            ack_interval_ms: 500,
            sweep_interval_ms: 500,
        }
    }
}

/// A sweep of every broker, spread over its interval.
#[derive(Debug, Default)]
struct Sweep {
    /// Brokers still to reconcile, the next last.
    pending: Vec<BrokerRef>,
    /// When it began.
    began: Millis,
    /// How many brokers it had.
    len: usize,
}

/// A registration to pull.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    /// Answer with [`ClusterCore::pull_done`] under this id.
    pub id: PullId,
    /// The broker.
    pub broker: BrokerRef,
    /// The member that holds it directly.
    pub from: MemberId,
    /// Its remoting address.
    pub remoting: String,
    /// The digest of the registration wanted: the one `from` publishes, or
    /// with `relayed` the one the broker's holder published.
    pub digest: BrokerDigest,
    /// Whether a copy `from` holds as relayed will do: the member that
    /// held the broker directly is down, and `from` may hold what it said.
    pub relayed: bool,
}

/// Why a pull brought nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullFailure {
    /// The member answered that it does not hold the broker directly.
    NotHeld,
    /// No usable answer: connection, timeout, error answer, bad body.
    Failed(String),
}

/// Kinds of peer input the core refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefusalKind {
    /// A published value that does not parse.
    BadValue,
    /// A member published a digest and, asked for the registration,
    /// answered that it has none.
    PullNotHeld,
    /// A pull answer for another broker, or older than what the member
    /// publishes.
    PullMismatch,
    /// A removal of a version newer than any this node knows the broker to
    /// have: it withdraws nothing but that member's own word.
    RemovalAhead,
}

impl RefusalKind {
    /// The kind's name in logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalKind::BadValue => "bad_value",
            RefusalKind::PullNotHeld => "pull_not_held",
            RefusalKind::PullMismatch => "pull_mismatch",
            RefusalKind::RemovalAhead => "removal_ahead",
        }
    }
}

/// Why a relayed broker left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelayedGone {
    /// A member that held it removed it, and no other vouches for it.
    Removed {
        /// Who removed it.
        by: MemberId,
        /// Why.
        cause: RemovalCause,
    },
    /// Every member that held it is down, and past the broker's timeout.
    Silent,
    /// No member publishes it any more.
    Unpublished,
}

/// What the caller is to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Set one of this node's gossip keys.
    Publish {
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// Delete one of this node's gossip keys.
    Delete {
        /// The key.
        key: String,
    },
    /// This node's published state changed: gossip with every member now
    /// rather than at the next round.
    GossipNow,
    /// Pull a registration from a member.
    Pull(PullRequest),
    /// Apply the answer of a pull to the route table as a relayed broker.
    ApplyPulled {
        /// The pull.
        id: PullId,
        /// The broker.
        broker: BrokerRef,
        /// Who it came from.
        from: MemberId,
    },
    /// Drop the answer of a pull (if any arrives) without applying it.
    DiscardPulled {
        /// The pull.
        id: PullId,
        /// Why, for the log.
        why: String,
    },
    /// Remove a relayed broker from the route table.
    RemoveRelayed {
        /// The broker.
        broker: BrokerRef,
        /// Why.
        why: RelayedGone,
    },
    /// A pull failed (counted; `why` for the log).
    PullFailed {
        /// The member pulled from.
        from: MemberId,
        /// The broker.
        broker: BrokerRef,
        /// What happened.
        why: String,
    },
    /// A peer's input refused (logged naming the peer, counted).
    Refused {
        /// The member.
        peer: MemberId,
        /// What kind.
        kind: RefusalKind,
        /// What exactly.
        detail: String,
    },
    /// The node now serves routes: bootstrap is over.
    Ready {
        /// Whether it got there by holding its peers' routes (`false`:
        /// the bootstrap timeout ran out first).
        synced: bool,
    },
}

/// A broker registered with this node directly.
#[derive(Debug, Clone)]
struct Direct {
    digest: BrokerDigest,
    last_seen: Millis,
}

/// A broker this node holds as relayed.
#[derive(Debug, Clone)]
struct Relayed {
    from: MemberId,
    digest: BrokerDigest,
}

#[derive(Debug, Clone)]
struct Pull {
    broker: BrokerRef,
    /// The member asked.
    from: MemberId,
    /// The member whose digest is wanted: `from`, or for a relayed copy
    /// the holder that is down.
    origin: MemberId,
    digest: BrokerDigest,
    relayed: bool,
    started: Millis,
}

/// What [`ClusterCore::removing_direct`] advises for a direct broker about
/// to be removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removing {
    /// Remove it: no member vouches for it.
    Remove,
    /// Keep it as relayed from this member, which holds it directly.
    Demote(MemberId),
}

/// One NameServer's view of the cluster.
#[derive(Debug)]
pub struct ClusterCore {
    me: MemberId,
    config: CoreConfig,
    started: Millis,
    ready: bool,
    /// Publication numbers of this incarnation.
    next_seq: u64,
    /// This node's broker keys as published, tombstones included.
    own: BTreeMap<BrokerRef, Published>,
    /// Every broker this incarnation has published, held or removed, even
    /// after the key went: what its earlier incarnations said of them no
    /// longer counts here either.
    spoken_for: BTreeSet<BrokerRef>,
    direct: BTreeMap<BrokerRef, Direct>,
    relayed: BTreeMap<BrokerRef, Relayed>,
    /// Relayed copies let go because no member vouched for them any more:
    /// a down member's word on the same registration (or an older one, by
    /// DataVersion) no longer brings the broker back (when a down member was last up is an estimate that
    /// later gossip can move later, and a stopped broker must not return
    /// with it). Only a member up now, or a newer registration, does.
    outlived: BTreeMap<BrokerRef, BrokerDigest>,
    members: BTreeMap<MemberId, Member>,
    /// The highest publication number received from each member.
    received: BTreeMap<MemberId, u64>,
    /// Members with an entry (present or removed) for each broker.
    holders: BTreeMap<BrokerRef, BTreeSet<MemberId>>,
    dirty: BTreeSet<BrokerRef>,
    next_sweep: Millis,
    /// The sweep under way ([`ClusterCore::tick`]).
    sweep: Sweep,
    pulls: BTreeMap<PullId, Pull>,
    pulling: BTreeMap<BrokerRef, PullId>,
    next_pull: PullId,
    /// (broker, member node) → no pull from there before.
    backoff: BTreeMap<(BrokerRef, MemberId), Millis>,
    acks_published: Option<(Acks, Millis)>,
    last_agreement: Option<Millis>,
    /// Writes to this node's gossip keys, in the order made: broker keys
    /// before the manifest that counts them.
    outbox: Vec<Effect>,
    /// While not ready: since when it has heard from some up member.
    first_contact: Option<Millis>,
    /// The lost members last published, by name, and when.
    lost_published: (Vec<String>, Millis),
}

impl ClusterCore {
    /// The core of member `me`, whose remoting address is `remoting`,
    /// started at `now` (its node-level keys waiting in
    /// [`take_publications`](Self::take_publications)).
    pub fn new(me: MemberId, remoting: &str, config: CoreConfig, now: Millis) -> ClusterCore {
        ClusterCore {
            me,
            started: now,
            ready: false,
            next_seq: 1,
            own: BTreeMap::new(),
            spoken_for: BTreeSet::new(),
            direct: BTreeMap::new(),
            relayed: BTreeMap::new(),
            outlived: BTreeMap::new(),
            members: BTreeMap::new(),
            received: BTreeMap::new(),
            holders: BTreeMap::new(),
            dirty: BTreeSet::new(),
            next_sweep: now,
            sweep: Sweep::default(),
            pulls: BTreeMap::new(),
            pulling: BTreeMap::new(),
            next_pull: 1,
            backoff: BTreeMap::new(),
            acks_published: None,
            last_agreement: None,
            outbox: vec![
                Effect::Publish {
                    key: REMOTING_KEY.to_owned(),
                    value: remoting.to_owned(),
                },
                Effect::Publish {
                    key: MANIFEST_KEY.to_owned(),
                    value: Manifest::default().encode(),
                },
            ],
            first_contact: None,
            lost_published: (Vec::new(), now),
            config,
        }
    }

    /// The writes to this node's gossip keys made since the last call, in
    /// order ([`Effect::Publish`], [`Effect::Delete`], [`Effect::GossipNow`]).
    /// One caller drains them, so that they reach gossip in that order.
    pub fn take_publications(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.outbox)
    }

    /// This member.
    pub fn me(&self) -> &MemberId {
        &self.me
    }

    /// Whether bootstrap is over: route queries are answered.
    pub fn is_ready(&self) -> bool {
        self.ready
    }

    /// Whether `broker` is held as relayed, and from whom.
    pub fn relayed_from(&self, broker: &BrokerRef) -> Option<&MemberId> {
        self.relayed.get(broker).map(|relayed| &relayed.from)
    }

    /// Whether `broker` is held directly.
    pub fn is_direct(&self, broker: &BrokerRef) -> bool {
        self.direct.contains_key(broker)
    }

    /// The members known, with what this node knows of them.
    pub fn members(&self) -> impl Iterator<Item = (&MemberId, &Member)> {
        self.members.iter()
    }

    /// What this node knows, for metrics and the API.
    pub fn status(&self, now: Millis) -> ClusterStatus {
        ClusterStatus {
            me: self.me.clone(),
            ready: self.ready,
            members: self
                .members
                .iter()
                .map(|(id, member)| MemberStatus {
                    id: id.clone(),
                    gossip_addr: member.gossip_addr.clone(),
                    remoting: member.remoting.clone(),
                    liveness: member.liveness,
                    ready: member.ready,
                    brokers: member
                        .brokers
                        .values()
                        .filter(|held| matches!(held.published.entry, Entry::Present(_)))
                        .count(),
                    behind: self.behind(member, now),
                })
                .collect(),
            direct: self.direct.len(),
            relayed: self.relayed.len(),
            pulls_in_flight: self.pulls.len(),
            since_agreement_ms: self.last_agreement.map(|at| now.saturating_sub(at)),
        }
    }
}
