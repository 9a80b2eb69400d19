//! Bringing this node's relayed brokers in line with what members vouch
//! for: which copy to hold, pulling it, applying or dropping the answer,
//! and letting a broker go when no member vouches for it any more.

use std::cmp::Ordering;

use super::published::{BrokerDigest, BrokerRef, Entry};
use super::{
    ClusterCore, Effect, MemberId, Millis, Pull, PullFailure, PullId, PullRequest, RefusalKind,
    Relayed, RelayedGone,
};

impl ClusterCore {
    /// When `id` was last known up: by this node, or, for a member this
    /// node never saw up, the latest any other member says it lost it at.
    pub(super) fn last_up_of(&self, id: &MemberId) -> Option<Millis> {
        let member = self.members.get(id)?;
        if member.last_up.is_some() {
            return member.last_up;
        }
        let key = format!("{}#{}", id.node, id.generation);
        self.members
            .values()
            // Only members up now: they republish their list every second,
            // so "lost N ms ago" is close to when they said it; a down
            // member's last list may reach this node long after it was
            // made and would put the lost member's last life far too late.
            .filter(|other| other.liveness.is_up())
            .filter_map(|other| {
                let (lost, received_at) = other.lost.as_ref()?;
                let ago = lost.0.get(&key)?;
                Some(received_at.saturating_sub(*ago))
            })
            .max()
    }

    /// The member whose digest for `broker` is the one to hold: among
    /// those vouching for it, the registration made by the most changes
    /// ([`Version::cmp_changes`](super::published::Version::cmp_changes): stateVersion, then counter, never the
    /// broker's timestamp); then one that is up, not reporting the broker
    /// silent, most recently changed, and the smallest id.
    pub(super) fn best_voucher(
        &self,
        broker: &BrokerRef,
        now: Millis,
    ) -> Option<(&MemberId, &BrokerDigest)> {
        self.holders
            .get(broker)?
            .iter()
            .filter_map(|id| {
                let member = &self.members[id];
                if !self.vouched_by(id, broker, now) {
                    return None;
                }
                match &member.brokers[broker].published.entry {
                    Entry::Present(digest) => Some((id, member.liveness.is_up(), digest)),
                    Entry::Removed(_) => None,
                }
            })
            .max_by(|(a_id, a_up, a), (b_id, b_up, b)| {
                a.version
                    .cmp_changes(&b.version)
                    .then(a_up.cmp(b_up))
                    .then(b.silent_ms.is_some().cmp(&a.silent_ms.is_some()))
                    .then(a.changed_at.cmp(&b.changed_at))
                    .then(b_id.cmp(a_id))
            })
            .map(|(id, _, digest)| (id, digest))
    }

    /// Whether a down member this node never saw up still awaits the word
    /// of some up member on when it was last up, while a later word could
    /// keep one of its brokers that the words taken so far let go. The
    /// latest word is the one that counts, and a member that lost it late
    /// (it kept hearing from it while another was cut off from it) may
    /// still see it up and may still route its brokers: a node that took
    /// only the earlier words would start without them. Every member up
    /// now, but the member's own node, is waited for; one that never knew
    /// the member never gives its word, and the bootstrap timeout ends
    /// that wait.
    pub(super) fn awaits_later_word(&self, id: &MemberId, now: Millis) -> bool {
        let Some(member) = self.members.get(id) else {
            return false;
        };
        if member.liveness.is_up() || member.last_up.is_some() {
            return false;
        }
        let key = format!("{}#{}", id.node, id.generation);
        let silent = self.members.iter().any(|(other_id, other)| {
            other_id.node != id.node
                && other.liveness.is_up()
                && other
                    .lost
                    .as_ref()
                    .is_none_or(|(lost, _)| !lost.0.contains_key(&key))
        });
        silent
            && member.brokers.keys().any(|broker| {
                !self.vouched_by(id, broker, now) && self.vouched_given(id, broker, Some(now), now)
            })
    }

    /// Whether member `id` vouches for `broker` at `now`: not superseded
    /// by a later incarnation, alive by what it last said, and, while it
    /// is down, not for a registration this node has already outlived.
    fn vouched_by(&self, id: &MemberId, broker: &BrokerRef, now: Millis) -> bool {
        self.vouched_given(id, broker, self.last_up_of(id), now)
    }

    /// [`vouched_by`](Self::vouched_by), with `id` taken to have been last
    /// up at `last_up`.
    fn vouched_given(
        &self,
        id: &MemberId,
        broker: &BrokerRef,
        last_up: Option<Millis>,
        now: Millis,
    ) -> bool {
        let Some(member) = self.members.get(id) else {
            return false;
        };
        if self.superseded(id, broker) || !member.vouches(broker, last_up, now) {
            return false;
        }
        if member.liveness.is_up() {
            return true;
        }
        let outlived = self.outlived.get(broker);
        match (&member.brokers[broker].published.entry, outlived) {
            // Compared by the broker's own DataVersion, the same at every
            // holder: the copy let go may be another holder's, whose topic
            // fingerprint differs from this member's for the same
            // registration. Outlived are that very registration and those
            // made by fewer changes; one that differs from it only in its
            // timestamp is not taken for older (the broker's clock may
            // have been set back).
            (Entry::Present(digest), Some(gone)) => {
                !(digest.name == gone.name
                    && digest.id == gone.id
                    && (digest.version == gone.version
                        || digest.version.cmp_changes(&gone.version) == Ordering::Less))
            }
            _ => true,
        }
    }

    /// Whether this node holds `broker` as the cluster says it should:
    /// directly, relayed as its best voucher publishes it, or not at all
    /// when nobody vouches for it.
    pub(super) fn agreed(&self, broker: &BrokerRef, now: Millis) -> bool {
        if self.direct.contains_key(broker) {
            return true;
        }
        match (self.best_voucher(broker, now), self.relayed.get(broker)) {
            (None, None) => true,
            (Some((_, best)), Some(relayed)) => relayed.digest.same_registration(best),
            _ => false,
        }
    }

    pub(super) fn reconcile(&mut self, broker: &BrokerRef, now: Millis, effects: &mut Vec<Effect>) {
        if self.direct.contains_key(broker) {
            self.relayed.remove(broker);
            self.outlived.remove(broker);
            return;
        }
        if !self.holders.contains_key(broker) {
            self.outlived.remove(broker);
        }
        let best = self
            .best_voucher(broker, now)
            .map(|(id, digest)| (id.clone(), digest.clone()));
        let Some((best_id, best)) = best else {
            if self.awaits_word_of_my_past(broker, now) {
                return;
            }
            if let Some(gone) = self.relayed.remove(broker) {
                self.outlived.insert(broker.clone(), gone.digest);
                effects.push(Effect::RemoveRelayed {
                    broker: broker.clone(),
                    why: self.why_gone(broker),
                });
            }
            return;
        };
        if let Some(relayed) = self.relayed.get_mut(broker) {
            if relayed.digest.same_registration(&best) {
                relayed.from = best_id;
                return;
            }
        }
        // One pull of a broker at a time: an answer older than the best
        // digest is followed by another pull once it is in.
        if self.pulling.contains_key(broker) {
            return;
        }
        if self.pulls.len() >= self.config.max_pulls {
            self.dirty.insert(broker.clone());
            return;
        }
        let (from, remoting, digest, relayed) = match self.pull_source(broker, &best, now) {
            Some((from, remoting, digest)) => (from, remoting, digest, false),
            None if self.held_by_an_up_member(broker) => return,
            None => {
                // Every member holding it directly is down (a node that held
                // it alone restarted, say): an up member may hold the same
                // registration relayed.
                match self.relay_source(broker, now) {
                    Some((from, remoting)) => (from, remoting, best.clone(), true),
                    None => return,
                }
            }
        };
        let id = self.next_pull;
        self.next_pull += 1;
        self.pulls.insert(
            id,
            Pull {
                broker: broker.clone(),
                from: from.clone(),
                origin: if relayed { best_id } else { from.clone() },
                digest: digest.clone(),
                relayed,
                started: now,
            },
        );
        self.pulling.insert(broker.clone(), id);
        effects.push(Effect::Pull(PullRequest {
            id,
            broker: broker.clone(),
            from,
            remoting,
            digest,
            relayed,
        }));
    }

    /// Whether a later incarnation of `id`'s node has published anything
    /// of `broker`: what the earlier one said of it then no longer counts
    /// (a NameServer restarted on the same address that saw the broker
    /// close removes it for good, whatever its previous life held). This
    /// node is such a later incarnation of its own earlier ones: it does
    /// not keep, on its past life's word, a broker it has removed itself
    /// while every other member lets it go on that removal.
    pub(super) fn superseded(&self, id: &MemberId, broker: &BrokerRef) -> bool {
        let by_me = id.node == self.me.node
            && id.generation < self.me.generation
            && self.spoken_for.contains(broker);
        by_me
            || self.members.iter().any(|(other, member)| {
                other.node == id.node
                    && other.generation > id.generation
                    && member.spoken_for.contains(broker)
            })
    }

    /// Whether an earlier incarnation of this very node held `broker`
    /// directly and nobody has yet said when that one was last up: a node
    /// restarted on an empty disk pulled its copy from a peer, and the
    /// peers' word on its past life may take some rounds to arrive. Until
    /// it does (at most the broker's timeout after this start), the copy
    /// stays, instead of going and coming back with the word.
    fn awaits_word_of_my_past(&self, broker: &BrokerRef, now: Millis) -> bool {
        self.holders.get(broker).is_some_and(|holders| {
            holders.iter().any(|id| {
                let member = &self.members[id];
                let Entry::Present(digest) = &member.brokers[broker].published.entry else {
                    return false;
                };
                id.node == self.me.node
                    && id.generation < self.me.generation
                    && !member.liveness.is_up()
                    && now < self.started + digest.timeout_ms
                    && !self.superseded(id, broker)
                    && self.last_up_of(id).is_none()
            })
        })
    }

    /// Whether an up member publishes `broker` as held directly.
    fn held_by_an_up_member(&self, broker: &BrokerRef) -> bool {
        self.holders.get(broker).is_some_and(|holders| {
            holders.iter().any(|id| {
                let member = &self.members[id];
                member.liveness.is_up()
                    && !self.superseded(id, broker)
                    && matches!(member.brokers[broker].published.entry, Entry::Present(_))
            })
        })
    }

    /// An up member other than this node's name, not in its back-off for
    /// the broker, to ask for a relayed copy: serving members first (they
    /// held the cluster's routes), then by id.
    fn relay_source(&self, broker: &BrokerRef, now: Millis) -> Option<(MemberId, String)> {
        let candidates = self
            .members
            .iter()
            .filter(|(id, member)| {
                id.node != self.me.node
                    && member.liveness.is_up()
                    && self
                        .backoff
                        .get(&(broker.clone(), (*id).clone()))
                        .is_none_or(|until| now >= *until)
            })
            .filter_map(|(id, member)| Some((id, member.ready, member.remoting.as_ref()?)));
        candidates
            .max_by(|(a_id, a_ready, _), (b_id, b_ready, _)| {
                a_ready.cmp(b_ready).then(b_id.cmp(a_id))
            })
            .map(|(id, _, remoting)| (id.clone(), remoting.clone()))
    }

    /// An up member publishing `best`'s registration of `broker` that is
    /// not this node's name and not in its back-off for the broker.
    fn pull_source(
        &self,
        broker: &BrokerRef,
        best: &BrokerDigest,
        now: Millis,
    ) -> Option<(MemberId, String, BrokerDigest)> {
        self.holders[broker]
            .iter()
            .filter(|id| id.node != self.me.node)
            .filter(|id| {
                self.backoff
                    .get(&(broker.clone(), (*id).clone()))
                    .is_none_or(|until| now >= *until)
            })
            .find_map(|id| {
                let member = &self.members[id];
                let remoting = member.remoting.as_ref()?;
                match &member.brokers.get(broker)?.published.entry {
                    Entry::Present(digest)
                        if member.liveness.is_up() && digest.same_registration(best) =>
                    {
                        Some((id.clone(), remoting.clone(), digest.clone()))
                    }
                    _ => None,
                }
            })
    }

    fn why_gone(&self, broker: &BrokerRef) -> RelayedGone {
        let removed = self.holders.get(broker).and_then(|holders| {
            holders.iter().find_map(
                |id| match &self.members[id].brokers[broker].published.entry {
                    Entry::Removed(removal) => Some((id.clone(), removal.cause)),
                    Entry::Present(_) => None,
                },
            )
        });
        match removed {
            Some((by, cause)) => RelayedGone::Removed { by, cause },
            None if self.holders.contains_key(broker) => RelayedGone::Silent,
            None => RelayedGone::Unpublished,
        }
    }

    /// A pull ended: with the digest the member answered with, or a
    /// failure. The answer is applied only if it is the registration
    /// asked for (or newer), the broker is not held directly by now, and
    /// the member still publishes that registration: a removal that
    /// overtook the answer wins.
    pub fn pull_done(
        &mut self,
        id: PullId,
        result: Result<BrokerDigest, PullFailure>,
        now: Millis,
    ) -> Vec<Effect> {
        let Some(pull) = self.pulls.remove(&id) else {
            return vec![Effect::DiscardPulled {
                id,
                why: "the pull had timed out".into(),
            }];
        };
        if self.pulling.get(&pull.broker) == Some(&id) {
            self.pulling.remove(&pull.broker);
        }
        self.dirty.insert(pull.broker.clone());
        let mut effects = Vec::new();
        let answer = match result {
            Ok(answer) => answer,
            Err(failure) => {
                self.back_off(&pull, now);
                match failure {
                    // A member asked for a relayed copy may well have none.
                    PullFailure::NotHeld if pull.relayed => {}
                    PullFailure::NotHeld => effects.push(Effect::Refused {
                        peer: pull.from.clone(),
                        kind: RefusalKind::PullNotHeld,
                        detail: format!(
                            "publishes {} but answered that it does not hold it",
                            pull.broker
                        ),
                    }),
                    PullFailure::Failed(why) => effects.push(Effect::PullFailed {
                        from: pull.from.clone(),
                        broker: pull.broker.clone(),
                        why,
                    }),
                }
                effects.push(Effect::DiscardPulled {
                    id,
                    why: "failed".into(),
                });
                return effects;
            }
        };
        if self.direct.contains_key(&pull.broker) {
            effects.push(Effect::DiscardPulled {
                id,
                why: format!("{} registered here directly meanwhile", pull.broker),
            });
            return effects;
        }
        let mismatched = if pull.relayed {
            // A relayed copy is wanted exactly as its holder published it.
            !answer.same_registration(&pull.digest)
        } else {
            // The holder answers with what the broker registered there
            // last: the registration asked for or a later one, which may
            // carry an earlier timestamp (the broker's clock set back), so
            // only one made by fewer changes than the one asked for is
            // refused. Whether the holder still publishes it is checked
            // below.
            answer.name != pull.digest.name
                || answer.id != pull.digest.id
                || answer.version.cmp_changes(&pull.digest.version) == Ordering::Less
        };
        if mismatched && pull.relayed {
            self.back_off(&pull, now);
            effects.push(Effect::DiscardPulled {
                id,
                why: format!("{} holds another copy of {}", pull.from, pull.broker),
            });
            return effects;
        }
        if mismatched {
            self.back_off(&pull, now);
            effects.push(Effect::Refused {
                peer: pull.from.clone(),
                kind: RefusalKind::PullMismatch,
                detail: format!(
                    "answered {} id {} version {:?} for {}, which it publishes as {} id {} version {:?}",
                    answer.name,
                    answer.id,
                    answer.version,
                    pull.broker,
                    pull.digest.name,
                    pull.digest.id,
                    pull.digest.version
                ),
            });
            effects.push(Effect::DiscardPulled {
                id,
                why: "mismatched answer".into(),
            });
            return effects;
        }
        let still_published = self.members.get(&pull.origin).is_some_and(|member| {
            self.vouched_by(&pull.origin, &pull.broker, now)
                && member.brokers.get(&pull.broker).is_some_and(|held| {
                    // The registration the origin publishes, or one made by
                    // more changes that its gossip has not told yet.
                    match &held.published.entry {
                        Entry::Present(current) => {
                            answer.version == current.version
                                || answer.version.cmp_changes(&current.version) == Ordering::Greater
                        }
                        Entry::Removed(_) => false,
                    }
                })
        });
        if !still_published {
            effects.push(Effect::DiscardPulled {
                id,
                why: format!(
                    "{} was removed or changed at {} meanwhile",
                    pull.broker, pull.origin
                ),
            });
            return effects;
        }
        self.relayed.insert(
            pull.broker.clone(),
            Relayed {
                from: pull.origin.clone(),
                digest: answer,
            },
        );
        effects.push(Effect::ApplyPulled {
            id,
            broker: pull.broker,
            from: pull.origin,
        });
        effects
    }

    fn back_off(&mut self, pull: &Pull, now: Millis) {
        self.backoff.insert(
            (pull.broker.clone(), pull.from.clone()),
            now + self.config.pull_retry_ms,
        );
    }

    /// Pulls unanswered for longer than the pull timeout count as failed.
    pub(super) fn expire_pulls(&mut self, now: Millis, effects: &mut Vec<Effect>) {
        let expired: Vec<PullId> = self
            .pulls
            .iter()
            .filter(|(_, pull)| now >= pull.started + self.config.pull_timeout_ms)
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            let pull = self.pulls.remove(&id).expect("listed above");
            if self.pulling.get(&pull.broker) == Some(&id) {
                self.pulling.remove(&pull.broker);
            }
            self.back_off(&pull, now);
            self.dirty.insert(pull.broker.clone());
            effects.push(Effect::PullFailed {
                from: pull.from,
                broker: pull.broker,
                why: format!("no answer within {} ms", self.config.pull_timeout_ms),
            });
            effects.push(Effect::DiscardPulled {
                id,
                why: "timed out".into(),
            });
        }
        self.backoff.retain(|_, until| *until > now);
    }
}
