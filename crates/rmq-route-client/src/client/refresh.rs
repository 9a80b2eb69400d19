//! The background tasks of a started client (Java `MQClientInstance`'s
//! scheduled tasks, every `pollNameServerInterval` and
//! `heartbeatBrokerInterval`):
//! the periodic route refresh and the offline-broker cleaning.
//!
//! Owns only scheduling. The task holds a weak reference, so it never keeps
//! a client alive; it ends on shutdown or when the last handle is dropped
//! (the stop channel closes then).

use std::sync::Weak;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::{interval_at, Instant, MissedTickBehavior};

use super::{Inner, RouteClient};
use crate::config::RouteClientConfig;

/// Java's initial delay of the heartbeat task, which runs `cleanOfflineBroker`.
const CLEAN_INITIAL_DELAY: Duration = Duration::from_secs(1);

pub(super) async fn run(
    inner: Weak<Inner>,
    mut stop: watch::Receiver<bool>,
    config: RouteClientConfig,
) {
    let now = Instant::now();
    let mut poll = interval_at(
        now + config.poll_initial_delay,
        config
            .poll_name_server_interval
            .max(Duration::from_millis(1)),
    );
    // Java's single scheduler thread runs late executions back to back; a
    // slow round here skips the missed ticks instead of bursting.
    poll.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let clean_period = config
        .heartbeat_broker_interval
        .max(Duration::from_millis(1));
    let mut clean = interval_at(now + CLEAN_INITIAL_DELAY.min(clean_period), clean_period);
    clean.set_missed_tick_behavior(MissedTickBehavior::Skip);
    loop {
        let poll_round = tokio::select! {
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    return;
                }
                continue;
            }
            _ = poll.tick() => true,
            _ = clean.tick() => false,
        };
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let client = RouteClient { inner };
        if poll_round {
            if let Err(error) = client.refresh_all().await {
                tracing::warn!(%error, "route refresh round aborted");
            }
        } else {
            client.clean_offline_brokers().await;
        }
    }
}
