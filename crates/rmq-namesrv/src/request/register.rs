//! REGISTER_BROKER decoded: the header, the body's CRC, the body itself
//! within `maxTopicsPerRegistration`, and the topics' sanity checks, into
//! the [`BrokerRegistration`] the route table applies.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use rmq_protocol::headers::RegisterBrokerRequestHeader;
use rmq_protocol::register::RegisterDecodeError;
use rmq_protocol::{body_crc32, DataVersion, RegisterBrokerBody, TopicConfig};
use rmq_transport::ConnectionInfo;
use rmq_wire::RemotingCommand;

use super::repeat::RepeatedBody;
use super::validate;
use crate::error::Error;
use crate::limits::Limits;
use crate::metrics::refusal;
use crate::route::BrokerRegistration;

/// A REGISTER_BROKER request whose header is read and whose body's CRC is
/// checked, its body not yet decoded.
#[derive(Debug)]
pub struct RegisterRequest<'a> {
    header: RegisterBrokerRequestHeader,
    request: &'a RemotingCommand,
    conn: &'a ConnectionInfo,
    limit: usize,
    /// [`Self::repeated_body`], hashed once for both paths.
    repeated: OnceCell<Option<RepeatedBody>>,
}

impl<'a> RegisterRequest<'a> {
    /// The header of `request`, from the broker on `conn`, and the check of
    /// its body's CRC.
    ///
    /// # Errors
    /// A missing or malformed header field, or a body whose CRC32 is not
    /// the header's `bodyCrc32` (when that is not 0).
    pub fn read(
        request: &'a RemotingCommand,
        conn: &'a ConnectionInfo,
        limits: &Limits,
    ) -> Result<RegisterRequest<'a>, Error> {
        let header: RegisterBrokerRequestHeader = request.header()?;
        if header.body_crc32 != 0 {
            let crc = request.body.as_deref().map_or(0, body_crc32);
            if crc != header.body_crc32 {
                tracing::warn!(broker = %header.broker_addr, expected = header.body_crc32, actual = crc, "register broker body crc32 mismatch");
                return Err(Error::system("crc32 not match").with_empty_header());
            }
        }
        Ok(RegisterRequest {
            header,
            request,
            conn,
            limit: limits.max_topics_per_registration,
            repeated: OnceCell::new(),
        })
    }

    /// `maxTopicsPerRegistration`, which the body is held to.
    pub fn max_topics(&self) -> usize {
        self.limit
    }

    /// The body's fingerprint but for its DataVersion, when it has the
    /// shape a registration can be recognised by ([`RepeatedBody::of`]).
    pub fn repeated_body(&self) -> Option<&RepeatedBody> {
        self.repeated
            .get_or_init(|| {
                RepeatedBody::of(
                    self.request.body.as_deref()?,
                    self.header.compressed,
                    self.request.version,
                    &self.header.broker_name,
                    self.limit,
                )
            })
            .as_ref()
    }

    /// The registration of a body that repeats the broker's last one but
    /// for its DataVersion (`body`): the header's fields, the body's
    /// DataVersion and filter servers, and no topics, which the route
    /// table holds already.
    pub fn repeated(&self, body: &RepeatedBody) -> BrokerRegistration {
        self.with_body(
            body.data_version,
            Vec::new(),
            BTreeMap::new(),
            Some(body.filter_servers.clone()),
        )
    }

    /// The registration the request carries, and whether its body was of
    /// the shape [`RepeatedBody`] can recognise again
    /// ([`RegisterBrokerBody::decode_registration_shaped`]).
    ///
    /// A body with more topics (or static-topic mappings, or filter
    /// servers) than `maxTopicsPerRegistration` is refused while it is
    /// decoded, before it is built: SYSTEM_ERROR naming the limit and the
    /// broker, as other refused registrations, and a warning naming the
    /// peer.
    ///
    /// # Errors
    /// A body that does not decode, one over the limit, or a topic
    /// [`validate::registered_topic`] refuses.
    pub fn decode(&self) -> Result<(BrokerRegistration, bool), Error> {
        let header = &self.header;
        let (decoded, shaped) = RegisterBrokerBody::decode_registration_shaped(
            self.request.body.as_deref(),
            header.compressed,
            self.request.version,
            self.limit,
        )
        .map_err(|e| match e {
            RegisterDecodeError::TooMany { what, limit } => {
                tracing::warn!(
                    peer = %self.conn.peer(),
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
        let registration = self.with_body(
            decoded.data_version,
            decoded.topic_configs,
            decoded.mappings,
            decoded.filter_server_list,
        );
        Ok((registration, shaped))
    }

    fn with_body(
        &self,
        data_version: DataVersion,
        topic_configs: Vec<TopicConfig>,
        mappings: BTreeMap<String, rmq_protocol::TopicQueueMappingInfo>,
        filter_servers: Option<Vec<String>>,
    ) -> BrokerRegistration {
        let header = &self.header;
        BrokerRegistration {
            cluster: header.cluster_name.clone(),
            broker_addr: header.broker_addr.clone(),
            broker_name: header.broker_name.clone(),
            broker_id: header.broker_id,
            ha_server_addr: header.ha_server_addr.clone(),
            zone_name: header.zone_name.clone(),
            heartbeat_timeout_ms: header
                .heartbeat_timeout_millis
                .and_then(|ms| u64::try_from(ms).ok()),
            enable_acting_master: header.enable_acting_master,
            data_version,
            topic_configs,
            mappings,
            filter_servers,
            conn: self.conn.id().0,
            client_version: self.request.version,
        }
    }
}
