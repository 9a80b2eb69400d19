//! `CONSISTENT_HASH`: queues placed on a hash ring of consumer virtual nodes
//! (Java `AllocateMessageQueueConsistentHash` over `ConsistentHashRouter`).
//!
//! Owns the ring and Java's default MD5 hash (first four digest bytes,
//! big-endian, as an unsigned value in a `long`). Java peers compute the
//! same ring, so the keys (`<cid>-<replica>`, the queue's `toString`) and
//! the collision rule (a later key overwrites) must match byte for byte.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use super::{precheck, AllocateError, AllocateStrategy};
use crate::MessageQueue;

/// A ring hash: Java `HashFunction.hash(String) -> long`.
pub type HashFunction = Arc<dyn Fn(&str) -> i64 + Send + Sync>;

/// Java `ConsistentHashRouter.MD5Hash`: the first four bytes of the MD5 of
/// the UTF-8 key, big-endian, unsigned.
pub fn md5_hash(key: &str) -> i64 {
    let digest = md5::compute(key.as_bytes());
    i64::from(u32::from_be_bytes([
        digest[0], digest[1], digest[2], digest[3],
    ]))
}

/// Java `AllocateMessageQueueConsistentHash`.
#[derive(Clone)]
pub struct AllocateConsistentHash {
    virtual_node_cnt: usize,
    hash: HashFunction,
}

impl Default for AllocateConsistentHash {
    /// 10 virtual nodes per consumer, MD5 hash.
    fn default() -> Self {
        AllocateConsistentHash::new(10)
    }
}

impl fmt::Debug for AllocateConsistentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AllocateConsistentHash")
            .field("virtual_node_cnt", &self.virtual_node_cnt)
            .finish_non_exhaustive()
    }
}

impl AllocateConsistentHash {
    /// `virtual_node_cnt` nodes per consumer with the MD5 hash. Java rejects
    /// a negative count; `usize` cannot be one. 0 makes an empty ring, which
    /// allocates nothing to anyone.
    pub fn new(virtual_node_cnt: usize) -> Self {
        AllocateConsistentHash::with_hash(virtual_node_cnt, Arc::new(md5_hash))
    }

    /// A custom hash function, as Java's three-argument constructor.
    pub fn with_hash(virtual_node_cnt: usize, hash: HashFunction) -> Self {
        AllocateConsistentHash {
            virtual_node_cnt,
            hash,
        }
    }

    /// The ring for `consumers`: hash → consumer index. A consumer id seen
    /// twice continues its replica numbering from the nodes it already has
    /// on the ring (Java `getExistingReplicas`).
    fn ring(&self, consumers: &[String]) -> BTreeMap<i64, usize> {
        let mut ring = BTreeMap::new();
        for (index, cid) in consumers.iter().enumerate() {
            let existing = ring
                .values()
                .filter(|&&owner: &&usize| consumers[owner] == *cid)
                .count();
            for replica in existing..existing + self.virtual_node_cnt {
                ring.insert((self.hash)(&format!("{cid}-{replica}")), index);
            }
        }
        ring
    }
}

impl AllocateStrategy for AllocateConsistentHash {
    fn name(&self) -> String {
        "CONSISTENT_HASH".into()
    }

    fn allocate(
        &self,
        _group: &str,
        current: &str,
        queues: &[MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<MessageQueue>, AllocateError> {
        if precheck(current, queues, consumers)?.is_none() {
            return Ok(Vec::new());
        }
        let ring = self.ring(consumers);
        let owner = |key: &str| {
            let h = (self.hash)(key);
            ring.range(h..)
                .next()
                .or_else(|| ring.iter().next())
                .map(|(_, &index)| consumers[index].as_str())
        };
        Ok(queues
            .iter()
            .filter(|mq| owner(&mq.to_string()) == Some(current))
            .cloned()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allocate::tests::{all, eight, ids};

    #[test]
    fn md5_hashes_of_queue_keys_and_virtual_nodes() {
        let table = [
            (0, 1_987_926_524_i64),
            (1, 4_291_349_817),
            (2, 853_506_239),
            (3, 3_652_785_994),
            (4, 2_152_192_320),
            (5, 672_344_976),
            (6, 3_597_050_942),
            (7, 4_140_580_766),
        ];
        let queues = eight();
        for (i, want) in table {
            assert_eq!(md5_hash(&queues[i].to_string()), want, "{}", queues[i]);
        }
        assert_eq!(md5_hash("c1-0"), 3_886_541_579);
    }

    #[test]
    fn allocations_over_two_sets_of_consumer_ids() {
        let strategy = AllocateConsistentHash::default();
        let got = all(&strategy, &eight(), &ids(&["c1", "c2", "c3"]));
        assert_eq!(
            got,
            [
                vec!["a0", "b3"],
                vec!["a1", "b0", "b1"],
                vec!["a2", "a3", "b2"]
            ]
        );
        let realistic = ids(&["10.0.0.1@1001", "10.0.0.2@1002", "10.0.0.3@1003"]);
        let got = all(&strategy, &eight(), &realistic);
        assert_eq!(
            got,
            [
                vec!["a0", "b2"],
                vec!["a2", "b0", "b1"],
                vec!["a1", "a3", "b3"]
            ]
        );
    }

    #[test]
    fn every_queue_has_exactly_one_owner() {
        let strategy = AllocateConsistentHash::new(3);
        let consumers = ids(&["c1", "c2", "c3", "c4"]);
        let mut owned: Vec<String> = all(&strategy, &eight(), &consumers).concat();
        owned.sort();
        assert_eq!(owned, ["a0", "a1", "a2", "a3", "b0", "b1", "b2", "b3"]);
    }

    #[test]
    fn empty_ring_and_custom_hash() {
        let got = all(
            &AllocateConsistentHash::new(0),
            &eight(),
            &ids(&["c1", "c2"]),
        );
        assert_eq!(got, [Vec::<String>::new(), vec![]]);
        // A hash that puts every consumer node at 0 and queues above: wrap to
        // the first key; the later consumer overwrote it, so it owns all.
        let flat: HashFunction = Arc::new(|key: &str| {
            if key.starts_with("MessageQueue") {
                5
            } else {
                0
            }
        });
        let got = all(
            &AllocateConsistentHash::with_hash(2, flat),
            &eight(),
            &ids(&["c1", "c2"]),
        );
        assert_eq!(got[0].len(), 0);
        assert_eq!(got[1].len(), 8);
    }

    #[test]
    fn duplicate_ids_continue_replica_numbers() {
        let strategy = AllocateConsistentHash::new(2);
        let ring = strategy.ring(&ids(&["c1", "c1"]));
        let keys: Vec<i64> = ["c1-0", "c1-1", "c1-2", "c1-3"]
            .iter()
            .map(|k| md5_hash(k))
            .collect();
        let mut want = keys.clone();
        want.sort();
        assert_eq!(ring.keys().copied().collect::<Vec<_>>(), want);
    }
}
