//! Background work: the batch unregistration worker, the expiry scan and the
//! sender of min-broker-id notifications, and the queues that feed them
//! (`queues.rs`). Each reads the route table under a short lock and does its
//! I/O after releasing it.

mod queues;

use std::sync::Arc;
use std::time::Duration;

use rmq_protocol::headers::NotifyMinBrokerIdChangeRequestHeader;
use rmq_transport::tls::TlsClient;
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, SerializeType};
use tokio::sync::mpsc;

pub use queues::{queues, Connections, Notifier, Queues, Unregistrations};

use crate::clock::Clock;
use crate::cluster::NamesrvCluster;
use crate::config::SharedConfig;
use crate::metrics::{NamesrvMetrics, RemovalReason};
use crate::route::{MinIdNotification, SharedRoutes, Unregistration};

/// Timeout for connecting to a broker to notify it (Java: 300 ms).
const NOTIFY_TIMEOUT: Duration = Duration::from_millis(300);

/// Takes one unregistration, drains whatever else is queued, runs the batch
/// atomically. Ends when every sender is gone.
pub async fn unregistration_worker(
    routes: Arc<SharedRoutes>,
    config: Arc<SharedConfig>,
    metrics: NamesrvMetrics,
    notifier: Notifier,
    cluster: Option<Arc<NamesrvCluster>>,
    mut queue: mpsc::Receiver<(Unregistration, RemovalReason)>,
) {
    while let Some(first) = queue.recv().await {
        let mut batch = vec![first];
        while let Ok(more) = queue.try_recv() {
            batch.push(more);
        }
        let (batch, reasons): (Vec<Unregistration>, Vec<RemovalReason>) = batch.into_iter().unzip();
        let notify = config.read().notify_min_broker_id_changed;
        let outcome = match &cluster {
            None => routes.write().unregister_batch(&batch, notify),
            Some(cluster) => {
                let outcome = cluster.remove_batch(&batch, &reasons, notify);
                for (key, reason, member) in &outcome.demoted {
                    tracing::info!(cluster = %key.cluster, broker = %key.addr, ?reason, held_by = %member, "broker kept as relayed: another NameServer of the cluster holds it");
                }
                outcome.removed
            }
        };
        for key in &outcome.removed_brokers {
            // The first unregistration of the batch that named the broker
            // says why it went.
            let reason = batch
                .iter()
                .zip(&reasons)
                .find_map(|(unregistration, reason)| {
                    (unregistration.key == *key).then_some(*reason)
                })
                .unwrap_or(RemovalReason::Unregister);
            metrics.removed(reason);
            tracing::info!(cluster = %key.cluster, broker = %key.addr, ?reason, "broker unregistered");
        }
        for key in &outcome.fenced {
            tracing::info!(cluster = %key.cluster, broker = %key.addr, "unregistration skipped: the broker registered again since it was decided");
        }
        for name in &outcome.removed_groups {
            tracing::info!(broker_name = %name, "broker group removed with its queue data");
        }
        notifier.notify(outcome.notifications);
    }
}

/// Java's delay of the first expiry scan (`NamesrvController` schedules
/// `scanNotActiveBroker` 5 s after start whatever the interval): a broker is
/// never expired in the first 5 s after start.
pub const FIRST_EXPIRY_SCAN_DELAY: Duration = Duration::from_secs(5);

/// Every `scanNotActiveBrokerInterval`, from [`FIRST_EXPIRY_SCAN_DELAY`]
/// after start, queues the unregistration of every broker silent past its
/// timeout.
pub async fn expiry_scan(
    routes: Arc<SharedRoutes>,
    config: Arc<SharedConfig>,
    clock: Clock,
    unregistrations: Unregistrations,
    connections: Arc<Connections>,
) {
    let period = Duration::from_millis(
        u64::try_from(config.read().scan_not_active_broker_interval)
            .unwrap_or(5_000)
            .max(1),
    );
    let mut ticker = tokio::time::interval_at(
        tokio::time::Instant::now() + FIRST_EXPIRY_SCAN_DELAY,
        period,
    );
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let expired = routes.read_briefly().expired(clock.now());
        for broker in expired {
            tracing::warn!(
                cluster = %broker.unregistration.key.cluster,
                broker = %broker.unregistration.key.addr,
                "broker expired: no heartbeat within its timeout"
            );
            unregistrations.submit(broker.unregistration, RemovalReason::Expiry);
            connections.close(broker.conn);
        }
    }
}

/// Sends NOTIFY_MIN_BROKER_ID_CHANGE one-way to each target over a fresh
/// connection to the broker's own listener, in the server's serialize type,
/// over TLS when `tls` is given, as Java's NameServer does.
pub async fn notification_sender(
    mut queue: mpsc::UnboundedReceiver<MinIdNotification>,
    serialize_type: SerializeType,
    tls: Option<TlsClient>,
) {
    while let Some(notification) = queue.recv().await {
        let header = NotifyMinBrokerIdChangeRequestHeader {
            min_broker_id: Some(notification.min_broker_id),
            min_broker_addr: Some(notification.min_broker_addr.clone()),
            offline_broker_addr: notification.offline_broker_addr.clone(),
            ha_broker_addr: notification.ha_broker_addr.clone(),
            broker_name: None,
        };
        let request = RemotingCommand::request(RequestCode::NotifyMinBrokerIdChange, 0)
            .with_header(&header)
            .with_serialize_type(serialize_type);
        for target in notification.targets {
            let request = request.clone();
            let tls = tls.clone();
            tokio::spawn(async move {
                let config = ClientConfig {
                    connect_timeout: NOTIFY_TIMEOUT,
                    tls,
                    ..ClientConfig::default()
                };
                match RpcClient::connect(target.as_str(), config).await {
                    Ok(client) => {
                        if let Err(error) = client.invoke_oneway(request) {
                            tracing::warn!(broker = %target, %error, "notify min broker id change failed");
                        }
                        // Give the writer a moment to flush before the client drops.
                        tokio::time::sleep(NOTIFY_TIMEOUT).await;
                    }
                    Err(error) => {
                        tracing::warn!(broker = %target, %error, "notify min broker id change: connect failed")
                    }
                }
            });
        }
    }
}
