//! Property round trips (emit → parse) of every body in both dialects and of
//! the compressed REGISTER_BROKER form, and "arbitrary bytes never panic" for
//! the REGISTER_BROKER decoders.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::io::Write;

use proptest::collection::{btree_map, btree_set, vec};
use proptest::prelude::*;
use rmq_protocol::*;

/// Any text, control characters and all of Unicode included.
fn text() -> impl Strategy<Value = String> {
    prop::string::string_regex("(?s).{0,10}").unwrap()
}

/// A map key. `$ref` is fastjson's reference marker wherever it stands,
/// which the parser drops on purpose.
fn key() -> impl Strategy<Value = String> {
    text().prop_filter("$ref is a reference marker", |k| k != "$ref")
}

fn data_version() -> impl Strategy<Value = DataVersion> {
    (any::<i64>(), any::<i64>(), any::<i64>()).prop_map(|(c, s, t)| DataVersion::new(c, s, t))
}

fn filter_type() -> impl Strategy<Value = TopicFilterType> {
    prop_oneof![
        Just(TopicFilterType::SingleTag),
        Just(TopicFilterType::MultiTag)
    ]
}

fn topic_config(
    name: impl Strategy<Value = String>,
    attr: BoxedStrategy<String>,
) -> impl Strategy<Value = TopicConfig> {
    (
        btree_map(
            attr.clone().prop_filter("$ref", |k| k != "$ref"),
            attr,
            0..3,
        ),
        any::<bool>(),
        any::<i32>(),
        any::<i32>(),
        filter_type(),
        name,
        any::<i32>(),
        any::<i32>(),
    )
        .prop_map(
            |(attributes, order, perm, read, filter, name, sys, write)| TopicConfig {
                attributes,
                order,
                perm,
                read_queue_nums: read,
                topic_filter_type: filter,
                topic_name: name,
                topic_sys_flag: sys,
                write_queue_nums: write,
            },
        )
}

fn mapping_info(
    topic: impl Strategy<Value = String>,
) -> impl Strategy<Value = TopicQueueMappingInfo> {
    (
        text(),
        btree_map(any::<i32>(), any::<i32>(), 0..4),
        any::<bool>(),
        any::<i64>(),
        text(),
        topic,
        any::<i32>(),
    )
        .prop_map(
            |(bname, curr_id_map, dirty, epoch, scope, topic, total_queues)| {
                TopicQueueMappingInfo {
                    bname,
                    curr_id_map,
                    dirty,
                    epoch,
                    scope,
                    topic,
                    total_queues,
                }
            },
        )
}

fn broker_data() -> impl Strategy<Value = BrokerData> {
    (
        btree_map(any::<i64>(), text(), 0..4),
        text(),
        text(),
        any::<bool>(),
        proptest::option::of(text()),
    )
        .prop_map(
            |(broker_addrs, broker_name, cluster, enable_acting_master, zone_name)| BrokerData {
                broker_addrs,
                broker_name,
                cluster,
                enable_acting_master,
                zone_name,
            },
        )
}

fn queue_data() -> impl Strategy<Value = QueueData> {
    (
        text(),
        any::<i32>(),
        any::<i32>(),
        any::<i32>(),
        any::<i32>(),
    )
        .prop_map(|(broker_name, perm, r, sys, w)| QueueData {
            broker_name,
            perm,
            read_queue_nums: r,
            topic_sys_flag: sys,
            write_queue_nums: w,
        })
}

fn route() -> impl Strategy<Value = TopicRouteData> {
    (
        vec(broker_data(), 0..3),
        btree_map(key(), vec(text(), 0..3), 0..3),
        proptest::option::of(text()),
        vec(queue_data(), 0..3),
        proptest::option::of(btree_map(key(), mapping_info(text()), 0..2)),
    )
        .prop_map(
            |(broker_datas, filter_server_table, order_topic_conf, queue_datas, mapping)| {
                TopicRouteData {
                    broker_datas,
                    filter_server_table,
                    order_topic_conf,
                    queue_datas,
                    topic_queue_mapping_by_broker: mapping,
                }
            },
        )
}

fn register_body() -> impl Strategy<Value = RegisterBrokerBody> {
    (
        vec(text(), 0..3),
        data_version(),
        data_version(),
        btree_map(key(), topic_config(text(), text().boxed()), 0..3),
        btree_map(key(), mapping_info(text()), 0..2),
    )
        .prop_map(|(filters, dv, mdv, table, infos)| RegisterBrokerBody {
            // `None` is omitted on output and a missing list reads as empty,
            // exactly as in Java; so only `Some` round-trips.
            filter_server_list: Some(filters),
            topic_config_serialize_wrapper: TopicConfigSerializeWrapper {
                data_version: dv,
                mapping_data_version: mdv,
                topic_config_table: table,
                topic_queue_mapping_info_map: infos,
                ..Default::default()
            },
        })
}

/// What survives the compressed form: topics keyed by their names, no space
/// in names and attributes (the text form splits on spaces), no sys flag or
/// order, mapping infos keyed by topic, no mapping data version.
fn compressible_body() -> impl Strategy<Value = RegisterBrokerBody> {
    let no_space = || prop::string::string_regex("[^ ]{0,10}").unwrap();
    (
        proptest::option::of(vec(text(), 0..3)),
        data_version(),
        vec(topic_config(no_space(), no_space().boxed()), 0..4),
        vec(mapping_info(text()), 0..3),
    )
        .prop_map(|(filters, dv, configs, infos)| RegisterBrokerBody {
            filter_server_list: filters,
            topic_config_serialize_wrapper: TopicConfigSerializeWrapper {
                data_version: dv,
                topic_config_table: configs
                    .into_iter()
                    .map(|c| {
                        (
                            c.topic_name.clone(),
                            TopicConfig {
                                topic_sys_flag: 0,
                                order: false,
                                ..c
                            },
                        )
                    })
                    .collect(),
                topic_queue_mapping_info_map: infos
                    .into_iter()
                    .map(|i| (i.topic.clone(), i))
                    .collect(),
                ..Default::default()
            },
        })
}

fn both_dialects<T: JavaJson + PartialEq + Debug>(value: &T) -> Result<(), TestCaseError> {
    for dialect in [Dialect::Default, Dialect::Standard] {
        let bytes = value.to_json(dialect);
        let back = T::from_json(&bytes).map_err(|e| {
            TestCaseError::fail(format!(
                "{dialect:?}: {e}: {}",
                String::from_utf8_lossy(&bytes)
            ))
        })?;
        prop_assert_eq!(
            &back,
            value,
            "{:?}: {}",
            dialect,
            String::from_utf8_lossy(&bytes)
        );
        if dialect == Dialect::Standard {
            prop_assert!(bytes.is_ascii());
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn data_version_round_trips(v in data_version()) {
        both_dialects(&v)?;
    }

    #[test]
    fn topic_config_round_trips(c in topic_config(text(), text().boxed())) {
        both_dialects(&c)?;
    }

    #[test]
    fn route_round_trips(r in route()) {
        both_dialects(&r)?;
    }

    #[test]
    fn register_body_round_trips_as_json(b in register_body()) {
        both_dialects(&b)?;
        both_dialects(&b.topic_config_serialize_wrapper)?;
        let v4 = RegisterBrokerBody::from_json(&b.to_json_flavor(BodyFlavor::V4)).unwrap();
        let wrapper = &b.topic_config_serialize_wrapper;
        let back = &v4.topic_config_serialize_wrapper;
        // 4.x has no stateVersion.
        prop_assert_eq!(back.data_version, DataVersion { state_version: 0, ..wrapper.data_version });
        prop_assert!(back.topic_queue_mapping_info_map.is_empty());
        prop_assert_eq!(back.topic_config_table.len(), wrapper.topic_config_table.len());
    }

    #[test]
    fn register_body_round_trips_compressed(b in compressible_body()) {
        let bytes = b.to_compressed(BodyFlavor::V5);
        prop_assert_eq!(&RegisterBrokerBody::from_compressed(&bytes, 479).unwrap(), &b);
        let v4 = RegisterBrokerBody::from_compressed(&b.to_compressed(BodyFlavor::V4), 401).unwrap();
        let wrapper = &v4.topic_config_serialize_wrapper;
        prop_assert!(wrapper.topic_queue_mapping_info_map.is_empty());
        let sent = b.topic_config_serialize_wrapper.data_version;
        prop_assert_eq!(wrapper.data_version, DataVersion { state_version: 0, ..sent });
        prop_assert_eq!(
            wrapper.topic_config_table.keys().collect::<Vec<_>>(),
            b.topic_config_serialize_wrapper.topic_config_table.keys().collect::<Vec<_>>()
        );
    }

    #[test]
    fn cluster_info_round_trips(
        brokers in btree_map(key(), broker_data(), 0..3),
        clusters in btree_map(key(), btree_set(text(), 0..3), 0..3),
    ) {
        both_dialects(&ClusterInfo { broker_addr_table: brokers, cluster_addr_table: clusters })?;
    }

    #[test]
    fn small_bodies_round_trip(
        addr in proptest::option::of(text()),
        topics in vec(text(), 0..4),
        table in btree_map(key(), text(), 0..4),
        store in btree_map(key(), btree_map(key(), text(), 0..3), 0..3),
        addrs in btree_map(any::<i64>(), text(), 0..3),
        name in text(),
        cluster in text(),
    ) {
        both_dialects(&TopicList { broker_addr: addr, topic_list: topics })?;
        both_dialects(&KvTable { table })?;
        both_dialects(&KvConfigSerializeWrapper { config_table: store })?;
        both_dialects(&GetBrokerMemberGroupResponseBody {
            broker_member_group: BrokerMemberGroup { broker_addrs: addrs, broker_name: name, cluster },
        })?;
    }

    #[test]
    fn properties_render_then_parse(
        map in btree_map("[A-Za-z0-9_.;/-]{1,12}", "[^\\\\\r\n \t\u{c}][^\\\\\r\n]{0,12}|", 0..6),
    ) {
        let text = properties::render(map.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        prop_assert_eq!(properties::parse(&text).unwrap(), map);
    }

    #[test]
    fn properties_parser_never_panics(text in "(?s).{0,64}") {
        let _ = properties::parse(&text);
    }

    #[test]
    fn json_decoders_never_panic(bytes in vec(any::<u8>(), 0..256)) {
        let _ = RegisterBrokerBody::from_json(&bytes);
        let _ = TopicRouteData::from_json(&bytes);
        let _ = RegisterBrokerBody::decode_request(Some(&bytes), false, 10);
    }

    #[test]
    fn json_decoders_never_panic_on_jsonish_text(s in "[\\[\\]{}:,\"0-9a-z$\\\\ -]{0,64}") {
        let _ = RegisterBrokerBody::from_json(s.as_bytes());
        let _ = TopicRouteData::from_json(s.as_bytes());
        let _ = ClusterInfo::from_json(s.as_bytes());
    }

    #[test]
    fn compressed_decoder_never_panics(bytes in vec(any::<u8>(), 0..256), version in any::<i32>()) {
        let _ = RegisterBrokerBody::from_compressed(&bytes, version);
        // Valid zlib around arbitrary content reaches the section parser.
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(&bytes).unwrap();
        let _ = RegisterBrokerBody::from_compressed(&encoder.finish().unwrap(), version);
    }

    #[test]
    fn compressed_decoder_never_panics_on_plausible_sections(
        lens in vec(prop_oneof![Just(-1i32), 0i32..64, Just(i32::MAX)], 1..6),
        payload in vec(any::<u8>(), 0..128),
    ) {
        let mut raw = Vec::new();
        for len in lens {
            raw.extend_from_slice(&len.to_be_bytes());
            raw.extend_from_slice(&payload[..payload.len().min(len.max(0) as usize)]);
        }
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(&raw).unwrap();
        let _ = RegisterBrokerBody::from_compressed(&encoder.finish().unwrap(), 479);
    }
}

#[test]
fn strategies_cover_the_interesting_shapes() {
    // A fixed sample that the generic round trip must also pass: negative
    // integer keys, an empty key, escapes in keys.
    let mut route = TopicRouteData::default();
    route.broker_datas.push(BrokerData {
        broker_addrs: [(i64::MIN, "\u{2028}".to_string()), (-1, "/".to_string())].into(),
        ..BrokerData::default()
    });
    route.filter_server_table = [
        ("".to_string(), vec!["\"".to_string()]),
        ("é\n".to_string(), vec![]),
    ]
    .into();
    both_dialects(&route).unwrap();
    let set: BTreeSet<String> = ["a".to_string()].into();
    both_dialects(&ClusterInfo {
        cluster_addr_table: [("c".to_string(), set)].into(),
        ..Default::default()
    })
    .unwrap();
}
