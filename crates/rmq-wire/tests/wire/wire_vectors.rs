//! Byte dumps of whole frames written by the Java classes of RocketMQ 5.3.3
//! (`RemotingCommand`, `RocketMQSerializable`, fastjson 1.2.83; the same frames
//! are among `tests/vectors`, for every supported release):
//! each decodes to the stated fields and, where Java's output order is
//! deterministic (no ext fields, one key, or keys already sorted), encodes back
//! to the identical bytes. Multi-key ext maps in Java `HashMap` order are
//! compared as parsed maps.

use crate::common::*;
use bytes::Bytes;
use rmq_wire::frame;
use rmq_wire::header::json;
use rmq_wire::{ExtFields, LanguageCode, RemotingCommand, SerializeType};

fn decode(dump: &str) -> (Bytes, RemotingCommand) {
    let bytes = hex(dump);
    let command = frame::decode(bytes.clone()).expect("a Java vector decodes");
    (bytes, command)
}

fn assert_encodes_to(command: &RemotingCommand, expected: &[u8]) {
    let encoded = frame::encode_to_bytes(command);
    assert_eq!(
        String::from_utf8_lossy(&encoded),
        String::from_utf8_lossy(expected),
        "re-encoding differs"
    );
    assert_eq!(encoded.as_ref(), expected);
}

fn ext(pairs: &[(&str, &str)]) -> ExtFields {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Fields every dumped response shares: Java 5.3.3 server, response flag.
fn assert_java_response(command: &RemotingCommand, code: i32, opaque: i32) {
    assert_eq!(command.code, code);
    assert_eq!(command.flag, 1);
    assert_eq!(command.opaque, opaque);
    assert_eq!(command.language, LanguageCode::Java);
    assert_eq!(command.version, 479);
    assert!(command.is_response());
}

const ROUTE_BODY_STANDARD: &str = r#"{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#;
const ROUTE_BODY_DEFAULT: &str = r#"{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#;
const FAQ_REMARK: &str = "No topic route info in name server for the topic: TopicTest\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.";

#[test]
fn route_request_json() {
    let (bytes, command) = decode(ROUTE_REQUEST_JSON);
    assert_eq!(bytes.len(), 139);
    let expected = RemotingCommand::request(105, 1).with_ext("topic", "TopicTest");
    assert_eq!(command, expected);
    assert_eq!(
        command.request_code(),
        rmq_wire::RequestCode::GetRouteInfoByTopic
    );
    assert_encodes_to(&command, &bytes);
}

#[test]
fn route_request_rocketmq() {
    let (bytes, command) = decode(ROUTE_REQUEST_ROCKETMQ);
    assert_eq!(bytes.len(), 49);
    let expected = RemotingCommand::request(105, 1)
        .with_ext("topic", "TopicTest")
        .with_serialize_type(SerializeType::RocketMq);
    assert_eq!(command, expected);
    assert_encodes_to(&command, &bytes);
}

#[test]
fn route_response_in_both_dialects() {
    let (bytes, command) = decode(ROUTE_RESPONSE_STANDARD);
    assert_eq!(bytes.len(), 365);
    assert_java_response(&command, 0, 1);
    assert_eq!(
        (command.remark.as_deref(), command.ext_fields.as_ref()),
        (None, None)
    );
    assert_eq!(
        command.body.as_deref(),
        Some(ROUTE_BODY_STANDARD.as_bytes())
    );
    assert_encodes_to(&command, &bytes);

    // A client below version 401 gets the default dialect: same header, length 0x167.
    let default = command.clone().with_body(ROUTE_BODY_DEFAULT);
    let encoded = frame::encode_to_bytes(&default);
    assert_eq!(&encoded[..4], &[0, 0, 0x01, 0x67]);
    assert_eq!(encoded[4..8 + 95], bytes[4..8 + 95]);
}

#[test]
fn topic_not_exist_json() {
    let (bytes, command) = decode(TOPIC_NOT_EXIST_JSON);
    assert_eq!(bytes.len(), 253);
    assert_java_response(&command, 17, 1);
    assert_eq!(command.remark.as_deref(), Some(FAQ_REMARK));
    assert_eq!(command.ext_fields, None);
    assert_encodes_to(&command, &bytes);
}

#[test]
fn topic_not_exist_rocketmq() {
    let (bytes, command) = decode(TOPIC_NOT_EXIST_ROCKETMQ);
    assert_eq!(bytes.len(), 165);
    assert_eq!(command.serialize_type, SerializeType::RocketMq);
    assert_java_response(&command, 17, 1);
    assert_eq!(command.remark.as_deref(), Some(FAQ_REMARK));
    assert_eq!(command.ext_fields, None);
    assert_encodes_to(&command, &bytes);

    let (_, json) = decode(TOPIC_NOT_EXIST_JSON);
    assert_eq!(command, json.with_serialize_type(SerializeType::RocketMq));
}

#[test]
fn request_code_not_supported() {
    let (bytes, command) = decode(NOT_SUPPORTED);
    assert_eq!(bytes.len(), 148);
    assert_java_response(&command, 3, 7);
    assert_eq!(
        command.remark.as_deref(),
        Some(" request type 99999 not supported")
    );
    assert_encodes_to(&command, &bytes);
}

#[test]
fn register_broker_request_header() {
    let command = json::decode(REGISTER_BROKER_HEADER.as_bytes()).unwrap();
    assert_eq!(
        (command.code, command.opaque, command.flag, command.version),
        (103, 2, 0, 479)
    );
    let expected = ext(&[
        ("brokerId", "0"),
        ("bodyCrc32", "1779474218"),
        ("clusterName", "DefaultCluster"),
        ("brokerAddr", "127.0.0.1:10911"),
        ("enableActingMaster", "false"),
        ("haServerAddr", "127.0.0.1:10912"),
        ("compressed", "false"),
        ("brokerName", "broker-a"),
    ]);
    assert_eq!(command.ext_fields.as_ref(), Some(&expected));
    assert_same_header_modulo_key_order(&command, REGISTER_BROKER_HEADER);
}

#[test]
fn register_broker_master_response() {
    let (bytes, command) = decode(REGISTER_MASTER_RESPONSE);
    assert_eq!(bytes.len(), 118);
    assert_java_response(&command, 0, 2);
    // The response has a header class whose fields are all null.
    assert_eq!(command.ext_fields, Some(ExtFields::new()));
    assert_eq!(command.body, None);
    assert_encodes_to(&command, &bytes);
}

#[test]
fn register_broker_slave_response() {
    let (bytes, command) = decode(REGISTER_SLAVE_RESPONSE);
    assert_eq!(bytes.len(), 229);
    assert_java_response(&command, 0, 3);
    let expected = ext(&[
        ("haServerAddr", "127.0.0.1:10912"),
        ("masterAddr", "127.0.0.1:10911"),
    ]);
    assert_eq!(command.ext_fields, Some(expected));
    let body = br#"{"table":{"TopicOrder":"broker-a:4;broker-b:4"}}"#;
    assert_eq!(command.body.as_deref(), Some(&body[..]));
    // Java's HashMap order happens to be sorted here, so the bytes match.
    assert_encodes_to(&command, &bytes);
}

#[test]
fn query_data_version_response() {
    let (bytes, command) = decode(QUERY_DATA_VERSION_RESPONSE);
    assert_eq!(bytes.len(), 191);
    assert_java_response(&command, 0, 9);
    assert_eq!(command.ext("changed"), Some("false"));
    let body = br#"{"counter":3,"stateVersion":0,"timestamp":1700000000000}"#;
    assert_eq!(command.body.as_deref(), Some(&body[..]));
    assert_encodes_to(&command, &bytes);
}

/// Our encoding of `command` has the same length as Java's `text` and parses
/// back to the same command: it can only differ in ext-field order.
fn assert_same_header_modulo_key_order(command: &RemotingCommand, text: &str) {
    let mut ours = bytes::BytesMut::new();
    json::encode(command, &mut ours);
    assert_eq!(ours.len(), text.len(), "{}", String::from_utf8_lossy(&ours));
    assert_eq!(&json::decode(&ours).unwrap(), command);
}

#[test]
fn headers_of_other_requests_and_responses() {
    // Texts whose ext keys Java happened to write in sorted order (or ≤ 1 key).
    let byte_exact = [
        "DELETE_TOPIC_IN_NAMESRV",
        "WIPE_WRITE_PERM_OF_BROKER response",
        "GET_KV_CONFIG miss",
        "non-ASCII remark",
    ];
    for (name, text) in HEADER_TEXTS {
        let command = json::decode(text.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(command.version, 479, "{name}");
        assert_same_header_modulo_key_order(&command, text);
        if byte_exact.contains(&name) {
            let mut ours = bytes::BytesMut::new();
            json::encode(&command, &mut ours);
            assert_eq!(std::str::from_utf8(&ours).unwrap(), text, "{name}");
        }
    }
    let heartbeat = json::decode(HEADER_TEXTS[0].1.as_bytes()).unwrap();
    assert!(heartbeat.is_oneway() && !heartbeat.is_response());
    assert_eq!(heartbeat.ext("brokerName"), Some("broker-a"));
    let notify = json::decode(HEADER_TEXTS[5].1.as_bytes()).unwrap();
    assert_eq!(notify.ext_fields.as_ref().map(|ext| ext.len()), Some(3));
    assert_eq!(notify.ext("minBrokerId"), Some("1"));
    let kv_miss = json::decode(HEADER_TEXTS[4].1.as_bytes()).unwrap();
    assert_eq!(kv_miss.ext_fields, Some(ExtFields::new()));
}

#[test]
fn non_ascii_remark_is_raw_utf8_in_json_and_binary() {
    let command =
        RemotingCommand::response_to(&RemotingCommand::request(105, 3), 1).with_remark("错误/x");
    let encoded = frame::encode_to_bytes(&command);
    let header = &encoded[8..];
    assert_eq!(header, HEADER_TEXTS[6].1.as_bytes());
    assert_eq!(frame::decode(encoded).unwrap(), command);

    let binary = command.with_serialize_type(SerializeType::RocketMq);
    let encoded = frame::encode_to_bytes(&binary);
    // Remark length 8 = 3 + 3 + 1 + 1 UTF-8 bytes (not 4 characters), then the bytes.
    assert_eq!(&encoded[8 + 13..8 + 17], &[0, 0, 0, 8]);
    assert_eq!(&encoded[8 + 17..8 + 25], "错误/x".as_bytes());
    assert_eq!(frame::decode(encoded).unwrap(), binary);
}

#[test]
fn json_and_binary_forms_of_the_route_request_agree() {
    let (_, json) = decode(ROUTE_REQUEST_JSON);
    let (_, binary) = decode(ROUTE_REQUEST_ROCKETMQ);
    assert_eq!(json.with_serialize_type(SerializeType::RocketMq), binary);
}
