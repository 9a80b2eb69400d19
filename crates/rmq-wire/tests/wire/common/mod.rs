//! Shared by the integration tests: hex parsing and byte dumps of whole
//! frames, produced by the Java classes of RocketMQ 5.3.3 (version 479) with
//! fastjson 1.2.83.

// Each test crate uses a different subset of this module.
#![allow(dead_code)]

use bytes::Bytes;

/// Parses hex digits, ignoring all whitespace. Panics on anything else, so a
/// typo in a vector fails loudly.
pub fn hex(text: &str) -> Bytes {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    assert!(digits.len() % 2 == 0, "odd number of hex digits");
    let nibble = |d: u8| match d {
        b'0'..=b'9' => d - b'0',
        b'a'..=b'f' => d - b'a' + 10,
        b'A'..=b'F' => d - b'A' + 10,
        _ => panic!("not a hex digit: {:?}", d as char),
    };
    digits
        .chunks(2)
        .map(|pair| nibble(pair[0]) << 4 | nibble(pair[1]))
        .collect::<Vec<u8>>()
        .into()
}

/// GET_ROUTEINFO_BY_TOPIC request, JSON header (139 bytes).
pub const ROUTE_REQUEST_JSON: &str = "
    00 00 00 87 00 00 00 83 7b 22 63 6f 64 65 22 3a
    31 30 35 2c 22 65 78 74 46 69 65 6c 64 73 22 3a
    7b 22 74 6f 70 69 63 22 3a 22 54 6f 70 69 63 54
    65 73 74 22 7d 2c 22 66 6c 61 67 22 3a 30 2c 22
    6c 61 6e 67 75 61 67 65 22 3a 22 4a 41 56 41 22
    2c 22 6f 70 61 71 75 65 22 3a 31 2c 22 73 65 72
    69 61 6c 69 7a 65 54 79 70 65 43 75 72 72 65 6e
    74 52 50 43 22 3a 22 4a 53 4f 4e 22 2c 22 76 65
    72 73 69 6f 6e 22 3a 34 37 39 7d
";

/// The same request, ROCKETMQ binary header (49 bytes).
pub const ROUTE_REQUEST_ROCKETMQ: &str = "
    00 00 00 2d 01 00 00 29 00 69 00 01 df 00 00 00
    01 00 00 00 00 00 00 00 00 00 00 00 14 00 05 74
    6f 70 69 63 00 00 00 09 54 6f 70 69 63 54 65 73
    74
";

/// route response, JSON header + standard-dialect body (365 bytes).
pub const ROUTE_RESPONSE_STANDARD: &str = "
    00 00 01 69 00 00 00 5f 7b 22 63 6f 64 65 22 3a
    30 2c 22 66 6c 61 67 22 3a 31 2c 22 6c 61 6e 67
    75 61 67 65 22 3a 22 4a 41 56 41 22 2c 22 6f 70
    61 71 75 65 22 3a 31 2c 22 73 65 72 69 61 6c 69
    7a 65 54 79 70 65 43 75 72 72 65 6e 74 52 50 43
    22 3a 22 4a 53 4f 4e 22 2c 22 76 65 72 73 69 6f
    6e 22 3a 34 37 39 7d 7b 22 62 72 6f 6b 65 72 44
    61 74 61 73 22 3a 5b 7b 22 62 72 6f 6b 65 72 41
    64 64 72 73 22 3a 7b 22 30 22 3a 22 31 32 37 2e
    30 2e 30 2e 31 3a 31 30 39 31 31 22 7d 2c 22 62
    72 6f 6b 65 72 4e 61 6d 65 22 3a 22 62 72 6f 6b
    65 72 2d 61 22 2c 22 63 6c 75 73 74 65 72 22 3a
    22 44 65 66 61 75 6c 74 43 6c 75 73 74 65 72 22
    2c 22 65 6e 61 62 6c 65 41 63 74 69 6e 67 4d 61
    73 74 65 72 22 3a 66 61 6c 73 65 7d 5d 2c 22 66
    69 6c 74 65 72 53 65 72 76 65 72 54 61 62 6c 65
    22 3a 7b 7d 2c 22 71 75 65 75 65 44 61 74 61 73
    22 3a 5b 7b 22 62 72 6f 6b 65 72 4e 61 6d 65 22
    3a 22 62 72 6f 6b 65 72 2d 61 22 2c 22 70 65 72
    6d 22 3a 36 2c 22 72 65 61 64 51 75 65 75 65 4e
    75 6d 73 22 3a 34 2c 22 74 6f 70 69 63 53 79 73
    46 6c 61 67 22 3a 30 2c 22 77 72 69 74 65 51 75
    65 75 65 4e 75 6d 73 22 3a 34 7d 5d 7d
";

/// TOPIC_NOT_EXIST response with the FAQ remark, JSON header (253 bytes).
pub const TOPIC_NOT_EXIST_JSON: &str = "
    00 00 00 f9 00 00 00 f5 7b 22 63 6f 64 65 22 3a
    31 37 2c 22 66 6c 61 67 22 3a 31 2c 22 6c 61 6e
    67 75 61 67 65 22 3a 22 4a 41 56 41 22 2c 22 6f
    70 61 71 75 65 22 3a 31 2c 22 72 65 6d 61 72 6b
    22 3a 22 4e 6f 20 74 6f 70 69 63 20 72 6f 75 74
    65 20 69 6e 66 6f 20 69 6e 20 6e 61 6d 65 20 73
    65 72 76 65 72 20 66 6f 72 20 74 68 65 20 74 6f
    70 69 63 3a 20 54 6f 70 69 63 54 65 73 74 5c 6e
    53 65 65 20 68 74 74 70 73 3a 2f 2f 72 6f 63 6b
    65 74 6d 71 2e 61 70 61 63 68 65 2e 6f 72 67 2f
    64 6f 63 73 2f 62 65 73 74 50 72 61 63 74 69 63
    65 2f 30 36 46 41 51 20 66 6f 72 20 66 75 72 74
    68 65 72 20 64 65 74 61 69 6c 73 2e 22 2c 22 73
    65 72 69 61 6c 69 7a 65 54 79 70 65 43 75 72 72
    65 6e 74 52 50 43 22 3a 22 4a 53 4f 4e 22 2c 22
    76 65 72 73 69 6f 6e 22 3a 34 37 39 7d
";

/// The same response, ROCKETMQ binary header (165 bytes).
pub const TOPIC_NOT_EXIST_ROCKETMQ: &str = "
    00 00 00 a1 01 00 00 9d 00 11 00 01 df 00 00 00
    01 00 00 00 01 00 00 00 88 4e 6f 20 74 6f 70 69
    63 20 72 6f 75 74 65 20 69 6e 66 6f 20 69 6e 20
    6e 61 6d 65 20 73 65 72 76 65 72 20 66 6f 72 20
    74 68 65 20 74 6f 70 69 63 3a 20 54 6f 70 69 63
    54 65 73 74 0a 53 65 65 20 68 74 74 70 73 3a 2f
    2f 72 6f 63 6b 65 74 6d 71 2e 61 70 61 63 68 65
    2e 6f 72 67 2f 64 6f 63 73 2f 62 65 73 74 50 72
    61 63 74 69 63 65 2f 30 36 46 41 51 20 66 6f 72
    20 66 75 72 74 68 65 72 20 64 65 74 61 69 6c 73
    2e 00 00 00 00
";

/// REQUEST_CODE_NOT_SUPPORTED for code 99999 (148 bytes).
pub const NOT_SUPPORTED: &str = "
    00 00 00 90 00 00 00 8c 7b 22 63 6f 64 65 22 3a
    33 2c 22 66 6c 61 67 22 3a 31 2c 22 6c 61 6e 67
    75 61 67 65 22 3a 22 4a 41 56 41 22 2c 22 6f 70
    61 71 75 65 22 3a 37 2c 22 72 65 6d 61 72 6b 22
    3a 22 20 72 65 71 75 65 73 74 20 74 79 70 65 20
    39 39 39 39 39 20 6e 6f 74 20 73 75 70 70 6f 72
    74 65 64 22 2c 22 73 65 72 69 61 6c 69 7a 65 54
    79 70 65 43 75 72 72 65 6e 74 52 50 43 22 3a 22
    4a 53 4f 4e 22 2c 22 76 65 72 73 69 6f 6e 22 3a
    34 37 39 7d
";

/// REGISTER_BROKER response for a master, `"extFields":{}` (118 bytes).
pub const REGISTER_MASTER_RESPONSE: &str = "
    00 00 00 72 00 00 00 6e 7b 22 63 6f 64 65 22 3a
    30 2c 22 65 78 74 46 69 65 6c 64 73 22 3a 7b 7d
    2c 22 66 6c 61 67 22 3a 31 2c 22 6c 61 6e 67 75
    61 67 65 22 3a 22 4a 41 56 41 22 2c 22 6f 70 61
    71 75 65 22 3a 32 2c 22 73 65 72 69 61 6c 69 7a
    65 54 79 70 65 43 75 72 72 65 6e 74 52 50 43 22
    3a 22 4a 53 4f 4e 22 2c 22 76 65 72 73 69 6f 6e
    22 3a 34 37 39 7d
";

/// REGISTER_BROKER response for a slave, two ext fields and a body (229 bytes).
pub const REGISTER_SLAVE_RESPONSE: &str = "
    00 00 00 e1 00 00 00 ad 7b 22 63 6f 64 65 22 3a
    30 2c 22 65 78 74 46 69 65 6c 64 73 22 3a 7b 22
    68 61 53 65 72 76 65 72 41 64 64 72 22 3a 22 31
    32 37 2e 30 2e 30 2e 31 3a 31 30 39 31 32 22 2c
    22 6d 61 73 74 65 72 41 64 64 72 22 3a 22 31 32
    37 2e 30 2e 30 2e 31 3a 31 30 39 31 31 22 7d 2c
    22 66 6c 61 67 22 3a 31 2c 22 6c 61 6e 67 75 61
    67 65 22 3a 22 4a 41 56 41 22 2c 22 6f 70 61 71
    75 65 22 3a 33 2c 22 73 65 72 69 61 6c 69 7a 65
    54 79 70 65 43 75 72 72 65 6e 74 52 50 43 22 3a
    22 4a 53 4f 4e 22 2c 22 76 65 72 73 69 6f 6e 22
    3a 34 37 39 7d 7b 22 74 61 62 6c 65 22 3a 7b 22
    54 6f 70 69 63 4f 72 64 65 72 22 3a 22 62 72 6f
    6b 65 72 2d 61 3a 34 3b 62 72 6f 6b 65 72 2d 62
    3a 34 22 7d 7d
";

/// QUERY_DATA_VERSION response, `changed=false` (191 bytes).
pub const QUERY_DATA_VERSION_RESPONSE: &str = "
    00 00 00 bb 00 00 00 7f 7b 22 63 6f 64 65 22 3a
    30 2c 22 65 78 74 46 69 65 6c 64 73 22 3a 7b 22
    63 68 61 6e 67 65 64 22 3a 22 66 61 6c 73 65 22
    7d 2c 22 66 6c 61 67 22 3a 31 2c 22 6c 61 6e 67
    75 61 67 65 22 3a 22 4a 41 56 41 22 2c 22 6f 70
    61 71 75 65 22 3a 39 2c 22 73 65 72 69 61 6c 69
    7a 65 54 79 70 65 43 75 72 72 65 6e 74 52 50 43
    22 3a 22 4a 53 4f 4e 22 2c 22 76 65 72 73 69 6f
    6e 22 3a 34 37 39 7d 7b 22 63 6f 75 6e 74 65 72
    22 3a 33 2c 22 73 74 61 74 65 56 65 72 73 69 6f
    6e 22 3a 30 2c 22 74 69 6d 65 73 74 61 6d 70 22
    3a 31 37 30 30 30 30 30 30 30 30 30 30 30 7d
";

/// REGISTER_BROKER request header as a 5.3.3 broker sends it
/// (ext fields in Java `HashMap` order).
pub const REGISTER_BROKER_HEADER: &str = r#"{"code":103,"extFields":{"brokerId":"0","bodyCrc32":"1779474218","clusterName":"DefaultCluster","brokerAddr":"127.0.0.1:10911","enableActingMaster":"false","haServerAddr":"127.0.0.1:10912","compressed":"false","brokerName":"broker-a"},"flag":0,"language":"JAVA","opaque":2,"serializeTypeCurrentRPC":"JSON","version":479}"#;

/// Headers of other requests and responses as Java writes them: (name, JSON
/// text).
pub const HEADER_TEXTS: [(&str, &str); 7] = [
    (
        "BROKER_HEARTBEAT",
        r#"{"code":904,"extFields":{"clusterName":"DefaultCluster","brokerAddr":"127.0.0.1:10911","brokerName":"broker-a"},"flag":2,"language":"JAVA","opaque":43,"serializeTypeCurrentRPC":"JSON","version":479}"#,
    ),
    (
        "UNREGISTER_BROKER",
        r#"{"code":104,"extFields":{"brokerId":"0","clusterName":"DefaultCluster","brokerAddr":"127.0.0.1:10911","brokerName":"broker-a"},"flag":0,"language":"JAVA","opaque":44,"serializeTypeCurrentRPC":"JSON","version":479}"#,
    ),
    (
        "DELETE_TOPIC_IN_NAMESRV",
        r#"{"code":216,"extFields":{"clusterName":"DefaultCluster","topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":45,"serializeTypeCurrentRPC":"JSON","version":479}"#,
    ),
    (
        "WIPE_WRITE_PERM_OF_BROKER response",
        r#"{"code":0,"extFields":{"wipeTopicCount":"3"},"flag":1,"language":"JAVA","opaque":10,"serializeTypeCurrentRPC":"JSON","version":479}"#,
    ),
    (
        "GET_KV_CONFIG miss",
        r#"{"code":22,"extFields":{},"flag":1,"language":"JAVA","opaque":11,"remark":"No config item, Namespace: ns Key: k","serializeTypeCurrentRPC":"JSON","version":479}"#,
    ),
    (
        "NOTIFY_MIN_BROKER_ID_CHANGE",
        r#"{"code":905,"extFields":{"offlineBrokerAddr":"127.0.0.1:10911","minBrokerAddr":"127.0.0.1:10921","minBrokerId":"1"},"flag":2,"language":"JAVA","opaque":42,"serializeTypeCurrentRPC":"JSON","version":479}"#,
    ),
    (
        "non-ASCII remark",
        r#"{"code":1,"flag":1,"language":"JAVA","opaque":3,"remark":"错误/x","serializeTypeCurrentRPC":"JSON","version":479}"#,
    ),
];
