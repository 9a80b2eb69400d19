//! REGISTER_BROKER at the request level: CRC check, the three body formats (5.x
//! JSON, 4.x JSON, zlib), response header and body, refused input,
//! notifications.

use rmq_protocol::{BodyFlavor, TopicConfigSerializeWrapper};
use rmq_wire::{ExtFields, RequestCode as C, ResponseCode as R};

use super::*;
use crate::route::BrokerKey;

fn set_body(mut req: RemotingCommand, body: Vec<u8>, crc: bool) -> RemotingCommand {
    let crc = if crc { body_crc32(&body) } else { 0 };
    req.ext_fields
        .as_mut()
        .unwrap()
        .insert("bodyCrc32".into(), crc.to_string());
    req.with_body(body)
}

fn assert_master_response(response: &RemotingCommand) {
    assert_eq!(
        (code(response), response.remark.as_deref()),
        (R::Success, None)
    );
    assert_eq!(
        response.ext_fields,
        Some(ExtFields::new()),
        "\"extFields\":{{}}"
    );
    assert!(response.body.is_none());
}

#[test]
fn crc_mismatch_is_refused_with_an_empty_header() {
    let f = Fixture::new();
    let mut req = Reg::master("broker-a", "127.0.0.1:10911", &["a", "b"]).request();
    req.ext_fields
        .as_mut()
        .unwrap()
        .insert("bodyCrc32".into(), "12345".into());
    let response = f.call(&req);
    assert_eq!(
        (code(&response), response.remark.as_deref()),
        (R::SystemError, Some("crc32 not match"))
    );
    assert_eq!(response.ext_fields, Some(ExtFields::new()));
    assert!(f.state.routes.read().group("broker-a").is_none());

    // An absent body has CRC 0 and therefore any non-zero CRC mismatches.
    let empty = RemotingCommand { body: None, ..req };
    assert_eq!(code(&f.call(&empty)), R::SystemError);
}

#[test]
fn crc_zero_is_not_checked() {
    let f = Fixture::new();
    let reg = Reg::master("broker-a", "127.0.0.1:10911", &["a", "b"]);
    let req = set_body(reg.request(), reg.body(), false);
    assert_master_response(&f.call(&req));
}

#[test]
fn compressed_body_is_inflated() {
    let f = Fixture::new();
    let mut reg = Reg::master("broker-a", "127.0.0.1:10911", &["a", "b"]);
    reg.topics[0].topic_sys_flag = 1;
    let body = RegisterBrokerBody::from_json(&reg.body())
        .unwrap()
        .to_compressed(BodyFlavor::V5);
    let mut req = set_body(reg.request(), body, true);
    req.ext_fields
        .as_mut()
        .unwrap()
        .insert("compressed".into(), "true".into());
    assert_master_response(&f.call(&req));
    let routes = f.state.routes.read();
    let queue = &routes.queue_datas("a").unwrap()["broker-a"];
    assert_eq!((queue.read_queue_nums, queue.perm), (16, 6));
    assert_eq!(
        queue.topic_sys_flag, 0,
        "not transmitted in the compressed form"
    );
}

#[test]
fn truncated_compressed_body_is_a_decode_error() {
    let f = Fixture::new();
    let reg = Reg::master("broker-a", "127.0.0.1:10911", &["a", "b"]);
    let mut body = RegisterBrokerBody::from_json(&reg.body())
        .unwrap()
        .to_compressed(BodyFlavor::V5);
    body.truncate(body.len() / 2);
    let mut req = set_body(reg.request(), body, true);
    req.ext_fields
        .as_mut()
        .unwrap()
        .insert("compressed".into(), "true".into());
    let response = f.call(&req);
    assert_eq!(code(&response), R::SystemError);
    assert!(response
        .remark
        .unwrap()
        .starts_with("Failed to decode RegisterBrokerBody"));
}

#[test]
fn a_4x_broker_body_and_header() {
    let f = Fixture::new();
    let reg = Reg::master("broker-a", "127.0.0.1:10911", &["a", "b"]);
    let body = RegisterBrokerBody::from_json(&reg.body())
        .unwrap()
        .to_json_flavor(BodyFlavor::V4);
    let mut req = set_body(reg.request(), body, true);
    req.version = 400;
    req.ext_fields
        .as_mut()
        .unwrap()
        .remove("enableActingMaster");
    assert_master_response(&f.call(&req));
    let routes = f.state.routes.read();
    assert!(!routes.group("broker-a").unwrap().enable_acting_master);
    assert!(routes.queue_datas("b").is_some());
}

#[test]
fn old_format_body_is_a_bare_wrapper() {
    let f = Fixture::new();
    let reg = Reg::master("broker-a", "127.0.0.1:10911", &["a", "b"]);
    let wrapper: TopicConfigSerializeWrapper = RegisterBrokerBody::from_json(&reg.body())
        .unwrap()
        .topic_config_serialize_wrapper;
    let mut req = set_body(reg.request(), wrapper.to_json_flavor(BodyFlavor::V4), true);
    req.version = 36;
    assert_master_response(&f.call(&req));
    assert!(f.state.routes.read().queue_datas("a").is_some());
}

#[test]
fn absent_body_registers_with_version_zero() {
    let f = Fixture::new();
    let req = RemotingCommand {
        body: None,
        ..Reg::master("broker-a", "127.0.0.1:10911", &[]).request()
    };
    let req = set_body(req, Vec::new(), false);
    let req = RemotingCommand { body: None, ..req };
    assert_master_response(&f.call(&req));
    let routes = f.state.routes.read();
    let live = routes
        .live_broker(&BrokerKey::new("DefaultCluster", "127.0.0.1:10911"))
        .unwrap();
    assert_eq!(live.data_version, DataVersion::new(0, 0, 0));
}

#[test]
fn garbage_body_is_a_decode_error() {
    let f = Fixture::new();
    let reg = Reg::master("broker-a", "127.0.0.1:10911", &[]);
    let req = set_body(reg.request(), b"\x00\xffnot json at all".to_vec(), true);
    let response = f.call(&req);
    assert_eq!(code(&response), R::SystemError);
    assert!(response
        .remark
        .unwrap()
        .starts_with("Failed to decode RegisterBrokerBody"));
    assert!(
        response.ext_fields.is_none(),
        "an exception: no header class"
    );
}

#[test]
fn single_topic_before_the_full_registration_fails_with_an_empty_header() {
    let f = Fixture::new();
    let response = f.register(&Reg::master("broker-a", "127.0.0.1:10911", &["only"]));
    assert_eq!(
        (code(&response), response.remark.as_deref()),
        (R::SystemError, Some("register broker failed"))
    );
    assert_eq!(response.ext_fields, Some(ExtFields::new()));
}

#[test]
fn absurd_topics_refuse_the_registration() {
    let f = Fixture::new();
    let mut reg = Reg::master("broker-a", "127.0.0.1:10911", &["ok", "huge"]);
    reg.topics[1].write_queue_nums = 1_000_000;
    let response = f.register(&reg);
    assert_eq!(code(&response), R::SystemError);
    assert_eq!(
        response.remark.as_deref(),
        Some(r#"invalid topic "huge": writeQueueNums 1000000 is outside 0..=65535."#)
    );
    assert!(
        f.state.routes.read().group("broker-a").is_none(),
        "nothing registered"
    );

    let mut reg = Reg::master("broker-a", "127.0.0.1:10911", &["ok", ""]);
    reg.topics[1].topic_name = "bad\u{1}name".into();
    assert!(f
        .register(&reg)
        .remark
        .unwrap()
        .contains("control characters"));

    // Topics named after a host-name broker are what Java brokers send.
    let reg = Reg::master(
        "ip-10-0-0-1.ec2.internal",
        "127.0.0.1:10911",
        &["DefaultCluster", "ip-10-0-0-1.ec2.internal"],
    );
    assert_master_response(&f.register(&reg));
}

#[test]
fn malformed_headers_name_the_field() {
    let f = Fixture::new();
    let mut req = Reg::master("broker-a", "127.0.0.1:10911", &["a", "b"]).request();
    req.ext_fields
        .as_mut()
        .unwrap()
        .insert("brokerId".into(), "abc".into());
    let response = f.call(&req);
    assert_eq!(code(&response), R::SystemError);
    assert!(response.remark.unwrap().contains("brokerId"));
    for field in ["brokerName", "clusterName", "brokerAddr"] {
        let mut req = Reg::master("broker-a", "127.0.0.1:10911", &["a", "b"]).request();
        req.ext_fields.as_mut().unwrap().remove(field);
        let response = f.call(&req);
        assert_eq!(code(&response), R::SystemError, "{field}");
        assert_eq!(
            response.remark,
            Some(format!("the custom field {field} is null"))
        );
    }
    let no_ext = RemotingCommand::request(C::RegisterBroker, 1);
    assert_eq!(code(&f.call(&no_ext)), R::SystemError);
}

#[test]
fn slave_response_carries_master_and_order_topic_config() {
    let f = Fixture::new();
    f.call(&request(
        C::PutKvConfig,
        &[
            ("namespace", "ORDER_TOPIC_CONFIG"),
            ("key", "TopicOrder"),
            ("value", "broker-a:4;broker-b:4"),
        ],
    ));
    let master = f.register(&Reg::master("broker-a", "127.0.0.1:10911", &["a", "b"]));
    assert_eq!(
        body_text(&master),
        r#"{"table":{"TopicOrder":"broker-a:4;broker-b:4"}}"#
    );
    let mut slave = Reg::master("broker-a", "127.0.0.1:10921", &["a", "b"]);
    slave.id = 1;
    let response = f.register(&slave);
    assert_eq!(code(&response), R::Success);
    assert_eq!(response.ext("masterAddr"), Some("127.0.0.1:10911"));
    assert_eq!(response.ext("haServerAddr"), Some("127.0.0.1:10912"));
    assert_eq!(response.ext_fields.as_ref().unwrap().len(), 2);
    assert_eq!(
        body_text(&response),
        r#"{"table":{"TopicOrder":"broker-a:4;broker-b:4"}}"#
    );

    f.state.config.write().return_order_topic_config_to_broker = false;
    assert!(f.register(&slave).body.is_none());
}

#[test]
fn zone_timeout_and_acting_master_come_from_the_header() {
    let f = Fixture::new();
    let mut reg = Reg::master("broker-a", "127.0.0.1:10911", &["a", "b"]);
    reg.extra = vec![
        ("__ZONE_NAME", "zone-1"),
        ("heartbeatTimeoutMillis", "1500"),
    ];
    let mut req = reg.request();
    req.ext_fields
        .as_mut()
        .unwrap()
        .insert("enableActingMaster".into(), "true".into());
    f.call(&req);
    let routes = f.state.routes.read();
    let group = routes.group("broker-a").unwrap();
    assert_eq!(group.zone_name.as_deref(), Some("zone-1"));
    assert!(group.enable_acting_master);
    let key = BrokerKey::new("DefaultCluster", "127.0.0.1:10911");
    assert_eq!(routes.live_broker(&key).unwrap().timeout_ms, 1_500);
    assert_eq!(routes.live_broker(&key).unwrap().conn, f.conn.id().0);
}

#[test]
fn min_broker_id_notification_is_queued_only_when_enabled() {
    let mut f = Fixture::with(|c| c.notify_min_broker_id_changed = true);
    let mut slave = Reg::master("broker-a", "127.0.0.1:10921", &["a", "b"]);
    slave.id = 1;
    f.register(&slave);
    f.register(&Reg::master("broker-a", "127.0.0.1:10911", &["a", "b"]));
    let sent = f.queues.notifications.try_recv().unwrap();
    assert_eq!(
        (sent.min_broker_id, sent.targets.clone()),
        (0, vec!["127.0.0.1:10921".to_string()])
    );
    assert_eq!(sent.ha_broker_addr.as_deref(), Some("127.0.0.1:10912"));

    let mut f = Fixture::new();
    f.register(&slave);
    f.register(&Reg::master("broker-a", "127.0.0.1:10911", &["a", "b"]));
    assert!(f.queues.notifications.try_recv().is_err());
}
