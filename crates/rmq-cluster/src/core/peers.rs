//! What the core learns from gossip: members' published state and
//! liveness, and members forgotten.

use std::cmp::Ordering;

use super::members::{Liveness, Member, MemberUpdate};
use super::published::{BrokerRef, Entry, Removal};
use super::{ClusterCore, Effect, MemberId, Millis, RefusalKind};

impl ClusterCore {
    /// A member's state or liveness changed. Returns refusals of values it
    /// published; what to do about the change waits for
    /// [`tick`](Self::tick).
    pub fn member_changed(&mut self, update: MemberUpdate, now: Millis) -> Vec<Effect> {
        if update.id.node == self.me.node && update.id.generation >= self.me.generation {
            // This node's own state, or a newer incarnation of its name:
            // nothing to learn from either.
            return Vec::new();
        }
        // A node runs one incarnation at a time: once a later one is known,
        // the earlier has ended, whatever the failure detector says of it.
        // It counts any heartbeat newer than the one held as a sign of
        // life, and an ended life's last heartbeat can arrive late (at a
        // member cut off when it was sent, once the cut ends): taken for
        // life, it would keep that life's brokers for a detection time
        // more, and this member's word on when the life ended late by the
        // whole cut.
        let liveness = if self.later_incarnation_known(&update.id) {
            Liveness::Dead
        } else {
            update.liveness
        };
        self.end_earlier_incarnations(&update.id);
        let member = self
            .members
            .entry(update.id.clone())
            .or_insert_with(|| Member::new(update.gossip_addr.clone(), liveness, now));
        let liveness_changed = member.liveness != liveness;
        member.liveness = liveness;
        member.gossip_addr.clone_from(&update.gossip_addr);
        // When it was last up is noted at the tick, after every update of
        // the round: a later incarnation may come later in the same round.
        let applied = member.apply(&update, now);
        let received = self.received.entry(update.id.clone()).or_default();
        *received = (*received).max(member.max_seq());

        let mut effects: Vec<Effect> = applied
            .refused
            .into_iter()
            .map(|bad| Effect::Refused {
                peer: update.id.clone(),
                kind: RefusalKind::BadValue,
                detail: format!("{}: {}", bad.key, bad.problem),
            })
            .collect();
        let member = &self.members[&update.id];
        let mut touched = applied.brokers;
        if liveness_changed {
            touched.extend(member.brokers.keys().cloned());
        }
        let removals: Vec<(BrokerRef, Removal)> = touched
            .iter()
            .filter_map(
                |broker| match &member.brokers.get(broker)?.published.entry {
                    Entry::Removed(removal) => Some((broker.clone(), removal.clone())),
                    Entry::Present(_) => None,
                },
            )
            .collect();
        let held: Vec<(BrokerRef, bool)> = touched
            .into_iter()
            .map(|broker| {
                let has = member.brokers.contains_key(&broker);
                (broker, has)
            })
            .collect();
        for (broker, removal) in removals {
            if self.removal_ahead(&broker, &removal) {
                effects.push(Effect::Refused {
                    peer: update.id.clone(),
                    kind: RefusalKind::RemovalAhead,
                    detail: format!(
                        "removal of {broker} at version {:?}, newer than any this node knows; it withdraws only that member's own word",
                        removal.version
                    ),
                });
            }
        }
        for (broker, has) in held {
            if has {
                self.holders
                    .entry(broker.clone())
                    .or_default()
                    .insert(update.id.clone());
            } else {
                self.forget_holder(&broker, &update.id);
            }
            self.dirty.insert(broker);
        }
        effects
    }

    /// Whether a later incarnation of `id`'s node is known: this node
    /// itself, or a member.
    fn later_incarnation_known(&self, id: &MemberId) -> bool {
        let later = |other: &MemberId| other.node == id.node && other.generation > id.generation;
        later(&self.me) || self.members.keys().any(later)
    }

    /// Takes every earlier incarnation of `id`'s node for down: `id` has
    /// started since they ended.
    fn end_earlier_incarnations(&mut self, id: &MemberId) {
        for (other, member) in &mut self.members {
            if other.node == id.node && other.generation < id.generation && member.liveness.is_up()
            {
                member.liveness = Liveness::Dead;
                self.dirty.extend(member.brokers.keys().cloned());
            }
        }
    }

    /// The gossip library forgot a member (dead for its grace period).
    pub fn member_gone(&mut self, id: &MemberId) {
        let Some(member) = self.members.remove(id) else {
            return;
        };
        self.received.remove(id);
        for broker in member.brokers.into_keys() {
            self.forget_holder(&broker, id);
            self.dirty.insert(broker);
        }
    }

    fn forget_holder(&mut self, broker: &BrokerRef, id: &MemberId) {
        if let Some(holders) = self.holders.get_mut(broker) {
            holders.remove(id);
            if holders.is_empty() {
                self.holders.remove(broker);
            }
        }
    }

    /// Whether a removal names a version made by more changes than this
    /// node knows the broker to have anywhere (its own registration, a digest, a relayed
    /// copy).
    fn removal_ahead(&self, broker: &BrokerRef, removal: &Removal) -> bool {
        let direct = self.direct.get(broker).map(|direct| direct.digest.version);
        let published = self
            .holders
            .get(broker)
            .into_iter()
            .flatten()
            .filter_map(
                |id| match &self.members[id].brokers.get(broker)?.published.entry {
                    Entry::Present(digest) => Some(digest.version),
                    Entry::Removed(_) => None,
                },
            );
        let relayed = self
            .relayed
            .get(broker)
            .map(|relayed| relayed.digest.version);
        // By changes made, not by timestamp: a removal of a registration
        // whose timestamp went back is not ahead of anything.
        direct
            .into_iter()
            .chain(published)
            .chain(relayed)
            .max_by(|a, b| a.cmp_changes(b))
            .is_some_and(|newest| removal.version.cmp_changes(&newest) == Ordering::Greater)
    }
}
