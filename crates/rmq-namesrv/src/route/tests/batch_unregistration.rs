//! Batch unregistration (Java's `BatchUnregistrationService` batches run by
//! `RouteInfoManager.unRegisterBroker`): live and filter entries, removed
//! versus reduced groups, cluster clean-up, topic clean-up and the
//! acting-master write wipe, all in one atomic batch.

use super::*;

const C: &str = "DefaultCluster";
const A0: &str = "127.0.0.1:10911";
const A1: &str = "127.0.0.1:10921";
const B0: &str = "127.0.0.2:10911";

fn two_groups(acting: bool) -> SharedRoutes {
    let routes = SharedRoutes::new();
    let shared = [topic("Shared"), topic("OnlyA")];
    for (addr, id) in [(A0, 0), (A1, 1)] {
        register(
            &routes,
            broker(C, "broker-a", addr, id)
                .acting(Some(acting))
                .topics(&shared),
        );
    }
    register(
        &routes,
        broker(C, "broker-b", B0, 0).topics(&[topic("Shared"), topic("OnlyB")]),
    );
    routes
}

#[test]
fn removing_the_last_member_removes_group_queue_data_and_empty_topics() {
    let routes = two_groups(false);
    let batch = [
        unregistration(&routes.read(), C, A0, "broker-a", 0),
        unregistration(&routes.read(), C, A1, "broker-a", 1),
    ];
    let outcome = routes.write().unregister_batch(&batch, false);
    assert_eq!(outcome.removed_groups, ["broker-a"]);
    assert!(routes.read().group("broker-a").is_none());
    assert!(route(&routes.read(), "OnlyA", false).is_none());
    let shared = route(&routes.read(), "Shared", false).unwrap();
    assert_eq!(shared.queue_datas.len(), 1);
    assert_eq!(shared.queue_datas[0].broker_name, "broker-b");
    let info = routes.read().cluster_info();
    assert_eq!(info.cluster_addr_table[C].len(), 1);
}

#[test]
fn the_cluster_goes_with_its_last_group() {
    let routes = SharedRoutes::new();
    register(
        &routes,
        broker("Lonely", "broker-z", A0, 0).topics(&base_topics()),
    );
    unregister(&routes, "Lonely", A0, "broker-z", 0);
    let info = routes.read().cluster_info();
    assert!(info.cluster_addr_table.is_empty());
    assert!(info.broker_addr_table.is_empty());
    assert_eq!(routes.read().topic_count(), 0);
}

fn base_topics() -> Vec<TopicConfig> {
    vec![topic("t1"), topic("t2")]
}

#[test]
fn every_id_with_the_address_goes() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, "broker-a", A0, 0).topics(&base_topics()));
    register(&routes, broker(C, "broker-a", A1, 1));
    // Inject a second id for A1 (possible in Java after odd re-registrations).
    routes
        .write()
        .groups
        .get_mut("broker-a")
        .unwrap()
        .addrs
        .insert(2, A1.into());
    unregister(&routes, C, A1, "broker-a", 1);
    assert_eq!(
        routes.read().group("broker-a").unwrap().addrs,
        ids(&[(0, A0)])
    );
}

#[test]
fn filter_servers_and_live_entry_go() {
    let routes = SharedRoutes::new();
    let mut reg = broker(C, "broker-a", A0, 0).topics(&base_topics());
    reg.filter_servers = Some(vec!["127.0.0.1:7777".into()]);
    register(&routes, reg);
    register(&routes, broker(C, "broker-a", A1, 1));
    let outcome = unregister(&routes, C, A0, "broker-a", 0);
    assert_eq!(outcome.removed_brokers, [BrokerKey::new(C, A0)]);
    assert!(outcome.removed_groups.is_empty());
    assert!(routes.read().filter_servers.is_empty());
    assert!(routes.read().live_broker(&BrokerKey::new(C, A0)).is_none());
}

#[test]
fn reduced_acting_master_group_without_master_loses_write() {
    let routes = two_groups(true);
    unregister(&routes, C, A0, "broker-a", 0);
    let r = route(&routes.read(), "Shared", false).unwrap();
    assert_eq!(queue_of(&r, "broker-a").perm, 4);
    assert_eq!(queue_of(&r, "broker-b").perm, 6, "other groups untouched");
}

#[test]
fn reduced_group_that_keeps_its_master_keeps_write() {
    let routes = two_groups(true);
    unregister(&routes, C, A1, "broker-a", 1);
    assert_eq!(
        queue_of(&route(&routes.read(), "Shared", false).unwrap(), "broker-a").perm,
        6
    );
}

#[test]
fn reduced_group_without_acting_master_keeps_write() {
    let routes = two_groups(false);
    unregister(&routes, C, A0, "broker-a", 0);
    assert_eq!(
        queue_of(&route(&routes.read(), "Shared", false).unwrap(), "broker-a").perm,
        6
    );
}

#[test]
fn unknown_group_or_broker_is_harmless() {
    let routes = two_groups(true);
    let before = routes.read().clone();
    let outcome = unregister(&routes, C, "10.0.0.1:1", "no-such-broker", 0);
    assert!(outcome.removed_brokers.is_empty());
    assert!(outcome.removed_groups.is_empty());
    assert_eq!(routes.read().all_topics(), before.all_topics());
    assert_eq!(routes.read().cluster_info(), before.cluster_info());
    let outcome = unregister(&routes, C, "10.0.0.1:1", "broker-a", 5);
    assert!(outcome.removed_brokers.is_empty());
    assert_eq!(routes.read().group("broker-a").unwrap().addrs.len(), 2);
}

#[test]
fn a_batch_with_reduce_then_remove_of_one_group() {
    let routes = two_groups(true);
    let batch = [
        unregistration(&routes.read(), C, A1, "broker-a", 1),
        unregistration(&routes.read(), C, A0, "broker-a", 0),
    ];
    let outcome = routes.write().unregister_batch(&batch, true);
    assert_eq!(outcome.removed_groups, ["broker-a"]);
    assert!(outcome.notifications.is_empty(), "the group is gone");
    assert!(route(&routes.read(), "OnlyA", false).is_none());
}

#[test]
fn a_batch_is_applied_in_order_and_duplicates_are_harmless() {
    let routes = two_groups(false);
    let request = unregistration(&routes.read(), C, B0, "broker-b", 0);
    let outcome = routes
        .write()
        .unregister_batch(&[request.clone(), request], false);
    assert_eq!(outcome.removed_brokers.len(), 1);
    assert_eq!(outcome.removed_groups, ["broker-b"]);
    assert!(route(&routes.read(), "OnlyB", false).is_none());
}
