//! GET_ROUTEINFO_BY_TOPIC (nameserver.md §2.1, §6).

use rmq_protocol::headers::GetRouteInfoRequestHeader;
use rmq_protocol::version::route_dialect;
use rmq_protocol::JavaJson;
use rmq_wire::{RemotingCommand, ResponseCode};

use super::broker::ORDER_TOPIC_CONFIG;
use crate::error::{Error, HandlerResult};
use crate::route::ZoneFilter;
use crate::state::Namesrv;

/// Ext fields of zone routing, added by zone-aware clients.
const ZONE_MODE: &str = "__ZONE_MODE";
const ZONE_NAME: &str = "__ZONE_NAME";

/// The remark Java gives for an unknown topic; clients only look at the code.
fn no_route_remark(topic: &str) -> String {
    format!(
        "No topic route info in name server for the topic: {topic}\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."
    )
}

/// GET_ROUTEINFO_BY_TOPIC. The table's read lock is held only while the
/// route is copied out; encoding happens after.
pub fn topic_route(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let header: GetRouteInfoRequestHeader = request.header()?;
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
    let route = state
        .routes
        .read()
        .topic_route(&header.topic, acting_master);
    let Some(mut route) = route else {
        return Err(Error::new(
            ResponseCode::TopicNotExist,
            no_route_remark(&header.topic),
        ));
    };
    if order_enabled {
        route.order_topic_conf = state
            .kv
            .read()
            .get(ORDER_TOPIC_CONFIG, &header.topic)
            .map(str::to_owned);
    }
    if let Some(zone) = ZoneFilter::from_ext(request.ext(ZONE_MODE), request.ext(ZONE_NAME)) {
        zone.apply(&mut route);
    }
    let dialect = route_dialect(request.version, header.accept_standard_json_only);
    Ok(RemotingCommand::response_to(request, ResponseCode::Success)
        .with_body(route.to_json(dialect)))
}
