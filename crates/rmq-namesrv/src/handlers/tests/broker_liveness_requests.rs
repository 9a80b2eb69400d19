//! UNREGISTER_BROKER, BROKER_HEARTBEAT and QUERY_DATA_VERSION at the request
//! level: the queue-full answer, `changed` and the stored version, refused
//! bodies, heartbeats of unknown brokers.

use rmq_wire::{RequestCode as C, ResponseCode as R};

use super::*;

#[test]
fn unregister_queue_full_is_a_system_error_without_remark() {
    let f = Fixture::with(|c| c.unregister_broker_queue_capacity = 1);
    let unregister = request(
        C::UnregisterBroker,
        &[
            ("brokerName", "b"),
            ("brokerAddr", "a"),
            ("clusterName", "c"),
            ("brokerId", "0"),
        ],
    );
    assert_eq!(code(&f.call(&unregister)), R::Success);
    let full = f.call(&unregister);
    assert_eq!(
        (code(&full), full.remark.as_deref()),
        (R::SystemError, None)
    );
    assert!(full.ext_fields.is_none());
}

fn query(version: Option<&[u8]>) -> RemotingCommand {
    let req = request(
        C::QueryDataVersion,
        &[
            ("brokerName", "broker-a"),
            ("brokerAddr", "127.0.0.1:10911"),
            ("clusterName", "DefaultCluster"),
            ("brokerId", "0"),
        ],
    );
    match version {
        Some(body) => req.with_body(body.to_vec()),
        None => req,
    }
}

#[test]
fn query_data_version_answers_and_heartbeats() {
    let f = Fixture::new();
    let unknown = f.call(&query(Some(
        br#"{"counter":1,"stateVersion":0,"timestamp":100}"#,
    )));
    assert_eq!(code(&unknown), R::Success);
    assert_eq!(unknown.ext("changed"), Some("true"));
    assert!(unknown.body.is_none());

    f.register(&Reg::master("broker-a", "127.0.0.1:10911", &["a", "b"]));
    let same = f.call(&query(Some(
        br#"{"counter":1,"stateVersion":0,"timestamp":100}"#,
    )));
    assert_eq!(
        same.ext_fields,
        Some([("changed".to_string(), "false".to_string())].into())
    );
    assert_eq!(
        body_text(&same),
        r#"{"counter":1,"stateVersion":0,"timestamp":100}"#
    );
    assert_eq!(f.call(&query(None)).ext("changed"), Some("true"));
    assert_eq!(
        f.call(&query(Some(
            br#"{"counter":2,"stateVersion":0,"timestamp":100}"#
        )))
        .ext("changed"),
        Some("true")
    );
}

#[test]
fn query_data_version_refuses_garbage() {
    let f = Fixture::new();
    for garbage in [&b"not json"[..], b"{\"counter\":", b"\xff\xfe"] {
        let response = f.call(&query(Some(garbage)));
        assert_eq!(code(&response), R::SystemError, "{garbage:?}");
        assert!(response
            .remark
            .unwrap()
            .starts_with("Failed to decode DataVersion"));
    }
    let no_cluster = request(C::QueryDataVersion, &[("brokerAddr", "127.0.0.1:10911")]);
    assert_eq!(code(&f.call(&no_cluster)), R::SystemError);
}

#[test]
fn heartbeat_refreshes_only_a_live_broker() {
    let f = Fixture::new();
    let beat = request(
        C::BrokerHeartbeat,
        &[
            ("clusterName", "DefaultCluster"),
            ("brokerAddr", "127.0.0.1:10911"),
            ("brokerName", "broker-a"),
        ],
    );
    let response = f.call(&beat);
    assert_eq!(code(&response), R::Success);
    assert!(response.ext_fields.is_none());
    assert_eq!(f.state.routes.read().live_count(), 0);
}
