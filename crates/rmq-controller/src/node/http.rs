//! The controller's JSON API (`/api/v1/overview`, `/api/v1/controller`,
//! docs/metrics.md) and the router of a standalone controller's HTTP port.
//! [`view`] is also what the NameServer serves for an embedded controller.

use std::sync::Arc;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use prometheus_client::registry::Registry;
use rmq_ops::http::Readiness;
use serde_json::{json, Value};

use crate::node::ControllerNode;

/// The broker sets as this node holds them, with Raft's leader:
/// `{"leader", "isLeader", "brokerSets": [...]}`. Replicas are `alive`
/// when they heartbeat this node in time (only the leader's view decides).
pub fn view(node: &ControllerNode) -> Value {
    let now = node.now();
    let leader = node.leader().map(|peer| peer.addr.clone());
    let sets: Vec<Value> = {
        let state = node.applied();
        let live = node.live();
        state
            .replicas
            .sets()
            .map(|set| {
                let replicas: Vec<Value> = set
                    .replicas
                    .iter()
                    .map(|(id, replica)| {
                        json!({
                            "brokerId": id,
                            "address": replica.addr,
                            "alive": live.is_alive(&set.cluster, &set.name, *id, now),
                            "inSyncStateSet": set.sync_state_set.contains(id),
                        })
                    })
                    .collect();
                json!({
                    "cluster": set.cluster,
                    "brokerName": set.name,
                    "masterBrokerId": set.master,
                    "masterAddress": set.master_addr(),
                    "masterEpoch": set.master_epoch,
                    "syncStateSetEpoch": set.sync_state_set_epoch,
                    "syncStateSet": set.sync_state_set,
                    "replicas": replicas,
                })
            })
            .collect()
    };
    json!({
        "group": node.group(),
        "self": node.me().addr,
        "leader": leader,
        "isLeader": node.serving_since().is_some(),
        "brokerSets": sets,
    })
}

/// A standalone controller's HTTP router: `rmq-ops`' routes (health,
/// readiness, metrics from `registry`, the dashboard) and the API.
pub fn router(node: Arc<ControllerNode>, registry: Arc<Registry>, readiness: Readiness) -> Router {
    let api = Router::new()
        .route("/api/v1/overview", get(overview))
        .route("/api/v1/controller", get(controller))
        .with_state(node);
    rmq_ops::http::router(registry, readiness).merge(api)
}

async fn overview(State(node): State<Arc<ControllerNode>>) -> Json<Value> {
    let sets = node.applied().replicas.len();
    Json(json!({
        "role": "controller",
        "version": rmq_ops::build::VERSION,
        "gitRevision": rmq_ops::build::GIT_REVISION,
        "uptimeSeconds": node.now().0 / 1000,
        "brokerSets": sets,
        "controller": true,
    }))
}

async fn controller(State(node): State<Arc<ControllerNode>>) -> Json<Value> {
    Json(view(&node))
}
