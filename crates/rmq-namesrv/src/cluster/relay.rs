//! Applies relayed brokers to the route table, and drops them, in the order
//! the core decided: one blocking thread takes each in turn. A pulled
//! registration of 10,000 topics takes milliseconds to write (the
//! runtime's workers answer route queries meanwhile, as for a registration
//! from a broker), and a removal decided after an application must not
//! overtake it, or a broker the cluster dropped would stay.

use std::sync::Arc;

use rmq_cluster::core::{MemberId, RelayedGone};
use tokio::sync::mpsc;

use super::NamesrvCluster;
use crate::metrics::RemovalReason;
use crate::route::{BrokerKey, BrokerRegistration};

/// One change the cluster makes to the table.
#[derive(Debug)]
enum Work {
    Apply {
        registration: BrokerRegistration,
        from: MemberId,
    },
    Remove {
        key: BrokerKey,
        why: RelayedGone,
    },
    /// The core is ready: served once every application decided before it
    /// is in the table, or a query could find a pulled broker missing.
    Ready {
        synced: bool,
    },
}

/// The queue to the applying thread.
#[derive(Debug, Clone)]
pub struct Applier {
    queue: mpsc::UnboundedSender<Work>,
}

impl Applier {
    /// Starts the applying thread; it ends when every sender is gone.
    pub fn start(cluster: Arc<NamesrvCluster>) -> Applier {
        let (queue, mut work) = mpsc::unbounded_channel();
        tokio::task::spawn_blocking(move || {
            while let Some(work) = work.blocking_recv() {
                match work {
                    Work::Apply { registration, from } => apply(&cluster, registration, &from),
                    Work::Remove { key, why } => remove(&cluster, &key, &why),
                    Work::Ready { synced } => ready(&cluster, synced),
                }
            }
        });
        Applier { queue }
    }

    /// Queues a pulled registration.
    pub fn apply(&self, registration: BrokerRegistration, from: MemberId) {
        let _ = self.queue.send(Work::Apply { registration, from });
    }

    /// Queues the node's readiness, after the applications queued before it.
    pub fn ready(&self, synced: bool) {
        let _ = self.queue.send(Work::Ready { synced });
    }

    /// Queues the removal of a relayed broker.
    pub fn remove(&self, key: BrokerKey, why: RelayedGone) {
        let _ = self.queue.send(Work::Remove { key, why });
    }
}

fn apply(node: &NamesrvCluster, registration: BrokerRegistration, from: &MemberId) {
    let (cluster, addr, name, topics) = (
        registration.cluster.clone(),
        registration.broker_addr.clone(),
        registration.broker_name.clone(),
        registration.topic_configs.len(),
    );
    let now = node.parts.clock.now();
    match super::table::apply_relayed(&node.parts.routes, registration, from, now) {
        Ok(outcome) if outcome.kept_direct => {
            tracing::debug!(%cluster, broker = %addr, from = %from, "relayed registration not applied: the broker is registered here directly");
        }
        Ok(outcome) => {
            node.counters.applied();
            if outcome.new_broker {
                tracing::info!(%cluster, broker = %name, %addr, topics, from = %from, "relayed broker added");
            }
        }
        Err(error) => {
            tracing::warn!(%cluster, broker = %addr, from = %from, %error, "relayed registration refused by the route table");
        }
    }
}

fn remove(cluster: &NamesrvCluster, key: &BrokerKey, why: &RelayedGone) {
    if super::table::drop_relayed(&cluster.parts.routes, key) {
        cluster.parts.metrics.removed(RemovalReason::Cluster);
        tracing::info!(cluster = %key.cluster, broker = %key.addr, why = ?why, "relayed broker removed");
    }
}

fn ready(cluster: &NamesrvCluster, synced: bool) {
    cluster.set_ready();
    if synced {
        tracing::info!("cluster bootstrap done: this node holds its peers' routes and serves them");
    } else {
        tracing::warn!(
            timeout_ms = cluster.settings().bootstrap_timeout.as_millis() as u64,
            "cluster bootstrap timed out before this node held every peer's routes: serving what it holds"
        );
    }
}
