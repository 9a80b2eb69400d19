//! The topic lists this node answered pulls with, kept while the topic map
//! is not written.
//!
//! A pull is answered with the broker's topics as the table holds them, and
//! the table has no index from a broker to its topics: collecting them reads
//! every topic of the map. Every other node pulls each registration, and a
//! broker re-registering unchanged topics (most registrations) leaves the
//! map unwritten, so the list collected for one answer is the list of the
//! next answers too. It stays valid exactly while the map's write count
//! ([`RouteTable::topic_edits`](crate::route::RouteTable::topic_edits))
//! does not move: every write to the map counts. The lists kept are bounded
//! by [`MAX_KEPT_TOPICS`] topics in all; past it a list is collected for each
//! answer, as without this.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use rmq_protocol::TopicConfig;

/// Topics kept in all, across brokers: about 10 MiB of topic configs.
pub const MAX_KEPT_TOPICS: usize = 100_000;

/// Broker name → its topics, as collected at write count `edits`.
#[derive(Debug, Default)]
pub struct HeldTopicLists {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    edits: u64,
    topics: usize,
    by_broker: HashMap<String, Arc<[TopicConfig]>>,
}

impl Kept {
    /// Forgets every list if the map was written since they were collected.
    fn at(&mut self, edits: u64) {
        if self.edits != edits {
            self.by_broker.clear();
            self.topics = 0;
            self.edits = edits;
        }
    }
}

impl HeldTopicLists {
    /// The topics of `broker_name` with the map at write count `edits`:
    /// kept, or `collect`ed (and kept while within the bound). The caller
    /// holds the table's read lock, so the count cannot move meanwhile.
    pub fn get_or_collect(
        &self,
        broker_name: &str,
        edits: u64,
        collect: impl FnOnce() -> Vec<TopicConfig>,
    ) -> Vec<TopicConfig> {
        {
            let mut kept = self.kept.lock();
            kept.at(edits);
            if let Some(topics) = kept.by_broker.get(broker_name) {
                return topics.to_vec();
            }
        }
        let topics = collect();
        let mut kept = self.kept.lock();
        kept.at(edits);
        if kept.topics + topics.len() <= MAX_KEPT_TOPICS {
            kept.topics += topics.len();
            kept.by_broker
                .insert(broker_name.to_owned(), topics.as_slice().into());
        }
        topics
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(names: &[&str]) -> Vec<TopicConfig> {
        names.iter().map(|n| TopicConfig::new(*n)).collect()
    }

    #[test]
    fn a_list_is_collected_once_per_write_count() {
        let lists = HeldTopicLists::default();
        let mut collected = 0;
        let mut get = |name: &str, edits: u64, topics: &[&str]| {
            lists.get_or_collect(name, edits, || {
                collected += 1;
                list(topics)
            })
        };
        assert_eq!(get("a", 7, &["T1", "T2"]), list(&["T1", "T2"]));
        // Kept: what a second collection would find does not matter.
        assert_eq!(get("a", 7, &["other"]), list(&["T1", "T2"]));
        assert_eq!(get("b", 7, &["T3"]), list(&["T3"]));
        // The map was written: collected again.
        assert_eq!(get("a", 8, &["T1"]), list(&["T1"]));
        assert_eq!(collected, 3);
    }

    #[test]
    fn past_the_bound_lists_are_collected_every_time() {
        let lists = HeldTopicLists::default();
        let big: Vec<String> = (0..MAX_KEPT_TOPICS).map(|i| format!("T{i}")).collect();
        let big: Vec<&str> = big.iter().map(String::as_str).collect();
        let mut collected = 0;
        let mut get = |name: &str, topics: &[&str]| {
            lists.get_or_collect(name, 1, || {
                collected += 1;
                list(topics)
            })
        };
        get("big", &big);
        get("small", &["T"]);
        get("small", &["T"]);
        get("big", &big);
        assert_eq!(
            collected, 3,
            "the big list is kept, the small one finds no room"
        );
    }
}
