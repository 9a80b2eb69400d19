//! REGISTER_BROKER, UNREGISTER_BROKER, BROKER_HEARTBEAT, QUERY_DATA_VERSION.

use rmq_protocol::headers::{
    BrokerHeartbeatRequestHeader, QueryDataVersionRequestHeader, QueryDataVersionResponseHeader,
    RegisterBrokerRequestHeader, RegisterBrokerResponseHeader, UnregisterBrokerRequestHeader,
};
use rmq_protocol::register::RegisterDecodeError;
use rmq_protocol::{body_crc32, DataVersion, Dialect, JavaJson, KvTable, RegisterBrokerBody};
use rmq_transport::ConnectionInfo;
use rmq_wire::{RemotingCommand, ResponseCode};

use super::{header_if_complete, success, validate};
use crate::error::{Error, HandlerResult};
use crate::metrics::RemovalReason;
use crate::route::{BrokerKey, BrokerRegistration, Unregistration};
use crate::state::Namesrv;

/// KV namespace of order-topic configuration.
pub const ORDER_TOPIC_CONFIG: &str = "ORDER_TOPIC_CONFIG";

/// REGISTER_BROKER (nameserver.md §2.2).
///
/// A body with more topics (or static-topic mappings, or filter servers)
/// than `maxTopicsPerRegistration` is refused while it is decoded, before it
/// is built: SYSTEM_ERROR naming the limit and the broker, as other refused
/// registrations, and a warning naming the peer.
pub fn register(
    state: &Namesrv,
    request: &RemotingCommand,
    conn: &ConnectionInfo,
) -> HandlerResult {
    let header: RegisterBrokerRequestHeader = request.header()?;
    let body = request.body.as_deref();
    if header.body_crc32 != 0 {
        let crc = body.map_or(0, body_crc32);
        if crc != header.body_crc32 {
            tracing::warn!(broker = %header.broker_addr, expected = header.body_crc32, actual = crc, "register broker body crc32 mismatch");
            return Err(Error::system("crc32 not match").with_empty_header());
        }
    }
    let limit = state.limits.max_topics_per_registration;
    let decoded =
        RegisterBrokerBody::decode_registration(body, header.compressed, request.version, limit)
            .map_err(|e| match e {
                RegisterDecodeError::TooMany { what, limit } => {
                    state
                        .metrics
                        .refusals
                        .refused(crate::metrics::refusal::TOPICS_PER_REGISTRATION);
                    tracing::warn!(
                        peer = %conn.peer(),
                        broker = %header.broker_addr,
                        broker_name = %header.broker_name,
                        what,
                        max_topics_per_registration = limit,
                        "registration refused: over maxTopicsPerRegistration"
                    );
                    Error::system(format!(
                        "register broker {} ({}) refused: the body carries more than {limit} {what}, maxTopicsPerRegistration is {limit}",
                        header.broker_name, header.broker_addr
                    ))
                }
                RegisterDecodeError::Body(e) => {
                    Error::system(format!("Failed to decode RegisterBrokerBody: {e}"))
                }
            })?;
    for tc in &decoded.topic_configs {
        validate::registered_topic(&tc.topic_name, tc.read_queue_nums, tc.write_queue_nums)?;
    }
    let (notify_min_id, delete_missing, return_order_conf) = {
        let config = state.config.read();
        (
            config.notify_min_broker_id_changed,
            config.delete_topic_with_broker_registration,
            config.return_order_topic_config_to_broker,
        )
    };
    let registration = BrokerRegistration {
        cluster: header.cluster_name,
        broker_addr: header.broker_addr,
        broker_name: header.broker_name,
        broker_id: header.broker_id,
        ha_server_addr: header.ha_server_addr,
        zone_name: header.zone_name,
        heartbeat_timeout_ms: header
            .heartbeat_timeout_millis
            .and_then(|ms| u64::try_from(ms).ok()),
        enable_acting_master: header.enable_acting_master,
        data_version: decoded.data_version,
        topic_configs: decoded.topic_configs,
        mappings: decoded.mappings,
        filter_servers: decoded.filter_server_list,
        conn: conn.id().0,
        client_version: request.version,
    };
    let (cluster, addr, name, id) = (
        registration.cluster.clone(),
        registration.broker_addr.clone(),
        registration.broker_name.clone(),
        registration.broker_id,
    );
    let topics = registration.topic_configs.len();
    let now = state.clock.now();
    let outcome = state
        .routes
        .register_broker(registration, now, notify_min_id, delete_missing)
        // Java answers this one from its response with a header class.
        .map_err(|e| Error::system(e.to_string()).with_empty_header())?;
    if outcome.new_broker {
        tracing::info!(%cluster, broker = %name, id, %addr, topics, "new broker registered");
    }
    if outcome.confirmed_restored {
        tracing::info!(%cluster, broker = %name, id, %addr, topics, "broker restored from the route snapshot registered again");
    }
    if outcome.ignored_stale_state_version {
        tracing::warn!(%cluster, broker = %name, id, %addr, "registration ignored: the current holder of this id has a higher stateVersion");
    }
    state.notify(outcome.notifications);

    let mut response = RemotingCommand::response_to(request, ResponseCode::Success).with_header(
        &RegisterBrokerResponseHeader {
            ha_server_addr: outcome.ha_server_addr,
            master_addr: outcome.master_addr,
        },
    );
    if return_order_conf {
        if let Some(table) = state.kv.read().namespace(ORDER_TOPIC_CONFIG) {
            response = response.with_body(
                KvTable {
                    table: table.clone(),
                }
                .to_json(Dialect::Default),
            );
        }
    }
    Ok(response)
}

/// UNREGISTER_BROKER: queued for the batch worker; answered before it runs.
pub fn unregister(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    // Java queues the request whatever its fields and answers SUCCESS; one that names no
    // broker has nothing to unregister.
    let Some(header) = header_if_complete::<UnregisterBrokerRequestHeader>(request)? else {
        return Ok(success(request));
    };
    let unregistration = Unregistration {
        key: BrokerKey::new(header.cluster_name, header.broker_addr),
        broker_name: header.broker_name,
        broker_id: header.broker_id,
        fence: state.routes.read().generation(),
    };
    if state.submit_unregistration(unregistration, RemovalReason::Unregister) {
        Ok(success(request))
    } else {
        Err(Error {
            code: ResponseCode::SystemError,
            remark: None,
            empty_header: false,
        })
    }
}

/// BROKER_HEARTBEAT: refreshes a live broker; nothing else changes.
pub fn heartbeat(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let header: BrokerHeartbeatRequestHeader = request.header()?;
    let key = BrokerKey::new(header.cluster_name, header.broker_addr);
    state.routes.write_liveness().touch(&key, state.clock.now());
    Ok(success(request))
}

/// QUERY_DATA_VERSION: `changed`, the stored version, and a heartbeat.
pub fn query_data_version(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let header: QueryDataVersionRequestHeader = request.header()?;
    let version = request
        .body
        .as_deref()
        .map(DataVersion::from_json)
        .transpose()
        .map_err(|e| Error::system(format!("Failed to decode DataVersion: {e}")))?;
    let key = BrokerKey::new(header.cluster_name, header.broker_addr);
    let (changed, stored) =
        state
            .routes
            .write_liveness()
            .query_data_version(&key, version.as_ref(), state.clock.now());
    let mut response = RemotingCommand::response_to(request, ResponseCode::Success)
        .with_header(&QueryDataVersionResponseHeader { changed });
    if let Some(stored) = stored {
        response = response.with_body(stored.to_json(Dialect::Default));
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use rmq_wire::{RequestCode, ResponseCode};

    use crate::handlers::tests::{request, Fixture, Reg};
    use crate::limits::Limits;

    #[test]
    fn a_registration_over_the_topic_limit_is_refused_by_name() {
        let mut fixture = Fixture::new();
        fixture.state.limits = Limits {
            max_topics_per_registration: 3,
            ..Limits::default()
        };
        let four = ["T1", "T2", "T3", "T4"];
        let response = fixture.register(&Reg::master("broker-a", "127.0.0.1:10911", &four));
        assert_eq!(response.response_code(), ResponseCode::SystemError);
        let remark = response.remark.unwrap();
        assert!(
            remark.contains("maxTopicsPerRegistration is 3")
                && remark.contains("broker-a")
                && remark.contains("127.0.0.1:10911"),
            "{remark}"
        );
        let route = request(RequestCode::GetRouteInfoByTopic, &[("topic", "T1")]);
        assert_eq!(
            fixture.call(&route).response_code(),
            ResponseCode::TopicNotExist
        );

        let three = ["T1", "T2", "T3"];
        let response = fixture.register(&Reg::master("broker-a", "127.0.0.1:10911", &three));
        assert_eq!(response.response_code(), ResponseCode::Success);
    }
}
