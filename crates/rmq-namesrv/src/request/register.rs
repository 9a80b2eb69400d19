//! REGISTER_BROKER decoded: the header, the body's CRC, the body itself
//! within `maxTopicsPerRegistration`, and the topics' sanity checks, into
//! the [`BrokerRegistration`] the route table applies.

use rmq_protocol::headers::RegisterBrokerRequestHeader;
use rmq_protocol::register::RegisterDecodeError;
use rmq_protocol::{body_crc32, RegisterBrokerBody};
use rmq_transport::ConnectionInfo;
use rmq_wire::RemotingCommand;

use super::validate;
use crate::error::Error;
use crate::limits::Limits;
use crate::metrics::refusal;
use crate::route::BrokerRegistration;

/// The registration `request` carries, from the broker on `conn`.
///
/// A body with more topics (or static-topic mappings, or filter servers)
/// than `maxTopicsPerRegistration` is refused while it is decoded, before it
/// is built: SYSTEM_ERROR naming the limit and the broker, as other refused
/// registrations, and a warning naming the peer.
///
/// # Errors
/// A missing or malformed header field, a body whose CRC32 is not the
/// header's `bodyCrc32` (when that is not 0), a body that does not decode,
/// one over the limit, or a topic [`validate::registered_topic`] refuses.
pub fn registration(
    request: &RemotingCommand,
    conn: &ConnectionInfo,
    limits: &Limits,
) -> Result<BrokerRegistration, Error> {
    let header: RegisterBrokerRequestHeader = request.header()?;
    let body = request.body.as_deref();
    if header.body_crc32 != 0 {
        let crc = body.map_or(0, body_crc32);
        if crc != header.body_crc32 {
            tracing::warn!(broker = %header.broker_addr, expected = header.body_crc32, actual = crc, "register broker body crc32 mismatch");
            return Err(Error::system("crc32 not match").with_empty_header());
        }
    }
    let limit = limits.max_topics_per_registration;
    let decoded =
        RegisterBrokerBody::decode_registration(body, header.compressed, request.version, limit)
            .map_err(|e| match e {
                RegisterDecodeError::TooMany { what, limit } => {
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
                    .counted_as(refusal::TOPICS_PER_REGISTRATION)
                }
                RegisterDecodeError::Body(e) => {
                    Error::system(format!("Failed to decode RegisterBrokerBody: {e}"))
                }
            })?;
    for tc in &decoded.topic_configs {
        validate::registered_topic(&tc.topic_name, tc.read_queue_nums, tc.write_queue_nums)?;
    }
    Ok(BrokerRegistration {
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
    })
}
