//! What a node does on its own: expire replicas whose heartbeats stopped,
//! elect when a set's master is gone (on the serving leader), and tell the
//! members of a set about its new master.

use super::{Action, Driver, Env, Work};
use crate::core::decide::{self, View};
use crate::core::notice;
use crate::{Answer, LiveKey, Millis};

impl Driver {
    /// The connection `conn` closed: the replicas that heartbeat on it are
    /// taken for dead at once (Java does the same), and a master among them
    /// is replaced.
    pub fn connection_closed(&mut self, conn: u64, env: &mut Env<'_>) -> Vec<Action> {
        let mut out = Vec::new();
        for key in env.live.disconnected(conn) {
            tracing::info!(cluster = %key.cluster, broker = %key.broker_name, id = key.broker_id, "broker replica's connection closed");
            self.replica_gone(&key, env, &mut out);
        }
        self.pump(env, &mut out);
        out
    }

    /// The `scanNotActiveBrokerInterval` tick (`interval_ms`), on every
    /// node: replicas past their heartbeat timeout leave the liveness
    /// table, and on the leader a departed master is replaced.
    ///
    /// A tick that comes much later than planned means this process itself
    /// was stopped (a paused VM, SIGSTOP): brokers could not reach it, so
    /// their silence proves nothing. Every timeout then starts again, and
    /// only a replica that stays silent for its whole timeout after that is
    /// expired (and only then can a master be taken for dead).
    pub fn expiry_scan(&mut self, interval_ms: u64, env: &mut Env<'_>) -> Vec<Action> {
        let mut out = Vec::new();
        if stalled(env.now, &mut self.last_expiry_scan, interval_ms) {
            env.live.restart_timeouts(env.now);
            return out;
        }
        for key in env.live.expire(env.now) {
            tracing::info!(cluster = %key.cluster, broker = %key.broker_name, id = key.broker_id, "broker replica expired: no heartbeat within its timeout");
            self.replica_gone(&key, env, &mut out);
        }
        self.pump(env, &mut out);
        out
    }

    /// The `scanInactiveMasterInterval` tick (`interval_ms`): on the
    /// serving leader, sets whose master is silent while another replica
    /// heartbeats get an election (after the leader's grace period, see
    /// [`decide::sets_to_reelect`]). A late tick restarts the timeouts, as
    /// in [`Driver::expiry_scan`].
    pub fn master_scan(&mut self, interval_ms: u64, env: &mut Env<'_>) -> Vec<Action> {
        let mut out = Vec::new();
        if stalled(env.now, &mut self.last_master_scan, interval_ms) {
            env.live.restart_timeouts(env.now);
            return out;
        }
        let Some(since) = self.serving_since else {
            return out;
        };
        let view = View {
            replicas: env.replicas,
            live: env.live,
            now: env.now,
            elect_unclean: false,
        };
        for set in decide::sets_to_reelect(view, since) {
            tracing::info!(broker = %set, "the master of this broker set is not alive; electing a new one");
            self.queue_election(set, &mut out);
        }
        self.pump(env, &mut out);
        out
    }

    /// A replica left the liveness table: if this node serves and it was
    /// its set's master, elect.
    fn replica_gone(&mut self, key: &LiveKey, env: &Env<'_>, out: &mut Vec<Action>) {
        if self.serving_since.is_none() {
            return;
        }
        let was_master = env
            .replicas
            .get(&key.broker_name)
            .is_some_and(|set| set.master == Some(key.broker_id));
        if was_master {
            self.queue_election(key.broker_name.clone(), out);
        }
    }

    /// Queues the first attempt of an election for `set`, unless one
    /// already waits: it will decide on the same state.
    fn queue_election(&mut self, set: String, out: &mut Vec<Action>) {
        let waiting = self
            .waiting
            .iter()
            .any(|(_, work)| matches!(work, Work::Elect { set: s, .. } if *s == set));
        if !waiting {
            self.enqueue(Work::Elect { set, attempt: 1 }, out);
        }
    }

    /// After a successful election (by anyone), if `notifyBrokerRoleChanged`
    /// is on: NOTIFY_BROKER_ROLE_CHANGED to every member of the set alive
    /// here. A member that misses it learns the new master from its
    /// periodic replica-info sync within 5 s.
    pub(super) fn notify(&self, answer: &Answer, env: &Env<'_>, out: &mut Vec<Action>) {
        if !env.settings.notify_role_changed {
            return;
        }
        let Some((group, notice)) = notice::role_change_notice(answer) else {
            return;
        };
        let brokers = group
            .broker_addrs
            .iter()
            .filter(|(id, _)| {
                env.live
                    .is_alive(&group.cluster, &group.broker_name, **id, env.now)
            })
            .map(|(_, addr)| addr.clone())
            .collect();
        out.push(Action::Notify { brokers, notice });
    }
}

/// Whether a tick at `now` came more than [`super::STALL_MS`] later than
/// `interval_ms` after the one at `last`; updates `last`.
fn stalled(now: Millis, last: &mut Millis, interval_ms: u64) -> bool {
    let late = now.since(*last).saturating_sub(interval_ms);
    *last = now;
    if late > super::STALL_MS {
        tracing::warn!(
            late_ms = late,
            "this controller was stalled; every broker's heartbeat timeout starts again"
        );
        return true;
    }
    false
}
