//! WAYMARK_PULL_REGISTRATION (docs/protocol-extensions.md): both ends.
//! The holder answers with a broker registered with it directly, as its
//! table keeps it (`RouteTable::held_registration`), and the digest it
//! publishes for it; the puller checks the answer before anything of it is
//! applied: a peer's answer is input like any other.

use std::time::Duration;

use rmq_cluster::core::{BrokerDigest, BrokerRef, PullFailure, PullRequest};
use rmq_cluster::gossip::PullAnswer;
use rmq_protocol::headers::{PullRegistrationRequestHeader, PullRegistrationResponseHeader};
use rmq_protocol::register::RegisterDecodeError;
use rmq_protocol::{Dialect, JavaJson, RegisterBrokerBody, TopicConfigSerializeWrapper};
use rmq_transport::RpcClient;
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

use super::NamesrvCluster;
use crate::answer::Answer;
use crate::error::{Error, HandlerResult};
use crate::request::validate;
use crate::route::{BrokerKey, BrokerRegistration, SharedRoutes, RELAYED_CONN};

/// The release ordinal a pulled body is read as: the registration body of
/// a current broker (standard JSON, no compression).
const BODY_VERSION: i32 = rmq_protocol::version::V5_3_1;

/// Serves WAYMARK_PULL_REGISTRATION: the registration of a broker held
/// here directly, or QUERY_NOT_FOUND naming it. A node whose cluster is off
/// does not know the code.
pub fn answer(
    cluster: Option<&NamesrvCluster>,
    routes: &SharedRoutes,
    header: PullRegistrationRequestHeader,
) -> HandlerResult {
    let Some(cluster) = cluster else {
        return Err(Error::new(
            ResponseCode::RequestCodeNotSupported,
            format!(
                " request type {} not supported",
                i32::from(RequestCode::WaymarkPullRegistration)
            ),
        ));
    };
    let me = cluster.settings().gossip.generation;
    if let Some(asked) = header
        .generation
        .filter(|asked| u64::try_from(*asked).ok() != Some(me))
    {
        // The puller knew an earlier (or another) incarnation of this
        // address: what it published is not this node's to answer for.
        return Err(Error::system(format!(
            "this NameServer is incarnation {me}, not {asked}: it restarted since"
        )));
    }
    let key = BrokerKey::new(header.cluster_name, header.broker_addr);
    let relayed_ok = header.relayed.unwrap_or(false);
    let Some((registration, digest)) = super::table::held(
        routes,
        cluster.core(),
        cluster.held_topics(),
        &key,
        relayed_ok,
    ) else {
        return Err(Error::new(
            ResponseCode::QueryNotFound,
            format!(
                "broker {} of cluster {} is not registered with this NameServer directly",
                key.addr, key.cluster
            ),
        ));
    };
    let header = PullRegistrationResponseHeader {
        broker_name: registration.broker_name.clone(),
        broker_id: registration.broker_id,
        ha_server_addr: registration.ha_server_addr.clone(),
        zone_name: registration.zone_name.clone(),
        heartbeat_timeout_millis: registration
            .heartbeat_timeout_ms
            .and_then(|ms| i64::try_from(ms).ok()),
        enable_acting_master: registration.enable_acting_master,
        client_version: registration.client_version,
        digest: serde_json::to_string(&digest).expect("a digest always serializes"),
    };
    let body = RegisterBrokerBody {
        filter_server_list: registration.filter_servers,
        topic_config_serialize_wrapper: TopicConfigSerializeWrapper {
            data_version: registration.data_version,
            topic_config_table: registration
                .topic_configs
                .into_iter()
                .map(|tc| (tc.topic_name.clone(), tc))
                .collect(),
            topic_queue_mapping_info_map: registration.mappings,
            ..TopicConfigSerializeWrapper::default()
        },
    };
    Ok(Answer::success()
        .with_header(&header)
        .with_body(body.to_json(Dialect::Standard)))
}

/// Pulls the broker of `pull` over `client` from the incarnation it names
/// (a relayed copy will do when it says so): the registration, checked and
/// decoded (at most `max_topics` topics), with the digest the node answered
/// with.
pub async fn pull(
    client: &RpcClient,
    pull: &PullRequest,
    timeout: Duration,
    max_topics: usize,
) -> Result<PullAnswer<BrokerRegistration>, PullFailure> {
    let broker = &pull.broker;
    let request = RemotingCommand::request(RequestCode::WaymarkPullRegistration, 0).with_header(
        &PullRegistrationRequestHeader {
            cluster_name: broker.cluster.clone(),
            broker_addr: broker.addr.clone(),
            relayed: pull.relayed.then_some(true),
            generation: i64::try_from(pull.from.generation).ok(),
        },
    );
    let response = client
        .invoke(request, timeout)
        .await
        .map_err(|error| PullFailure::Failed(error.to_string()))?;
    match response.response_code() {
        ResponseCode::Success => {}
        ResponseCode::QueryNotFound => return Err(PullFailure::NotHeld),
        code => {
            return Err(PullFailure::Failed(format!(
                "answered {code:?}: {}",
                response.remark.unwrap_or_default()
            )))
        }
    }
    decode(&response, broker, max_topics).map_err(PullFailure::Failed)
}

/// A SUCCESS answer to a pull of `broker`, as a relayed registration.
fn decode(
    response: &RemotingCommand,
    broker: &BrokerRef,
    max_topics: usize,
) -> Result<PullAnswer<BrokerRegistration>, String> {
    let header: PullRegistrationResponseHeader = response
        .header()
        .map_err(|e| format!("bad answer header: {e}"))?;
    let digest: BrokerDigest = serde_json::from_str(&header.digest)
        .map_err(|e| format!("bad digest in the answer: {e}"))?;
    let decoded = RegisterBrokerBody::decode_registration(
        response.body.as_deref(),
        false,
        BODY_VERSION,
        max_topics,
    )
    .map_err(|e| match e {
        RegisterDecodeError::TooMany { what, limit } => {
            format!("the answer carries more than {limit} {what} (maxTopicsPerRegistration)")
        }
        RegisterDecodeError::Body(e) => format!("bad registration body in the answer: {e}"),
    })?;
    for tc in &decoded.topic_configs {
        validate::registered_topic(&tc.topic_name, tc.read_queue_nums, tc.write_queue_nums)
            .map_err(|e| format!("the answer carries a topic no broker could register: {e:?}"))?;
    }
    let registration = BrokerRegistration {
        cluster: broker.cluster.clone(),
        broker_addr: broker.addr.clone(),
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
        conn: RELAYED_CONN,
        client_version: header.client_version,
    };
    let version = &registration.data_version;
    let same_version = digest.version.state_version == version.state_version
        && digest.version.counter == version.counter
        && digest.version.timestamp == version.timestamp;
    if !same_version {
        return Err(format!(
            "the answer's registration has DataVersion {version:?} but its digest {:?}",
            digest.version
        ));
    }
    if registration.broker_name != digest.name || registration.broker_id != digest.id {
        return Err(format!(
            "the answer names broker {} id {} but its digest {} id {}",
            registration.broker_name, registration.broker_id, digest.name, digest.id
        ));
    }
    Ok(PullAnswer {
        digest,
        registration,
    })
}
