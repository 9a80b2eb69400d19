//! REGISTER_BROKER, UNREGISTER_BROKER, BROKER_HEARTBEAT, QUERY_DATA_VERSION.

use rmq_protocol::headers::{
    BrokerHeartbeatRequestHeader, QueryDataVersionResponseHeader, RegisterBrokerResponseHeader,
    UnregisterBrokerRequestHeader,
};
use rmq_protocol::{Dialect, JavaJson, KvTable};
use rmq_wire::ResponseCode;

use crate::answer::Answer;
use crate::cluster::{NamesrvCluster, Registered};
use crate::config::SharedConfig;
use crate::error::{Error, HandlerResult};
use crate::housekeeping::{Notifier, Unregistrations};
use crate::kv::{SharedKv, ORDER_TOPIC_CONFIG};
use crate::metrics::RemovalReason;
use crate::request::{DataVersionQuery, RegisterRequest};
use crate::route::{
    BrokerKey, BrokerRegistration, Millis, RegisterError, RegisterOutcome, SharedRoutes,
    Unregistration,
};

/// REGISTER_BROKER: the registration applied at `now`, answered with the
/// master's addresses for a slave and, with `returnOrderTopicConfigToBroker`,
/// the order-topic configuration.
///
/// A master re-sending the body of its last registration with only a new
/// DataVersion, whose topics the table still holds as sent, is applied
/// without its body being decoded ([`SharedRoutes::register_repeated`]),
/// with the same outcome and answer; any other is decoded and applied in
/// full ([`register_in_full`]).
pub fn register(
    routes: &SharedRoutes,
    kv: &SharedKv,
    config: &SharedConfig,
    notifier: &Notifier,
    cluster: Option<&NamesrvCluster>,
    request: &RegisterRequest<'_>,
    now: Millis,
) -> HandlerResult {
    let (rules, return_order_conf) = registration_rules(config);
    if let Some(body) = request.repeated_body() {
        let registration = request.repeated(body);
        let applied = routes.register_repeated(
            &registration,
            body.fingerprint,
            request.max_topics(),
            now,
            rules.notify_min_id,
            rules.delete_missing_topics,
        );
        if let Some(applied) = applied {
            let (outcome, topic_count) = applied.map_err(refused)?;
            let registered = Registered {
                topic_count,
                ..Registered::of(&registration)
            };
            let broker = BrokerNamed::of(&registration);
            let outcome = reported(notifier, &broker, topic_count, outcome);
            return Ok(answer(
                kv,
                cluster,
                Some(registered),
                outcome,
                now,
                return_order_conf,
            ));
        }
    }
    register_in_full(routes, kv, config, notifier, cluster, request, now)
}

/// REGISTER_BROKER with the body decoded and applied whole
/// ([`apply_registration`]). The body's fingerprint
/// ([`RegisterRequest::repeated_body`]) is noted with the registration when
/// the body was of the shape that can be recognised again.
///
/// # Errors
/// A body that does not decode or is refused ([`RegisterRequest::decode`]),
/// or a registration the table refuses.
pub fn register_in_full(
    routes: &SharedRoutes,
    kv: &SharedKv,
    config: &SharedConfig,
    notifier: &Notifier,
    cluster: Option<&NamesrvCluster>,
    request: &RegisterRequest<'_>,
    now: Millis,
) -> HandlerResult {
    let (registration, shaped) = request.decode()?;
    let (rules, return_order_conf) = registration_rules(config);
    // What the cluster publishes of the broker, taken before the table
    // takes the registration.
    let registered = cluster.map(|_| Registered::of(&registration));
    let body = request
        .repeated_body()
        .filter(|_| shaped)
        .map(|body| body.fingerprint);
    let outcome = apply_registration_from_body(routes, notifier, registration, body, now, rules)?;
    Ok(answer(
        kv,
        cluster,
        registered,
        outcome,
        now,
        return_order_conf,
    ))
}

fn registration_rules(config: &SharedConfig) -> (RegistrationRules, bool) {
    let config = config.read();
    (
        RegistrationRules {
            notify_min_id: config.notify_min_broker_id_changed,
            delete_missing_topics: config.delete_topic_with_broker_registration,
        },
        config.return_order_topic_config_to_broker,
    )
}

/// The answer to an applied registration, once the cluster learnt of it.
fn answer(
    kv: &SharedKv,
    cluster: Option<&NamesrvCluster>,
    registered: Option<Registered>,
    outcome: RegisterOutcome,
    now: Millis,
    return_order_conf: bool,
) -> Answer {
    if let (Some(cluster), Some(registered)) = (cluster, registered) {
        if !outcome.ignored_stale_state_version {
            cluster.registered(&registered, now);
        }
    }
    let mut answer = Answer::success().with_header(&RegisterBrokerResponseHeader {
        ha_server_addr: outcome.ha_server_addr,
        master_addr: outcome.master_addr,
    });
    if return_order_conf {
        if let Some(table) = kv.read().namespace(ORDER_TOPIC_CONFIG) {
            answer = answer.with_body(
                KvTable {
                    table: table.clone(),
                }
                .to_json(Dialect::Default),
            );
        }
    }
    answer
}

/// The options that decide what a registration does to the table besides
/// recording it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistrationRules {
    /// `notifyMinBrokerIdChanged`: a registration that lowers its group's
    /// smallest broker id notifies the group.
    pub notify_min_id: bool,
    /// `deleteTopicWithBrokerRegistration`: topics the broker no longer
    /// lists lose its queue data.
    pub delete_missing_topics: bool,
}

/// Writes `registration` into the route table at `now` and hands the
/// notifications it decided to `notifier`, logging what an operator wants
/// to know (a new broker, a restored one confirmed, a stale registration
/// ignored). The outcome, its notifications handed over already, is
/// returned for the caller to answer with or act on.
///
/// # Errors
/// SYSTEM_ERROR when the table refuses the registration (a one-topic
/// registration of a member not yet registered).
pub fn apply_registration(
    routes: &SharedRoutes,
    notifier: &Notifier,
    registration: BrokerRegistration,
    now: Millis,
    rules: RegistrationRules,
) -> Result<RegisterOutcome, Error> {
    apply_registration_from_body(routes, notifier, registration, None, now, rules)
}

/// [`apply_registration`] of a registration decoded from a body of
/// fingerprint `body` ([`SharedRoutes::register_broker_from_body`]).
fn apply_registration_from_body(
    routes: &SharedRoutes,
    notifier: &Notifier,
    registration: BrokerRegistration,
    body: Option<u128>,
    now: Millis,
    rules: RegistrationRules,
) -> Result<RegisterOutcome, Error> {
    let topics = registration.topic_configs.len();
    let broker = BrokerNamed::of(&registration);
    let outcome = routes
        .register_broker_from_body(
            registration,
            body,
            now,
            rules.notify_min_id,
            rules.delete_missing_topics,
        )
        .map_err(refused)?;
    Ok(reported(notifier, &broker, topics, outcome))
}

/// The error a registration the table refused is answered with.
fn refused(error: RegisterError) -> Error {
    // Java answers this one from its response with a header class.
    Error::system(error.to_string()).with_empty_header()
}

/// The broker a registration names, for its log lines.
struct BrokerNamed {
    cluster: String,
    addr: String,
    name: String,
    id: i64,
}

impl BrokerNamed {
    fn of(registration: &BrokerRegistration) -> BrokerNamed {
        BrokerNamed {
            cluster: registration.cluster.clone(),
            addr: registration.broker_addr.clone(),
            name: registration.broker_name.clone(),
            id: registration.broker_id,
        }
    }
}

/// Logs what an operator wants to know of an applied registration (a new
/// broker, a restored one confirmed, a stale registration ignored) and
/// hands its notifications to `notifier`; returns the rest of the outcome.
fn reported(
    notifier: &Notifier,
    broker: &BrokerNamed,
    topics: usize,
    mut outcome: RegisterOutcome,
) -> RegisterOutcome {
    let BrokerNamed {
        cluster,
        addr,
        name,
        id,
    } = broker;
    if outcome.new_broker {
        tracing::info!(%cluster, broker = %name, id, %addr, topics, "new broker registered");
    }
    if outcome.confirmed_restored {
        tracing::info!(%cluster, broker = %name, id, %addr, topics, "broker restored from the route snapshot registered again");
    }
    if outcome.ignored_stale_state_version {
        tracing::warn!(%cluster, broker = %name, id, %addr, "registration ignored: the current holder of this id has a higher stateVersion");
    }
    notifier.notify(std::mem::take(&mut outcome.notifications));
    outcome
}

/// UNREGISTER_BROKER: queued for the batch worker; answered before it runs.
/// Java queues the request whatever its fields and answers SUCCESS; one that
/// names no broker (`header` is `None`) has nothing to unregister.
///
/// # Errors
/// SYSTEM_ERROR without a remark when the queue is full.
pub fn unregister(
    routes: &SharedRoutes,
    unregistrations: &Unregistrations,
    header: Option<UnregisterBrokerRequestHeader>,
) -> HandlerResult {
    let Some(header) = header else {
        return Ok(Answer::success());
    };
    let unregistration = Unregistration {
        key: BrokerKey::new(header.cluster_name, header.broker_addr),
        broker_name: header.broker_name,
        broker_id: header.broker_id,
        fence: routes.read_briefly().generation(),
    };
    if unregistrations.submit(unregistration, RemovalReason::Unregister) {
        Ok(Answer::success())
    } else {
        Err(Error::without_remark(ResponseCode::SystemError))
    }
}

/// BROKER_HEARTBEAT: refreshes a live broker at `now`; nothing else changes
/// (the cluster learns the broker is not silent).
pub fn heartbeat(
    routes: &SharedRoutes,
    cluster: Option<&NamesrvCluster>,
    header: BrokerHeartbeatRequestHeader,
    now: Millis,
) -> HandlerResult {
    let key = BrokerKey::new(header.cluster_name, header.broker_addr);
    routes.write_liveness().touch(&key, now);
    if let Some(cluster) = cluster {
        cluster.seen(&key, now);
    }
    Ok(Answer::success())
}

/// QUERY_DATA_VERSION: `changed`, the stored version, and a heartbeat at `now`.
pub fn query_data_version(
    routes: &SharedRoutes,
    cluster: Option<&NamesrvCluster>,
    query: DataVersionQuery,
    now: Millis,
) -> HandlerResult {
    let (changed, stored) =
        routes
            .write_liveness()
            .query_data_version(&query.broker, query.version.as_ref(), now);
    if let Some(cluster) = cluster {
        cluster.seen(&query.broker, now);
    }
    let answer = Answer::success().with_header(&QueryDataVersionResponseHeader { changed });
    Ok(match stored {
        Some(stored) => answer.with_body(stored.to_json(Dialect::Default)),
        None => answer,
    })
}

#[cfg(test)]
mod tests {
    use rmq_wire::{RequestCode, ResponseCode};

    use crate::handlers::tests::{request, Fixture, Reg};
    use crate::limits::Limits;

    #[test]
    fn a_registration_over_the_topic_limit_is_refused_by_name() {
        let fixture = Fixture::with_limits(Limits {
            max_topics_per_registration: 3,
            ..Limits::default()
        });
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
