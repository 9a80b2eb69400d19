//! Brokers registered with this node directly: what the NameServer tells
//! the core of them, and what the core publishes in return.

use super::published::{BrokerDigest, BrokerRef, Entry, Removal, RemovalCause};
use super::{ClusterCore, Direct, MemberId, Millis, Relayed, Removing};

impl ClusterCore {
    /// A registration of `broker` with this node was applied; `digest`
    /// describes it (its `changed_at` is kept only if the registration
    /// differs from the one published). A relayed copy it replaces is
    /// forgotten: a direct registration always wins.
    pub fn direct_registered(&mut self, broker: BrokerRef, mut digest: BrokerDigest, now: Millis) {
        self.relayed.remove(&broker);
        digest.silent_ms = None;
        let publish = match self.direct.get_mut(&broker) {
            Some(direct) => {
                direct.last_seen = now;
                if !direct.digest.same_registration(&digest) {
                    direct.digest = digest;
                    Some(direct.digest.clone())
                } else if direct.digest.silent_ms.take().is_some() {
                    Some(direct.digest.clone())
                } else {
                    None
                }
            }
            None => {
                self.direct.insert(
                    broker.clone(),
                    Direct {
                        digest: digest.clone(),
                        last_seen: now,
                    },
                );
                Some(digest)
            }
        };
        if let Some(digest) = publish {
            self.publish_entry(broker, Entry::Present(digest));
            self.finish_publishing();
        }
    }

    /// The digest this node publishes for a broker it holds directly.
    pub fn direct_digest(&self, broker: &BrokerRef) -> Option<BrokerDigest> {
        self.direct.get(broker).map(|direct| direct.digest.clone())
    }

    /// The digest of the registration this node holds as relayed.
    pub fn relayed_digest(&self, broker: &BrokerRef) -> Option<BrokerDigest> {
        self.relayed
            .get(broker)
            .map(|relayed| relayed.digest.clone())
    }

    /// A heartbeat or data-version query of a directly held broker: it is
    /// not silent.
    pub fn direct_seen(&mut self, broker: &BrokerRef, now: Millis) {
        let Some(direct) = self.direct.get_mut(broker) else {
            return;
        };
        direct.last_seen = now;
        if direct.digest.silent_ms.take().is_none() {
            return;
        }
        let digest = direct.digest.clone();
        self.publish_entry(broker.clone(), Entry::Present(digest));
        self.finish_publishing();
    }

    /// What to do with a direct broker about to be removed (its connection
    /// closed, it expired, it unregistered): keep it as relayed if another
    /// member holds it directly and vouches for it, else remove it. The
    /// caller does one or the other, then reports what it did with
    /// [`direct_removed`](Self::direct_removed).
    pub fn removing_direct(&self, broker: &BrokerRef, now: Millis) -> Removing {
        match self.best_voucher(broker, now) {
            Some((member, _)) => Removing::Demote(member.clone()),
            None => Removing::Remove,
        }
    }

    /// A direct broker left the route table (`demoted_to: None`), or stays
    /// in it as relayed from that member: either way this node no longer
    /// holds it directly, and publishes a removal in place of its digest.
    pub fn direct_removed(
        &mut self,
        broker: &BrokerRef,
        cause: RemovalCause,
        demoted_to: Option<MemberId>,
    ) {
        let Some(direct) = self.direct.remove(broker) else {
            return;
        };
        let removal = Removal {
            name: direct.digest.name.clone(),
            id: direct.digest.id,
            version: direct.digest.version,
            cause,
        };
        self.publish_entry(broker.clone(), Entry::Removed(removal));
        self.finish_publishing();
        if let Some(from) = demoted_to {
            self.relayed.insert(
                broker.clone(),
                Relayed {
                    from,
                    digest: direct.digest,
                },
            );
            self.dirty.insert(broker.clone());
        }
    }

    /// A relayed broker left the route table by another way than
    /// [`Effect::RemoveRelayed`](super::Effect::RemoveRelayed) (the broker
    /// itself unregistered with this node): reconciled again.
    pub fn relayed_removed(&mut self, broker: &BrokerRef) {
        if self.relayed.remove(broker).is_some() {
            self.dirty.insert(broker.clone());
        }
    }

    /// Republishes, with how long, the digest of a direct broker silent
    /// for half its timeout: a member that loses this node then lets the
    /// broker go when this node would have, not a whole timeout after it
    /// last heard from this node.
    pub(super) fn mark_silence(&mut self, now: Millis) {
        let silent: Vec<(BrokerRef, BrokerDigest)> = self
            .direct
            .iter_mut()
            .filter(|(_, direct)| {
                direct.digest.silent_ms.is_none()
                    && now.saturating_sub(direct.last_seen) >= direct.digest.timeout_ms / 2
            })
            .map(|(broker, direct)| {
                direct.digest.silent_ms = Some(now - direct.last_seen);
                (broker.clone(), direct.digest.clone())
            })
            .collect();
        if silent.is_empty() {
            return;
        }
        for (broker, digest) in silent {
            self.publish_entry(broker, Entry::Present(digest));
        }
        self.finish_publishing();
    }
}
