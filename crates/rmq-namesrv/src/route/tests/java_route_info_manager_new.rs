//! Java `RouteInfoManagerNewTest`, first half: cluster info, topic lists and
//! deletion, registration results, unregistration, change detection, route
//! assembly and topic retention on re-registration. The acting-master and
//! role-switch half is in `java_route_info_manager_new_acting`.

use rmq_protocol::{ClusterInfo, Dialect, JavaJson, QueueData};

use super::*;

pub(super) const CLUSTER: &str = "Default_Cluster";
pub(super) const NAME: &str = "Default_Broker";
pub(super) const MASTER: &str = "127.0.0.1:10911";
pub(super) const MASTER_HA: &str = "127.0.0.1:20911";
pub(super) const SLAVE: &str = "127.0.0.1:30911";
pub(super) const SLAVE_HA: &str = "127.0.0.1:40911";
pub(super) const BASE: &str = "baseTopic";
pub(super) const MASTER_CONN: ConnId = 10;
pub(super) const SLAVE_CONN: ConnId = 11;

/// `baseTopic` plus `extra`, or plus `TestTopic` when `extra` is empty: Java's
/// `registerBrokerWithNormalTopic` always sends a normal topic besides
/// `baseTopic` (a lone topic would hit the single-topic guard).
pub(super) fn with_base(extra: &[&str]) -> Vec<TopicConfig> {
    let extra: &[&str] = if extra.is_empty() {
        &["TestTopic"]
    } else {
        extra
    };
    std::iter::once(BASE)
        .chain(extra.iter().copied())
        .map(topic)
        .collect()
}

/// The default master: DataVersion counter 1, `enableActingMaster=true`.
pub(super) fn master(extra: &[&str]) -> BrokerRegistration {
    broker(CLUSTER, NAME, MASTER, 0)
        .ha(MASTER_HA)
        .acting(Some(true))
        .version(1, 100)
        .conn(MASTER_CONN)
        .topics(&with_base(extra))
}

/// Its slave, id 1.
pub(super) fn slave(extra: &[&str]) -> BrokerRegistration {
    broker(CLUSTER, NAME, SLAVE, 1)
        .ha(SLAVE_HA)
        .acting(Some(true))
        .version(1, 100)
        .conn(SLAVE_CONN)
        .topics(&with_base(extra))
}

#[test]
fn all_cluster_info_survives_a_json_round_trip() {
    let routes = SharedRoutes::new();
    register(&routes, master(&[]));
    register(
        &routes,
        broker("Cluster_2", "Broker_2", "127.0.0.2:10911", 0).topics(&with_base(&[])),
    );
    let json = routes.read().cluster_info().to_json(Dialect::Default);
    let info = ClusterInfo::from_json(&json).unwrap();
    assert!(info.cluster_addr_table.contains_key(CLUSTER));
    assert!(info.cluster_addr_table.contains_key("Cluster_2"));
    assert_eq!(info.broker_addr_table[NAME].broker_addrs[&0], MASTER);
    assert_eq!(
        info.broker_addr_table["Broker_2"].broker_addrs[&0],
        "127.0.0.2:10911"
    );
}

#[test]
fn delete_topic_whole_and_per_cluster() {
    let routes = SharedRoutes::new();
    register(&routes, master(&["t1"]));
    routes.write().delete_topic("t1", None);
    assert!(route(&routes.read(), "t1", true).is_none());

    register(
        &routes,
        broker("Cluster_2", "Broker_2", "127.0.0.2:10911", 0).topics(&with_base(&[])),
    );
    routes.write().delete_topic(BASE, Some(CLUSTER));
    let r = route(&routes.read(), BASE, true).unwrap();
    assert_eq!(r.broker_datas.len(), 1);
    assert_eq!(r.broker_datas[0].broker_name, "Broker_2");
    assert_eq!(r.queue_datas.len(), 1);
    assert_eq!(r.queue_datas[0].broker_name, "Broker_2");
}

#[test]
fn all_topic_list_empty_then_registered_topics() {
    let routes = SharedRoutes::new();
    assert!(routes.read().all_topics().is_empty());
    register(&routes, master(&["t1", "t2"]));
    assert_eq!(routes.read().all_topics(), [BASE, "t1", "t2"]);
}

#[test]
fn register_results_of_master_and_slave() {
    let routes = SharedRoutes::new();
    let outcome = register(&routes, master(&[]));
    assert_eq!((outcome.master_addr, outcome.ha_server_addr), (None, None));
    let outcome = register(&routes, slave(&[]));
    assert_eq!(outcome.master_addr.as_deref(), Some(MASTER));
    assert_eq!(outcome.ha_server_addr.as_deref(), Some(MASTER_HA));
}

#[test]
fn unregister_broker_sync_and_queued_removes_the_masters_topics() {
    let routes = SharedRoutes::new();
    register(&routes, master(&["t1"]));
    unregister(&routes, CLUSTER, MASTER, NAME, 0);
    assert!(route(&routes.read(), BASE, true).is_none());
    assert!(route(&routes.read(), "t1", true).is_none());
    assert_eq!(routes.read().topic_count(), 0);

    register(&routes, master(&["t1"]));
    let queued = unregistration(&routes.read(), CLUSTER, MASTER, NAME, 0);
    let outcome = routes.write().unregister_batch(&[queued], false);
    assert_eq!(outcome.removed_brokers, [BrokerKey::new(CLUSTER, MASTER)]);
    assert_eq!(outcome.removed_groups, [NAME]);
    assert_eq!(routes.read().topic_count(), 0);
}

#[test]
fn slave_and_later_topic_show_both_ids() {
    let routes = SharedRoutes::new();
    register(&routes, master(&[]));
    register(&routes, slave(&[]));
    let both = ids(&[(0, MASTER), (1, SLAVE)]);
    assert_eq!(
        addrs_of(&route(&routes.read(), BASE, true).unwrap(), NAME),
        both
    );

    // createNewTopic: the master registers a new topic with a new version.
    register(&routes, master(&["newTopic"]).version(2, 200));
    assert_eq!(
        addrs_of(&route(&routes.read(), "newTopic", true).unwrap(), NAME),
        both
    );
}

#[test]
fn unregister_slave_keeps_the_master() {
    let routes = SharedRoutes::new();
    register(&routes, master(&[]));
    register(&routes, slave(&[]));
    unregister(&routes, CLUSTER, SLAVE, NAME, 1);
    let r = route(&routes.read(), BASE, true).unwrap();
    assert_eq!(r.broker_datas.len(), 1);
    assert_eq!(addrs_of(&r, NAME), ids(&[(0, MASTER)]));
    assert!(writable(queue_of(&r, NAME).perm));
}

#[test]
fn submit_multi_unregister_requests_processes_both() {
    let routes = SharedRoutes::new();
    register(&routes, master(&[]));
    register(&routes, slave(&[]));
    let batch = [
        unregistration(&routes.read(), CLUSTER, MASTER, NAME, 0),
        unregistration(&routes.read(), CLUSTER, SLAVE, NAME, 1),
    ];
    let outcome = routes.write().unregister_batch(&batch, false);
    assert_eq!(outcome.removed_brokers.len(), 2);
    assert!(routes.read().group(NAME).is_none());
    assert!(route(&routes.read(), BASE, true).is_none());
}

#[test]
fn broker_topic_config_changed_compares_the_whole_version() {
    let routes = SharedRoutes::new();
    register(&routes, master(&[]));
    let key = BrokerKey::new(CLUSTER, MASTER);
    let stored = DataVersion::new(1, 0, 100);
    assert!(!routes.read().broker_topic_config_changed(&key, &stored));
    assert!(routes
        .read()
        .broker_topic_config_changed(&key, &DataVersion::new(1, 0, 101)));
    assert!(routes
        .read()
        .broker_topic_config_changed(&key, &DataVersion::new(2, 0, 100)));
    assert!(routes
        .read()
        .broker_topic_config_changed(&key, &DataVersion::new(1, 1, 100)));
    assert!(routes
        .read()
        .broker_topic_config_changed(&BrokerKey::new(CLUSTER, SLAVE), &stored));
    // queryBrokerTopicConfig
    assert_eq!(
        routes.read().live_broker(&key).unwrap().data_version,
        stored
    );
}

#[test]
fn topic_config_changed_before_and_after_registration() {
    let routes = SharedRoutes::new();
    let key = BrokerKey::new(CLUSTER, MASTER);
    let version = DataVersion::new(1, 0, 100);
    assert!(routes
        .read()
        .topic_config_changed(&key, &version, NAME, BASE));
    register(&routes, master(&[]));
    assert!(!routes
        .read()
        .topic_config_changed(&key, &version, NAME, BASE));
    assert!(routes
        .read()
        .topic_config_changed(&key, &version, NAME, "unregistered"));
}

#[test]
fn wipe_write_perm_shows_in_the_route() {
    let routes = SharedRoutes::new();
    register(&routes, master(&[]));
    assert_eq!(routes.write().wipe_write_perm(NAME), 2);
    assert_eq!(
        queue_of(&route(&routes.read(), BASE, true).unwrap(), NAME).perm,
        4
    );
}

#[test]
fn pickup_topic_route_data_one_then_two_groups() {
    let routes = SharedRoutes::new();
    register(&routes, master(&[]));
    let r = route(&routes.read(), BASE, true).unwrap();
    assert_eq!((r.broker_datas.len(), r.queue_datas.len()), (1, 1));
    assert_eq!(
        r.queue_datas[0],
        QueueData {
            broker_name: NAME.into(),
            perm: 6,
            read_queue_nums: 8,
            topic_sys_flag: 0,
            write_queue_nums: 8,
        }
    );
    let data = &r.broker_datas[0];
    assert_eq!(
        (data.cluster.as_str(), data.enable_acting_master),
        (CLUSTER, true)
    );
    assert!(r.filter_server_table.is_empty());
    assert!(r.topic_queue_mapping_by_broker.is_none());

    register(
        &routes,
        broker(CLUSTER, "Broker_2", "127.0.0.2:10911", 0).topics(&with_base(&[])),
    );
    let r = route(&routes.read(), BASE, true).unwrap();
    assert_eq!((r.broker_datas.len(), r.queue_datas.len()), (2, 2));
}

#[test]
fn scan_not_active_broker_with_a_30_s_timeout() {
    let routes = SharedRoutes::new();
    register(&routes, master(&[]).timeout(30_000));
    assert!(routes.read().expired(T0 + 30_000).is_empty());
    assert_eq!(routes.read().expired(T0 + 30_001).len(), 1);
}

#[test]
fn keep_topic_with_broker_registration_by_default() {
    let routes = SharedRoutes::new();
    register(&routes, master(&["t1"]));
    register(&routes, master(&[]).version(2, 200));
    assert!(route(&routes.read(), "t1", true).is_some());
}

#[test]
fn delete_topic_with_broker_registration_per_broker() {
    let routes = SharedRoutes::new();
    let delete = |routes: &SharedRoutes, reg| routes.register_broker(reg, T0, false, true).unwrap();
    delete(&routes, master(&["t1"]));
    delete(&routes, master(&[]).version(2, 200));
    assert!(route(&routes.read(), "t1", true).is_none());

    // Two masters: the topic leaves the route with each broker that drops it.
    let other = |extra: &[&str], counter| {
        broker(CLUSTER, "Broker_2", "127.0.0.2:10911", 0)
            .topics(&with_base(extra))
            .version(counter, 100)
    };
    delete(&routes, master(&["shared"]).version(3, 300));
    delete(&routes, other(&["shared"], 1));
    assert_eq!(
        route(&routes.read(), "shared", true)
            .unwrap()
            .queue_datas
            .len(),
        2
    );
    delete(&routes, master(&[]).version(4, 400));
    let r = route(&routes.read(), "shared", true).unwrap();
    assert_eq!(r.queue_datas.len(), 1);
    assert_eq!(r.queue_datas[0].broker_name, "Broker_2");
    delete(&routes, other(&[], 2));
    assert!(route(&routes.read(), "shared", true).is_none());
    assert!(route(&routes.read(), BASE, true).is_some());
}

#[test]
fn register_single_topic_with_broker_registration() {
    let routes = SharedRoutes::new();
    let queue = QueueData {
        broker_name: NAME.into(),
        perm: 6,
        read_queue_nums: 8,
        topic_sys_flag: 0,
        write_queue_nums: 8,
    };
    assert!(!routes.write().register_topic("single", vec![queue.clone()]));
    assert!(route(&routes.read(), "single", true).is_none());

    register(&routes, master(&[]));
    assert!(routes.write().register_topic("single", vec![queue.clone()]));
    assert_eq!(
        queue_of(&route(&routes.read(), "single", true).unwrap(), NAME),
        &queue
    );

    routes
        .register_broker(master(&[]).version(2, 200), T0, false, true)
        .unwrap();
    assert!(route(&routes.read(), "single", true).is_none());

    assert!(routes.write().register_topic("single2", vec![queue]));
    unregister(&routes, CLUSTER, MASTER, NAME, 0);
    assert!(route(&routes.read(), BASE, true).is_none());
    assert!(route(&routes.read(), "single2", true).is_none());
}
