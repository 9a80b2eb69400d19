use rmq_protocol::{JavaJson, TopicQueueMappingInfo};
use rmq_wire::ExtFields;

use super::*;
use crate::topics::numbered_topics;

const TS: i64 = 1_700_000_000_000;

fn identity() -> Identity {
    Identity {
        cluster_name: "DefaultCluster".into(),
        broker_name: "broker-a".into(),
        broker_addr: "127.0.0.1:10911".into(),
        ha_server_addr: "127.0.0.1:10912".into(),
        broker_id: 0,
    }
}

fn config() -> BrokerConfig {
    BrokerConfig::new("DefaultCluster", "broker-a", "127.0.0.1:10911")
}

fn one_topic_table() -> TopicTable {
    let mut table = TopicTable::with_topics(numbered_topics("TopicTest", 1, 4), TS);
    // numbered_topics names it TopicTest0; the Java body names it TopicTest.
    table.remove("TopicTest0", TS);
    let topic = TopicConfig {
        read_queue_nums: 4,
        write_queue_nums: 4,
        ..TopicConfig::new("TopicTest")
    };
    table.upsert(topic, TS);
    assert_eq!(table.data_version(), DataVersion::new(2, 0, TS));
    table.bump(TS);
    table
}

fn options(config: &BrokerConfig) -> BodyOptions {
    BodyOptions::from_config(config, config.broker_permission)
}

fn ext(command: &RemotingCommand) -> ExtFields {
    command.ext_fields.clone().unwrap()
}

#[test]
fn register_broker_as_a_5x_broker_sends_it() {
    let config = config();
    let bodies = full_bodies(&one_topic_table(), &options(&config), TS);
    assert_eq!(bodies.len(), 1);
    let body = &bodies[0];
    let expected = br#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1700000000000},"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":{"TopicTest":{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}},"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}}"#;
    assert_eq!(&body.bytes[..], &expected[..]);
    assert_eq!(body.bytes.len(), 449);
    assert_eq!(body.crc32, 1_779_474_218);

    let command = register_request(&identity(), &config, body);
    assert_eq!(command.code, 103);
    assert_eq!(command.version, 479);
    let expected: ExtFields = [
        ("brokerId", "0"),
        ("bodyCrc32", "1779474218"),
        ("clusterName", "DefaultCluster"),
        ("brokerAddr", "127.0.0.1:10911"),
        ("enableActingMaster", "false"),
        ("haServerAddr", "127.0.0.1:10912"),
        ("compressed", "false"),
        ("brokerName", "broker-a"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(ext(&command), expected);
}

#[test]
fn acting_master_and_zone_keys() {
    let mut config = config();
    config.enable_slave_acting_master = true;
    config.zone_name = Some("zone-a".into());
    config.zone_mode = Some("true".into());
    let body = &full_bodies(&one_topic_table(), &options(&config), TS)[0];
    let ext = ext(&register_request(&identity(), &config, body));
    assert_eq!(ext["enableActingMaster"], "true");
    assert_eq!(ext["heartbeatTimeoutMillis"], "10000");
    assert_eq!(ext["__ZONE_NAME"], "zone-a");
    assert_eq!(ext["__ZONE_MODE"], "true");
}

#[test]
fn v4_flavour_header_and_body() {
    let mut config = config();
    config.flavor = Flavor::V4;
    let body = &full_bodies(&one_topic_table(), &options(&config), TS)[0];
    let text = std::str::from_utf8(&body.bytes).unwrap();
    assert!(
        !text.contains("attributes") && !text.contains("mapping"),
        "{text}"
    );
    let command = register_request(&identity(), &config, body);
    assert_eq!(command.version, 407);
    let ext = ext(&command);
    assert!(!ext.contains_key("enableActingMaster"));
    assert!(!ext.contains_key("heartbeatTimeoutMillis"));
    assert_eq!(ext["compressed"], "false");
    let decoded = RegisterBrokerBody::decode_request(Some(&body.bytes), false, 407).unwrap();
    assert_eq!(
        decoded
            .topic_config_serialize_wrapper
            .topic_config_table
            .len(),
        1
    );

    config.compressed_register = true;
    let body = &full_bodies(&one_topic_table(), &options(&config), TS)[0];
    assert_eq!(ext_of(&config, body)["compressed"], "true");
    let decoded = RegisterBrokerBody::decode_request(Some(&body.bytes), true, 407).unwrap();
    let wrapper = decoded.topic_config_serialize_wrapper;
    assert_eq!(wrapper.data_version, DataVersion::new(3, 0, TS));
    assert_eq!(wrapper.topic_config_table["TopicTest"].read_queue_nums, 4);
}

fn ext_of(config: &BrokerConfig, body: &EncodedBody) -> ExtFields {
    ext(&register_request(&identity(), config, body))
}

#[test]
fn compressed_v5_is_honest_and_decodes() {
    let mut config = config();
    config.compressed_register = true;
    let table = TopicTable::with_topics(numbered_topics("t", 50, 8), TS);
    let body = &full_bodies(&table, &options(&config), TS)[0];
    assert!(body.compressed);
    assert_eq!(&body.bytes[..2], &[0x78, 0xda]);
    let ext = ext_of(&config, body);
    assert_eq!(ext["compressed"], "true");
    assert_eq!(ext["bodyCrc32"], body_crc32(&body.bytes).to_string());
    let decoded = RegisterBrokerBody::decode_request(Some(&body.bytes), true, 479).unwrap();
    assert_eq!(
        decoded.topic_config_serialize_wrapper.topic_config_table,
        *table.topics()
    );
}

#[test]
fn masking_keeps_fields_unless_lossy() {
    let mut config = config();
    let mut topic = TopicConfig {
        topic_sys_flag: 1,
        order: true,
        perm: 7,
        ..TopicConfig::new("t")
    };
    topic
        .attributes
        .insert("+message.type".into(), "FIFO".into());
    let table = TopicTable::with_topics([topic.clone()], TS);
    let decode = |body: &EncodedBody| {
        RegisterBrokerBody::from_json(&body.bytes)
            .unwrap()
            .topic_config_serialize_wrapper
            .topic_config_table["t"]
            .clone()
    };
    let unmasked = decode(&full_bodies(&table, &options(&config), TS)[0]);
    assert_eq!(unmasked, topic);

    let read_only = BodyOptions::from_config(&config, 4);
    let masked = decode(&full_bodies(&table, &read_only, TS)[0]);
    assert_eq!(
        masked,
        TopicConfig {
            perm: 4,
            ..topic.clone()
        }
    );

    config.lossy_perm_masking = true;
    let lossy = BodyOptions::from_config(&config, 2);
    let masked = decode(&full_bodies(&table, &lossy, TS)[0]);
    assert_eq!(
        masked,
        TopicConfig {
            perm: 2,
            ..TopicConfig::new("t")
        }
    );
}

#[test]
fn split_batches_then_remainder_with_mappings() {
    let mut config = config();
    config.enable_split_registration = true;
    let mut table = TopicTable::with_topics(numbered_topics("t", 2_000, 4), TS);
    table.set_mapping(
        TopicQueueMappingInfo {
            topic: "t7".into(),
            bname: "broker-a".into(),
            ..TopicQueueMappingInfo::default()
        },
        TS,
    );
    let bodies = full_bodies(&table, &options(&config), TS);
    let sizes: Vec<_> = bodies.iter().map(|b| b.topics).collect();
    assert_eq!(sizes, [800, 800, 400]);
    let mut seen = std::collections::BTreeSet::new();
    for (i, body) in bodies.iter().enumerate() {
        let wrapper = RegisterBrokerBody::from_json(&body.bytes)
            .unwrap()
            .topic_config_serialize_wrapper;
        assert_eq!(wrapper.data_version, table.data_version());
        assert_eq!(
            wrapper.topic_queue_mapping_info_map.len(),
            usize::from(i == 2)
        );
        seen.extend(wrapper.topic_config_table.into_keys());
    }
    assert_eq!(seen.len(), 2_000);

    let exact = TopicTable::with_topics(numbered_topics("t", 1_600, 4), TS);
    let sizes: Vec<_> = full_bodies(&exact, &options(&config), TS)
        .iter()
        .map(|b| b.topics)
        .collect();
    assert_eq!(sizes, [800, 800, 0]);
}

#[test]
fn increment_has_only_the_named_topics() {
    let config = config();
    let table = TopicTable::with_topics(numbered_topics("t", 10, 4), TS);
    let names = ["t3".to_string(), "nope".to_string()];
    let body = increment_body(&table, &names, &options(&config), TS).unwrap();
    assert_eq!(body.topics, 1);
    assert!(increment_body(&table, &["nope".to_string()], &options(&config), TS).is_none());
}
