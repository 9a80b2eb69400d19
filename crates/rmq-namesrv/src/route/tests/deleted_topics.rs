//! Deleted topics stay deleted: a registration carrying the DataVersion its
//! group's broker had sent when the topic was deleted does not write the
//! topic again; one carrying any other DataVersion does, and clears the mark.

use super::*;
use crate::route::{TOMBSTONES_IN_ALL, TOMBSTONES_PER_GROUP};

const C: &str = "DefaultCluster";
const N: &str = "broker-a";
const A: &str = "127.0.0.1:10911";

/// The master's registration of `topics` and a topic it always has (a
/// member's first registration may not list one topic alone).
fn master(topics: &[&str], counter: i64) -> BrokerRegistration {
    let topics: Vec<TopicConfig> = std::iter::once(&"Base")
        .chain(topics)
        .map(|t| topic(t))
        .collect();
    broker(C, N, A, 0).topics(&topics).version(counter, 0)
}

fn routed(routes: &SharedRoutes, topic: &str, broker_name: &str) -> bool {
    routes
        .read()
        .queue_datas(topic)
        .is_some_and(|queues| queues.contains_key(broker_name))
}

#[test]
fn a_registration_with_the_deletions_data_version_does_not_bring_the_topic_back() {
    let routes = SharedRoutes::new();
    register(&routes, master(&["Kept", "Gone"], 1));
    routes.write().delete_topic("Gone", None);
    assert!(!routed(&routes, "Gone", N));

    // Late, sent before the broker forgot the topic; twice, through the
    // comparison and after it.
    register(&routes, master(&["Kept", "Gone"], 1));
    register(&routes, master(&["Kept", "Gone"], 1));
    assert!(!routed(&routes, "Gone", N));
    assert!(routed(&routes, "Kept", N));
    assert_eq!(routes.read().tombstone_count(), 1);
}

#[test]
fn a_registration_with_a_newer_data_version_writes_the_topic_and_clears_the_mark() {
    let routes = SharedRoutes::new();
    register(&routes, master(&["Kept", "Gone"], 1));
    routes.write().delete_topic("Gone", None);
    register(&routes, master(&["Kept", "Gone"], 1));
    assert!(!routed(&routes, "Gone", N));

    // The broker re-created the topic (or changed anything).
    register(&routes, master(&["Kept", "Gone"], 2));
    assert!(routed(&routes, "Gone", N));
    assert_eq!(routes.read().tombstone_count(), 0);

    // Gone for good once the broker forgot it too, and not held back later.
    routes.write().delete_topic("Gone", None);
    register(&routes, master(&["Kept"], 3));
    register(&routes, master(&["Kept", "Gone"], 4));
    assert!(routed(&routes, "Gone", N));
}

#[test]
fn the_fast_paths_of_an_unchanged_list_respect_the_mark() {
    let routes = SharedRoutes::new();
    // Held as sent, so the next registration of that list skips the comparison.
    register(&routes, master(&["Kept", "Gone"], 1));
    register(&routes, master(&["Kept", "Gone"], 1));
    assert!(routes
        .read()
        .holds_topics(&BrokerKey::new(C, A), routes_fingerprint(&routes)));
    routes.write().delete_topic("Gone", None);
    for _ in 0..3 {
        register(&routes, master(&["Kept", "Gone"], 1));
        assert!(!routed(&routes, "Gone", N));
    }
    register(&routes, master(&["Kept", "Gone"], 2));
    assert!(routed(&routes, "Gone", N));
}

/// The fingerprint the table holds for the broker, if any: read back, as the
/// server's own is private.
fn routes_fingerprint(routes: &SharedRoutes) -> u64 {
    routes
        .read()
        .live_broker(&BrokerKey::new(C, A))
        .and_then(|live| live.held_topics)
        .map(|held| held.fingerprint)
        .expect("the list is held as sent")
}

#[test]
fn the_per_cluster_delete_marks_only_that_clusters_groups() {
    let routes = SharedRoutes::new();
    register(&routes, master(&["Shared"], 1));
    register(
        &routes,
        broker("C2", "broker-b", "127.0.0.2:10911", 0)
            .topics(&[topic("B"), topic("Shared")])
            .version(1, 0),
    );
    routes.write().delete_topic("Shared", Some(C));
    assert!(!routed(&routes, "Shared", N));
    assert!(routed(&routes, "Shared", "broker-b"));
    register(&routes, master(&["Shared"], 1));
    assert!(!routed(&routes, "Shared", N));
    assert_eq!(routes.read().tombstone_count(), 1);
}

#[test]
fn a_group_without_its_master_is_marked_with_its_smallest_ids_data_version() {
    let routes = SharedRoutes::new();
    register(&routes, master(&["Gone"], 1));
    register(&routes, broker(C, N, "127.0.0.1:10921", 1).version(7, 0));
    unregister(&routes, C, A, N, 0);
    // The group keeps its queue data while a slave remains.
    assert!(routed(&routes, "Gone", N));
    routes.write().delete_topic("Gone", None);
    assert_eq!(routes.read().tombstone_count(), 1);
    // The master back with the DataVersion it had: not the slave's, so
    // the mark does not hold it back.
    register(&routes, master(&["Gone"], 1));
    assert!(routed(&routes, "Gone", N));
    assert_eq!(routes.read().tombstone_count(), 0);
}

#[test]
fn a_topic_without_queue_data_leaves_no_mark() {
    let routes = SharedRoutes::new();
    register(&routes, master(&["Kept"], 1));
    routes.write().delete_topic("Never", None);
    routes.write().delete_topic("Kept", Some("NoSuchCluster"));
    assert_eq!(routes.read().tombstone_count(), 0);
}

#[test]
fn an_operators_topic_registration_clears_the_mark() {
    let routes = SharedRoutes::new();
    register(&routes, master(&["Gone"], 1));
    routes.write().delete_topic("Gone", None);
    let queue = rmq_protocol::QueueData {
        broker_name: N.into(),
        read_queue_nums: 4,
        write_queue_nums: 4,
        perm: 6,
        topic_sys_flag: 0,
    };
    assert!(routes.write().register_topic("Gone", vec![queue]));
    assert_eq!(routes.read().tombstone_count(), 0);
    register(&routes, master(&["Gone"], 1));
    assert!(routed(&routes, "Gone", N));
}

#[test]
fn the_marks_leave_with_their_group() {
    let routes = SharedRoutes::new();
    register(&routes, master(&["Gone"], 1));
    routes.write().delete_topic("Gone", None);
    unregister(&routes, C, A, N, 0);
    assert_eq!(routes.read().tombstone_count(), 0);
    // Back with the same DataVersion: a broker restarted without change.
    register(&routes, master(&["Gone"], 1));
    assert!(routed(&routes, "Gone", N));
}

#[test]
fn a_relayed_copy_with_the_deletions_data_version_does_not_bring_the_topic_back() {
    let routes = SharedRoutes::new();
    let relay = |counter| {
        routes
            .register_relayed(master(&["Kept", "Gone"], counter), "ns2:9876".into(), T0)
            .expect("relayed copy accepted");
    };
    relay(1);
    routes.write().delete_topic("Gone", None);
    relay(1);
    relay(1);
    assert!(!routed(&routes, "Gone", N));
    relay(2);
    assert!(routed(&routes, "Gone", N));
}

#[test]
fn the_marks_are_bounded_per_group_and_in_all_the_oldest_going_first() {
    let routes = SharedRoutes::new();
    let names: Vec<String> = (0..=TOMBSTONES_PER_GROUP)
        .map(|n| format!("T{n}"))
        .collect();
    let topics: Vec<TopicConfig> = names.iter().map(|t| topic(t)).collect();
    let reg = broker(C, N, A, 0).topics(&topics).version(1, 0);
    register(&routes, reg.clone());
    let mut dropped = 0;
    for name in &names {
        dropped += routes.write().delete_topic(name, None);
    }
    assert_eq!(dropped, 1);
    assert_eq!(routes.read().tombstone_count(), TOMBSTONES_PER_GROUP);
    // The oldest mark went: its topic comes back, the others do not.
    register(&routes, reg);
    assert!(routed(&routes, "T0", N));
    assert!(!routed(&routes, "T1", N));
    assert!(!routed(&routes, &names[TOMBSTONES_PER_GROUP], N));
}

#[test]
fn the_marks_in_all_stay_within_their_bound() {
    let groups = TOMBSTONES_IN_ALL / TOMBSTONES_PER_GROUP + 1;
    let mut table = RouteTable::new();
    for g in 0..groups {
        let name = format!("broker-{g}");
        table
            .begin_registration(
                &broker(C, &name, &format!("10.0.0.{g}:10911"), 0).version(1, 0),
                T0,
                false,
                false,
            )
            .expect("registered");
    }
    let mut dropped = 0;
    for n in 0..TOMBSTONES_PER_GROUP {
        let topic = format!("T{n}");
        let queues = (0..groups)
            .map(|g| rmq_protocol::QueueData {
                broker_name: format!("broker-{g}"),
                read_queue_nums: 1,
                write_queue_nums: 1,
                perm: 6,
                topic_sys_flag: 0,
            })
            .collect();
        table.register_topic(&topic, queues);
        dropped += table.delete_topic(&topic, None);
    }
    assert_eq!(table.tombstone_count(), TOMBSTONES_IN_ALL);
    assert_eq!(dropped, groups * TOMBSTONES_PER_GROUP - TOMBSTONES_IN_ALL);
}

#[test]
fn the_marks_are_not_kept_in_the_route_snapshot() {
    let routes = SharedRoutes::new();
    register(&routes, master(&["Gone"], 1));
    routes.write().delete_topic("Gone", None);
    let bytes = routes.read().snapshot();
    let restored = RouteTable::restore(&bytes, T0).expect("restored");
    assert_eq!(restored.tombstone_count(), 0);
    assert!(restored.queue_datas("Gone").is_none());
    // A broker that still has the topic and changed nothing routes it again
    // at its first registration after the restart, as Java would.
    let mut table = restored;
    super::oracle::register_in_one_piece(&mut table, master(&["Gone"], 1), T0, false, false)
        .expect("registered");
    assert!(table.queue_datas("Gone").is_some());
}
