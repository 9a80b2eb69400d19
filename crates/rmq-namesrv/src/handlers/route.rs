//! GET_ROUTEINFO_BY_TOPIC (nameserver.md §2.1, §6).

use bytes::Bytes;
use rmq_protocol::headers::GetRouteInfoRequestHeader;
use rmq_protocol::version::route_dialect;
use rmq_protocol::JavaJson;
use rmq_wire::{HeaderError, RemotingCommand, ResponseCode};

use super::broker::ORDER_TOPIC_CONFIG;
use crate::error::{Error, HandlerResult};
use crate::route::{RouteTable, RouteVariant, ZoneFilter};
use crate::state::Namesrv;

/// The remark Java gives for an unknown topic; clients only look at the code.
/// A request without `topic` gets Java's answer for the lookup of `null`.
fn no_route_remark(topic: Option<&str>) -> String {
    let topic = topic.unwrap_or("null");
    format!(
        "No topic route info in name server for the topic: {topic}\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."
    )
}

/// GET_ROUTEINFO_BY_TOPIC. The encoded body is reused while the route table
/// is unchanged (`route::SharedRoutes`); otherwise the table's read lock is
/// held only while the route is copied out, and encoding happens after.
///
/// Zone filtering (Java's `ZoneRouteRPCHook`) runs before encoding, so the
/// filtered body keeps the dialect the client qualified for. Java re-encodes a
/// zone-filtered body in the default dialect whatever the client asked for
/// (nameserver.md §6.4); Java clients read both, and a strict-JSON client that
/// asked for the standard dialect would break on the default one, so Waymark
/// deliberately keeps the standard dialect here.
pub fn topic_route(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let header = match request.header::<GetRouteInfoRequestHeader>() {
        Ok(header) => Some(header),
        Err(HeaderError::Missing(_)) => None,
        Err(error) => return Err(error.into()),
    };
    let (acting_master, order_enabled) = {
        let config = state.config.read();
        if config.need_wait_for_service {
            let wait_ms = u64::try_from(config.wait_seconds_for_service).unwrap_or(0) * 1000;
            if state.clock.now() < wait_ms {
                return Err(Error::system("name server not ready"));
            }
        }
        (config.support_acting_master, config.order_message_enable)
    };
    let Some(header) = header else {
        return Err(Error::new(
            ResponseCode::TopicNotExist,
            no_route_remark(None),
        ));
    };
    let variant = RouteVariant {
        dialect: route_dialect(request.version, header.accept_standard_json_only),
        acting_master,
    };
    let zone = ZoneFilter::from_request(header.zone_mode, header.zone_name.as_deref());
    // The order topic conf comes from the KV store and the zone filter from
    // the request: bodies that depend on them are encoded every time.
    let cacheable = !order_enabled && zone.is_none();
    if cacheable {
        if let Some(body) = state.routes.cached_body(&header.topic, variant) {
            return Ok(route_response(request, body));
        }
    }
    let find = |table: &RouteTable| table.topic_route(&header.topic, acting_master);
    let body = if cacheable {
        state
            .routes
            .encode_and_cache(&header.topic, variant, find, |route| {
                Bytes::from(route.to_json(variant.dialect))
            })
    } else {
        let route = find(&state.routes.read_for_query());
        route.map(|mut route| {
            if order_enabled {
                route.order_topic_conf = state
                    .kv
                    .read()
                    .get(ORDER_TOPIC_CONFIG, &header.topic)
                    .map(str::to_owned);
            }
            if let Some(zone) = &zone {
                zone.apply(&mut route);
            }
            Bytes::from(route.to_json(variant.dialect))
        })
    };
    match body {
        Some(body) => Ok(route_response(request, body)),
        None => Err(Error::new(
            ResponseCode::TopicNotExist,
            no_route_remark(Some(&header.topic)),
        )),
    }
}

fn route_response(request: &RemotingCommand, body: Bytes) -> RemotingCommand {
    RemotingCommand::response_to(request, ResponseCode::Success).with_body(body)
}
