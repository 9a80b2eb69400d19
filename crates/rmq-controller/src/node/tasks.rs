//! The node's timing of what the driver does on its own: the two scans run
//! every `scanNotActiveBrokerInterval` and `scanInactiveMasterInterval`
//! (read afresh each time, so UPDATE_CONTROLLER_CONFIG takes effect), and
//! the role-change notices the driver asks for are sent, each on a new
//! connection.

use std::sync::Arc;
use std::time::Duration;

use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::RemotingCommand;

use crate::node::ControllerNode;

/// Every `scanNotActiveBrokerInterval`, on every node: the driver's
/// [`expiry_scan`](crate::core::driver::Driver::expiry_scan).
pub async fn expiry_scan(node: Arc<ControllerNode>) {
    loop {
        let interval = millis(node.config().scan_not_active_broker_interval);
        tokio::time::sleep(interval).await;
        let interval_ms = as_ms(interval);
        node.step(|driver, env| driver.expiry_scan(interval_ms, env));
    }
}

/// Every `scanInactiveMasterInterval`: the driver's
/// [`master_scan`](crate::core::driver::Driver::master_scan) (which
/// elects only on the serving leader).
pub async fn inactive_master_scan(node: Arc<ControllerNode>) {
    loop {
        let interval = millis(node.config().scan_inactive_master_interval);
        tokio::time::sleep(interval).await;
        let interval_ms = as_ms(interval);
        node.step(|driver, env| driver.master_scan(interval_ms, env));
    }
}

/// NOTIFY_BROKER_ROLE_CHANGED to each of `brokers`, one-way, each on a new
/// connection; a broker that cannot be reached is logged and left to learn
/// the new master from its periodic replica-info sync.
pub fn notify(node: &Arc<ControllerNode>, brokers: Vec<String>, notice: RemotingCommand) {
    for addr in brokers {
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

/// A configured interval, at least 100 ms.
fn millis(ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(0).max(100))
}

fn as_ms(interval: Duration) -> u64 {
    u64::try_from(interval.as_millis()).unwrap_or(u64::MAX)
}
