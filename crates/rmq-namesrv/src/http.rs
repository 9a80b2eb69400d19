//! The NameServer's JSON API under `/api/v1` (docs/metrics.md has the
//! endpoints), merged with `rmq-ops`' health, readiness, metrics and
//! dashboard routes and the address server's route
//! ([`crate::address_server`]) into the router of the HTTP port.
//!
//! Every handler copies what it needs out of the tables under their read
//! lock and builds the JSON after releasing it, as the request handlers do;
//! nothing here writes.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use prometheus_client::registry::Registry;
use rmq_ops::http::{ApiError, Readiness};
use rmq_protocol::{Dialect, JavaJson};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::address_server::AddressServer;
use crate::kv::ORDER_TOPIC_CONFIG;
use crate::route::MASTER_ID;
use crate::state::Namesrv;

/// Most topics one `/api/v1/topics` answer lists.
pub const MAX_TOPICS_PER_PAGE: usize = 10_000;
const DEFAULT_TOPICS_PER_PAGE: usize = 1_000;

/// What the API handlers share.
#[derive(Clone)]
struct Api {
    state: Arc<Namesrv>,
    /// The embedded controller's view, when one runs in this process.
    controller: Option<ControllerView>,
}

/// How the API reaches an embedded controller's state: a function that
/// answers `/api/v1/controller` (the controller crate knows its own tables).
pub type ControllerView = Arc<dyn Fn() -> Result<Value, String> + Send + Sync>;

/// The HTTP port's router: `rmq-ops`' routes (health, `/ready` after
/// `readiness` is set, `/metrics` from `registry`, the dashboard), the
/// NameServer's API over `state` and `address_server`'s route. None asks
/// for credentials: what they show is public to anyone who reaches the
/// port, and Java's address server clients send none.
pub fn router(
    state: Arc<Namesrv>,
    registry: Arc<Registry>,
    readiness: Readiness,
    controller: Option<ControllerView>,
    address_server: AddressServer,
) -> Router {
    let api = Router::new()
        .route("/api/v1/overview", get(overview))
        .route("/api/v1/clusters", get(clusters))
        .route("/api/v1/brokers", get(brokers))
        .route("/api/v1/topics", get(topics))
        .route("/api/v1/topics/{topic}", get(topic_route))
        .route("/api/v1/kv", get(kv))
        .route("/api/v1/config", get(config))
        .route("/api/v1/controller", get(controller_view))
        .route("/api/v1/cluster", get(cluster_view))
        .with_state(Api { state, controller });
    rmq_ops::http::router(registry, readiness)
        .merge(api)
        .merge(address_server.router())
}

async fn overview(State(api): State<Api>) -> Json<Value> {
    let sizes = api.state.routes.read_briefly().sizes();
    Json(json!({
        "role": "namesrv",
        "version": rmq_ops::build::VERSION,
        "gitRevision": rmq_ops::build::GIT_REVISION,
        "uptimeSeconds": api.state.clock.now() / 1000,
        "clusters": sizes.clusters,
        "brokerGroups": sizes.broker_groups,
        "brokers": sizes.brokers,
        "topics": sizes.topics,
        "queueEntries": sizes.queue_entries,
        "controller": api.controller.is_some(),
        "cluster": api.state.cluster.is_some(),
    }))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ClusterJson {
    name: String,
    broker_names: Vec<String>,
}

async fn clusters(State(api): State<Api>) -> Json<Value> {
    let clusters: Vec<ClusterJson> = api
        .state
        .routes
        .read()
        .clusters()
        .map(|(name, brokers)| ClusterJson {
            name: name.clone(),
            broker_names: brokers.iter().cloned().collect(),
        })
        .collect();
    Json(json!({ "clusters": clusters }))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BrokerJson {
    cluster: String,
    broker_name: Option<String>,
    broker_id: Option<i64>,
    address: String,
    role: &'static str,
    ha_server_address: String,
    last_registration_ago_millis: u64,
    timeout_millis: u64,
    data_version: Value,
    topic_count: usize,
    /// The broker's release from its last registration (`5.5.1`); `None`
    /// when unknown (restored from the route snapshot).
    version: Option<String>,
    /// Restored from the route snapshot and not yet registered again.
    provisional: bool,
}

async fn brokers(State(api): State<Api>) -> Json<Value> {
    let now = api.state.clock.now();
    let mut brokers: Vec<BrokerJson> = {
        let table = api.state.routes.read();
        // address → (broker name, id), and broker name → topics it serves.
        let mut members: HashMap<(&str, &str), (&str, i64)> = HashMap::new();
        for group in table.groups() {
            for (id, addr) in &group.addrs {
                members.insert((group.cluster.as_str(), addr.as_str()), (&group.name, *id));
            }
        }
        let mut topic_counts: HashMap<&str, usize> = HashMap::new();
        for (_, queues) in table.topics() {
            for broker_name in queues.keys() {
                *topic_counts.entry(&**broker_name).or_default() += 1;
            }
        }
        table
            .live_brokers()
            .map(|(key, live)| {
                let member = members
                    .get(&(key.cluster.as_str(), key.addr.as_str()))
                    .copied();
                // A group's cluster is the one it first registered in; a
                // member registered under another cluster is found by address.
                let member = member.or_else(|| {
                    table.groups().find_map(|group| {
                        group
                            .addrs
                            .iter()
                            .find(|(_, addr)| **addr == key.addr)
                            .map(|(id, _)| (group.name.as_str(), *id))
                    })
                });
                BrokerJson {
                    cluster: key.cluster.clone(),
                    broker_name: member.map(|(name, _)| name.to_owned()),
                    broker_id: member.map(|(_, id)| id),
                    address: key.addr.clone(),
                    role: match member {
                        Some((_, MASTER_ID)) => "master",
                        Some(_) => "slave",
                        None => "unknown",
                    },
                    ha_server_address: live.ha_server_addr.clone(),
                    last_registration_ago_millis: now.saturating_sub(live.last_update),
                    timeout_millis: live.timeout_ms,
                    data_version: json!({
                        "counter": live.data_version.counter,
                        "timestamp": live.data_version.timestamp,
                        "stateVersion": live.data_version.state_version,
                    }),
                    topic_count: member
                        .and_then(|(name, _)| topic_counts.get(name).copied())
                        .unwrap_or(0),
                    version: rmq_protocol::version::release_name(live.client_version),
                    provisional: live.provisional,
                }
            })
            .collect()
    };
    brokers.sort_by(|a, b| {
        (&a.cluster, &a.broker_name, a.broker_id, &a.address).cmp(&(
            &b.cluster,
            &b.broker_name,
            b.broker_id,
            &b.address,
        ))
    });
    Json(json!({ "brokers": brokers }))
}

/// `/api/v1/topics` parameters.
#[derive(Deserialize)]
struct TopicQuery {
    /// Case-insensitive substring of the topic name.
    search: Option<String>,
    /// Topics listed at most.
    limit: Option<usize>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TopicJson {
    name: String,
    order: bool,
    queues: Vec<QueueJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct QueueJson {
    broker_name: String,
    read_queue_nums: i32,
    write_queue_nums: i32,
    perm: i32,
}

async fn topics(
    State(api): State<Api>,
    Query(query): Query<TopicQuery>,
) -> Result<Json<Value>, ApiError> {
    let limit = query.limit.unwrap_or(DEFAULT_TOPICS_PER_PAGE);
    if limit > MAX_TOPICS_PER_PAGE {
        return Err(ApiError::bad_request(format!(
            "limit {limit} is over {MAX_TOPICS_PER_PAGE}"
        )));
    }
    let needle = query.search.unwrap_or_default().to_lowercase();
    let (total, mut listed) = {
        let table = api.state.routes.read();
        let mut matching: Vec<(&String, _)> = table
            .topics()
            .filter(|(name, _)| needle.is_empty() || name.to_lowercase().contains(&needle))
            .collect();
        let total = matching.len();
        // The first `limit` by name without sorting everything: a NameServer
        // may hold a million topics.
        if matching.len() > limit {
            matching.select_nth_unstable_by(limit, |a, b| a.0.cmp(b.0));
            matching.truncate(limit);
        }
        let listed: Vec<TopicJson> = matching
            .into_iter()
            .map(|(name, queues)| TopicJson {
                name: name.clone(),
                order: false,
                queues: queues
                    .iter()
                    .map(|(broker_name, queue)| QueueJson {
                        broker_name: broker_name.to_string(),
                        read_queue_nums: queue.read_queue_nums,
                        write_queue_nums: queue.write_queue_nums,
                        perm: queue.perm,
                    })
                    .collect(),
            })
            .collect();
        (total, listed)
    };
    listed.sort_by(|a, b| a.name.cmp(&b.name));
    {
        let kv = api.state.kv.read();
        for topic in &mut listed {
            topic.order = kv.get(ORDER_TOPIC_CONFIG, &topic.name).is_some();
        }
    }
    Ok(Json(json!({
        "total": total,
        "truncated": total > listed.len(),
        "topics": listed,
    })))
}

async fn topic_route(
    State(api): State<Api>,
    Path(topic): Path<String>,
) -> Result<Response, ApiError> {
    let acting_master = api.state.config.read().support_acting_master;
    let route = api.state.routes.read().topic_route(&topic, acting_master);
    let Some(mut route) = route else {
        return Err(ApiError::not_found(format!("topic {topic} does not exist")));
    };
    route.order_topic_conf = api
        .state
        .kv
        .read()
        .get(ORDER_TOPIC_CONFIG, &topic)
        .map(str::to_owned);
    // Exactly what a 4.9.4+ client gets for GET_ROUTEINFO_BY_TOPIC.
    let body = route.to_json(Dialect::Standard);
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

async fn kv(State(api): State<Api>) -> Json<Value> {
    let namespaces: Vec<Value> = api
        .state
        .kv
        .read()
        .namespaces()
        .map(|(name, entries)| json!({ "namespace": name, "entries": entries }))
        .collect();
    Json(json!({ "namespaces": namespaces }))
}

/// Whether a configuration key holds a secret (never shown).
pub fn is_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["secret", "password", "accesskey", "token"]
        .iter()
        .any(|word| key.contains(word))
}

async fn config(State(api): State<Api>) -> Json<Value> {
    let properties: BTreeMap<String, String> = api
        .state
        .config
        .read()
        .to_properties()
        .into_iter()
        .map(|(key, value)| {
            let shown = if is_secret(&key) {
                "***".to_owned()
            } else {
                value
            };
            (key, shown)
        })
        .collect();
    Json(json!({ "config": properties }))
}

async fn controller_view(State(api): State<Api>) -> Result<Json<Value>, ApiError> {
    let Some(view) = &api.controller else {
        return Err(ApiError::not_found("no controller in this process"));
    };
    view().map(Json).map_err(|message| ApiError {
        status: axum::http::StatusCode::SERVICE_UNAVAILABLE,
        message,
    })
}

/// The NameServer cluster as this node sees it: the body of
/// WAYMARK_GET_CLUSTER_STATUS, or `{"enabled":false}` with the cluster off.
async fn cluster_view(State(api): State<Api>) -> Json<Value> {
    match crate::cluster::status::view(api.state.cluster.as_deref(), &api.state.routes) {
        Some(view) => Json(serde_json::to_value(view).expect("a cluster status always serializes")),
        None => Json(json!({ "enabled": false })),
    }
}

#[cfg(test)]
mod tests {
    use super::is_secret;

    #[test]
    fn secrets_are_recognised_by_name() {
        assert!(is_secret("tls.server.keyPassword"));
        assert!(is_secret("secretKey"));
        assert!(is_secret("accessKey"));
        assert!(!is_secret("listenPort"));
        assert!(!is_secret("kvConfigPath"));
    }
}
