//! What the controller does on its own: expire silent replicas, elect a new
//! master when one dies (on the leader), and tell the members of a set
//! about a new master (controller.md §8).

use std::sync::Arc;
use std::time::Duration;

use rmq_protocol::headers::ElectMasterRequestHeader;
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::ResponseCode;

use crate::decide::{self, View};
use crate::node::ControllerNode;
use crate::{Answer, LiveKey, Millis};

/// How much later than planned a scan may run before the process counts as
/// having been stalled.
const STALL_MS: u64 = 2_000;

/// Every `scanNotActiveBrokerInterval` on every node: replicas past their
/// heartbeat timeout leave the liveness table; on the leader a departed
/// master triggers an election at once.
///
/// A scan that comes much later than planned means this process itself was
/// stopped (a paused VM, SIGSTOP): brokers could not reach it, so their
/// silence proves nothing. Every timeout then starts again, and only a
/// replica that stays silent for its whole timeout after that is expired
/// (and only then can a master be taken for dead).
pub async fn expiry_scan(node: Arc<ControllerNode>) {
    let mut last = node.now();
    loop {
        let interval = millis(node.config().scan_not_active_broker_interval);
        tokio::time::sleep(interval).await;
        let now = node.now();
        if stalled(now, &mut last, interval) {
            node.live().restart_timeouts(now);
            continue;
        }
        let expired = node.live().expire(now);
        for key in expired {
            tracing::info!(cluster = %key.cluster, broker = %key.broker_name, id = key.broker_id, "broker replica expired: no heartbeat within its timeout");
            replica_gone(&node, &key).await;
        }
    }
}

/// Every `scanInactiveMasterInterval` on the leader: sets whose master is
/// silent while another replica heartbeats get an election (after the
/// leader's grace period, see [`decide::sets_to_reelect`]).
pub async fn inactive_master_scan(node: Arc<ControllerNode>) {
    let mut last = node.now();
    loop {
        let interval = millis(node.config().scan_inactive_master_interval);
        tokio::time::sleep(interval).await;
        let now = node.now();
        if stalled(now, &mut last, interval) {
            // As in expiry_scan: silence while this process was stopped
            // proves nothing.
            node.live().restart_timeouts(now);
            continue;
        }
        let Some(since) = node.serving_since() else {
            continue;
        };
        let due = {
            let applied = node.applied();
            let live = node.live();
            decide::sets_to_reelect(
                View {
                    replicas: &applied.replicas,
                    live: &live,
                    now: node.now(),
                    elect_unclean: false,
                },
                since,
            )
        };
        for name in due {
            tracing::info!(broker = %name, "the master of this broker set is not alive; electing a new one");
            elect(&node, &name).await;
        }
    }
}

/// A replica left the liveness table (expiry, or its connection closed):
/// if this node leads and it was its set's master, elect.
pub async fn replica_gone(node: &Arc<ControllerNode>, key: &LiveKey) {
    if node.serving_since().is_none() {
        return;
    }
    let was_master = node
        .applied()
        .replicas
        .get(&key.broker_name)
        .is_some_and(|set| set.master == Some(key.broker_id));
    if was_master {
        elect(node, &key.broker_name).await;
    }
}

/// A controller-triggered election, retried up to `electMasterMaxRetryCount`
/// times; on success the members hear of it.
pub async fn elect(node: &Arc<ControllerNode>, broker_name: &str) {
    let attempts = node.config().elect_master_max_retry_count.max(1);
    let header = ElectMasterRequestHeader {
        cluster_name: Some(String::new()),
        broker_name: Some(broker_name.to_owned()),
        broker_id: None,
        designate_elect: Some(false),
        invoke_time: None,
    };
    for attempt in 1..=attempts {
        let decision = node
            .decide_and_commit(|view| decide::elect_master(view, &header))
            .await;
        match decision.answer.code {
            ResponseCode::Success => {
                tracing::info!(broker = %broker_name, attempt, "new master elected");
                notify_members(node, &decision.answer);
                return;
            }
            ResponseCode::ControllerMasterStillExist | ResponseCode::ControllerNotLeader => return,
            code => {
                tracing::warn!(broker = %broker_name, attempt, ?code, remark = ?decision.answer.remark, "election failed");
            }
        }
    }
}

/// After a successful election (by anyone): NOTIFY_BROKER_ROLE_CHANGED to
/// every alive member of the set, one-way, each on a new connection, if
/// `notifyBrokerRoleChanged` is on. A member that misses it learns the new
/// master from its periodic replica-info sync within 5 s.
pub fn notify_members(node: &Arc<ControllerNode>, answer: &Answer) {
    if !node.config().notify_broker_role_changed {
        return;
    }
    let Some((group, notice)) = crate::notice::role_change_notice(answer) else {
        return;
    };
    let targets: Vec<String> = {
        let live = node.live();
        let now = node.now();
        group
            .broker_addrs
            .iter()
            .filter(|(id, _)| live.is_alive(&group.cluster, &group.broker_name, **id, now))
            .map(|(_, addr)| addr.clone())
            .collect()
    };
    for addr in targets {
        let notice = notice.clone();
        let tls = node.outgoing_tls().cloned();
        tokio::spawn(async move {
            let config = ClientConfig {
                connect_timeout: Duration::from_secs(3),
                tls,
                ..ClientConfig::default()
            };
            match RpcClient::connect(addr.as_str(), config).await {
                Ok(client) => {
                    if let Err(error) = client.invoke_oneway(notice) {
                        tracing::warn!(%addr, %error, "cannot notify a broker of its role change");
                    }
                    // Let the frame leave before the connection closes.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    client.close();
                }
                Err(error) => {
                    tracing::warn!(%addr, %error, "cannot notify a broker of its role change")
                }
            }
        });
    }
}

/// Whether this tick came more than [`STALL_MS`] later than planned (the
/// process did not run meanwhile); updates `last`.
fn stalled(now: Millis, last: &mut Millis, interval: Duration) -> bool {
    let planned = u64::try_from(interval.as_millis()).unwrap_or(u64::MAX);
    let late = now.since(*last).saturating_sub(planned);
    *last = now;
    if late > STALL_MS {
        tracing::warn!(
            late_ms = late,
            "this controller was stalled; every broker's heartbeat timeout starts again"
        );
        return true;
    }
    false
}

fn millis(ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(0).max(100))
}
