//! What a NameServer publishes through gossip, and how it reads what its
//! peers publish: one key per broker registered with it directly (a digest
//! while it holds the broker, a removal once it no longer does), and a few
//! keys about the node itself (its remoting address, readiness, a manifest
//! of its broker keys, and which of its peers' publications it has seen).
//!
//! Values are small JSON objects with one-letter names: gossip carries them
//! whenever they change, so bytes count, but an operator reading a node's
//! state (`/api/v1/cluster`) can still make sense of them. Every value read
//! from a peer is parsed strictly; one that does not parse is refused and
//! counted, never half-used.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Prefix of the broker keys: `b/<cluster>/<addr>`, each part escaped.
pub const BROKER_PREFIX: &str = "b/";
/// The node's remoting address (`host:port`), where peers pull from.
pub const REMOTING_KEY: &str = "remoting";
/// `1` once the node serves routes (start-up and bootstrap done).
pub const READY_KEY: &str = "ready";
/// The node's [`Manifest`].
pub const MANIFEST_KEY: &str = "manifest";
/// The node's [`Acks`].
pub const SEEN_KEY: &str = "seen";
/// The node's [`Lost`].
pub const LOST_KEY: &str = "lost";

/// A broker as the NameServer's liveness table names it: the same address
/// under two clusters is two brokers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BrokerRef {
    /// Cluster name.
    pub cluster: String,
    /// Broker address, `ip:port`.
    pub addr: String,
}

impl BrokerRef {
    /// A reference.
    pub fn new(cluster: impl Into<String>, addr: impl Into<String>) -> Self {
        BrokerRef {
            cluster: cluster.into(),
            addr: addr.into(),
        }
    }

    /// The gossip key of this broker.
    pub fn key(&self) -> String {
        let mut key =
            String::with_capacity(BROKER_PREFIX.len() + self.cluster.len() + self.addr.len() + 1);
        key.push_str(BROKER_PREFIX);
        escape_into(&self.cluster, &mut key);
        key.push('/');
        escape_into(&self.addr, &mut key);
        key
    }

    /// The broker a gossip key names; `None` for a key that is not a broker
    /// key or does not decode.
    pub fn from_key(key: &str) -> Option<BrokerRef> {
        let rest = key.strip_prefix(BROKER_PREFIX)?;
        let (cluster, addr) = rest.split_once('/')?;
        Some(BrokerRef {
            cluster: unescape(cluster)?,
            addr: unescape(addr)?,
        })
    }
}

impl fmt::Display for BrokerRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.addr, self.cluster)
    }
}

/// Percent-escapes `/`, `%` and control characters, so that any cluster
/// name or address makes a key that splits back into the same two parts.
fn escape_into(part: &str, out: &mut String) {
    for c in part.chars() {
        if c == '/' || c == '%' || c.is_control() {
            let mut buf = [0u8; 4];
            for byte in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        } else {
            out.push(c);
        }
    }
}

fn unescape(part: &str) -> Option<String> {
    let bytes = part.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = part.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A broker's DataVersion as it registered it.
///
/// Two versions are the same registration when all three fields are equal
/// (Java's `DataVersion.equals`). They are never ordered by timestamp: it
/// is the broker's wall clock, which a correction may set back, and a
/// broker whose timestamps go back must not be taken for older than a
/// stale copy of itself (apache/rocketmq#9455). Where the cluster must
/// guess which of two registrations came later, [`Version::cmp_changes`]
/// compares how many changes the broker had made, which no clock moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(from = "[i64; 3]", into = "[i64; 3]")]
pub struct Version {
    /// stateVersion.
    pub state_version: i64,
    /// counter.
    pub counter: i64,
    /// timestamp (ms since the epoch, the broker's clock).
    pub timestamp: i64,
}

impl From<[i64; 3]> for Version {
    fn from([state_version, counter, timestamp]: [i64; 3]) -> Self {
        Version {
            state_version,
            counter,
            timestamp,
        }
    }
}

impl From<Version> for [i64; 3] {
    fn from(v: Version) -> Self {
        [v.state_version, v.counter, v.timestamp]
    }
}

impl Version {
    /// Compares how far the broker had got in its changes: stateVersion
    /// (the master epoch in controller mode), then counter (one more for
    /// every change of its topics, kept in its store across restarts).
    /// The timestamp takes no part: `Equal` for two registrations that
    /// differ only in it, which callers then tell apart by other means
    /// (which holder heard from the broker last). A broker that lost its
    /// store starts counting again and compares lower here until the copies
    /// of its earlier life go silent; a holder's own newer registration
    /// replaces its earlier one whatever the versions.
    pub fn cmp_changes(&self, other: &Version) -> Ordering {
        (self.state_version, self.counter).cmp(&(other.state_version, other.counter))
    }
}

/// What a node says of a broker registered with it directly: enough to tell
/// whether a copy elsewhere is the same registration, not the registration
/// itself (peers pull that when they lack it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerDigest {
    /// Broker (group) name.
    #[serde(rename = "n")]
    pub name: String,
    /// Broker id: 0 for a master.
    #[serde(rename = "i")]
    pub id: i64,
    /// The registration's DataVersion.
    #[serde(rename = "v")]
    pub version: Version,
    /// Fingerprint of the registration's topic list as the holder applied
    /// it (the holder's own hash: compared only with that holder's earlier
    /// digests, never across nodes). 0 where the holder keeps none.
    #[serde(rename = "f")]
    pub topics: u64,
    /// Number of topics in the registration.
    #[serde(rename = "t")]
    pub topic_count: u32,
    /// Wall-clock time (ms since the epoch, the holder's clock) of the
    /// registration that made this digest: the broker's last registration
    /// that changed anything here.
    #[serde(rename = "r")]
    pub changed_at: u64,
    /// The broker's heartbeat timeout (ms): how long it may stay silent.
    #[serde(rename = "o")]
    pub timeout_ms: u64,
    /// Set once the broker has been silent (no registration or heartbeat
    /// reaching the holder) for half its timeout: how long, when published.
    /// Peers that lose the holder use it to let the broker go when the
    /// holder would have.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub silent_ms: Option<u64>,
}

impl BrokerDigest {
    /// Whether `other` describes the same registration (silence aside).
    pub fn same_registration(&self, other: &BrokerDigest) -> bool {
        self.name == other.name
            && self.id == other.id
            && self.version == other.version
            && self.topics == other.topics
            && self.topic_count == other.topic_count
    }
}

/// Why a holder stopped holding a broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RemovalCause {
    /// The broker's connection closed.
    Close,
    /// The broker stayed silent past its timeout.
    Expiry,
    /// UNREGISTER_BROKER.
    Unregister,
}

impl RemovalCause {
    /// The cause's name in logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            RemovalCause::Close => "close",
            RemovalCause::Expiry => "expiry",
            RemovalCause::Unregister => "unregister",
        }
    }
}

/// A tombstone: the holder removed the broker, whose last registration
/// there had `version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Removal {
    /// Broker name.
    #[serde(rename = "n")]
    pub name: String,
    /// Broker id.
    #[serde(rename = "i")]
    pub id: i64,
    /// The DataVersion of the registration removed.
    #[serde(rename = "v")]
    pub version: Version,
    /// Why.
    #[serde(rename = "c")]
    pub cause: RemovalCause,
}

/// The value of a broker key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// The node holds the broker directly.
    Present(BrokerDigest),
    /// The node removed it.
    Removed(Removal),
}

/// A broker key's value with its publication number: every value a node
/// publishes takes the next number, so "seen up to n" says which of them a
/// peer has received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// Publication number (per node incarnation, from 1).
    pub seq: u64,
    /// What the node says of the broker.
    pub entry: Entry,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PublishedWire {
    q: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    d: Option<BrokerDigest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    x: Option<Removal>,
}

/// A published value that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ValueError(String);

impl Published {
    /// The gossip value.
    pub fn encode(&self) -> String {
        let wire = match &self.entry {
            Entry::Present(digest) => PublishedWire {
                q: self.seq,
                d: Some(digest.clone()),
                x: None,
            },
            Entry::Removed(removal) => PublishedWire {
                q: self.seq,
                d: None,
                x: Some(removal.clone()),
            },
        };
        serde_json::to_string(&wire).expect("a published value always serializes")
    }

    /// Parses a peer's value.
    ///
    /// # Errors
    /// Not JSON of this shape, both or neither of digest and removal, or a
    /// publication number of 0.
    pub fn decode(value: &str) -> Result<Published, ValueError> {
        let wire: PublishedWire =
            serde_json::from_str(value).map_err(|e| ValueError(format!("broker entry: {e}")))?;
        if wire.q == 0 {
            return Err(ValueError("broker entry: publication number 0".into()));
        }
        let entry = match (wire.d, wire.x) {
            (Some(digest), None) => Entry::Present(digest),
            (None, Some(removal)) => Entry::Removed(removal),
            _ => {
                return Err(ValueError(
                    "broker entry: needs exactly one of a digest and a removal".into(),
                ))
            }
        };
        Ok(Published { seq: wire.q, entry })
    }
}

/// A node's summary of its broker keys, written after them: holding a
/// node's manifest means holding every broker key it wrote before it
/// (gossip delivers one node's keys in the order they were written).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The highest publication number among the node's broker keys.
    pub q: u64,
    /// How many brokers the node holds directly.
    pub n: u64,
}

impl Manifest {
    /// The gossip value.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).expect("a manifest always serializes")
    }

    /// Parses a peer's manifest.
    ///
    /// # Errors
    /// Not JSON of this shape.
    pub fn decode(value: &str) -> Result<Manifest, ValueError> {
        serde_json::from_str(value).map_err(|e| ValueError(format!("manifest: {e}")))
    }
}

/// Which publications of each peer a node has received: node name →
/// (incarnation, highest publication number). A node deletes its own
/// tombstones once every member has acknowledged them here.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Acks(pub BTreeMap<String, (u64, u64)>);

impl Acks {
    /// The gossip value.
    pub fn encode(&self) -> String {
        serde_json::to_string(&self.0).expect("acknowledgements always serialize")
    }

    /// Parses a peer's acknowledgements.
    ///
    /// # Errors
    /// Not JSON of this shape.
    pub fn decode(value: &str) -> Result<Acks, ValueError> {
        serde_json::from_str(value)
            .map(Acks)
            .map_err(|e| ValueError(format!("acknowledgements: {e}")))
    }
}

/// The members a node has lost (judged dead after seeing them up), each
/// with how long before this publication it last knew it up: a node that
/// never saw a member up (it started after the member died) learns from
/// this when the member's word stopped, and lets the brokers it vouched for
/// go when the others do. Keyed `node#generation`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lost(pub BTreeMap<String, u64>);

impl Lost {
    /// The gossip value.
    pub fn encode(&self) -> String {
        serde_json::to_string(&self.0).expect("lost members always serialize")
    }

    /// Parses a peer's lost members.
    ///
    /// # Errors
    /// Not JSON of this shape.
    pub fn decode(value: &str) -> Result<Lost, ValueError> {
        serde_json::from_str(value)
            .map(Lost)
            .map_err(|e| ValueError(format!("lost members: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest() -> BrokerDigest {
        BrokerDigest {
            name: "broker-a".into(),
            id: 0,
            version: Version {
                state_version: 0,
                counter: 3,
                timestamp: 1_700_000_000_000,
            },
            topics: 0xfeed,
            topic_count: 2,
            changed_at: 1_700_000_000_500,
            timeout_ms: 120_000,
            silent_ms: None,
        }
    }

    #[test]
    fn a_broker_key_splits_back_into_its_parts_whatever_they_hold() {
        for (cluster, addr) in [
            ("DefaultCluster", "10.0.0.1:10911"),
            ("a/b%c", "host/1:2"),
            ("", ""),
            ("集群", "[::1]:10911"),
            ("tab\there", "%41"),
        ] {
            let broker = BrokerRef::new(cluster, addr);
            let key = broker.key();
            assert!(key.starts_with(BROKER_PREFIX));
            assert_eq!(key.matches('/').count(), 2, "{key}");
            assert_eq!(BrokerRef::from_key(&key), Some(broker));
        }
        assert_eq!(
            BrokerRef::new("DefaultCluster", "10.0.0.1:10911").key(),
            "b/DefaultCluster/10.0.0.1:10911"
        );
    }

    #[test]
    fn keys_that_are_not_broker_keys_are_none() {
        for key in ["manifest", "b/", "b/onlyone", "b/a/%zz", "b/a/%4", "x/a/b"] {
            assert_eq!(BrokerRef::from_key(key), None, "{key}");
        }
    }

    #[test]
    fn versions_compare_changes_by_state_version_then_counter_never_by_timestamp() {
        let v = |s, c, t| Version {
            state_version: s,
            counter: c,
            timestamp: t,
        };
        assert_eq!(v(1, 0, 0).cmp_changes(&v(0, 99, 99)), Ordering::Greater);
        assert_eq!(v(0, 2, 0).cmp_changes(&v(0, 1, 99)), Ordering::Greater);
        // A broker whose clock was set back: a later change, a lower timestamp.
        assert_eq!(v(0, 2, 1).cmp_changes(&v(0, 1, 99)), Ordering::Greater);
        assert_eq!(v(0, 1, 2).cmp_changes(&v(0, 1, 1)), Ordering::Equal);
        assert_ne!(v(0, 1, 2), v(0, 1, 1));
    }

    #[test]
    fn a_digest_and_a_removal_round_trip() {
        let present = Published {
            seq: 7,
            entry: Entry::Present(digest()),
        };
        let text = present.encode();
        assert_eq!(
            text,
            r#"{"q":7,"d":{"n":"broker-a","i":0,"v":[0,3,1700000000000],"f":65261,"t":2,"r":1700000000500,"o":120000}}"#
        );
        assert_eq!(Published::decode(&text).unwrap(), present);

        let removed = Published {
            seq: 8,
            entry: Entry::Removed(Removal {
                name: "broker-a".into(),
                id: 0,
                version: digest().version,
                cause: RemovalCause::Close,
            }),
        };
        let text = removed.encode();
        assert_eq!(
            text,
            r#"{"q":8,"x":{"n":"broker-a","i":0,"v":[0,3,1700000000000],"c":"close"}}"#
        );
        assert_eq!(Published::decode(&text).unwrap(), removed);
    }

    #[test]
    fn malformed_values_are_errors_naming_what_they_are() {
        for bad in [
            "",
            "{}",
            "not json",
            r#"{"q":0,"x":{"n":"a","i":0,"v":[0,0,0],"c":"close"}}"#,
            r#"{"q":1}"#,
            r#"{"q":1,"d":{"n":"a"}}"#,
            r#"{"q":1,"x":{"n":"a","i":0,"v":[0,0,0],"c":"reboot"}}"#,
            r#"{"q":1,"x":{"n":"a","i":0,"v":[0,0],"c":"close"}}"#,
            r#"{"q":-1,"x":{"n":"a","i":0,"v":[0,0,0],"c":"close"}}"#,
            r#"{"q":1,"z":2,"x":{"n":"a","i":0,"v":[0,0,0],"c":"close"}}"#,
        ] {
            let error = Published::decode(bad).unwrap_err();
            assert!(
                error.to_string().starts_with("broker entry"),
                "{bad}: {error}"
            );
        }
        let both = format!(
            r#"{{"q":1,"d":{},"x":{{"n":"a","i":0,"v":[0,0,0],"c":"close"}}}}"#,
            serde_json::to_string(&digest()).unwrap()
        );
        assert!(Published::decode(&both).is_err());
    }

    #[test]
    fn manifest_and_acknowledgements_round_trip() {
        let manifest = Manifest { q: 12, n: 3 };
        assert_eq!(Manifest::decode(&manifest.encode()).unwrap(), manifest);
        assert!(Manifest::decode(r#"{"q":1}"#).is_err());
        let mut acks = Acks::default();
        acks.0
            .insert("10.0.0.1:9876".into(), (1_700_000_000_000, 42));
        assert_eq!(Acks::decode(&acks.encode()).unwrap(), acks);
        assert!(Acks::decode(r#"{"a":[1]}"#).is_err());
        let mut lost = Lost::default();
        lost.0.insert("10.0.0.2:9876#7".into(), 3_100);
        assert_eq!(Lost::decode(&lost.encode()).unwrap(), lost);
        assert!(Lost::decode(r#"{"a":-1}"#).is_err());
    }
}
