//! WAYMARK_GET_CLUSTER_STATUS (61011, docs/protocol-extensions.md) and the
//! same view at `GET /api/v1/cluster`: this node, the members it knows
//! with their liveness, readiness and how far it is behind each, and every
//! broker of its route table with its source (direct, relayed from whom,
//! or restored from the route snapshot).
//!
//! It only reads: the core's status under the core's lock, then the
//! brokers copied out of the route table under its read lock, never both
//! locks at once.

use std::collections::HashMap;

use rmq_cluster::core::Liveness as CoreLiveness;
use rmq_protocol::cluster_status::{
    BrokerSource, BrokerStatus, ClusterStatusBody, DataVersionStatus, Liveness, MemberStatus,
    NodeStatus,
};
use rmq_wire::{RequestCode, ResponseCode};

use super::NamesrvCluster;
use crate::answer::Answer;
use crate::error::{Error, HandlerResult};
use crate::route::{RouteTable, SharedRoutes};

/// Serves WAYMARK_GET_CLUSTER_STATUS: SUCCESS with the view as JSON, or,
/// when the cluster is off, REQUEST_CODE_NOT_SUPPORTED as a Java
/// NameServer answers any code it does not know, so that a tool cannot
/// tell the two apart and need not: neither learns from other NameServers.
pub fn answer(cluster: Option<&NamesrvCluster>, routes: &SharedRoutes) -> HandlerResult {
    let Some(body) = view(cluster, routes) else {
        return Err(Error::new(
            ResponseCode::RequestCodeNotSupported,
            format!(
                " request type {} not supported",
                i32::from(RequestCode::WaymarkGetClusterStatus)
            ),
        ));
    };
    Ok(Answer::success().with_body(body.to_json()))
}

/// This node's view of its cluster; `None` when the cluster is off.
pub fn view(cluster: Option<&NamesrvCluster>, routes: &SharedRoutes) -> Option<ClusterStatusBody> {
    let cluster = cluster?;
    let status = cluster.status();
    let settings = &cluster.settings().gossip;
    let node = NodeStatus {
        name: status.me.node.clone(),
        generation: status.me.generation,
        ready: cluster.is_ready(),
        gossip_addr: settings.advertise.to_string(),
        cluster_id: settings.cluster_id.clone(),
        direct_brokers: status.direct,
        relayed_brokers: status.relayed,
        pulls_in_flight: status.pulls_in_flight,
        since_agreement_millis: status.since_agreement_ms,
    };
    let members = status
        .members
        .iter()
        .map(|member| MemberStatus {
            name: member.id.node.clone(),
            generation: member.id.generation,
            gossip_addr: member.gossip_addr.clone(),
            remoting_addr: member.remoting.clone(),
            liveness: liveness(member.liveness),
            ready: member.ready,
            direct_brokers: member.brokers,
            behind: member.behind,
        })
        .collect();
    let brokers = brokers(&routes.read());
    Some(ClusterStatusBody {
        enabled: true,
        node: Some(node),
        members,
        brokers,
    })
}

fn liveness(liveness: CoreLiveness) -> Liveness {
    match liveness {
        CoreLiveness::Live => Liveness::Live,
        CoreLiveness::Unknown => Liveness::Unknown,
        CoreLiveness::Dead => Liveness::Dead,
    }
}

/// Every broker of the table with its source, sorted by cluster, broker
/// name, id and address.
fn brokers(table: &RouteTable) -> Vec<BrokerStatus> {
    // (cluster, address) → (broker name, id), and by address alone: a
    // member registered under another cluster than its group's first is
    // found by address.
    let mut by_key: HashMap<(&str, &str), (&str, i64)> = HashMap::new();
    let mut by_addr: HashMap<&str, (&str, i64)> = HashMap::new();
    for group in table.groups() {
        for (id, addr) in &group.addrs {
            by_key.insert((&group.cluster, addr), (&group.name, *id));
            by_addr.entry(addr).or_insert((&group.name, *id));
        }
    }
    let mut brokers: Vec<BrokerStatus> = table
        .live_brokers()
        .map(|(key, live)| {
            let member = by_key
                .get(&(key.cluster.as_str(), key.addr.as_str()))
                .or_else(|| by_addr.get(key.addr.as_str()))
                .copied();
            let source = match (&live.relayed_from, live.provisional) {
                (Some(_), _) => BrokerSource::Relayed,
                (None, true) => BrokerSource::Restored,
                (None, false) => BrokerSource::Direct,
            };
            BrokerStatus {
                cluster: key.cluster.clone(),
                broker_name: member.map(|(name, _)| name.to_owned()),
                broker_id: member.map(|(_, id)| id),
                address: key.addr.clone(),
                source,
                relayed_from: live.relayed_from.as_deref().map(str::to_owned),
                data_version: DataVersionStatus {
                    state_version: live.data_version.state_version,
                    counter: live.data_version.counter,
                    timestamp: live.data_version.timestamp,
                },
            }
        })
        .collect();
    brokers.sort_by(|a, b| {
        (&a.cluster, &a.broker_name, a.broker_id, &a.address).cmp(&(
            &b.cluster,
            &b.broker_name,
            b.broker_id,
            &b.address,
        ))
    });
    brokers
}
