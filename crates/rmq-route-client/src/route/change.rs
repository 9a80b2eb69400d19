//! Whether a fetched route differs from the cached one (Java
//! `TopicRouteData.topicRouteDataChanged` and `MQClientInstance.isNeedUpdateTopicRouteInfo`).
//!
//! Owns the comparison only: queue and broker lists sorted by broker name
//! (stably), then order conf, queue datas (all five fields), broker datas
//! (**name and addresses only**: `cluster`, `zoneName` and
//! `enableActingMaster` are ignored), filter servers and static mappings
//! (absent ≠ empty) compared. What happens on a change is `cache`'s.

use rmq_protocol::{BrokerData, QueueData, TopicRouteData};

use crate::message_queue::java_string_cmp;

/// True if `new` should replace `old` (always when nothing is cached).
pub fn route_changed(new: &TopicRouteData, old: Option<&TopicRouteData>) -> bool {
    let Some(old) = old else {
        return true;
    };
    let same = old.order_topic_conf == new.order_topic_conf
        && sorted_queues(old) == sorted_queues(new)
        && same_brokers(old, new)
        && old.filter_server_table == new.filter_server_table
        && old.topic_queue_mapping_by_broker == new.topic_queue_mapping_by_broker;
    !same
}

fn sorted_queues(route: &TopicRouteData) -> Vec<&QueueData> {
    let mut queues: Vec<&QueueData> = route.queue_datas.iter().collect();
    queues.sort_by(|a, b| java_string_cmp(&a.broker_name, &b.broker_name));
    queues
}

fn sorted_brokers(route: &TopicRouteData) -> Vec<&BrokerData> {
    let mut brokers: Vec<&BrokerData> = route.broker_datas.iter().collect();
    brokers.sort_by(|a, b| java_string_cmp(&a.broker_name, &b.broker_name));
    brokers
}

fn same_brokers(a: &TopicRouteData, b: &TopicRouteData) -> bool {
    let (a, b) = (sorted_brokers(a), sorted_brokers(b));
    a.len() == b.len()
        && a.iter()
            .zip(&b)
            .all(|(x, y)| x.broker_name == y.broker_name && x.broker_addrs == y.broker_addrs)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rmq_protocol::TopicQueueMappingInfo;

    use super::*;
    use crate::view::tests::{broker, queue};

    fn base() -> TopicRouteData {
        TopicRouteData {
            queue_datas: vec![queue("a", 4, 4, 6), queue("b", 4, 4, 6)],
            broker_datas: vec![broker("a", &[0]), broker("b", &[0, 1])],
            ..TopicRouteData::default()
        }
    }

    #[test]
    fn nothing_cached_is_a_change() {
        assert!(route_changed(&base(), None));
        assert!(!route_changed(&base(), Some(&base())));
    }

    #[test]
    fn table_of_edits() {
        type Edit = fn(&mut TopicRouteData);
        // (what, edit, is it a change?)
        let table: &[(&str, Edit, bool)] = &[
            ("reorder queues", |r| r.queue_datas.reverse(), false),
            ("reorder brokers", |r| r.broker_datas.reverse(), false),
            ("perm", |r| r.queue_datas[0].perm = 4, true),
            ("read count", |r| r.queue_datas[1].read_queue_nums = 8, true),
            (
                "write count",
                |r| r.queue_datas[1].write_queue_nums = 2,
                true,
            ),
            ("sys flag", |r| r.queue_datas[0].topic_sys_flag = 1, true),
            (
                "queue data added",
                |r| r.queue_datas.push(queue("c", 1, 1, 6)),
                true,
            ),
            (
                "broker removed",
                |r| {
                    r.broker_datas.pop();
                },
                true,
            ),
            (
                "slave left",
                |r| {
                    r.broker_datas[1].broker_addrs.remove(&1);
                },
                true,
            ),
            (
                "address moved",
                |r| {
                    r.broker_datas[0].broker_addrs.insert(0, "x:1".into());
                },
                true,
            ),
            (
                "cluster only",
                |r| r.broker_datas[0].cluster = "Other".into(),
                false,
            ),
            (
                "zone only",
                |r| r.broker_datas[0].zone_name = Some("z".into()),
                false,
            ),
            (
                "acting master only",
                |r| r.broker_datas[0].enable_acting_master = true,
                false,
            ),
            (
                "order conf",
                |r| r.order_topic_conf = Some("a:4".into()),
                true,
            ),
            (
                "filter servers",
                |r| {
                    r.filter_server_table.insert("a".into(), vec!["f".into()]);
                },
                true,
            ),
            (
                "empty mapping vs none",
                |r| r.topic_queue_mapping_by_broker = Some(BTreeMap::new()),
                true,
            ),
            (
                "mapping",
                |r| {
                    r.topic_queue_mapping_by_broker =
                        Some([("a".to_string(), TopicQueueMappingInfo::default())].into());
                },
                true,
            ),
        ];
        for (what, edit, want) in table {
            let mut new = base();
            edit(&mut new);
            assert_eq!(route_changed(&new, Some(&base())), *want, "{what}");
            assert_eq!(
                route_changed(&base(), Some(&new)),
                *want,
                "{what} (reverse)"
            );
        }
    }

    #[test]
    fn duplicate_broker_names_compare_in_received_order() {
        // A stable sort keeps same-named entries in order, as Java's.
        let mut a = base();
        a.queue_datas = vec![queue("a", 1, 1, 6), queue("a", 2, 2, 6)];
        let mut b = a.clone();
        b.queue_datas.reverse();
        assert!(route_changed(&a, Some(&b)));
    }
}
