//! Which broker replicas are alive, as this controller node sees them
//! (Java's `DefaultBrokerHeartbeatManager` and its `BrokerLiveInfo`): what
//! BROKER_HEARTBEAT records, when a replica expires, and the connection
//! whose closing takes it for dead at once.
//!
//! Not replicated: brokers heartbeat every controller node, so each node
//! builds its own table and a new leader knows liveness at once. Time is an
//! argument ([`Millis`], monotonic); nothing here reads a clock.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Monotonic milliseconds from an origin the caller chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Millis(pub u64);

impl Millis {
    /// `self + ms`, saturating.
    pub fn plus(self, ms: u64) -> Millis {
        Millis(self.0.saturating_add(ms))
    }

    /// Milliseconds from `earlier` to `self` (0 if `earlier` is later).
    pub fn since(self, earlier: Millis) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// The heartbeat timeout when a broker sends none (Java's 10 s).
pub const DEFAULT_HEARTBEAT_TIMEOUT_MS: u64 = 10_000;

/// A replica: `(cluster, broker set, controller id)`, as Java keys it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LiveKey {
    /// The cluster.
    pub cluster: String,
    /// The broker set.
    pub broker_name: String,
    /// The controller id.
    pub broker_id: i64,
}

/// One BROKER_HEARTBEAT, as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heartbeat {
    /// Which replica.
    pub key: LiveKey,
    /// Its address.
    pub broker_addr: String,
    /// The last epoch in its epoch file (Java default −1).
    pub epoch: Option<i32>,
    /// Its commit-log max offset (default −1).
    pub max_offset: Option<i64>,
    /// Its confirm offset (default −1).
    pub confirm_offset: Option<i64>,
    /// How long until it counts as dead without another heartbeat, ms.
    pub timeout_ms: Option<i64>,
    /// Lower wins among equally caught-up replicas (default `i32::MAX`).
    pub election_priority: Option<i32>,
}

/// What the table knows of one replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveInfo {
    /// Its address, from the latest heartbeat.
    pub broker_addr: String,
    /// When its latest heartbeat arrived.
    pub last_heartbeat: Millis,
    /// Its heartbeat timeout, from the latest heartbeat.
    pub timeout_ms: u64,
    /// The highest epoch it reported.
    pub epoch: i32,
    /// Its max offset at that epoch (never moves back within an epoch).
    pub max_offset: i64,
    /// Its confirm offset, reported with `max_offset`.
    pub confirm_offset: i64,
    /// Its election priority, from the latest heartbeat.
    pub election_priority: i32,
    /// The connection its latest heartbeat came on; when that connection
    /// closes, the replica is taken for dead at once.
    pub conn: Option<u64>,
}

impl LiveInfo {
    /// Alive at `now`: the latest heartbeat plus its timeout is not past.
    pub fn is_alive(&self, now: Millis) -> bool {
        self.last_heartbeat.plus(self.timeout_ms) >= now
    }
}

/// Every replica that heartbeats this node.
#[derive(Debug, Clone, Default)]
pub struct LiveTable {
    /// A hash map (a heartbeat is a lookup; thousands arrive per second)
    /// with a fixed hasher, so runs are repeatable; what leaves it is
    /// reported sorted.
    entries: HashMap<LiveKey, LiveInfo, BuildHasherDefault<KeyHasher>>,
}

/// The live table's hasher: a multiply-rotate hash over eight bytes at a
/// time (rustc's FxHash, plus a final rotation that brings its best-mixed
/// bits down to where the map picks its bucket). Hashing a key with std's
/// SipHash costs as much as the rest of recording a heartbeat, and SipHash
/// with std's fixed default keys, as a repeatable table needs, resists
/// chosen collisions no better than this one.
#[derive(Debug, Clone, Copy, Default)]
struct KeyHasher(u64);

impl KeyHasher {
    const SEED: u64 = 0xf135_7aea_2e62_a9c5;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            // The length keeps "a" and "a\0" apart.
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_i64(&mut self, n: i64) {
        self.add(n as u64);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

impl LiveTable {
    /// An empty table.
    pub fn new() -> LiveTable {
        LiveTable::default()
    }

    /// Records a heartbeat that arrived at `now` on `conn`; whether the
    /// replica was new to the table.
    ///
    /// Epoch and offsets only move forward (a higher epoch, or a higher
    /// offset at the same epoch), so a replica that truncated its log keeps
    /// its election rank until its epoch grows, as in Java. Unlike Java, the
    /// address and the connection follow the latest heartbeat: a broker that
    /// reconnected is not taken for dead when its old connection closes.
    pub fn heartbeat(&mut self, hb: Heartbeat, conn: Option<u64>, now: Millis) -> bool {
        let epoch = hb.epoch.unwrap_or(-1);
        let max_offset = hb.max_offset.unwrap_or(-1);
        let confirm_offset = hb.confirm_offset.unwrap_or(-1);
        let timeout_ms = hb.timeout_ms.map_or(DEFAULT_HEARTBEAT_TIMEOUT_MS, |ms| {
            u64::try_from(ms).unwrap_or(0)
        });
        let election_priority = hb.election_priority.unwrap_or(i32::MAX);
        match self.entries.get_mut(&hb.key) {
            Some(info) => {
                info.broker_addr = hb.broker_addr;
                info.last_heartbeat = now;
                info.timeout_ms = timeout_ms;
                info.election_priority = election_priority;
                info.conn = conn;
                if epoch > info.epoch || (epoch == info.epoch && max_offset > info.max_offset) {
                    info.epoch = epoch;
                    info.max_offset = max_offset;
                    info.confirm_offset = confirm_offset;
                }
                false
            }
            None => {
                self.entries.insert(
                    hb.key,
                    LiveInfo {
                        broker_addr: hb.broker_addr,
                        last_heartbeat: now,
                        timeout_ms,
                        epoch,
                        max_offset,
                        confirm_offset,
                        election_priority,
                        conn,
                    },
                );
                true
            }
        }
    }

    /// What the table knows of a replica.
    pub fn get(&self, cluster: &str, broker_name: &str, broker_id: i64) -> Option<&LiveInfo> {
        // The key must be owned to look it up; a replica is looked up only
        // when a decision needs it, far less often than it heartbeats.
        self.entries.get(&LiveKey {
            cluster: cluster.to_owned(),
            broker_name: broker_name.to_owned(),
            broker_id,
        })
    }

    /// Whether a replica heartbeats in time at `now`.
    pub fn is_alive(&self, cluster: &str, broker_name: &str, broker_id: i64, now: Millis) -> bool {
        self.get(cluster, broker_name, broker_id)
            .is_some_and(|info| info.is_alive(now))
    }

    /// Removes the replicas whose heartbeat timeout has passed at `now`.
    pub fn expire(&mut self, now: Millis) -> Vec<LiveKey> {
        let mut expired: Vec<LiveKey> = self
            .entries
            .iter()
            .filter(|(_, info)| !info.is_alive(now))
            .map(|(key, _)| key.clone())
            .collect();
        expired.sort();
        for key in &expired {
            self.entries.remove(key);
        }
        expired
    }

    /// Removes the replicas whose latest heartbeat came on `conn`, which
    /// has closed.
    pub fn disconnected(&mut self, conn: u64) -> Vec<LiveKey> {
        let mut gone: Vec<LiveKey> = self
            .entries
            .iter()
            .filter(|(_, info)| info.conn == Some(conn))
            .map(|(key, _)| key.clone())
            .collect();
        gone.sort();
        for key in &gone {
            self.entries.remove(key);
        }
        gone
    }

    /// This node was stalled (its own process did not run): nobody could
    /// heartbeat it, so every replica's timeout starts again at `now`.
    pub fn restart_timeouts(&mut self, now: Millis) {
        for info in self.entries.values_mut() {
            info.last_heartbeat = info.last_heartbeat.max(now);
        }
    }

    /// How many replicas the table holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hb(id: i64, epoch: i32, max_offset: i64) -> Heartbeat {
        Heartbeat {
            key: LiveKey {
                cluster: "c".into(),
                broker_name: "b".into(),
                broker_id: id,
            },
            broker_addr: format!("10.0.0.{id}:30911"),
            epoch: Some(epoch),
            max_offset: Some(max_offset),
            confirm_offset: Some(max_offset),
            timeout_ms: Some(4_000),
            election_priority: None,
        }
    }

    #[test]
    fn alive_until_the_timeout_passes() {
        let mut live = LiveTable::new();
        assert!(live.heartbeat(hb(1, 1, 100), Some(7), Millis(1_000)));
        assert!(live.is_alive("c", "b", 1, Millis(5_000)));
        assert!(!live.is_alive("c", "b", 1, Millis(5_001)));
        assert!(!live.is_alive("c", "b", 2, Millis(1_000)));
        assert!(live.expire(Millis(5_000)).is_empty());
        assert_eq!(live.expire(Millis(5_001)).len(), 1);
        assert!(live.is_empty());
    }

    #[test]
    fn epoch_and_offset_only_move_forward() {
        let mut live = LiveTable::new();
        live.heartbeat(hb(1, 2, 500), None, Millis(0));
        assert!(!live.heartbeat(hb(1, 2, 300), None, Millis(10)));
        assert_eq!(live.get("c", "b", 1).unwrap().max_offset, 500);
        live.heartbeat(hb(1, 1, 900), None, Millis(20));
        assert_eq!(live.get("c", "b", 1).unwrap().epoch, 2);
        live.heartbeat(hb(1, 3, 10), None, Millis(30));
        let info = live.get("c", "b", 1).unwrap();
        assert_eq!(
            (info.epoch, info.max_offset, info.last_heartbeat),
            (3, 10, Millis(30))
        );
    }

    #[test]
    fn a_closed_connection_takes_only_its_replicas() {
        let mut live = LiveTable::new();
        live.heartbeat(hb(1, 1, 0), Some(1), Millis(0));
        live.heartbeat(hb(2, 1, 0), Some(2), Millis(0));
        // Replica 2 reconnected: its old connection closing no longer matters.
        live.heartbeat(hb(2, 1, 0), Some(3), Millis(5));
        assert!(live.disconnected(2).is_empty());
        let gone = live.disconnected(1);
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].broker_id, 1);
        assert!(live.is_alive("c", "b", 2, Millis(10)));
    }

    #[test]
    fn after_a_stall_every_timeout_starts_again() {
        let mut live = LiveTable::new();
        live.heartbeat(hb(1, 1, 0), None, Millis(0));
        live.restart_timeouts(Millis(60_000));
        assert!(live.is_alive("c", "b", 1, Millis(64_000)));
        assert!(!live.is_alive("c", "b", 1, Millis(64_001)));
    }

    #[test]
    fn keys_that_differ_a_little_hash_apart() {
        use std::hash::BuildHasher;
        let hash = |cluster: &str, name: &str, id: i64| {
            BuildHasherDefault::<KeyHasher>::default().hash_one(LiveKey {
                cluster: cluster.into(),
                broker_name: name.into(),
                broker_id: id,
            })
        };
        let keys = [
            hash("c", "broker-a", 1),
            hash("c", "broker-a", 2),
            hash("c", "broker-b", 1),
            hash("c", "broker-a\0", 1),
            hash("cb", "roker-a", 1),
            hash("DefaultCluster", "broker-a", 1),
            hash("DefaultCluster", "broker-a-0123456789", 1),
            hash("DefaultCluster", "broker-a-0123456788", 1),
        ];
        let distinct: std::collections::HashSet<u64> = keys.iter().copied().collect();
        assert_eq!(distinct.len(), keys.len(), "{keys:x?}");
    }

    #[test]
    fn defaults_of_a_heartbeat_without_options() {
        let mut live = LiveTable::new();
        let mut bare = hb(1, 0, 0);
        (
            bare.epoch,
            bare.max_offset,
            bare.confirm_offset,
            bare.timeout_ms,
        ) = (None, None, None, None);
        live.heartbeat(bare, None, Millis(0));
        let info = live.get("c", "b", 1).unwrap();
        assert_eq!(
            (info.epoch, info.max_offset, info.timeout_ms),
            (-1, -1, 10_000)
        );
        assert_eq!(info.election_priority, i32::MAX);
    }
}
