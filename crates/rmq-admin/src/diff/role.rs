//! What a NameServer says of its Waymark NameServer cluster
//! (WAYMARK_GET_CLUSTER_STATUS, docs/protocol-extensions.md), as the diff
//! keeps it beside the NameServer's facts and shows it.

use rmq_protocol::cluster_status::ClusterStatusBody;
use serde_json::{json, Value};

/// What one NameServer says of its cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterRole {
    /// A Waymark cluster node, and its view.
    Node(Box<ClusterStatusBody>),
    /// It answered REQUEST_CODE_NOT_SUPPORTED (a Java 5.x NameServer, or a
    /// Waymark one with its cluster off), or nothing at all (Java 4.x). It
    /// knows only the brokers registered with it.
    NotClusterNode,
    /// Its answer could not be used (the reason).
    Unknown(String),
}

impl Default for ClusterRole {
    fn default() -> ClusterRole {
        ClusterRole::Unknown("not asked".to_owned())
    }
}

impl ClusterRole {
    /// The view, for a cluster node.
    pub fn node(&self) -> Option<&ClusterStatusBody> {
        match self {
            ClusterRole::Node(body) => Some(body),
            _ => None,
        }
    }

    /// The summary in `--json` results.
    pub fn to_json(&self) -> Value {
        match self {
            ClusterRole::Node(body) => {
                let node = body.node.clone().unwrap_or_default();
                let members: Vec<Value> = body
                    .members
                    .iter()
                    .map(|m| {
                        json!({
                            "name": m.name,
                            "generation": m.generation,
                            "liveness": m.liveness.as_str(),
                            "ready": m.ready,
                            "directBrokers": m.direct_brokers,
                            "behind": m.behind,
                        })
                    })
                    .collect();
                json!({
                    "state": "node",
                    "clusterId": node.cluster_id,
                    "name": node.name,
                    "generation": node.generation,
                    "ready": node.ready,
                    "directBrokers": node.direct_brokers,
                    "relayedBrokers": node.relayed_brokers,
                    "members": members,
                })
            }
            ClusterRole::NotClusterNode => json!({ "state": "none" }),
            ClusterRole::Unknown(error) => json!({ "state": "unknown", "error": error }),
        }
    }

    /// The summary table's cell: the cluster id (with `(not ready)` while
    /// bootstrapping), `-` for no cluster node, `?` when unknown.
    pub fn cell(&self) -> String {
        match self {
            ClusterRole::Node(body) => {
                let node = body.node.clone().unwrap_or_default();
                if node.ready {
                    node.cluster_id
                } else {
                    format!("{} (not ready)", node.cluster_id)
                }
            }
            ClusterRole::NotClusterNode => "-".to_owned(),
            ClusterRole::Unknown(_) => "?".to_owned(),
        }
    }
}
