//! Runs a controller node on an already-bound listener: the transport loop
//! plus the node's background tasks, until `shutdown` resolves.

use std::future::Future;
use std::io;
use std::sync::Arc;

use rmq_transport::auth::Guard;
use rmq_transport::tls::ServerTls;
use rmq_transport::{ServerConfig, ServerLimits};
use rmq_wire::SerializeType;
use tokio::net::TcpListener;

use crate::node::service::ControllerService;
use crate::node::tasks;
use crate::node::ControllerNode;

/// The line a started controller prints on stdout, which deployment
/// scripts wait for (Java's, plus the address).
pub fn boot_line(serialize_type: SerializeType, addr: std::net::SocketAddr) -> String {
    format!(
        "The Controller Server boot success. serializeType={}, address {addr}",
        serialize_type.name()
    )
}

/// Who may send what (the same keys and checks as the NameServer's, with
/// the controller's table) and TLS on the controller's port.
#[derive(Debug)]
pub struct Security {
    /// Request authentication; off by default.
    pub guard: Guard,
    /// TLS on the listening port; disabled by default.
    pub tls: ServerTls,
}

impl Default for Security {
    fn default() -> Security {
        Security {
            guard: Guard::disabled(rmq_auth::CONTROLLER_REQUIREMENTS),
            tls: ServerTls::Disabled,
        }
    }
}

/// Serves `node` on `listener`. Background tasks stop with the server, then
/// Raft shuts down; in-flight requests are drained first.
pub async fn run(
    listener: TcpListener,
    node: Arc<ControllerNode>,
    serialize_type: SerializeType,
    limits: &ServerLimits,
    security: Security,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let idle_seconds = node.config().server_channel_max_idle_time_seconds;
    let mut config = ServerConfig::with_idle_seconds(idle_seconds, serialize_type);
    limits.apply_to(&mut config);
    config.stats = node.metrics().transport.clone();
    let guard = Arc::new(security.guard);
    let certificate = security.tls.server().cloned();
    config.tls = security.tls;
    let background = [
        tokio::spawn(tasks::expiry_scan(node.clone())),
        tokio::spawn(tasks::inactive_master_scan(node.clone())),
        tokio::spawn({
            let guard = guard.clone();
            rmq_transport::auth::reload_files(certificate, move || guard.reload_if_changed())
        }),
    ];
    let stopping = node.clone();
    let shutdown = async move {
        shutdown.await;
        stopping.stop_serving();
    };
    let result = rmq_transport::run(
        listener,
        ControllerService::new(node.clone()).with_guard(guard),
        config,
        shutdown,
    )
    .await;
    for task in background {
        task.abort();
    }
    node.shutdown().await;
    result
}
