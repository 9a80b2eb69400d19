//! Deleted topics that stay deleted.
//!
//! DELETE_TOPIC_IN_NAMESRV removes a topic's queue data, but a broker
//! registration already on its way, sent before the broker forgot the topic,
//! still lists it. Java writes every topic a registration lists that its
//! table lacks, so that late registration brings the topic back until the
//! broker's next change of DataVersion. Here the deletion leaves, for each
//! broker group whose queue data it removed, the DataVersion that group's
//! registering member had last sent: a registration of the group carrying
//! that same DataVersion does not write the topic again; one carrying any
//! other DataVersion (the broker changed something, maybe re-created the
//! topic) clears the group's marks that differ from it and is written as
//! sent.
//!
//! The marks are bounded, per group and in all, the oldest going first, and
//! leave with their group. They are not kept in the route snapshot.

use std::collections::{BTreeMap, HashMap};

use rmq_protocol::DataVersion;

/// Deletion marks a broker group keeps at most; past it the oldest goes.
pub const TOMBSTONES_PER_GROUP: usize = 1_024;

/// Deletion marks the table keeps at most; past it the oldest goes.
pub const TOMBSTONES_IN_ALL: usize = 65_536;

/// One deleted topic of one group.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Tombstone {
    /// Order of deletion, for dropping the oldest.
    seq: u64,
    /// The DataVersion the group's registering member last sent when the
    /// topic was deleted.
    version: DataVersion,
}

/// Every deletion mark: broker name → topic → mark.
#[derive(Debug, Default, Clone)]
pub(super) struct Tombstones {
    by_group: HashMap<String, HashMap<String, Tombstone>>,
    /// seq → (broker name, topic): the marks in deletion order.
    order: BTreeMap<u64, (String, String)>,
    next_seq: u64,
}

impl Tombstones {
    /// Marks `topic` deleted for `broker_name` at `version`; returns how many
    /// older marks were dropped to stay within the bounds.
    pub(super) fn insert(&mut self, broker_name: &str, topic: &str, version: DataVersion) -> usize {
        let seq = self.next_seq;
        self.next_seq += 1;
        let group = self.by_group.entry(broker_name.to_owned()).or_default();
        if let Some(old) = group.insert(topic.to_owned(), Tombstone { seq, version }) {
            self.order.remove(&old.seq);
        }
        self.order
            .insert(seq, (broker_name.to_owned(), topic.to_owned()));
        let mut dropped = 0;
        if group.len() > TOMBSTONES_PER_GROUP {
            // The group's oldest: a scan of at most the bound, and only
            // when an operator deletes past it.
            if let Some((oldest, seq)) = group
                .iter()
                .min_by_key(|(_, mark)| mark.seq)
                .map(|(topic, mark)| (topic.clone(), mark.seq))
            {
                group.remove(&oldest);
                self.order.remove(&seq);
                dropped += 1;
            }
        }
        while self.order.len() > TOMBSTONES_IN_ALL {
            let Some((_, (name, topic))) = self.order.pop_first() else {
                break;
            };
            self.remove_mark(&name, &topic);
            dropped += 1;
        }
        dropped
    }

    fn remove_mark(&mut self, broker_name: &str, topic: &str) {
        if let Some(group) = self.by_group.get_mut(broker_name) {
            group.remove(topic);
            if group.is_empty() {
                self.by_group.remove(broker_name);
            }
        }
    }

    /// Whether a registration of `broker_name` with `version` is to leave
    /// `topic` unwritten.
    pub(super) fn holds(&self, broker_name: &str, topic: &str, version: &DataVersion) -> bool {
        self.by_group
            .get(broker_name)
            .and_then(|group| group.get(topic))
            .is_some_and(|mark| mark.version == *version)
    }

    /// Whether `broker_name` has any mark.
    pub(super) fn has_group(&self, broker_name: &str) -> bool {
        self.by_group.contains_key(broker_name)
    }

    /// Drops the marks of `broker_name` whose DataVersion is not `version`:
    /// the broker registered something newer than what the deletion saw.
    pub(super) fn keep_only(&mut self, broker_name: &str, version: &DataVersion) {
        let Some(group) = self.by_group.get_mut(broker_name) else {
            return;
        };
        let order = &mut self.order;
        group.retain(|_, mark| {
            let keep = mark.version == *version;
            if !keep {
                order.remove(&mark.seq);
            }
            keep
        });
        if group.is_empty() {
            self.by_group.remove(broker_name);
        }
    }

    /// Drops one mark (the topic was registered again by an operator).
    pub(super) fn forget(&mut self, broker_name: &str, topic: &str) {
        let seq = self
            .by_group
            .get(broker_name)
            .and_then(|group| group.get(topic))
            .map(|mark| mark.seq);
        if let Some(seq) = seq {
            self.order.remove(&seq);
            self.remove_mark(broker_name, topic);
        }
    }

    /// Drops every mark of `broker_name` (the group left the table).
    pub(super) fn forget_group(&mut self, broker_name: &str) {
        if let Some(group) = self.by_group.remove(broker_name) {
            for mark in group.values() {
                self.order.remove(&mark.seq);
            }
        }
    }

    /// How many marks there are.
    pub(super) fn len(&self) -> usize {
        self.order.len()
    }
}
