//! Time passing: what the core does on every tick, and when a node with
//! seeds has what it needs to serve (bootstrap).

use std::collections::BTreeSet;

use super::members::Member;
use super::published::{BrokerRef, Entry};
use super::{ClusterCore, Effect, Millis, Sweep};

/// How long a node with seeds, hearing only from members that are starting
/// too, waits before it takes the cluster for forming and serves: no member
/// holds routes it could lack.
pub const FORMING_MS: Millis = 2_000;

impl ClusterCore {
    /// Time passed: pulls to start or give up, relayed brokers to drop,
    /// silence to report, tombstones to delete, acknowledgements to
    /// publish, readiness. Brokers whose state changed since the last tick
    /// are reconciled every tick; every broker once per sweep interval
    /// (a down member's brokers leave on a deadline, not on an event).
    pub fn tick(&mut self, now: Millis) -> Vec<Effect> {
        let mut effects = Vec::new();
        for member in self.members.values_mut() {
            if member.liveness.is_up() {
                member.last_up = Some(now);
            }
        }
        self.expire_pulls(now, &mut effects);
        self.mark_silence(now);
        let mut brokers = std::mem::take(&mut self.dirty);
        let swept = self.sweep_due(now, &mut brokers);
        for broker in brokers {
            self.reconcile(&broker, now, &mut effects);
        }
        self.collect_tombstones();
        self.publish_acks(now);
        self.publish_lost(now);
        // Agreement is a pass over every member's brokers: taken at the end
        // of each sweep, and on every tick while bootstrap waits for it.
        if swept || !self.ready {
            let agreed = self.behind_total(now) == 0;
            if agreed {
                self.last_agreement = Some(now);
            }
            self.update_ready(agreed, now, &mut effects);
        }
        effects
    }

    /// Adds to `brokers` those the sweep reconciles at `now`, and says
    /// whether a sweep ended. A sweep begins every sweep interval with
    /// every broker known, in key order, and reaches each in proportion to
    /// the time passed since it began: in one piece, 1,000 brokers took
    /// milliseconds on the thread that also answers route queries. Each
    /// broker is still reconciled once per interval.
    fn sweep_due(&mut self, now: Millis, brokers: &mut BTreeSet<BrokerRef>) -> bool {
        let interval = self.config.sweep_interval_ms.max(1);
        let mut ended =
            !self.sweep.pending.is_empty() && self.sweep.take_due(now, interval, brokers);
        if self.sweep.pending.is_empty() && now >= self.next_sweep {
            self.next_sweep = now + interval;
            let every: BTreeSet<&BrokerRef> =
                self.holders.keys().chain(self.relayed.keys()).collect();
            let pending: Vec<BrokerRef> = every.into_iter().rev().cloned().collect();
            self.sweep = Sweep {
                len: pending.len(),
                pending,
                began: now,
            };
            ended |= self.sweep.take_due(now, interval, brokers);
        }
        ended
    }

    /// Of the brokers members vouch for (up ones, and down ones whose
    /// word still holds), how many this node does not hold as it should.
    fn behind_total(&self, now: Millis) -> usize {
        self.holders
            .keys()
            .filter(|broker| !self.agreed(broker, now))
            .count()
    }

    /// Of the brokers `member` publishes, how many this node does not hold
    /// as it should.
    pub(super) fn behind(&self, member: &Member, now: Millis) -> usize {
        member
            .brokers
            .iter()
            .filter(|(_, held)| matches!(held.published.entry, Entry::Present(_)))
            .filter(|(broker, _)| !self.agreed(broker, now))
            .count()
    }

    /// A node without seeds serves at once. One with seeds serves once it
    /// holds every up member's published state up to its manifest, and
    /// every broker they publish as it should, having heard from a member
    /// that serves (which held the cluster's routes, so its state names
    /// every node that holds some) — or, when every member it hears from is
    /// starting too (the whole cluster starting), once none has been
    /// serving for `FORMING_MS`. And once the bootstrap timeout ran out: a
    /// cluster whose other nodes are all down must still be served by the
    /// one that is up.
    fn update_ready(&mut self, agreed: bool, now: Millis, effects: &mut Vec<Effect>) {
        if self.ready {
            return;
        }
        let synced = if self.config.has_seeds {
            let up: Vec<&Member> = self
                .members
                .iter()
                .filter(|(id, member)| id.node != self.me.node && member.liveness.is_up())
                .map(|(_, member)| member)
                .collect();
            if up.is_empty() {
                self.first_contact = None;
            } else if self.first_contact.is_none() {
                self.first_contact = Some(now);
            }
            // A member heard of secondhand is taken for down until its
            // heartbeat is seen advancing: one nobody reports lost may be
            // up and holding brokers, so it is waited for. So is this
            // node's own earlier incarnation until the others report when
            // they lost it: the brokers it held alone may still be routed
            // through them. And a down member is judged on the latest word
            // only: while a member up has not said when it lost it, and
            // that word could keep a broker the earlier words let go, it is
            // waited for.
            let unjudged = self.members.iter().any(|(id, member)| {
                !member.liveness.is_up()
                    && ((self.last_up_of(id).is_none()
                        && member
                            .brokers
                            .values()
                            .any(|held| matches!(held.published.entry, Entry::Present(_))))
                        || self.awaits_later_word(id, now))
            });
            let someone_serves = up.iter().any(|member| member.ready);
            let forming = self
                .first_contact
                .is_some_and(|first| now >= first + FORMING_MS);
            !up.is_empty()
                && !unjudged
                && up.iter().all(|member| member.caught_up())
                && agreed
                && (someone_serves || forming)
        } else {
            true
        };
        let timed_out = now >= self.started + self.config.bootstrap_timeout_ms;
        if synced || timed_out {
            self.ready = true;
            self.publish_ready();
            effects.push(Effect::Ready { synced });
        }
    }
}

impl Sweep {
    /// Moves to `brokers` those due at `now`: the k-th of n once `k / n`
    /// of `interval`, less a millisecond, has passed (so a sweep's first
    /// share is taken as it begins). Says whether none is left.
    fn take_due(
        &mut self,
        now: Millis,
        interval: Millis,
        brokers: &mut BTreeSet<BrokerRef>,
    ) -> bool {
        let elapsed = u128::from(now.saturating_sub(self.began)) + 1;
        let share = (self.len as u128 * elapsed).div_ceil(u128::from(interval));
        let due = usize::try_from(share).map_or(self.len, |due| due.min(self.len));
        let done = self.len - self.pending.len();
        for _ in done..due {
            brokers.extend(self.pending.pop());
        }
        self.pending.is_empty()
    }
}
