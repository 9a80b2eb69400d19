//! The route of a topic: `TopicRouteData` and its parts.
//!
//! The GET_ROUTEINFO_BY_TOPIC response body, also the REGISTER_TOPIC request
//! body. `BrokerData` doubles as the entry of `ClusterInfo.brokerAddrTable`.
//! Which dialect a response uses is [`crate::version::route_dialect`]'s call.

use std::collections::BTreeMap;

use rmq_wire::{lenient, lenient_bean};
use serde::{Deserialize, Serialize};

use crate::java_json::JavaJson;

/// Java `MixAll.METADATA_SCOPE_GLOBAL`, the default mapping scope.
pub const METADATA_SCOPE_GLOBAL: &str = "__global__";

/// The route of one topic.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopicRouteData {
    /// One entry per broker group holding the topic.
    #[serde(deserialize_with = "lenient::value")]
    pub broker_datas: Vec<BrokerData>,
    /// Broker address → filter-server addresses; always written, usually `{}`.
    #[serde(deserialize_with = "lenient::value")]
    pub filter_server_table: BTreeMap<String, Vec<String>>,
    /// Order configuration (`broker-a:4;broker-b:4`), only when set.
    #[serde(
        deserialize_with = "lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub order_topic_conf: Option<String>,
    /// One entry per broker group holding the topic.
    #[serde(deserialize_with = "lenient::value")]
    pub queue_datas: Vec<QueueData>,
    /// Broker name → static-topic mapping, only for static topics.
    #[serde(
        deserialize_with = "lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub topic_queue_mapping_by_broker: Option<BTreeMap<String, TopicQueueMappingInfo>>,
}

/// One broker group: its name, cluster and member addresses by broker id.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BrokerData {
    /// Broker id (0 = master) → `ip:port`. Written `{0:"…"}` in the default
    /// dialect.
    #[serde(deserialize_with = "lenient::value")]
    pub broker_addrs: BTreeMap<i64, String>,
    /// The group's name.
    #[serde(deserialize_with = "lenient::value")]
    pub broker_name: String,
    /// The cluster the group was first registered in.
    #[serde(deserialize_with = "lenient::value")]
    pub cluster: String,
    /// Whether the group lets a slave act as master (5.x brokers).
    #[serde(deserialize_with = "lenient::value")]
    pub enable_acting_master: bool,
    /// The group's zone (`__ZONE_NAME` of its last registration), if any.
    #[serde(
        deserialize_with = "lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub zone_name: Option<String>,
}

/// The queues one broker group serves for a topic.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct QueueData {
    /// The broker group.
    #[serde(deserialize_with = "lenient::value")]
    pub broker_name: String,
    /// Permission bits: 8 priority, 4 read, 2 write, 1 inherit.
    #[serde(deserialize_with = "lenient::value")]
    pub perm: i32,
    /// Readable queues.
    #[serde(deserialize_with = "lenient::value")]
    pub read_queue_nums: i32,
    /// Topic sys flags: 1 unit, 2 unit-sub.
    #[serde(deserialize_with = "lenient::value")]
    pub topic_sys_flag: i32,
    /// Writable queues.
    #[serde(deserialize_with = "lenient::value")]
    pub write_queue_nums: i32,
}

/// Static-topic mapping of one topic on one broker (Java
/// `TopicQueueMappingInfo`). Sent by brokers in registrations, returned in
/// routes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopicQueueMappingInfo {
    /// The broker hosting the queues.
    #[serde(deserialize_with = "lenient::value")]
    pub bname: String,
    /// Logical queue id → physical queue id. Written `{0:0}` in the default
    /// dialect, and brokers send it that way.
    #[serde(deserialize_with = "lenient::value")]
    pub curr_id_map: BTreeMap<i32, i32>,
    /// Whether the mapping is stale.
    #[serde(deserialize_with = "lenient::value")]
    pub dirty: bool,
    /// Fences old data.
    #[serde(deserialize_with = "lenient::value")]
    pub epoch: i64,
    /// Mapping scope, default [`METADATA_SCOPE_GLOBAL`].
    #[serde(deserialize_with = "scope")]
    pub scope: String,
    /// The topic (redundant with the key it is stored under).
    #[serde(deserialize_with = "lenient::value")]
    pub topic: String,
    /// Logical queue count.
    #[serde(deserialize_with = "lenient::value")]
    pub total_queues: i32,
}

impl Default for TopicQueueMappingInfo {
    fn default() -> Self {
        TopicQueueMappingInfo {
            bname: String::new(),
            curr_id_map: BTreeMap::new(),
            dirty: false,
            epoch: 0,
            scope: METADATA_SCOPE_GLOBAL.to_owned(),
            topic: String::new(),
            total_queues: 0,
        }
    }
}

fn scope<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(lenient::opt(d)?.unwrap_or_else(|| METADATA_SCOPE_GLOBAL.to_owned()))
}

impl JavaJson for TopicRouteData {}
impl JavaJson for TopicQueueMappingInfo {}
lenient_bean!(BrokerData, QueueData, TopicQueueMappingInfo);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::java_json::Dialect;

    fn broker(addrs: &[(i64, &str)], zone: Option<&str>) -> BrokerData {
        BrokerData {
            broker_addrs: addrs.iter().map(|(id, a)| (*id, a.to_string())).collect(),
            broker_name: "broker-a".into(),
            cluster: "DefaultCluster".into(),
            enable_acting_master: false,
            zone_name: zone.map(Into::into),
        }
    }

    fn queue() -> QueueData {
        QueueData {
            broker_name: "broker-a".into(),
            perm: 6,
            read_queue_nums: 4,
            topic_sys_flag: 0,
            write_queue_nums: 4,
        }
    }

    fn simple() -> TopicRouteData {
        TopicRouteData {
            broker_datas: vec![broker(&[(0, "127.0.0.1:10911")], None)],
            queue_datas: vec![queue()],
            ..TopicRouteData::default()
        }
    }

    fn rich() -> TopicRouteData {
        let info = TopicQueueMappingInfo {
            bname: "broker-a".into(),
            curr_id_map: [(0, 0), (1, 1)].into(),
            epoch: 1,
            topic: "StaticTopic".into(),
            total_queues: 4,
            ..TopicQueueMappingInfo::default()
        };
        TopicRouteData {
            broker_datas: vec![broker(
                &[(0, "127.0.0.1:10911"), (1, "127.0.0.1:10921")],
                Some("zone-1"),
            )],
            order_topic_conf: Some("broker-a:4".into()),
            queue_datas: vec![queue()],
            topic_queue_mapping_by_broker: Some([("broker-a".to_string(), info)].into()),
            ..TopicRouteData::default()
        }
    }

    const SIMPLE_DEFAULT: &str = r#"{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#;
    const SIMPLE_STANDARD: &str = r#"{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#;
    const RICH_DEFAULT: &str = r#"{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10921"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false,"zoneName":"zone-1"}],"filterServerTable":{},"orderTopicConf":"broker-a:4","queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}],"topicQueueMappingByBroker":{"broker-a":{"bname":"broker-a","currIdMap":{0:0,1:1},"dirty":false,"epoch":1,"scope":"__global__","topic":"StaticTopic","totalQueues":4}}}"#;
    const RICH_STANDARD: &str = r#"{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:10911","1":"127.0.0.1:10921"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false,"zoneName":"zone-1"}],"filterServerTable":{},"orderTopicConf":"broker-a:4","queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}],"topicQueueMappingByBroker":{"broker-a":{"bname":"broker-a","currIdMap":{"0":0,"1":1},"dirty":false,"epoch":1,"scope":"__global__","topic":"StaticTopic","totalQueues":4}}}"#;

    #[test]
    fn a_simple_and_a_rich_route_in_both_dialects() {
        for (route, default, standard) in [
            (simple(), SIMPLE_DEFAULT, SIMPLE_STANDARD),
            (rich(), RICH_DEFAULT, RICH_STANDARD),
        ] {
            assert_eq!(
                String::from_utf8(route.to_json(Dialect::Default)).unwrap(),
                default
            );
            assert_eq!(
                String::from_utf8(route.to_json(Dialect::Standard)).unwrap(),
                standard
            );
            assert_eq!(
                TopicRouteData::from_json(default.as_bytes()).unwrap(),
                route
            );
            assert_eq!(
                TopicRouteData::from_json(standard.as_bytes()).unwrap(),
                route
            );
        }
        assert_eq!(SIMPLE_DEFAULT.len(), 260);
        assert_eq!(SIMPLE_STANDARD.len(), 262);
    }

    #[test]
    fn standard_dialect_sorts_integer_keys_numerically() {
        let mut route = simple();
        route.broker_datas[0].broker_addrs = [(10, "c"), (-1, "a"), (2, "b")]
            .into_iter()
            .map(|(k, v)| (k, v.to_string()))
            .collect();
        let text = String::from_utf8(route.to_json(Dialect::Standard)).unwrap();
        assert!(text.contains(r#"{"-1":"a","2":"b","10":"c"}"#), "{text}");
        let text = String::from_utf8(route.to_json(Dialect::Default)).unwrap();
        assert!(text.contains(r#"{-1:"a",2:"b",10:"c"}"#), "{text}");
    }

    #[test]
    fn register_topic_body_as_a_5x_broker_sends_it() {
        let body = br#"{"brokerDatas":[],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":8}]}"#;
        let route = TopicRouteData::from_json(body).unwrap();
        assert_eq!(route.queue_datas[0].read_queue_nums, 8);
        assert_eq!(route.to_json(Dialect::Default), body);
    }

    #[test]
    fn tolerates_java_leniency() {
        let body = br#"{"brokerDatas":[{"brokerAddrs":{"0":"a",1:"b"},"brokerName":"x","enableActingMaster":"true","unknown":{}}],
            "filterServerTable":{"a":null,"b":["f"]},"queueDatas":[{"$ref":"$.queueDatas[0]"},{"perm":"6","readQueueNums":4.0}],
            "topicQueueMappingByBroker":{"$ref":"$.x"},"orderTopicConf":null}"#;
        let route = TopicRouteData::from_json(body).unwrap();
        assert_eq!(route.broker_datas[0].broker_addrs.len(), 2);
        assert!(route.broker_datas[0].enable_acting_master);
        assert_eq!(
            route.filter_server_table,
            [("b".to_string(), vec!["f".to_string()])].into()
        );
        assert_eq!(route.queue_datas[0], QueueData::default());
        assert_eq!(
            (
                route.queue_datas[1].perm,
                route.queue_datas[1].read_queue_nums
            ),
            (6, 4)
        );
        assert_eq!(route.topic_queue_mapping_by_broker, Some(BTreeMap::new()));
        assert_eq!(route.order_topic_conf, None);
        assert!(
            TopicRouteData::from_json(br#"{"brokerDatas":[{"brokerAddrs":{x:"a"}}]}"#).is_err()
        );
    }

    #[test]
    fn mapping_info_defaults_scope() {
        let info =
            TopicQueueMappingInfo::from_json(br#"{"topic":"t","currIdMap":{0:"1"}}"#).unwrap();
        assert_eq!(info.scope, METADATA_SCOPE_GLOBAL);
        assert_eq!(info.curr_id_map, [(0, 1)].into());
        let info = TopicQueueMappingInfo::from_json(br#"{"scope":null}"#).unwrap();
        assert_eq!(info.scope, METADATA_SCOPE_GLOBAL);
    }
}
