//! The agent's periodic work (Java `ReplicasManager`'s scheduled tasks): the start-up
//! sequence and its retries, heartbeats to every controller, the leader
//! refresh, the replica-info sync, the master's sync-state-set check, and
//! the NameServer registration that follows a role change.
//!
//! Timing is `tokio::time`; each loop checks the start-up phase, as Java's
//! tasks check the fence. Failures are logged and retried at the next tick,
//! never fatal.

use std::sync::Arc;
use std::time::Duration;

use rmq_wire::ResponseCode;
use tokio::task::JoinHandle;
use tokio::time::{interval_at, sleep, Instant, MissedTickBehavior};

use super::agent::{AgentEvent, Inner, Phase};
use super::join::Joiner;
use super::state::{ReplicaRole, Source, SyncStep};
use crate::error::ControllerError;

/// Starts every task of `inner`.
pub(super) fn spawn_all(inner: &Arc<Inner>) -> Vec<JoinHandle<()>> {
    vec![
        tokio::spawn(startup(inner.clone())),
        tokio::spawn(heartbeat_loop(inner.clone())),
        tokio::spawn(metadata_loop(inner.clone())),
        tokio::spawn(sync_loop(inner.clone())),
        tokio::spawn(sync_state_set_loop(inner.clone())),
        tokio::spawn(register_worker(inner.clone())),
    ]
}

fn ticker(period: Duration) -> tokio::time::Interval {
    let mut ticker = interval_at(Instant::now() + period, period);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    ticker
}

/// A pause of up to `bound`, but at most one second (Java's random sleep
/// between register tries).
fn jitter(bound: Duration) -> Duration {
    let bound = bound.min(Duration::from_secs(1));
    Duration::from_millis(fastrand::u64(
        0..=u64::try_from(bound.as_millis()).unwrap_or(1000),
    ))
}

/// Java's `start` + `startBasicService` retry loop.
async fn startup(inner: Arc<Inner>) {
    loop {
        match start_attempt(&inner).await {
            Ok(()) => return,
            Err(error) => {
                tracing::warn!(broker = %inner.registrar.config().broker_name, phase = ?inner.phase(),
                    %error, "controller-mode start failed, retrying");
                inner.emit(AgentEvent::StartFailed(error));
                sleep(inner.config.start_retry_interval).await;
            }
        }
    }
}

/// One attempt, resuming from the phase the previous one reached.
async fn start_attempt(inner: &Arc<Inner>) -> Result<(), ControllerError> {
    let pause = inner.config.start_retry_interval;
    if inner.phase() == Phase::Initial {
        let mut tries = 0;
        loop {
            match inner.client.refresh_leader().await {
                Ok(_) => break,
                Err(error) if tries >= 2 => return Err(error),
                Err(_) => tries += 1,
            }
            sleep(pause.min(Duration::from_secs(1))).await;
        }
        inner.set_phase(Phase::LeaderKnown);
    }
    if inner.phase() == Phase::LeaderKnown {
        let mut last = None;
        for _ in 0..5 {
            match register(inner).await {
                Ok(()) => {
                    last = None;
                    break;
                }
                // Another broker set, whatever the controller says.
                Err(error @ ControllerError::IdentityMismatch { .. }) => return Err(error),
                Err(error) => last = Some(error),
            }
            sleep(jitter(pause)).await;
        }
        if let Some(error) = last {
            return Err(error);
        }
        inner.set_phase(Phase::Registered);
    }
    if inner.phase() == Phase::Registered {
        // The controller elects only replicas it has heard from, and the
        // periodic heartbeat waits for the running phase.
        send_heartbeat(inner).await;
        if inner.role() == ReplicaRole::Unknown && !elect(inner).await? {
            return Err(ControllerError::NoMaster);
        }
        inner.set_phase(Phase::Running);
        inner.registrar.set_isolated(false);
        inner.emit(AgentEvent::Running);
    }
    Ok(())
}

/// The id ([`join`](super::join)), then CONTROLLER_REGISTER_BROKER and its role decision.
async fn register(inner: &Arc<Inner>) -> Result<(), ControllerError> {
    let id = match inner.controller_id() {
        Some(id) => id,
        None => {
            let broker = inner.registrar.config();
            let joiner = Joiner {
                cluster: &broker.cluster_name,
                broker_name: &broker.broker_name,
                broker_addr: &broker.broker_addr,
            };
            let (id, origin) = joiner.obtain_id(&inner.client, &inner.files).await?;
            inner.set_controller_id(id);
            inner.emit(AgentEvent::IdObtained {
                controller_id: id,
                origin,
            });
            id
        }
    };
    register_with_controller(inner, id).await
}

async fn register_with_controller(inner: &Arc<Inner>, id: i64) -> Result<(), ControllerError> {
    let broker = inner.registrar.config();
    let decision = inner
        .client
        .register(
            &broker.cluster_name,
            &broker.broker_name,
            id,
            &broker.broker_addr,
        )
        .await?;
    inner.apply(&decision, Source::Register);
    Ok(())
}

/// Java's `brokerElect` (CONTROLLER_ELECT_MASTER as a broker trigger):
/// whether the controller named a master.
async fn elect(inner: &Arc<Inner>) -> Result<bool, ControllerError> {
    let Some(id) = inner.controller_id() else {
        return Ok(false);
    };
    let broker = inner.registrar.config();
    let decision = inner
        .client
        .elect(&broker.cluster_name, &broker.broker_name, id)
        .await?;
    if decision.master_id.is_none() || decision.master_addr.as_deref().is_none_or(str::is_empty) {
        return Ok(false);
    }
    inner.apply(&decision, Source::Elect);
    Ok(true)
}

async fn send_heartbeat(inner: &Inner) {
    let Some(header) = inner.heartbeat_header() else {
        return;
    };
    for (addr, outcome) in inner
        .client
        .heartbeat(&header, inner.config.send_heartbeat_timeout)
        .await
    {
        if let Err(error) = outcome {
            tracing::debug!(controller = %addr, %error, "heartbeat not sent");
        }
    }
}

/// The heartbeat: every `brokerHeartbeatInterval` to every controller, once running.
async fn heartbeat_loop(inner: Arc<Inner>) {
    let mut ticker = ticker(inner.config.broker_heartbeat_interval);
    loop {
        ticker.tick().await;
        if inner.phase() == Phase::Running {
            send_heartbeat(&inner).await;
        }
    }
}

/// Every `syncControllerMetadataPeriod`: look the leader up again.
async fn metadata_loop(inner: Arc<Inner>) {
    let mut ticker = ticker(inner.config.sync_controller_metadata_period);
    loop {
        ticker.tick().await;
        if inner.phase() == Phase::Initial {
            continue;
        }
        if let Err(error) = inner.client.refresh_leader().await {
            tracing::warn!(%error, "cannot refresh the controller leader");
        }
    }
}

/// The replica-info sync (GET_REPLICA_INFO): every `syncBrokerMetadataPeriod`
/// once running.
async fn sync_loop(inner: Arc<Inner>) {
    let mut ticker = ticker(inner.config.sync_broker_metadata_period);
    loop {
        ticker.tick().await;
        if inner.phase() == Phase::Running {
            sync_once(&inner).await;
        }
    }
}

async fn sync_once(inner: &Arc<Inner>) {
    let name = &inner.registrar.config().broker_name;
    match inner.client.replica_info(name).await {
        Ok(decision) => {
            if inner.apply_sync(&decision) == SyncStep::Elect {
                if let Err(error) = elect(inner).await {
                    tracing::info!(broker = %name, %error, "election not granted");
                }
            }
        }
        Err(error)
            if error.code() == Some(ResponseCode::ControllerBrokerMetadataNotExist.into()) =>
        {
            // The controller lost the set (e.g. cleaned): register again.
            if let Some(id) = inner.controller_id() {
                if let Err(error) = register_with_controller(inner, id).await {
                    tracing::warn!(broker = %name, %error, "cannot register again");
                }
            }
        }
        Err(error) => tracing::warn!(broker = %name, %error, "cannot sync replica info"),
    }
}

/// The sync-state-set check on the master: every `checkSyncStateSetPeriod`,
/// and at once after
/// becoming master.
async fn sync_state_set_loop(inner: Arc<Inner>) {
    let mut ticker = ticker(inner.config.check_sync_state_set_period);
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            () = inner.sss_kick.notified() => {}
        }
        if inner.phase() != Phase::Running || !inner.is_master() {
            continue;
        }
        if let Err(error) = check_sync_state_set(&inner).await {
            tracing::info!(broker = %inner.registrar.config().broker_name, %error,
                "sync-state set not changed");
            if error.code() == Some(ResponseCode::ControllerFencedSyncStateSetEpoch.into()) {
                // Our set's epoch is old: fetch the current one now.
                sync_once(&inner).await;
            }
        }
    }
}

/// The simulated shrink-and-expand: a simulated broker has no commit log
/// and no HA connections, so "caught up" is "alive at the controller"
/// (the leader's liveness in CONTROLLER_GET_SYNC_STATE_DATA). The master
/// proposes itself plus every alive replica and reports a difference with
/// CONTROLLER_ALTER_SYNC_STATE_SET.
async fn check_sync_state_set(inner: &Arc<Inner>) -> Result<(), ControllerError> {
    let name = &inner.registrar.config().broker_name;
    let Some(info) = inner.client.sync_state_data(name).await? else {
        return Ok(());
    };
    let alive = info
        .in_sync_replicas
        .iter()
        .chain(&info.not_in_sync_replicas)
        .filter(|r| r.alive)
        .map(|r| r.broker_id);
    let Some((id, epoch, proposal)) = inner.proposal(alive) else {
        return Ok(());
    };
    let set = inner
        .client
        .alter_sync_state_set(name, id, epoch, &proposal)
        .await?;
    inner.adopt_sync_state_set(&set);
    Ok(())
}

/// The registration after a role change (Java's `registerBrokerWhenRoleChange`),
/// sent even while fenced; kicks that arrive meanwhile coalesce into one.
async fn register_worker(inner: Arc<Inner>) {
    loop {
        inner.register_kick.notified().await;
        let force = inner.registrar.config().force_register;
        let report = inner.registrar.register_all(true, false, force).await;
        if let Some((addr, error)) = report.failures().next() {
            tracing::warn!(ns = addr, %error, "registration after a role change failed");
        }
        inner.emit(AgentEvent::Registered(report));
    }
}
