//! The GET_ROUTEINFO_BY_TOPIC exchange as values (Java
//! `MQClientAPIImpl.getTopicRouteInfoFromNameServer`):
//! building the request and reading the response.
//!
//! Owns the header choices (topic, optional `acceptStandardJsonOnly`, zone
//! keys; `version` 479 so the NameServer answers in standard JSON) and the
//! mapping of response codes to results. Sending is the channel's.

use rmq_protocol::headers::GetRouteInfoRequestHeader;
use rmq_protocol::{JavaJson, TopicRouteData};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

use crate::config::{RouteClientConfig, AUTO_CREATE_TOPIC_KEY};
use crate::error::RouteError;

/// The route query for `topic`.
pub fn route_request(topic: &str, config: &RouteClientConfig) -> RemotingCommand {
    let header = GetRouteInfoRequestHeader {
        topic: topic.to_owned(),
        accept_standard_json_only: config.accept_standard_json_only.then_some(true),
        zone_mode: config.zone_mode,
        zone_name: config.zone_name.clone().filter(|z| !z.trim().is_empty()),
    };
    RemotingCommand::request(RequestCode::GetRouteInfoByTopic, 0).with_header(&header)
}

/// Reads the answer to [`route_request`]: the route for SUCCESS with a body
/// (either JSON dialect), else [`RouteError::Response`] with the code and
/// remark (Java `MQClientException`).
///
/// # Errors
/// [`RouteError::Response`] for any non-success code or a missing body;
/// [`RouteError::Body`] for a body that does not parse.
pub fn route_from_response(
    topic: &str,
    response: &RemotingCommand,
) -> Result<TopicRouteData, RouteError> {
    let refused = || RouteError::Response {
        code: response.code,
        remark: response.remark.clone(),
    };
    match response.response_code() {
        ResponseCode::Success => match response.body.as_deref() {
            Some(body) if !body.is_empty() => Ok(TopicRouteData::from_json(body)?),
            _ => Err(refused()),
        },
        ResponseCode::TopicNotExist => {
            if topic != AUTO_CREATE_TOPIC_KEY {
                tracing::warn!(
                    topic,
                    "get Topic [{topic}] RouteInfoFromNameServer is not exist value"
                );
            }
            Err(refused())
        }
        _ => Err(refused()),
    }
}

#[cfg(test)]
mod tests {
    use rmq_protocol::Dialect;
    use rmq_wire::CURRENT_VERSION;

    use super::*;

    #[test]
    fn request_carries_topic_version_and_optional_keys() {
        let plain = route_request("TopicTest", &RouteClientConfig::default());
        assert_eq!(plain.code, 105);
        assert_eq!(plain.version, CURRENT_VERSION);
        assert!(plain.version >= 401, "asks for standard JSON by version");
        let ext = plain.ext_fields.clone().unwrap();
        assert_eq!(ext.len(), 1);
        assert_eq!(plain.ext("topic"), Some("TopicTest"));

        let config = RouteClientConfig {
            accept_standard_json_only: true,
            zone_name: Some("zone-1".into()),
            zone_mode: Some(true),
            ..RouteClientConfig::default()
        };
        let zoned = route_request("T", &config);
        assert_eq!(zoned.ext("acceptStandardJsonOnly"), Some("true"));
        assert_eq!(zoned.ext("__ZONE_NAME"), Some("zone-1"));
        assert_eq!(zoned.ext("__ZONE_MODE"), Some("true"));
        let blank = RouteClientConfig {
            zone_name: Some("  ".into()),
            ..RouteClientConfig::default()
        };
        assert_eq!(route_request("T", &blank).ext("__ZONE_NAME"), None);
    }

    fn response(code: ResponseCode, body: Option<Vec<u8>>) -> RemotingCommand {
        let request = RemotingCommand::request(RequestCode::GetRouteInfoByTopic, 1);
        let mut r = RemotingCommand::response_to(&request, code).with_remark("why");
        r.body = body.map(Into::into);
        r
    }

    #[test]
    fn responses_map_to_routes_or_client_errors() {
        let route = TopicRouteData {
            queue_datas: vec![crate::view::tests::queue("a", 4, 4, 6)],
            broker_datas: vec![crate::view::tests::broker("a", &[0])],
            ..TopicRouteData::default()
        };
        for dialect in [Dialect::Default, Dialect::Standard] {
            let got = route_from_response(
                "T",
                &response(ResponseCode::Success, Some(route.to_json(dialect))),
            );
            assert_eq!(got.unwrap(), route, "{dialect:?}");
        }
        let cases = [
            (ResponseCode::Success, None, 0),
            (ResponseCode::Success, Some(Vec::new()), 0),
            (ResponseCode::TopicNotExist, None, 17),
            (ResponseCode::SystemError, None, 1),
            (ResponseCode::Unknown(999), Some(b"{}".to_vec()), 999),
        ];
        for (code, body, want) in cases {
            match route_from_response("T", &response(code, body)) {
                Err(RouteError::Response { code, remark }) => {
                    assert_eq!((code, remark.as_deref()), (want, Some("why")));
                }
                other => panic!("{code:?}: {other:?}"),
            }
        }
        let bad = route_from_response("T", &response(ResponseCode::Success, Some(b"{x".to_vec())));
        assert!(matches!(bad, Err(RouteError::Body(_))), "{bad:?}");
    }
}
