//! Logical queues of static topics (Java
//! `ClientMetadata.topicRouteData2EndpointsForStaticTopic`).
//!
//! Owns the mapping from a route's `topicQueueMappingByBroker` to logical
//! queues `MessageQueue(topic, "__syslo__<scope>", globalId)` and the real
//! broker group serving each. It does not rewrite queue ids for the broker
//! (the send path would), nor fetch anything.

use std::collections::BTreeMap;

use rmq_protocol::route::METADATA_SCOPE_GLOBAL;
use rmq_protocol::{TopicQueueMappingInfo, TopicRouteData};

use crate::MessageQueue;

/// Java `MixAll.LOGICAL_QUEUE_MOCK_BROKER_PREFIX`.
pub const LOGICAL_QUEUE_MOCK_BROKER_PREFIX: &str = "__syslo__";
/// Java `MixAll.LOGICAL_QUEUE_MOCK_BROKER_NAME_NOT_EXIST`: the endpoint of a
/// logical queue no mapping covers.
pub const LOGICAL_QUEUE_MOCK_BROKER_NAME_NOT_EXIST: &str = "__syslo__none__";

/// Java `TopicQueueMappingUtils.getMockBrokerName`: `__global__` loses its
/// leading `__` (→ `__syslo__global__`); other scopes are appended as they are.
pub fn mock_broker_name(scope: &str) -> String {
    match scope
        .strip_prefix("__")
        .filter(|_| scope == METADATA_SCOPE_GLOBAL)
    {
        Some(rest) => format!("{LOGICAL_QUEUE_MOCK_BROKER_PREFIX}{rest}"),
        None => format!("{LOGICAL_QUEUE_MOCK_BROKER_PREFIX}{scope}"),
    }
}

/// Logical queue → broker name for a static topic; empty for ordinary routes.
///
/// Per scope: mappings are visited by descending epoch (then broker name, to
/// be deterministic where Java iterates a hash map); for each global id the
/// mapping with the highest epoch wins (a tie goes to the one visited last,
/// as Java's `<=`). Logical queues `0..max(totalQueues)` of the scope are
/// listed; an id no mapping covers points at
/// [`LOGICAL_QUEUE_MOCK_BROKER_NAME_NOT_EXIST`]. The endpoint is the
/// mapping's `bname`.
pub fn static_topic_endpoints(
    topic: &str,
    route: &TopicRouteData,
) -> BTreeMap<MessageQueue, String> {
    let mut out = BTreeMap::new();
    let Some(mappings) = route.topic_queue_mapping_by_broker.as_ref() else {
        return out;
    };
    let mut by_scope: BTreeMap<&str, Vec<&TopicQueueMappingInfo>> = BTreeMap::new();
    for info in mappings.values() {
        by_scope.entry(info.scope.as_str()).or_default().push(info);
    }
    for (scope, mut infos) in by_scope {
        infos.sort_by_key(|info| std::cmp::Reverse(info.epoch));
        let mock = mock_broker_name(scope);
        let mut total = 0;
        let mut winners: BTreeMap<i32, &TopicQueueMappingInfo> = BTreeMap::new();
        for info in infos {
            total = total.max(info.total_queues);
            for &global_id in info.curr_id_map.keys() {
                let entry = winners.entry(global_id).or_insert(info);
                if entry.epoch <= info.epoch {
                    *entry = info;
                }
            }
        }
        for id in 0..total {
            let broker = winners
                .get(&id)
                .map_or(LOGICAL_QUEUE_MOCK_BROKER_NAME_NOT_EXIST, |i| &i.bname);
            out.insert(MessageQueue::new(topic, &*mock, id), broker.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::{publish_view, subscribe_view};

    fn mapping(
        bname: &str,
        scope: &str,
        epoch: i64,
        total: i32,
        ids: &[i32],
    ) -> TopicQueueMappingInfo {
        TopicQueueMappingInfo {
            bname: bname.into(),
            curr_id_map: ids.iter().map(|&i| (i, i)).collect(),
            epoch,
            scope: scope.into(),
            topic: "S".into(),
            total_queues: total,
            ..TopicQueueMappingInfo::default()
        }
    }

    fn route(maps: Vec<(&str, TopicQueueMappingInfo)>) -> TopicRouteData {
        TopicRouteData {
            topic_queue_mapping_by_broker: Some(
                maps.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            ),
            queue_datas: vec![crate::view::tests::queue("broker-a", 8, 8, 6)],
            ..TopicRouteData::default()
        }
    }

    #[test]
    fn mock_names() {
        assert_eq!(mock_broker_name("__global__"), "__syslo__global__");
        assert_eq!(mock_broker_name("__custom"), "__syslo____custom");
        assert_eq!(mock_broker_name("zone1"), "__syslo__zone1");
    }

    #[test]
    fn highest_epoch_wins_and_gaps_point_nowhere() {
        let r = route(vec![
            ("broker-a", mapping("broker-a", "__global__", 1, 4, &[0, 1])),
            ("broker-b", mapping("broker-b", "__global__", 2, 4, &[1, 2])),
        ]);
        let got: Vec<(i32, String)> = static_topic_endpoints("S", &r)
            .into_iter()
            .map(|(mq, b)| {
                assert_eq!(mq.broker_name, "__syslo__global__");
                (mq.queue_id, b)
            })
            .collect();
        assert_eq!(
            got,
            [
                (0, "broker-a".to_string()),
                (1, "broker-b".into()),
                (2, "broker-b".into()),
                (3, LOGICAL_QUEUE_MOCK_BROKER_NAME_NOT_EXIST.into()),
            ]
        );
    }

    #[test]
    fn views_of_a_static_topic_are_its_logical_queues() {
        let r = route(vec![
            ("broker-a", mapping("broker-a", "__global__", 1, 2, &[0])),
            ("broker-z", mapping("broker-z", "zone1", 1, 1, &[0])),
        ]);
        let publish = publish_view("S", &r).unwrap();
        let got: Vec<_> = publish
            .queues
            .iter()
            .map(|q| format!("{}:{}", q.broker_name, q.queue_id))
            .collect();
        assert_eq!(
            got,
            [
                "__syslo__global__:0",
                "__syslo__zone1:0",
                "__syslo__global__:1"
            ]
        );
        assert_eq!(subscribe_view("S", &r).len(), 3);
        // An empty (not absent) order conf is not "none": ordinary view.
        let mut r = r;
        r.order_topic_conf = Some(String::new());
        let publish = publish_view("S", &r).unwrap();
        assert_eq!(publish.queues.len(), 0, "no broker data for broker-a");
        // No mapping at all: nothing.
        assert!(static_topic_endpoints("S", &TopicRouteData::default()).is_empty());
    }
}
