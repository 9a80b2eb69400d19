use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;

use super::*;
use crate::version::V5_0_0;

/// A one-topic body as a 5.x Java broker writes it, 449 bytes.
const REGISTER_BODY_JSON: &str = r#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1700000000000},"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":{"TopicTest":{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}},"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}}"#;

/// The same body compressed by Java (`Deflater(BEST_COMPRESSION)`), 98 bytes.
const REGISTER_BODY_ZLIB: [u8; 98] = [
    0x78, 0xda, 0x63, 0x60, 0x60, 0xb0, 0xa8, 0x56, 0x4a, 0xce, 0x2f, 0xcd, 0x2b, 0x49, 0x2d,
    0x52, //
    0xb2, 0x32, 0xd6, 0x51, 0x2a, 0x2e, 0x49, 0x2c, 0x49, 0x0d, 0x4b, 0x2d, 0x2a, 0xce, 0xcc,
    0xcf, //
    0x53, 0xb2, 0x32, 0xd0, 0x51, 0x2a, 0xc9, 0xcc, 0x4d, 0x05, 0x0a, 0xe6, 0x16, 0x28, 0x59,
    0x19, //
    0x9a, 0x1b, 0x20, 0x40, 0x2d, 0x03, 0x03, 0x03, 0x23, 0x10, 0xcb, 0x86, 0xe4, 0x17, 0x64,
    0x26, //
    0x87, 0x00, 0xd5, 0x28, 0x98, 0x00, 0xa1, 0x99, 0x42, 0xb0, 0xa7, 0x9f, 0xbb, 0x8f, 0x6b,
    0x7c, //
    0x88, 0xa3, 0xbb, 0x42, 0x35, 0x48, 0x11, 0x53, 0x74, 0x2c, 0x90, 0x64, 0x00, 0x00, 0x53,
    0x2f, //
    0x1b, 0x63,
];

fn topic_test() -> TopicConfig {
    TopicConfig {
        read_queue_nums: 4,
        write_queue_nums: 4,
        ..TopicConfig::new("TopicTest")
    }
}

fn register_body() -> RegisterBrokerBody {
    RegisterBrokerBody {
        filter_server_list: Some(vec![]),
        topic_config_serialize_wrapper: TopicConfigSerializeWrapper {
            data_version: DataVersion::new(3, 0, 1_700_000_000_000),
            mapping_data_version: DataVersion::new(0, 0, 1_700_000_000_000),
            topic_config_table: [("TopicTest".to_string(), topic_test())].into(),
            ..TopicConfigSerializeWrapper::default()
        },
    }
}

fn zlib(raw: &[u8]) -> Vec<u8> {
    let mut e = ZlibEncoder::new(Vec::new(), Compression::fast());
    e.write_all(raw).unwrap();
    e.finish().unwrap()
}

#[test]
fn json_body_and_its_crc_as_a_5x_broker_sends_them() {
    assert_eq!(REGISTER_BODY_JSON.len(), 449);
    let body = register_body();
    assert_eq!(
        String::from_utf8(body.to_json(Dialect::Default)).unwrap(),
        REGISTER_BODY_JSON
    );
    assert_eq!(
        RegisterBrokerBody::from_json(REGISTER_BODY_JSON.as_bytes()).unwrap(),
        body
    );
    assert_eq!(body_crc32(REGISTER_BODY_JSON.as_bytes()), 1_779_474_218);
    assert_eq!(body_crc32(b""), 0);
}

#[test]
fn compressed_body_as_java_deflates_it() {
    let body = RegisterBrokerBody::from_compressed(&REGISTER_BODY_ZLIB, 479).unwrap();
    let mut expected = register_body();
    expected.topic_config_serialize_wrapper.mapping_data_version = DataVersion::default();
    assert_eq!(body, expected);
    // Before 5.0.0 the (empty) mapping section is not read; same result.
    assert_eq!(
        RegisterBrokerBody::from_compressed(&REGISTER_BODY_ZLIB, 401).unwrap(),
        expected
    );
    // Our encoder's stream differs from Java's, its inflated bytes do not.
    let ours = body.to_compressed(BodyFlavor::V5);
    let mut inflated = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::ZlibDecoder::new(&ours[..]),
        &mut inflated,
    )
    .unwrap();
    let mut java = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::ZlibDecoder::new(&REGISTER_BODY_ZLIB[..]),
        &mut java,
    )
    .unwrap();
    assert_eq!(java.len(), 107);
    assert_eq!(inflated, java);
    assert_eq!(ours[..2], [0x78, 0xda]);
}

#[test]
fn compressed_round_trip_with_mapping_and_4x_flavor() {
    let mut body = register_body();
    let wrapper = &mut body.topic_config_serialize_wrapper;
    wrapper.mapping_data_version = DataVersion::default();
    wrapper
        .topic_config_table
        .get_mut("TopicTest")
        .unwrap()
        .attributes
        .insert("+k".into(), "v".into());
    let info = TopicQueueMappingInfo {
        bname: "broker-a".into(),
        curr_id_map: [(0, 0), (-1, 3)].into(),
        topic: "TopicTest".into(),
        ..TopicQueueMappingInfo::default()
    };
    wrapper
        .topic_queue_mapping_info_map
        .insert("TopicTest".into(), info);
    body.filter_server_list = Some(vec!["10.0.0.1:1".into()]);
    let v5 = body.to_compressed(BodyFlavor::V5);
    assert_eq!(
        RegisterBrokerBody::from_compressed(&v5, V5_0_0).unwrap(),
        body
    );

    let v4 = body.to_compressed(BodyFlavor::V4);
    let decoded = RegisterBrokerBody::from_compressed(&v4, 401).unwrap();
    let wrapper = &decoded.topic_config_serialize_wrapper;
    assert!(wrapper.topic_queue_mapping_info_map.is_empty());
    assert!(wrapper.topic_config_table["TopicTest"]
        .attributes
        .is_empty());
    assert_eq!(decoded.filter_server_list, body.filter_server_list);
    // A 4.x body read as 5.x lacks the mapping count.
    assert!(matches!(
        RegisterBrokerBody::from_compressed(&v4, V5_0_0),
        Err(BodyError::Truncated {
            what: "mapping count"
        })
    ));
}

#[test]
fn json_4x_flavor_omits_mapping_and_attributes() {
    let body = register_body();
    let v4 = String::from_utf8(body.to_json_flavor(BodyFlavor::V4)).unwrap();
    assert_eq!(
        v4,
        r#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"timestamp":1700000000000},"topicConfigTable":{"TopicTest":{"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}}}}"#
    );
    let back = RegisterBrokerBody::from_json(v4.as_bytes()).unwrap();
    assert_eq!(
        back.topic_config_serialize_wrapper.topic_config_table,
        body.topic_config_serialize_wrapper.topic_config_table
    );
    let old = body
        .topic_config_serialize_wrapper
        .to_json_flavor(BodyFlavor::V4);
    assert!(old.starts_with(br#"{"dataVersion":"#));
}

#[test]
fn decode_request_selects_the_format() {
    let json = REGISTER_BODY_JSON.as_bytes();
    assert_eq!(
        RegisterBrokerBody::decode_request(Some(json), false, 479).unwrap(),
        register_body()
    );
    assert!(RegisterBrokerBody::decode_request(Some(json), true, 479).is_err());
    assert!(RegisterBrokerBody::decode_request(Some(&REGISTER_BODY_ZLIB), true, 479).is_ok());

    let none = RegisterBrokerBody::decode_request(None, false, 479).unwrap();
    assert_eq!(none.filter_server_list, Some(vec![]));
    assert_eq!(
        none.topic_config_serialize_wrapper.data_version,
        DataVersion::new(0, 0, 0)
    );
    assert_eq!(
        RegisterBrokerBody::decode_request(None, true, 0)
            .unwrap()
            .filter_server_list,
        None
    );

    let old = br#"{"dataVersion":{"counter":1,"timestamp":5},"topicConfigTable":{"a":{"topicName":"a"}}}"#;
    let body = RegisterBrokerBody::decode_request(Some(old), true, 36).unwrap();
    assert_eq!(body.filter_server_list, None);
    assert_eq!(
        body.topic_config_serialize_wrapper.topic_config_table["a"],
        TopicConfig::new("a")
    );
}

#[test]
fn filter_server_list_null_missing_and_mapping_with_bare_keys() {
    let b = RegisterBrokerBody::from_json(br#"{"filterServerList":null}"#).unwrap();
    assert_eq!(b.filter_server_list, None);
    let b = RegisterBrokerBody::from_json(br#"{}"#).unwrap();
    assert_eq!(b.filter_server_list, Some(vec![]));
    let b = RegisterBrokerBody::from_json(
        br#"{"topicConfigSerializeWrapper":{"topicQueueMappingDetailMap":{"t":{"hostedQueues":{0:[{"a":1}]}}},"topicQueueMappingInfoMap":{"t":{"currIdMap":{0:0,1:1},"topic":"t"}}}}"#,
    )
    .unwrap();
    let info = &b
        .topic_config_serialize_wrapper
        .topic_queue_mapping_info_map["t"];
    assert_eq!(info.curr_id_map, [(0, 0), (1, 1)].into());
}

#[test]
fn compressed_errors_are_errors() {
    let mut raw = Vec::new();
    raw.extend_from_slice(&2i32.to_be_bytes());
    raw.extend_from_slice(b"{}");
    // The topic count claims one more topic than there is.
    raw.extend_from_slice(&1i32.to_be_bytes());
    assert!(matches!(
        RegisterBrokerBody::from_compressed(&zlib(&raw), 479),
        Err(BodyError::Truncated { .. })
    ));
    // A negative section length.
    let mut neg = raw.clone();
    neg.extend_from_slice(&(-1i32).to_be_bytes());
    assert!(matches!(
        RegisterBrokerBody::from_compressed(&zlib(&neg), 479),
        Err(BodyError::NegativeLength { .. })
    ));
    // A length beyond the bound is refused before anything is read.
    let mut big = raw.clone();
    big.extend_from_slice(&i32::MAX.to_be_bytes());
    assert!(matches!(
        RegisterBrokerBody::from_compressed(&zlib(&big), 479),
        Err(BodyError::TooLarge { .. })
    ));
    // A negative topic count means no topics (Java's for loop).
    let mut none = Vec::new();
    none.extend_from_slice(&2i32.to_be_bytes());
    none.extend_from_slice(b"{}");
    none.extend_from_slice(&(-5i32).to_be_bytes());
    none.extend_from_slice(&4i32.to_be_bytes());
    none.extend_from_slice(b"oops");
    let body = RegisterBrokerBody::from_compressed(&zlib(&none), 401).unwrap();
    assert_eq!(body.filter_server_list, Some(vec![]));
    // Not zlib at all.
    assert!(RegisterBrokerBody::from_compressed(b"\x00\x01garbage", 479).is_err());
    assert!(RegisterBrokerBody::from_compressed(b"", 479).is_err());
}

#[test]
fn decompression_bomb_is_bounded() {
    // 48 MiB of valid DataVersion JSON (trailing whitespace), then a topic
    // entry claiming 20 MiB: each section is under the bound, together they
    // are not. The stream itself is a few tens of KiB.
    let json = br#"{"counter":0,"stateVersion":0,"timestamp":0}"#;
    let dv_len = 48usize << 20;
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::best());
    encoder.write_all(&(dv_len as i32).to_be_bytes()).unwrap();
    encoder.write_all(json).unwrap();
    let spaces = vec![b' '; 1 << 20];
    let mut left = dv_len - json.len();
    while left > 0 {
        let n = left.min(spaces.len());
        encoder.write_all(&spaces[..n]).unwrap();
        left -= n;
    }
    encoder.write_all(&1i32.to_be_bytes()).unwrap();
    encoder.write_all(&(20i32 << 20).to_be_bytes()).unwrap();
    encoder.write_all(&spaces).unwrap();
    let bomb = encoder.finish().unwrap();
    assert!(bomb.len() < 256 * 1024, "{}", bomb.len());
    assert!(matches!(
        RegisterBrokerBody::from_compressed(&bomb, 479),
        Err(BodyError::TooLarge { .. })
    ));
}

/// Raw (inflated) compressed layout: DataVersion, `topics` entries declared
/// as `declared`, a filter list, and `mappings` mapping entries.
fn raw_compressed(declared: i32, topics: &[&str], filters: &str, mappings: i32) -> Vec<u8> {
    fn block(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
        out.extend_from_slice(bytes);
    }
    let mut raw = Vec::new();
    block(&mut raw, b"{}");
    raw.extend_from_slice(&declared.to_be_bytes());
    for topic in topics {
        block(
            &mut raw,
            TopicConfig::new(*topic).encode_text(true).as_bytes(),
        );
    }
    block(&mut raw, filters.as_bytes());
    raw.extend_from_slice(&mappings.to_be_bytes());
    raw
}

fn too_many(result: Result<RegisterBrokerBody, RegisterDecodeError>) -> (&'static str, usize) {
    match result {
        Err(RegisterDecodeError::TooMany { what, limit }) => (what, limit),
        other => panic!("expected TooMany, got {other:?}"),
    }
}

#[test]
fn compressed_counts_over_the_bound_are_refused_before_any_entry_is_read() {
    // Two million topics declared, none present: refused by the count, not
    // reported as truncated data after reading.
    let bomb = zlib(&raw_compressed(2_000_000, &[], "[]", 0));
    let refused = RegisterBrokerBody::from_compressed_limited(&bomb, 479, 200_000);
    assert_eq!(too_many(refused), ("topics", 200_000));
    let error = RegisterBrokerBody::decode_request_limited(Some(&bomb), true, 479, 200_000)
        .unwrap_err()
        .to_string();
    assert_eq!(error, "the body carries more than 200000 topics");

    let at_bound = zlib(&raw_compressed(2, &["a", "b"], "[]", 0));
    let body = RegisterBrokerBody::from_compressed_limited(&at_bound, 479, 2).unwrap();
    assert_eq!(
        body.topic_config_serialize_wrapper.topic_config_table.len(),
        2
    );
    let over = RegisterBrokerBody::from_compressed_limited(&at_bound, 479, 1);
    assert_eq!(too_many(over), ("topics", 1));

    let mappings = zlib(&raw_compressed(0, &[], "[]", 5));
    let over = RegisterBrokerBody::from_compressed_limited(&mappings, 479, 4);
    assert_eq!(too_many(over), ("static-topic mappings", 4));

    let filters = zlib(&raw_compressed(0, &[], r#"["a","b","c","d","e"]"#, 0));
    let over = RegisterBrokerBody::from_compressed_limited(&filters, 479, 2);
    assert_eq!(too_many(over), ("filter servers", 2));
    // An unparsable filter list is still Java's empty list, not a refusal.
    let garbage = zlib(&raw_compressed(0, &[], "[[[[[[[[[[[[[[[[[[[[[[[[", 0));
    let body = RegisterBrokerBody::from_compressed_limited(&garbage, 479, 2).unwrap();
    assert_eq!(body.filter_server_list, Some(vec![]));
}

#[test]
fn json_bodies_over_the_bound_are_refused_in_both_layouts() {
    let topics: Vec<String> = (0..50).map(|i| format!("T{i}")).collect();
    let mut body = register_body();
    body.topic_config_serialize_wrapper.topic_config_table = topics
        .iter()
        .map(|t| (t.clone(), TopicConfig::new(t.as_str())))
        .collect();
    for (bytes, version) in [
        (body.to_json(Dialect::Default), 479),
        (body.to_json_flavor(BodyFlavor::V4), 479),
        (
            body.topic_config_serialize_wrapper
                .to_json_flavor(BodyFlavor::V4),
            36,
        ),
    ] {
        let ok =
            RegisterBrokerBody::decode_request_limited(Some(&bytes), false, version, 50).unwrap();
        assert_eq!(
            ok,
            RegisterBrokerBody::decode_request(Some(&bytes), false, version).unwrap()
        );
        let over = RegisterBrokerBody::decode_request_limited(Some(&bytes), false, version, 49);
        assert_eq!(too_many(over), ("topics", 49), "version {version}");
    }

    // Duplicates and nulls count: the bound is on what the text carries.
    let dupes =
        br#"{"topicConfigSerializeWrapper":{"topicConfigTable":{"a":null,"a":null,"a":null}}}"#;
    let over = RegisterBrokerBody::decode_request_limited(Some(dupes), false, 479, 1);
    assert_eq!(too_many(over), ("topics", 1));
    let filters = br#"{"filterServerList":["a","b","c","d"]}"#;
    let over = RegisterBrokerBody::decode_request_limited(Some(filters), false, 479, 3);
    assert_eq!(too_many(over), ("filter servers", 3));
    let mappings =
        br#"{"topicConfigSerializeWrapper":{"topicQueueMappingInfoMap":{a:{},b:{},c:{}}}}"#;
    let over = RegisterBrokerBody::decode_request_limited(Some(mappings), false, 479, 2);
    assert_eq!(too_many(over), ("static-topic mappings", 2));
    // A malformed body is reported as before, not as over the bound.
    let broken =
        RegisterBrokerBody::decode_request_limited(Some(b"{\"x\":[1,2,3,4,5"), false, 479, 1);
    assert!(
        matches!(broken, Err(RegisterDecodeError::Body(_))),
        "{broken:?}"
    );
}
