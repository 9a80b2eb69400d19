//! The NameServer as the cluster core's host: pulls registrations from
//! peers over their remoting port (WAYMARK_PULL_REGISTRATION), hands
//! relayed brokers to the applying thread, logs and counts the rest.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmq_cluster::core::{
    BrokerRef, Effect, MemberId, Millis, PullFailure, PullRequest, RefusalKind, RelayedGone,
};
use rmq_cluster::gossip::{Host, PullAnswer};
use rmq_transport::{ClientConfig, RequestHook, RpcClient};
use tokio::sync::Mutex as AsyncMutex;

use super::relay::Applier;
use super::{broker_key, pull, NamesrvCluster};
use crate::route::BrokerRegistration;

/// Connections to peers, one per remoting address, kept between pulls.
type Connections = Arc<AsyncMutex<HashMap<String, RpcClient>>>;

pub(super) struct NamesrvHost {
    cluster: Arc<NamesrvCluster>,
    applier: Applier,
    connections: Connections,
}

impl NamesrvHost {
    pub(super) fn new(cluster: Arc<NamesrvCluster>, applier: Applier) -> NamesrvHost {
        NamesrvHost {
            cluster,
            applier,
            connections: Arc::default(),
        }
    }
}

impl Host for NamesrvHost {
    type Registration = BrokerRegistration;

    fn now(&self) -> Millis {
        self.cluster.parts.clock.now()
    }

    fn pull(
        &self,
        request: PullRequest,
    ) -> impl Future<Output = Result<PullAnswer<BrokerRegistration>, PullFailure>> + Send + 'static
    {
        let cluster = self.cluster.clone();
        let connections = self.connections.clone();
        async move {
            let timeout = cluster.settings().pull_timeout;
            let config = ClientConfig {
                connect_timeout: timeout.min(Duration::from_secs(3)),
                tls: cluster.parts.outgoing_tls.clone(),
                request_hook: cluster
                    .settings()
                    .credentials
                    .clone()
                    .map(|credentials| Arc::new(credentials) as Arc<dyn RequestHook>),
                ..ClientConfig::default()
            };
            // Counted from the connection on: a peer whose remoting port
            // cannot be reached is a failed pull too.
            let started = std::time::Instant::now();
            let answer = match connection(&connections, &request.remoting, config).await {
                Ok(client) => {
                    let limit = cluster.parts.max_topics;
                    let answer = pull::pull(&client, &request, timeout, limit).await;
                    if answer.is_err() {
                        // A connection that failed once is not trusted again.
                        connections.lock().await.remove(&request.remoting);
                    }
                    answer
                }
                Err(failure) => Err(failure),
            };
            cluster.counters.pulled(answer.is_ok(), started.elapsed());
            answer
        }
    }

    fn apply_pulled(&self, _broker: &BrokerRef, from: &MemberId, registration: BrokerRegistration) {
        self.applier.apply(registration, from.clone());
    }

    fn remove_relayed(&self, broker: &BrokerRef, why: &RelayedGone) {
        self.applier.remove(broker_key(broker), why.clone());
    }

    fn observe(&self, effect: &Effect) {
        let cluster = &self.cluster;
        match effect {
            Effect::Refused { peer, kind, detail } => {
                cluster.counters.refused(kind.as_str());
                let level_warn = !matches!(kind, RefusalKind::RemovalAhead);
                if level_warn {
                    tracing::warn!(peer = %peer, kind = kind.as_str(), %detail, "cluster peer input refused");
                } else {
                    tracing::info!(peer = %peer, kind = kind.as_str(), %detail, "cluster peer input refused");
                }
            }
            Effect::PullFailed { from, broker, why } => {
                tracing::warn!(peer = %from, %broker, %why, "pull of a registration failed");
            }
            // Through the applying thread: the pulled registrations the
            // core counted are in the table before a query is served.
            Effect::Ready { synced } => self.applier.ready(*synced),
            _ => {}
        }
    }
}

/// The connection to `addr`, opened if there is none or it closed.
async fn connection(
    connections: &Connections,
    addr: &str,
    config: ClientConfig,
) -> Result<RpcClient, PullFailure> {
    let mut connections = connections.lock().await;
    if let Some(client) = connections.get(addr).filter(|client| !client.is_closed()) {
        return Ok(client.clone());
    }
    let client = RpcClient::connect(addr, config)
        .await
        .map_err(|error| PullFailure::Failed(format!("cannot connect to {addr}: {error}")))?;
    connections.insert(addr.to_owned(), client.clone());
    Ok(client)
}
