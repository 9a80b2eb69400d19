//! Runs a NameServer on an already-bound listener: the transport loop plus
//! the background tasks, until `shutdown` resolves.

use std::future::Future;
use std::io;
use std::sync::Arc;

use rmq_transport::tls::ServerTls;
use rmq_transport::{ServerConfig, ServerLimits};
use rmq_wire::SerializeType;
use tokio::net::TcpListener;

use crate::dispatch::NamesrvService;
use crate::housekeeping;
use crate::housekeeping::Queues;
use crate::push;
use crate::route_snapshot;
use crate::state::Namesrv;

/// Serves `state` on `listener`. Background tasks stop with the server;
/// in-flight requests are drained first. The route snapshot (if any) is
/// written a last time when `shutdown` resolves, before the drain: closing
/// the connections unregisters their brokers, and a snapshot of that would
/// restart the server with no routes.
pub async fn run(
    listener: TcpListener,
    state: Arc<Namesrv>,
    queues: Queues,
    serialize_type: SerializeType,
    limits: &ServerLimits,
    tls: ServerTls,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let idle_seconds = state.config.read().server_channel_max_idle_time_seconds;
    let mut config = ServerConfig::with_idle_seconds(idle_seconds, serialize_type);
    limits.apply_to(&mut config);
    config.stats = state.metrics.transport.clone();
    let certificate = tls.server().cloned();
    config.tls = tls;
    let tasks = [
        tokio::spawn(housekeeping::unregistration_worker(
            state.routes.clone(),
            state.config.clone(),
            state.metrics.clone(),
            state.notifier.clone(),
            state.cluster.clone(),
            queues.unregistrations,
        )),
        tokio::spawn(housekeeping::expiry_scan(
            state.routes.clone(),
            state.config.clone(),
            state.clock,
            state.unregistrations.clone(),
            state.connections.clone(),
        )),
        tokio::spawn(push::run(state.push.clone())),
        tokio::spawn(housekeeping::notification_sender(
            queues.notifications,
            serialize_type,
            state.outgoing_tls.clone(),
        )),
        tokio::spawn({
            let state = state.clone();
            rmq_transport::auth::reload_files(certificate, move || state.auth.reload_if_changed())
        }),
        tokio::spawn(crate::cluster::run(state.cluster.clone())),
    ];
    let snapshot = state.route_snapshot.clone().map(|writer| {
        let task = tokio::spawn(route_snapshot::periodic_writer(
            state.routes.clone(),
            writer.clone(),
        ));
        (writer, task)
    });
    let shutdown = {
        let routes = state.routes.clone();
        async move {
            shutdown.await;
            if let Some((writer, task)) = snapshot {
                task.abort();
                route_snapshot::final_write(routes, writer).await;
            }
        }
    };
    let result = rmq_transport::run(listener, NamesrvService::new(state), config, shutdown).await;
    for task in tasks {
        task.abort();
    }
    result
}
