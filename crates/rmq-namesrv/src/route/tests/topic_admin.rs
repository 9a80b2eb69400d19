//! Topic administration and lists: write-perm edits, DELETE_TOPIC /
//! REGISTER_TOPIC semantics, topics by cluster, the unit lists and the system
//! topic list.

use rmq_protocol::QueueData;

use super::*;
use crate::route::{TopicQueue, UnitSelect};

const C: &str = "DefaultCluster";

fn queue(broker_name: &str, perm: i32) -> QueueData {
    QueueData {
        broker_name: broker_name.into(),
        perm,
        read_queue_nums: 4,
        topic_sys_flag: 0,
        write_queue_nums: 4,
    }
}

fn two_clusters() -> SharedRoutes {
    let routes = SharedRoutes::new();
    register(
        &routes,
        broker(C, "broker-a", "127.0.0.1:10911", 0).topics(&[topic("Shared"), topic("A")]),
    );
    register(
        &routes,
        broker("C2", "broker-b", "127.0.0.2:10911", 0).topics(&[topic("Shared"), topic("B")]),
    );
    routes
}

#[test]
fn add_write_perm_overwrites_other_bits_and_wipe_counts_cleared_ones() {
    let routes = SharedRoutes::new();
    register(
        &routes,
        broker(C, "broker-a", "127.0.0.1:10911", 0)
            .topics(&[topic_with("t1", 1, 1, 15), topic_with("t2", 1, 1, 4)]),
    );
    assert_eq!(routes.write().wipe_write_perm("broker-a"), 2);
    assert_eq!(
        routes.read().queue_datas("t1").unwrap()["broker-a"].perm,
        13
    );
    assert_eq!(routes.read().queue_datas("t2").unwrap()["broker-a"].perm, 4);
    assert_eq!(routes.write().add_write_perm("broker-a"), 2);
    assert_eq!(routes.read().queue_datas("t1").unwrap()["broker-a"].perm, 6);
    assert_eq!(routes.write().wipe_write_perm("nobody"), 0);
    assert_eq!(routes.write().add_write_perm("nobody"), 0);
}

#[test]
fn delete_topic_per_cluster_rules() {
    let routes = two_clusters();
    routes.write().delete_topic("Shared", Some("NoSuchCluster"));
    assert_eq!(
        routes.read().queue_datas("Shared").unwrap().len(),
        2,
        "unknown cluster: nothing"
    );
    routes.write().delete_topic("Shared", Some(C));
    assert_eq!(
        routes
            .read()
            .queue_datas("Shared")
            .unwrap()
            .keys()
            .map(|name| &**name)
            .collect::<Vec<_>>(),
        ["broker-b"]
    );
    routes.write().delete_topic("B", Some("C2"));
    assert!(
        routes.read().queue_datas("B").is_none(),
        "no queue data left: topic removed"
    );
    routes.write().delete_topic("A", Some(""));
    assert!(
        routes.read().queue_datas("A").is_none(),
        "empty cluster name deletes everywhere"
    );
    routes.write().delete_topic("Missing", None);
    routes.write().delete_topic("Missing", Some(C));
}

#[test]
fn register_topic_for_a_new_topic_is_all_or_nothing() {
    let routes = two_clusters();
    assert!(!routes.write().register_topic("New", Vec::new()));
    assert!(!routes
        .write()
        .register_topic("New", vec![queue("broker-a", 6), queue("ghost", 6)]));
    assert!(routes.read().queue_datas("New").is_none());
    assert!(routes
        .write()
        .register_topic("New", vec![queue("broker-a", 6), queue("broker-b", 4)]));
    assert_eq!(routes.read().queue_datas("New").unwrap().len(), 2);
}

#[test]
fn register_topic_for_an_existing_topic_stops_at_the_first_unknown_broker() {
    let routes = two_clusters();
    assert!(routes.write().register_topic(
        "A",
        vec![
            queue("broker-b", 2),
            queue("ghost", 6),
            queue("broker-a", 2)
        ]
    ));
    let queues = routes.read().queue_datas("A").unwrap().clone();
    assert_eq!(
        queues["broker-b"].perm, 2,
        "applied before the unknown broker"
    );
    assert_eq!(queues["broker-a"].perm, 6, "after it: not applied");
    assert!(!queues.contains_key("ghost"));
    assert!(!routes.write().register_topic("A", vec![queue("ghost", 6)]));
}

#[test]
fn topics_by_cluster() {
    let routes = two_clusters();
    assert_eq!(routes.read().topics_of_cluster(C), ["A", "Shared"]);
    assert_eq!(routes.read().topics_of_cluster("C2"), ["B", "Shared"]);
    assert!(routes.read().topics_of_cluster("nope").is_empty());
}

#[test]
fn unit_lists_select_by_the_first_queue_datas_flag() {
    let routes = SharedRoutes::new();
    let flagged = |name: &str, flag| TopicConfig {
        topic_sys_flag: flag,
        ..topic(name)
    };
    register(
        &routes,
        broker(C, "broker-a", "127.0.0.1:10911", 0).topics(&[
            flagged("plain", 0),
            flagged("unit", 1),
            flagged("sub", 2),
            flagged("both", 3),
        ]),
    );
    assert_eq!(
        routes.read().unit_topics(UnitSelect::Unit),
        ["both", "unit"]
    );
    assert_eq!(
        routes.read().unit_topics(UnitSelect::HasUnitSub),
        ["both", "sub"]
    );
    assert_eq!(
        routes.read().unit_topics(UnitSelect::HasUnitSubNotUnit),
        ["sub"]
    );
}

#[test]
fn system_topic_list_is_cluster_and_broker_names_plus_one_address() {
    assert_eq!(RouteTable::new().system_topics(), (Vec::new(), None));
    let routes = two_clusters();
    let (names, addr) = routes.read().system_topics();
    assert_eq!(names, ["C2", C, "broker-a", "broker-b"]);
    assert_eq!(addr.as_deref(), Some("127.0.0.1:10911"));
}

#[test]
fn system_topic_address_skips_groups_without_members() {
    let routes = SharedRoutes::new();
    // A failed single-topic registration leaves an empty group behind.
    let _ = try_register(
        &routes,
        broker(C, "aaa", "127.0.0.9:1", 0).topics(&[topic("x")]),
    );
    register(&routes, broker(C, "bbb", "127.0.0.2:10911", 1));
    assert_eq!(
        routes.read().system_topics().1.as_deref(),
        Some("127.0.0.2:10911")
    );
}

#[test]
fn route_needs_a_broker_group_for_its_queue_data() {
    let routes = two_clusters();
    routes
        .write()
        .topics
        .edit()
        .entry("Orphan".into())
        .or_default()
        .insert("ghost".into(), TopicQueue::of(&queue("ghost", 6)));
    assert!(route(&routes.read(), "Orphan", false).is_none());
    routes
        .write()
        .topics
        .edit()
        .get_mut("Orphan")
        .unwrap()
        .insert("broker-a".into(), TopicQueue::of(&queue("broker-a", 6)));
    let r = route(&routes.read(), "Orphan", false).unwrap();
    assert_eq!(r.broker_datas.len(), 1);
    assert_eq!(
        r.queue_datas.len(),
        2,
        "queue data of a missing group stays"
    );
}
