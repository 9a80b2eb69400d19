//! GET_ROUTEINFO_BY_TOPIC, as Java's `ClientRequestProcessor.getRouteInfoByTopic`
//! answers it; the route itself is assembled by `route::view`.

use bytes::Bytes;
use rmq_protocol::JavaJson;
use rmq_wire::ResponseCode;

use crate::answer::Answer;
use crate::cluster::NamesrvCluster;
use crate::config::SharedConfig;
use crate::error::{Error, HandlerResult};
use crate::kv::{SharedKv, ORDER_TOPIC_CONFIG};
use crate::request::RouteQuery;
use crate::route::{Millis, RouteTable, RouteVariant, SharedRoutes};

/// The remark Java gives for an unknown topic; clients only look at the code.
/// A request without `topic` gets Java's answer for the lookup of `null`.
fn no_route_remark(topic: Option<&str>) -> String {
    let topic = topic.unwrap_or("null");
    format!(
        "No topic route info in name server for the topic: {topic}\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."
    )
}

/// GET_ROUTEINFO_BY_TOPIC at `now` (`None`: the request names no topic).
/// The encoded body is reused while the route table is unchanged
/// (`route::SharedRoutes`); otherwise the table's read lock is held only
/// while the route is copied out, and encoding happens after.
///
/// With `needWaitForService`, route queries are refused for the first
/// `waitSecondsForService` after start, as Java refuses them.
///
/// Zone filtering (Java's `ZoneRouteRPCHook`) runs before encoding, so the
/// filtered body keeps the dialect the client qualified for. Java's hook
/// re-encodes a zone-filtered body in the default dialect whatever the
/// client asked for; Java clients read both, and a strict-JSON client that
/// asked for the standard dialect would break on the default one, so
/// Waymark deliberately keeps the standard dialect here.
pub fn topic_route(
    routes: &SharedRoutes,
    kv: &SharedKv,
    config: &SharedConfig,
    cluster: Option<&NamesrvCluster>,
    now: Millis,
    query: Option<RouteQuery>,
) -> HandlerResult {
    let (acting_master, order_enabled) = {
        let config = config.read();
        if config.need_wait_for_service {
            let wait_ms = u64::try_from(config.wait_seconds_for_service).unwrap_or(0) * 1000;
            if now < wait_ms {
                return Err(Error::system("name server not ready"));
            }
        }
        (config.support_acting_master, config.order_message_enable)
    };
    // A cluster node with seeds serves routes once it holds its peers'
    // (bootstrap): before, its empty table would answer TOPIC_NOT_EXIST and a
    // client would take the topic for gone; "not ready" makes it ask another
    // NameServer, as during needWaitForService.
    if cluster.is_some_and(|cluster| !cluster.is_ready()) {
        return Err(Error::system("name server not ready"));
    }
    let Some(query) = query else {
        return Err(Error::new(
            ResponseCode::TopicNotExist,
            no_route_remark(None),
        ));
    };
    let variant = RouteVariant {
        dialect: query.dialect,
        acting_master,
    };
    // The order topic conf comes from the KV store and the zone filter from
    // the request: bodies that depend on them are encoded every time.
    let cacheable = !order_enabled && query.zone.is_none();
    if cacheable {
        if let Some(body) = routes.cached_body(&query.topic, variant) {
            return Ok(Answer::success().with_body(body));
        }
    }
    let find = |table: &RouteTable| table.topic_route(&query.topic, acting_master);
    let body = if cacheable {
        routes.encode_and_cache(&query.topic, variant, find, |route| {
            Bytes::from(route.to_json(variant.dialect))
        })
    } else {
        let route = find(&routes.read_briefly());
        route.map(|mut route| {
            if order_enabled {
                route.order_topic_conf = kv
                    .read()
                    .get(ORDER_TOPIC_CONFIG, &query.topic)
                    .map(str::to_owned);
            }
            if let Some(zone) = &query.zone {
                zone.apply(&mut route);
            }
            Bytes::from(route.to_json(variant.dialect))
        })
    };
    match body {
        Some(body) => Ok(Answer::success().with_body(body)),
        None => Err(Error::new(
            ResponseCode::TopicNotExist,
            no_route_remark(Some(&query.topic)),
        )),
    }
}
