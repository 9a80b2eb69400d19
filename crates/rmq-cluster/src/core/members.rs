//! What this node knows of each peer: its liveness as the gossip library's
//! failure detector reports it, and the parsed state it publishes (broker
//! digests and removals, manifest, acknowledgements, readiness).
//!
//! Updates arrive as changed keys; a value that does not parse is refused
//! (the previous value of that key is dropped too, so nothing stale is kept
//! in its place) and reported to the caller.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::published::{
    Acks, BrokerRef, Entry, Lost, Manifest, Published, BROKER_PREFIX, LOST_KEY, MANIFEST_KEY,
    READY_KEY, REMOTING_KEY, SEEN_KEY,
};
use super::Millis;

/// One incarnation of a node: its name (its remoting address, `host:port`)
/// and the generation it started with. A restarted node is a new member.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemberId {
    /// The node's name.
    pub node: String,
    /// The incarnation (the gossip library's generation id).
    pub generation: u64,
}

impl MemberId {
    /// A member id.
    pub fn new(node: impl Into<String>, generation: u64) -> Self {
        MemberId {
            node: node.into(),
            generation,
        }
    }
}

impl fmt::Display for MemberId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.node, self.generation)
    }
}

/// Whether a member is up, as the failure detector says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Liveness {
    /// Heard from recently.
    Live,
    /// Known (from a peer's gossip) but not judged yet.
    Unknown,
    /// Not heard from for longer than the detector allows.
    Dead,
}

impl Liveness {
    /// Live or not judged yet: a member this node counts on.
    pub fn is_up(self) -> bool {
        !matches!(self, Liveness::Dead)
    }

    /// The state's name in metrics and the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Liveness::Live => "live",
            Liveness::Unknown => "unknown",
            Liveness::Dead => "dead",
        }
    }
}

/// A member's changed state, as the gossip driver read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberUpdate {
    /// Which member.
    pub id: MemberId,
    /// Its liveness now.
    pub liveness: Liveness,
    /// Its gossip address, for operators.
    pub gossip_addr: String,
    /// Keys written since the last update (`None`: deleted). With `full`,
    /// the member's whole state: keys not listed are gone.
    pub changes: Vec<(String, Option<String>)>,
    /// Whether `changes` is the whole state.
    pub full: bool,
}

/// One broker key of a member, parsed, with when this node received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The publication.
    pub published: Published,
    /// This node's clock when the value arrived.
    pub received_at: Millis,
}

/// A member as this node knows it.
#[derive(Debug, Clone)]
pub struct Member {
    /// Its gossip address.
    pub gossip_addr: String,
    /// Liveness now.
    pub liveness: Liveness,
    /// The last time this node knew it up; `None` while it never did (a
    /// member first heard of secondhand, dead already).
    pub last_up: Option<Millis>,
    /// Where to pull from, once published.
    pub remoting: Option<String>,
    /// Whether it reports itself ready.
    pub ready: bool,
    /// Its manifest, once published.
    pub manifest: Option<Manifest>,
    /// Its acknowledgements of others' publications.
    pub acks: Acks,
    /// The members it has lost, with when it published that.
    pub lost: Option<(Lost, Millis)>,
    /// Its broker keys.
    pub brokers: BTreeMap<BrokerRef, Held>,
    /// Every broker it has published, held or removed, even after the key
    /// went: a later incarnation's word on a broker voids an earlier one's.
    pub spoken_for: BTreeSet<BrokerRef>,
}

/// A value of a peer that this node refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadValue {
    /// The key it came under.
    pub key: String,
    /// What is wrong with it.
    pub problem: String,
}

/// How a member's brokers changed with an update.
#[derive(Debug, Default)]
pub struct Applied {
    /// Brokers whose entry at this member changed (appeared, changed, went).
    pub brokers: Vec<BrokerRef>,
    /// Values refused.
    pub refused: Vec<BadValue>,
}

impl Member {
    /// A member first heard of now.
    pub fn new(gossip_addr: String, liveness: Liveness, now: Millis) -> Member {
        Member {
            gossip_addr,
            liveness,
            last_up: liveness.is_up().then_some(now),
            remoting: None,
            ready: false,
            manifest: None,
            acks: Acks::default(),
            lost: None,
            brokers: BTreeMap::new(),
            spoken_for: BTreeSet::new(),
        }
    }

    /// The highest publication number among its broker keys.
    pub fn max_seq(&self) -> u64 {
        self.brokers
            .values()
            .map(|held| held.published.seq)
            .max()
            .unwrap_or(0)
    }

    /// Whether this node holds everything the member's manifest says it
    /// wrote.
    pub fn caught_up(&self) -> bool {
        self.manifest
            .is_some_and(|manifest| self.max_seq() >= manifest.q)
    }

    /// Applies an update's keys.
    pub fn apply(&mut self, update: &MemberUpdate, now: Millis) -> Applied {
        let mut applied = Applied::default();
        if update.full {
            applied.brokers.extend(self.brokers.keys().cloned());
            self.brokers.clear();
            self.remoting = None;
            self.ready = false;
            self.manifest = None;
            self.acks = Acks::default();
            self.lost = None;
        }
        for (key, value) in &update.changes {
            if let Err(problem) = self.apply_key(key, value.as_deref(), now, &mut applied) {
                applied.refused.push(BadValue {
                    key: key.clone(),
                    problem,
                });
            }
        }
        applied.brokers.sort();
        applied.brokers.dedup();
        applied
    }

    fn apply_key(
        &mut self,
        key: &str,
        value: Option<&str>,
        now: Millis,
        applied: &mut Applied,
    ) -> Result<(), String> {
        if key.starts_with(BROKER_PREFIX) {
            let broker = BrokerRef::from_key(key).ok_or_else(|| "not a broker key".to_owned())?;
            applied.brokers.push(broker.clone());
            let Some(value) = value else {
                self.brokers.remove(&broker);
                return Ok(());
            };
            match Published::decode(value) {
                Ok(published) => {
                    self.spoken_for.insert(broker.clone());
                    let unchanged = self
                        .brokers
                        .get(&broker)
                        .is_some_and(|held| held.published == published);
                    if !unchanged {
                        self.brokers.insert(
                            broker,
                            Held {
                                published,
                                received_at: now,
                            },
                        );
                    }
                    Ok(())
                }
                Err(error) => {
                    self.brokers.remove(&broker);
                    Err(error.to_string())
                }
            }
        } else {
            match key {
                REMOTING_KEY => {
                    self.remoting = value.map(str::to_owned).filter(|addr| !addr.is_empty());
                }
                READY_KEY => self.ready = value == Some("1"),
                MANIFEST_KEY => {
                    self.manifest = None;
                    if let Some(value) = value {
                        self.manifest = Some(Manifest::decode(value).map_err(|e| e.to_string())?);
                    }
                }
                SEEN_KEY => {
                    self.acks = Acks::default();
                    if let Some(value) = value {
                        self.acks = Acks::decode(value).map_err(|e| e.to_string())?;
                    }
                }
                LOST_KEY => {
                    self.lost = None;
                    if let Some(value) = value {
                        let lost = Lost::decode(value).map_err(|e| e.to_string())?;
                        self.lost = Some((lost, now));
                    }
                }
                // Keys of later versions are ignored, so that a node can
                // publish more without older ones refusing it.
                _ => {}
            }
            Ok(())
        }
    }

    /// Whether this member vouches, at `now`, for the broker it publishes
    /// under `broker`: it holds it directly and is up, or, once it is down,
    /// the broker may still be alive by what the member last said: its
    /// timeout counted from when the member was last known up (`last_up`:
    /// by this node, or, for a member this node never saw up, by the
    /// others), or, for a broker it had reported silent, from when that
    /// silence began. A down member nobody says when it was up vouches for
    /// nothing.
    pub fn vouches(&self, broker: &BrokerRef, last_up: Option<Millis>, now: Millis) -> bool {
        let Some(held) = self.brokers.get(broker) else {
            return false;
        };
        let Entry::Present(digest) = &held.published.entry else {
            return false;
        };
        if self.liveness.is_up() {
            return true;
        }
        let Some(last_up) = last_up else {
            return false;
        };
        let deadline = match digest.silent_ms {
            Some(silent) => held.received_at.saturating_sub(silent).min(last_up),
            None => last_up,
        }
        .saturating_add(digest.timeout_ms);
        // As the NameServer's own expiry: alive until strictly past the
        // timeout.
        now <= deadline
    }
}
