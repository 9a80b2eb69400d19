//! Byte-exact responses from the running binary to requests sent as raw
//! frames: each expected frame is what a Java 5.3.3 NameServer answers the
//! same request with (client 5.3.3, `version` 479), recorded from it.

use rmq_protocol::body_crc32;

use crate::common::*;

/// GET_ROUTEINFO_BY_TOPIC as a 5.3.3 client sends it (a 139-byte frame).
const ROUTE_REQUEST_479: &str = r#"{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":479}"#;
const ROUTE_REQUEST_400: &str = r#"{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":400}"#;
/// The same request with a ROCKETMQ binary header (49 bytes).
const ROUTE_REQUEST_BINARY: [u8; 49] = [
    0x00, 0x00, 0x00, 0x2d, 0x01, 0x00, 0x00, 0x29, 0x00, 0x69, 0x00, 0x01, 0xdf, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x05, 0x74,
    0x6f, 0x70, 0x69, 0x63, 0x00, 0x00, 0x00, 0x09, 0x54, 0x6f, 0x70, 0x69, 0x63, 0x54, 0x65, 0x73,
    0x74,
];
const SUCCESS_HEADER_1: &str = r#"{"code":0,"flag":1,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":479}"#;
const STANDARD_ROUTE: &str = r#"{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#;
const DEFAULT_ROUTE: &str = r#"{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#;
const NO_ROUTE_REMARK: &str = "No topic route info in name server for the topic: TopicTest\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.";

/// A 5.3.3 broker's REGISTER_BROKER (449-byte body).
const REGISTER_HEADER: &str = r#"{"code":103,"extFields":{"brokerId":"0","bodyCrc32":"1779474218","clusterName":"DefaultCluster","brokerAddr":"127.0.0.1:10911","enableActingMaster":"false","haServerAddr":"127.0.0.1:10912","compressed":"false","brokerName":"broker-a"},"flag":0,"language":"JAVA","opaque":2,"serializeTypeCurrentRPC":"JSON","version":479}"#;
const REGISTER_BODY: &str = r#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1700000000000},"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":{"TopicTest":{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}},"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}}"#;

async fn one_exchange(raw: &mut Raw, request: &[u8]) -> Vec<u8> {
    raw.send(request).await;
    raw.read_frame(TIMEOUT).await.expect("a response frame")
}

#[tokio::test]
async fn register_route_and_query_vectors() {
    assert_eq!(REGISTER_BODY.len(), 449);
    assert_eq!(body_crc32(REGISTER_BODY.as_bytes()), 1_779_474_218);
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let mut raw = Raw::connect(server.addr).await;

    // The recorded registration is a first one with a single topic: Java's
    // single-topic guard refuses it unless the broker's id is already known. A real broker
    // always has more topics; register the id once with two topics first.
    let mut first = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicTest", "Warmup"]);
    first.topics[0].read_queue_nums = 4;
    first.topics[0].write_queue_nums = 4;
    raw.send_command(&first.request()).await;
    let warm = raw.read_command(TIMEOUT).await.unwrap();
    assert_code(&warm, rmq_wire::ResponseCode::Success);

    let response = one_exchange(
        &mut raw,
        &json_frame(REGISTER_HEADER, REGISTER_BODY.as_bytes()),
    )
    .await;
    let expected = json_frame(
        r#"{"code":0,"extFields":{},"flag":1,"language":"JAVA","opaque":2,"serializeTypeCurrentRPC":"JSON","version":479}"#,
        b"",
    );
    assert_eq!(response.len(), 118);
    assert_eq!(
        String::from_utf8_lossy(&response[8..]),
        String::from_utf8_lossy(&expected[8..])
    );
    assert_eq!(response, expected);

    // The route in the standard dialect (version 479), then in the default
    // dialect a 4.9.3 client (version 400) gets: integer keys unquoted.
    let response = one_exchange(&mut raw, &json_frame(ROUTE_REQUEST_479, b"")).await;
    assert_eq!(response.len(), 365);
    assert_eq!(
        response,
        json_frame(SUCCESS_HEADER_1, STANDARD_ROUTE.as_bytes())
    );
    let response = one_exchange(&mut raw, &json_frame(ROUTE_REQUEST_400, b"")).await;
    assert_eq!(response.len(), 363);
    assert_eq!(
        response,
        json_frame(SUCCESS_HEADER_1, DEFAULT_ROUTE.as_bytes())
    );
    // A binary-header request is answered in JSON (the server's type).
    let response = one_exchange(&mut raw, &ROUTE_REQUEST_BINARY).await;
    assert_eq!(
        response,
        json_frame(SUCCESS_HEADER_1, STANDARD_ROUTE.as_bytes())
    );

    // QUERY_DATA_VERSION of an unchanged version: `changed=false` and the
    // stored version as the body.
    let query = r#"{"code":322,"extFields":{"brokerName":"broker-a","brokerAddr":"127.0.0.1:10911","clusterName":"DefaultCluster","brokerId":"0"},"flag":0,"language":"JAVA","opaque":9,"serializeTypeCurrentRPC":"JSON","version":479}"#;
    let version = br#"{"counter":3,"stateVersion":0,"timestamp":1700000000000}"#;
    let response = one_exchange(&mut raw, &json_frame(query, version)).await;
    assert_eq!(response.len(), 191);
    assert_eq!(
        response,
        json_frame(
            r#"{"code":0,"extFields":{"changed":"false"},"flag":1,"language":"JAVA","opaque":9,"serializeTypeCurrentRPC":"JSON","version":479}"#,
            version
        )
    );

    // WIPE_WRITE_PERM_OF_BROKER's count in its header (two topics here).
    let wipe = r#"{"code":205,"extFields":{"brokerName":"broker-a"},"flag":0,"language":"JAVA","opaque":10,"serializeTypeCurrentRPC":"JSON","version":479}"#;
    let response = one_exchange(&mut raw, &json_frame(wipe, b"")).await;
    assert_eq!(
        response,
        json_frame(
            r#"{"code":0,"extFields":{"wipeTopicCount":"2"},"flag":1,"language":"JAVA","opaque":10,"serializeTypeCurrentRPC":"JSON","version":479}"#,
            b""
        )
    );
    // A GET_KV_CONFIG miss: QUERY_NOT_FOUND with an empty header.
    let get = r#"{"code":101,"extFields":{"namespace":"ns","key":"k"},"flag":0,"language":"JAVA","opaque":11,"serializeTypeCurrentRPC":"JSON","version":479}"#;
    let response = one_exchange(&mut raw, &json_frame(get, b"")).await;
    assert_eq!(
        response,
        json_frame(
            r#"{"code":22,"extFields":{},"flag":1,"language":"JAVA","opaque":11,"remark":"No config item, Namespace: ns Key: k","serializeTypeCurrentRPC":"JSON","version":479}"#,
            b""
        )
    );

    // A slave's registration is answered with its master's addresses and,
    // with an ORDER_TOPIC_CONFIG namespace present, that namespace as the body.
    let put = r#"{"code":100,"extFields":{"namespace":"ORDER_TOPIC_CONFIG","key":"TopicOrder","value":"broker-a:4;broker-b:4"},"flag":0,"language":"JAVA","opaque":12,"serializeTypeCurrentRPC":"JSON","version":479}"#;
    let response = one_exchange(&mut raw, &json_frame(put, b"")).await;
    assert_eq!(
        response,
        json_frame(
            r#"{"code":0,"flag":1,"language":"JAVA","opaque":12,"serializeTypeCurrentRPC":"JSON","version":479}"#,
            b""
        )
    );
    let slave = REGISTER_HEADER
        .replace(r#""brokerId":"0""#, r#""brokerId":"1""#)
        .replace(
            r#""brokerAddr":"127.0.0.1:10911""#,
            r#""brokerAddr":"127.0.0.1:10921""#,
        )
        .replace(
            r#""haServerAddr":"127.0.0.1:10912""#,
            r#""haServerAddr":"127.0.0.1:10922""#,
        )
        .replace(r#""opaque":2"#, r#""opaque":3"#);
    // As for the master, the one-topic body needs the id registered first.
    let mut warm = Register::new("broker-a", "127.0.0.1:10921", 1, &["TopicTest", "Warmup"]);
    warm.ha = "127.0.0.1:10922".into();
    raw.send_command(&warm.request()).await;
    assert_code(
        &raw.read_command(TIMEOUT).await.unwrap(),
        rmq_wire::ResponseCode::Success,
    );
    let response = one_exchange(&mut raw, &json_frame(&slave, REGISTER_BODY.as_bytes())).await;
    assert_eq!(response.len(), 229);
    assert_eq!(
        response,
        json_frame(
            r#"{"code":0,"extFields":{"haServerAddr":"127.0.0.1:10912","masterAddr":"127.0.0.1:10911"},"flag":1,"language":"JAVA","opaque":3,"serializeTypeCurrentRPC":"JSON","version":479}"#,
            br#"{"table":{"TopicOrder":"broker-a:4;broker-b:4"}}"#
        )
    );
}

#[tokio::test]
async fn unknown_topic_and_unknown_code_vectors() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let mut raw = Raw::connect(server.addr).await;
    // An unknown topic: TOPIC_NOT_EXIST with Java's remark (253 bytes).
    let response = one_exchange(&mut raw, &json_frame(ROUTE_REQUEST_479, b"")).await;
    assert_eq!(response.len(), 253);
    let header = format!(
        r#"{{"code":17,"flag":1,"language":"JAVA","opaque":1,"remark":"{}","serializeTypeCurrentRPC":"JSON","version":479}}"#,
        NO_ROUTE_REMARK.replace('\n', "\\n")
    );
    assert_eq!(response, json_frame(&header, b""));
    // An unknown request code: REQUEST_CODE_NOT_SUPPORTED (148 bytes).
    let unknown = r#"{"code":99999,"flag":0,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":479}"#;
    let response = one_exchange(&mut raw, &json_frame(unknown, b"")).await;
    assert_eq!(response.len(), 148);
    assert_eq!(
        response,
        json_frame(
            r#"{"code":3,"flag":1,"language":"JAVA","opaque":7,"remark":" request type 99999 not supported","serializeTypeCurrentRPC":"JSON","version":479}"#,
            b""
        )
    );
}

#[tokio::test]
async fn rocketmq_serialize_type_answers_in_binary() {
    let dir = TempDir::new();
    let server = Server::start_with_env(&dir, &[], &[("ROCKETMQ_SERIALIZE_TYPE", "ROCKETMQ")]);
    assert!(
        server.boot_line.contains("serializeType=ROCKETMQ"),
        "{}",
        server.boot_line
    );
    let mut raw = Raw::connect(server.addr).await;
    let response = one_exchange(&mut raw, &json_frame(ROUTE_REQUEST_479, b"")).await;
    // The unknown-topic answer with a ROCKETMQ binary header (165 bytes).
    let mut expected = vec![0x00, 0x00, 0x00, 0xa1, 0x01, 0x00, 0x00, 0x9d];
    expected.extend_from_slice(&[0x00, 0x11, 0x00, 0x01, 0xdf]);
    expected.extend_from_slice(&1i32.to_be_bytes()); // opaque
    expected.extend_from_slice(&1i32.to_be_bytes()); // flag
    expected.extend_from_slice(&(NO_ROUTE_REMARK.len() as i32).to_be_bytes());
    expected.extend_from_slice(NO_ROUTE_REMARK.as_bytes());
    expected.extend_from_slice(&0i32.to_be_bytes()); // no ext fields
    assert_eq!(response.len(), 165);
    assert_eq!(response, expected);
}
