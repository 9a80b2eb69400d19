//! Java `RouteInfoManagerTest`, `RouteInfoManagerBrokerPermTest`,
//! `RouteInfoManagerBrokerRegisterTest` and `RouteInfoManagerStaticRegisterTest`:
//! the same observable results.

use std::collections::BTreeMap;

use rmq_protocol::{Dialect, JavaJson, QueueData, TopicList};

use super::*;
use crate::route::UnitSelect;

const CLUSTER: &str = "default-cluster";
const NAME: &str = "default-broker";
const ADDR: &str = "127.0.0.1:10911";

/// RouteInfoManagerTest's set-up: a 4.x-style slave id 1234 with topics
/// unit-test0/1 and DataVersion {counter 10, timestamp 100}.
fn route_info_manager() -> SharedRoutes {
    let routes = SharedRoutes::new();
    let reg = broker(CLUSTER, NAME, ADDR, 1234)
        .acting(None)
        .ha("127.0.0.1:1001")
        .version(10, 100)
        .topics(&[topic("unit-test0"), topic("unit-test1")]);
    let outcome = register(&routes, reg);
    assert_eq!(outcome.master_addr, None);
    routes
}

#[test]
fn lists_encode_to_bytes() {
    let routes = route_info_manager();
    assert!(!routes
        .read()
        .cluster_info()
        .to_json(Dialect::Default)
        .is_empty());
    let (system, addr) = routes.read().system_topics();
    assert!(!TopicList {
        broker_addr: addr,
        topic_list: system
    }
    .to_json(Dialect::Default)
    .is_empty());
    for list in [
        routes.read().all_topics(),
        routes.read().topics_of_cluster(CLUSTER),
        routes.read().unit_topics(UnitSelect::Unit),
        routes.read().unit_topics(UnitSelect::HasUnitSub),
        routes.read().unit_topics(UnitSelect::HasUnitSubNotUnit),
    ] {
        assert!(!TopicList::new(list).to_json(Dialect::Default).is_empty());
    }
}

#[test]
fn data_version_is_stored_per_cluster_and_address() {
    let routes = route_info_manager();
    let first = BrokerKey::new(CLUSTER, ADDR);
    assert_eq!(
        routes.read().live_broker(&first).unwrap().data_version,
        DataVersion::new(10, 0, 100)
    );

    let second = BrokerKey::new("default-cluster-1", ADDR);
    register(
        &routes,
        broker("default-cluster-1", NAME, ADDR, 1234)
            .acting(None)
            .version(20, 200),
    );
    assert_eq!(
        routes.read().live_broker(&first).unwrap().data_version,
        DataVersion::new(10, 0, 100)
    );
    assert_eq!(
        routes.read().live_broker(&second).unwrap().data_version,
        DataVersion::new(20, 0, 200)
    );

    unregister(&routes, "default-cluster-1", ADDR, NAME, 1234);
    assert!(routes.read().live_broker(&second).is_none());
    assert!(routes.read().live_broker(&first).is_some());
}

fn inject_queue(table: &mut RouteTable, topic: &str, broker_name: &str, perm: i32) {
    table
        .topics
        .edit()
        .entry(topic.to_owned())
        .or_default()
        .insert(
            broker_name.into(),
            crate::route::TopicQueue::of(&QueueData {
                broker_name: broker_name.to_owned(),
                perm,
                ..QueueData::default()
            }),
        );
}

#[test]
fn wipe_and_add_write_perm_count_and_change_the_queue_data() {
    let routes = route_info_manager();
    inject_queue(&mut routes.write(), "topic-a", "broker-a", 6);
    assert_eq!(routes.write().wipe_write_perm("broker-a"), 1);
    assert_eq!(
        routes.read().queue_datas("topic-a").unwrap()["broker-a"].perm,
        4
    );
    assert_eq!(routes.write().add_write_perm("broker-a"), 1);
    assert_eq!(
        routes.read().queue_datas("topic-a").unwrap()["broker-a"].perm,
        6
    );
}

#[test]
fn unknown_topic_has_no_route() {
    assert!(route(&route_info_manager().read(), "unit_test", false).is_none());
}

/// The three-group set-up of the BrokerPerm/BrokerRegister/StaticRegister
/// tests: groups broker-0..2 of one cluster, members with ids 0, 1, 2, ten
/// topics registered by every member.
fn three_groups() -> (SharedRoutes, Vec<TopicConfig>) {
    let topics: Vec<TopicConfig> = (0..10)
        .map(|i| TopicConfig {
            topic_sys_flag: i % 3,
            ..topic_with(&format!("topic-{i}"), 4 + i, 8 + i, 6)
        })
        .collect();
    let routes = SharedRoutes::new();
    for group in 0..3 {
        for id in 0..3 {
            let addr = format!("127.0.{group}.{id}:10911");
            register(
                &routes,
                broker("cluster", &format!("broker-{group}"), &addr, id).topics(&topics),
            );
        }
    }
    (routes, topics)
}

#[test]
fn broker_perm_test_add_on_read_only_and_wipe_on_read_only() {
    let (routes, _) = three_groups();
    inject_queue(&mut routes.write(), "perm-topic", "broker-x", 4);
    assert_eq!(routes.write().add_write_perm("broker-x"), 1);
    assert_eq!(
        routes.read().queue_datas("perm-topic").unwrap()["broker-x"].perm,
        6
    );

    inject_queue(&mut routes.write(), "perm-topic", "broker-x", 4);
    assert_eq!(
        routes.write().wipe_write_perm("broker-x"),
        1,
        "counted though already clear"
    );
    assert_eq!(
        routes.read().queue_datas("perm-topic").unwrap()["broker-x"].perm,
        4
    );
}

#[test]
fn broker_register_test_address_moves_to_master_and_unregister_removes_it() {
    let (routes, topics) = three_groups();
    // The former id-1 address registers as id 0.
    register(
        &routes,
        broker("cluster", "broker-0", "127.0.0.1:10911", 0)
            .topics(&topics)
            .version(2, 200),
    );
    let r = route(&routes.read(), "topic-0", false).unwrap();
    assert_eq!(
        addrs_of(&r, "broker-0"),
        ids(&[(0, "127.0.0.1:10911"), (2, "127.0.0.2:10911")])
    );

    unregister(&routes, "cluster", "127.0.0.2:10911", "broker-0", 2);
    let r = route(&routes.read(), "topic-0", false).unwrap();
    assert_eq!(addrs_of(&r, "broker-0"), ids(&[(0, "127.0.0.1:10911")]));
}

#[test]
fn static_register_test_tables_and_routes() {
    let (routes, topics) = three_groups();
    let info = routes.read().cluster_info();
    assert_eq!(info.cluster_addr_table.len(), 1);
    assert_eq!(
        info.cluster_addr_table["cluster"],
        ["broker-0", "broker-1", "broker-2"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    let names: Vec<String> = topics.iter().map(|t| t.topic_name.clone()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(routes.read().all_topics(), sorted);
    assert_eq!(routes.read().topics_of_cluster("cluster"), sorted);

    for tc in &topics {
        let mut r = route(&routes.read(), &tc.topic_name, false).unwrap();
        r.broker_datas
            .sort_by(|a, b| a.broker_name.cmp(&b.broker_name));
        assert_eq!(r.broker_datas.len(), 3);
        for (group, data) in r.broker_datas.iter().enumerate() {
            assert_eq!(data.broker_name, format!("broker-{group}"));
            assert_eq!(data.cluster, "cluster");
            let expected: BTreeMap<i64, String> = (0..3)
                .map(|id| (id, format!("127.0.{group}.{id}:10911")))
                .collect();
            assert_eq!(data.broker_addrs, expected);
        }
        assert_eq!(r.queue_datas.len(), 3);
        for q in &r.queue_datas {
            assert_eq!(
                (
                    q.write_queue_nums,
                    q.read_queue_nums,
                    q.perm,
                    q.topic_sys_flag
                ),
                (
                    tc.write_queue_nums,
                    tc.read_queue_nums,
                    tc.perm,
                    tc.topic_sys_flag
                )
            );
        }
    }

    routes.write().delete_topic("topic-0", None);
    assert!(route(&routes.read(), "topic-0", false).is_none());
    assert_eq!(routes.read().all_topics().len(), 9);
}
