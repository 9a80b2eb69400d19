//! Requests at the NameServer's edge: each request code's typed header and
//! body, decoded and checked before a handler sees them. A handler takes the
//! type made here and never reads ext fields or bodies itself; everything a
//! request can get wrong is an [`Error`] naming it, answered before any
//! state is touched.
//!
//! A request whose header is one `rmq_protocol::headers` struct needs no
//! type of its own: the dispatcher reads it with `RemotingCommand::header`
//! (every field required by the header's definition must be there) or
//! [`optional_header`] (Java acts on nothing when a field is missing).

mod register;
mod repeat;
pub mod validate;

use std::collections::BTreeMap;

use rmq_protocol::headers::{
    GetRouteInfoRequestHeader, PutKvConfigRequestHeader, QueryDataVersionRequestHeader,
    RegisterTopicRequestHeader, SubscribeRoutesRequestHeader, UnsubscribeRoutesRequestHeader,
};
use rmq_protocol::route_push::split_topics;
use rmq_protocol::version::route_dialect;
use rmq_protocol::{properties, DataVersion, Dialect, JavaJson, QueueData, TopicRouteData};
use rmq_wire::{FromExtFields, HeaderError, RemotingCommand, ResponseCode};

pub use register::RegisterRequest;
pub use repeat::RepeatedBody;

use crate::error::Error;
use crate::push::{Key, Subscription};
use crate::route::{BrokerKey, ZoneFilter};

/// The typed header of a request whose Java handler does not require its
/// fields: `None` when one is missing (Java then finds nothing to act on and
/// still answers SUCCESS); any other header error stays an error.
///
/// # Errors
/// A field present but malformed.
pub fn optional_header<H: FromExtFields>(request: &RemotingCommand) -> Result<Option<H>, Error> {
    match request.header::<H>() {
        Ok(header) => Ok(Some(header)),
        Err(HeaderError::Missing(_)) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// GET_ROUTEINFO_BY_TOPIC: the topic and how its route is to be given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteQuery {
    /// The topic.
    pub topic: String,
    /// The JSON dialect the client qualified for (by its version, or by
    /// asking for standard JSON only).
    pub dialect: Dialect,
    /// The zone the client asked to be routed within (Java's
    /// `ZoneRouteRPCHook`), if any.
    pub zone: Option<ZoneFilter>,
}

impl RouteQuery {
    /// The query `request` makes; `None` when it names no topic (Java then
    /// looks up the topic `null`).
    ///
    /// # Errors
    /// A field present but malformed.
    pub fn decode(request: &RemotingCommand) -> Result<Option<RouteQuery>, Error> {
        let Some(header) = optional_header::<GetRouteInfoRequestHeader>(request)? else {
            return Ok(None);
        };
        Ok(Some(RouteQuery {
            dialect: route_dialect(request.version, header.accept_standard_json_only),
            zone: ZoneFilter::from_request(header.zone_mode, header.zone_name.as_deref()),
            topic: header.topic,
        }))
    }
}

/// QUERY_DATA_VERSION: the broker and the DataVersion it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataVersionQuery {
    /// The broker (cluster and address).
    pub broker: BrokerKey,
    /// The broker's DataVersion; `None` when the request has no body.
    pub version: Option<DataVersion>,
}

impl DataVersionQuery {
    /// The query `request` makes.
    ///
    /// # Errors
    /// A missing or malformed header field, or a body that is not a DataVersion.
    pub fn decode(request: &RemotingCommand) -> Result<DataVersionQuery, Error> {
        let header: QueryDataVersionRequestHeader = request.header()?;
        let version = request
            .body
            .as_deref()
            .map(DataVersion::from_json)
            .transpose()
            .map_err(|e| Error::system(format!("Failed to decode DataVersion: {e}")))?;
        Ok(DataVersionQuery {
            broker: BrokerKey::new(header.cluster_name, header.broker_addr),
            version,
        })
    }
}

/// REGISTER_TOPIC_IN_NAMESRV: a topic and the queue data to give it.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicRegistration {
    /// The topic.
    pub topic: String,
    /// The body's `queueDatas`; `None` when the request has no body (nothing
    /// to register).
    pub queue_datas: Option<Vec<QueueData>>,
}

impl TopicRegistration {
    /// The registration `request` carries. Only the body's `queueDatas` are
    /// used. Unlike Java, a topic name or queue count `validate` refuses is
    /// an error.
    ///
    /// # Errors
    /// A missing topic, a body that is not a route, or a refused topic name
    /// or queue count.
    pub fn decode(request: &RemotingCommand) -> Result<TopicRegistration, Error> {
        let header: RegisterTopicRequestHeader = request.header()?;
        let queue_datas = match request.body.as_deref() {
            Some(body) => {
                let route = TopicRouteData::from_json(body)?;
                if !route.queue_datas.is_empty() {
                    validate::topic_name(&header.topic)?;
                }
                for queue in &route.queue_datas {
                    validate::queue_nums(
                        &header.topic,
                        queue.read_queue_nums,
                        queue.write_queue_nums,
                    )?;
                }
                Some(route.queue_datas)
            }
            None => None,
        };
        Ok(TopicRegistration {
            topic: header.topic,
            queue_datas,
        })
    }
}

/// PUT_KV_CONFIG's header; a missing namespace or key is refused with
/// Java's remark.
///
/// # Errors
/// A missing namespace or key, or a malformed field.
pub fn kv_put(request: &RemotingCommand) -> Result<PutKvConfigRequestHeader, Error> {
    request.header().map_err(|error| match error {
        HeaderError::Missing(_) => Error::system("namespace or key is null"),
        other => other.into(),
    })
}

/// UPDATE_NAMESRV_CONFIG: the options to set, as the body's properties;
/// `None` when the request has no body (nothing to update).
///
/// Whether each may be set is the configuration's to say, for the whole
/// update at once (`SharedConfig::check_update`).
///
/// # Errors
/// A body that is not properties text.
pub fn config_update(request: &RemotingCommand) -> Result<Option<BTreeMap<String, String>>, Error> {
    let Some(body) = request.body.as_deref() else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(body);
    let updates = properties::parse(&text).map_err(|_| Error::system("string2Properties error"))?;
    Ok(Some(updates))
}

/// WAYMARK_SUBSCRIBE_ROUTES: what to follow, in which dialect, since when.
///
/// # Errors
/// A missing `topics` field, a topic name the looser check of registered
/// topics refuses, or nothing to subscribe to (INVALID_PARAMETER).
pub fn subscription(request: &RemotingCommand) -> Result<Subscription, Error> {
    let header: SubscribeRoutesRequestHeader = request.header()?;
    let mut keys = Vec::new();
    for topic in split_topics(&header.topics) {
        // The looser check of registered topics: a broker named after its
        // host registers topics with dots, and they may be watched too.
        validate::registered_topic(topic, 0, 0).map_err(|error| {
            Error::new(
                ResponseCode::InvalidParameter,
                error.remark.unwrap_or_default(),
            )
        })?;
        keys.push(Key::Topic(topic.to_owned()));
    }
    if header.cluster {
        keys.push(Key::Cluster);
    }
    if keys.is_empty() {
        return Err(Error::new(
            ResponseCode::InvalidParameter,
            "topics is empty and cluster is not asked for: nothing to subscribe to",
        ));
    }
    Ok(Subscription {
        keys,
        dialect: route_dialect(request.version, header.accept_standard_json_only),
        cursor: header.cursor,
    })
}

/// WAYMARK_UNSUBSCRIBE_ROUTES: the topics (and cluster membership, if asked)
/// to leave; topics not subscribed to are ignored.
///
/// # Errors
/// A missing `topics` field.
pub fn unsubscription(request: &RemotingCommand) -> Result<Vec<Key>, Error> {
    let header: UnsubscribeRoutesRequestHeader = request.header()?;
    let mut keys: Vec<Key> = split_topics(&header.topics)
        .map(|topic| Key::Topic(topic.to_owned()))
        .collect();
    if header.cluster {
        keys.push(Key::Cluster);
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use rmq_wire::RequestCode;

    use super::*;

    fn request(code: RequestCode, version: i32, ext: &[(&str, &str)]) -> RemotingCommand {
        let mut command = ext
            .iter()
            .fold(RemotingCommand::request(code, 1), |r, (k, v)| {
                r.with_ext(*k, *v)
            });
        command.version = version;
        command
    }

    #[test]
    fn a_route_query_takes_its_dialect_from_the_version_or_the_flag() {
        let route = |version, ext: &[(&str, &str)]| {
            RouteQuery::decode(&request(RequestCode::GetRouteInfoByTopic, version, ext))
        };
        assert_eq!(route(479, &[]), Ok(None), "no topic: Java's lookup of null");
        let dialect = |version, ext| route(version, ext).unwrap().unwrap().dialect;
        assert_eq!(dialect(400, &[("topic", "T")]), Dialect::Default);
        assert_eq!(dialect(401, &[("topic", "T")]), Dialect::Standard);
        let asked = [("topic", "T"), ("acceptStandardJsonOnly", "true")];
        assert_eq!(dialect(400, &asked), Dialect::Standard);
        let zoned = [
            ("topic", "T"),
            ("__ZONE_MODE", "true"),
            ("__ZONE_NAME", "z1"),
        ];
        assert_eq!(
            route(479, &zoned).unwrap().unwrap().zone,
            Some(ZoneFilter { zone: "z1".into() })
        );
    }

    #[test]
    fn a_malformed_field_or_body_is_an_error_naming_it() {
        let mut query = request(
            RequestCode::QueryDataVersion,
            479,
            &[
                ("brokerName", "b"),
                ("brokerAddr", "a:1"),
                ("clusterName", "c"),
                ("brokerId", "zero"),
            ],
        );
        let error = DataVersionQuery::decode(&query).unwrap_err();
        assert_eq!(error.code, ResponseCode::SystemError);
        assert!(error.remark.unwrap().contains("brokerId"));
        query = query.with_ext("brokerId", "0").with_body(&b"{not json"[..]);
        let error = DataVersionQuery::decode(&query).unwrap_err();
        assert!(error
            .remark
            .unwrap()
            .starts_with("Failed to decode DataVersion"));
    }

    #[test]
    fn a_subscription_names_something_to_follow_by_valid_names() {
        let subscribe = |ext: &[(&str, &str)]| {
            subscription(&request(RequestCode::WaymarkSubscribeRoutes, 479, ext))
        };
        let nothing = subscribe(&[("topics", " , ")]).unwrap_err();
        assert_eq!(nothing.code, ResponseCode::InvalidParameter);
        let control = subscribe(&[("topics", "A,B\u{1}")]).unwrap_err();
        assert_eq!(control.code, ResponseCode::InvalidParameter);
        let both = subscribe(&[("topics", "A, B"), ("cluster", "true")]).unwrap();
        assert_eq!(
            both.keys,
            [Key::Topic("A".into()), Key::Topic("B".into()), Key::Cluster]
        );
    }

    #[test]
    fn a_config_update_is_the_body_read_as_properties() {
        let update = request(RequestCode::UpdateNamesrvConfig, 479, &[]);
        assert_eq!(config_update(&update), Ok(None), "no body, nothing to do");
        let good = update.with_body(&b"orderMessageEnable=true\nlistenPort=abc\n"[..]);
        let updates = config_update(&good).unwrap().unwrap();
        assert_eq!(updates["orderMessageEnable"], "true");
        assert_eq!(updates["listenPort"], "abc", "judged by the configuration");
    }
}
