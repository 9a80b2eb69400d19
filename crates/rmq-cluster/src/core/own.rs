//! This node's own gossip keys: broker keys with their publication
//! numbers, the manifest written after them, acknowledgements of what it
//! received, and the deletion of its tombstones once everyone has them.

use std::collections::BTreeMap;

use super::published::{
    Acks, BrokerRef, Entry, Lost, Manifest, Published, LOST_KEY, MANIFEST_KEY, READY_KEY, SEEN_KEY,
};
use super::{ClusterCore, Effect, Millis};

/// How often a node republishes the members it lost while there are some:
/// the error of a late receiver's estimate of when a member was last up.
pub const LOST_REFRESH_MS: Millis = 1_000;

impl ClusterCore {
    pub(super) fn publish_entry(&mut self, broker: BrokerRef, entry: Entry) {
        let published = Published {
            seq: self.next_seq,
            entry,
        };
        self.next_seq += 1;
        self.spoken_for.insert(broker.clone());
        self.outbox.push(Effect::Publish {
            key: broker.key(),
            value: published.encode(),
        });
        self.own.insert(broker, published);
    }

    /// After broker keys: the manifest (written last, so that a member
    /// holding it holds them), and a gossip round now rather than at the
    /// next one.
    pub(super) fn finish_publishing(&mut self) {
        let manifest = self.manifest();
        self.outbox.push(Effect::Publish {
            key: MANIFEST_KEY.to_owned(),
            value: manifest.encode(),
        });
        self.outbox.push(Effect::GossipNow);
    }

    fn manifest(&self) -> Manifest {
        Manifest {
            q: self.own.values().map(|p| p.seq).max().unwrap_or(0),
            n: self.direct.len() as u64,
        }
    }

    /// Deletes the tombstones that every member (but this node's own
    /// earlier incarnations, which will never answer) has acknowledged. A
    /// dead member holds them until the gossip library forgets it: should
    /// it come back, it must learn of the removals.
    pub(super) fn collect_tombstones(&mut self) {
        let me = &self.me;
        let acked =
            |seq: u64| {
                self.members
                    .iter()
                    .filter(|(id, _)| id.node != me.node)
                    .all(|(_, member)| {
                        member.acks.0.get(&me.node).is_some_and(|(generation, q)| {
                            *generation == me.generation && *q >= seq
                        })
                    })
            };
        let done: Vec<BrokerRef> = self
            .own
            .iter()
            .filter(|(_, published)| matches!(published.entry, Entry::Removed(_)))
            .filter(|(_, published)| acked(published.seq))
            .map(|(broker, _)| broker.clone())
            .collect();
        if done.is_empty() {
            return;
        }
        for broker in done {
            self.own.remove(&broker);
            self.outbox.push(Effect::Delete { key: broker.key() });
        }
        let manifest = self.manifest();
        self.outbox.push(Effect::Publish {
            key: MANIFEST_KEY.to_owned(),
            value: manifest.encode(),
        });
    }

    /// Publishes which publications of each node this one received (the
    /// newest incarnation per node name), at most once per
    /// `ack_interval_ms`.
    pub(super) fn publish_acks(&mut self, now: Millis) {
        let mut acks = BTreeMap::new();
        for (id, seq) in &self.received {
            let entry = acks.entry(id.node.clone()).or_insert((id.generation, *seq));
            if id.generation > entry.0 {
                *entry = (id.generation, *seq);
            }
        }
        let acks = Acks(acks);
        let due = match &self.acks_published {
            None => true,
            Some((published, at)) => *published != acks && now >= at + self.config.ack_interval_ms,
        };
        if due {
            self.outbox.push(Effect::Publish {
                key: SEEN_KEY.to_owned(),
                value: acks.encode(),
            });
            self.acks_published = Some((acks, now));
        }
    }

    /// Publishes the members this node has lost that held brokers whose
    /// deadline may not have passed, each with how long ago it last knew
    /// it up: when that set changes, and again every [`LOST_REFRESH_MS`]
    /// while it is not empty, so that a node that receives it late (it
    /// started since) is not misled by an old figure by more than that.
    pub(super) fn publish_lost(&mut self, now: Millis) {
        let lost: Vec<(String, Millis)> = self
            .members
            .iter()
            .filter(|(_, member)| !member.liveness.is_up())
            .filter_map(|(id, member)| {
                let last_up = member.last_up?;
                let longest = member
                    .brokers
                    .values()
                    .filter_map(|held| match &held.published.entry {
                        Entry::Present(digest) => Some(digest.timeout_ms),
                        Entry::Removed(_) => None,
                    })
                    .max()?;
                // Past its longest timeout (and a margin for silence and
                // detection) it vouches for nothing any more.
                (now <= last_up + longest + longest / 2 + LOST_REFRESH_MS)
                    .then(|| (format!("{}#{}", id.node, id.generation), last_up))
            })
            .collect();
        let names: Vec<String> = lost.iter().map(|(name, _)| name.clone()).collect();
        let due = names != self.lost_published.0
            || (!names.is_empty() && now >= self.lost_published.1 + LOST_REFRESH_MS);
        if !due {
            return;
        }
        self.lost_published = (names, now);
        let value = Lost(
            lost.into_iter()
                .map(|(name, last_up)| (name, now.saturating_sub(last_up)))
                .collect(),
        );
        self.outbox.push(Effect::Publish {
            key: LOST_KEY.to_owned(),
            value: value.encode(),
        });
    }

    pub(super) fn publish_ready(&mut self) {
        self.outbox.push(Effect::Publish {
            key: READY_KEY.to_owned(),
            value: "1".to_owned(),
        });
        self.outbox.push(Effect::GossipNow);
    }
}
