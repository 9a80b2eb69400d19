//! Registration scenarios (Java's `RouteInfoManager.registerBroker`):
//! stateVersion conflicts, the single-topic guard, addresses moving between
//! ids, prime slaves, re-registration with the same or a new DataVersion, group
//! attributes, mapping info and filter servers.

use rmq_protocol::TopicQueueMappingInfo;

use super::*;
use crate::route::DEFAULT_BROKER_TIMEOUT_MS;

const C: &str = "DefaultCluster";
const N: &str = "broker-a";
const A: &str = "127.0.0.1:10911";
const B: &str = "127.0.0.1:10921";

fn base() -> Vec<TopicConfig> {
    vec![topic("TopicTest"), topic("Other")]
}

#[test]
fn first_master_registration() {
    let routes = SharedRoutes::new();
    let outcome = register(&routes, broker(C, N, A, 0).topics(&base()));
    assert!(outcome.new_broker);
    assert_eq!((outcome.master_addr, outcome.ha_server_addr), (None, None));
    assert!(outcome.notifications.is_empty());
    let live = routes
        .read()
        .live_broker(&BrokerKey::new(C, A))
        .unwrap()
        .clone();
    assert_eq!(live.timeout_ms, DEFAULT_BROKER_TIMEOUT_MS);
    assert_eq!(live.last_update, T0);
    assert_eq!(live.ha_server_addr, format!("ha-{A}"));
    let r = route(&routes.read(), "TopicTest", false).unwrap();
    assert_eq!(addrs_of(&r, N), ids(&[(0, A)]));
    assert_eq!(queue_of(&r, N).perm, 6);
    assert!(!register(&routes, broker(C, N, A, 0).topics(&base())).new_broker);
}

#[test]
fn slave_learns_its_master_only_while_the_master_is_live() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, A, 0).topics(&base()));
    let outcome = register(&routes, broker(C, N, B, 1).topics(&base()));
    assert_eq!(outcome.master_addr.as_deref(), Some(A));
    assert_eq!(outcome.ha_server_addr, Some(format!("ha-{A}")));

    // The master's live entry goes (e.g. stale stateVersion path) but the id
    // stays: no master address then.
    routes.write().live.remove(&BrokerKey::new(C, A));
    let outcome = register(&routes, broker(C, N, B, 1).topics(&base()));
    assert_eq!((outcome.master_addr, outcome.ha_server_addr), (None, None));
}

#[test]
fn higher_state_version_at_the_current_holder_wins() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, A, 0).topics(&base()).state_version(5));
    register(&routes, broker(C, N, B, 1).topics(&base()).state_version(3));

    // B claims id 0 with a lower stateVersion: ignored, B's live entry dropped,
    // but step 5 already removed B's old id.
    let outcome = register(
        &routes,
        broker(C, N, B, 0)
            .topics(&base())
            .state_version(3)
            .version(9, 9),
    );
    assert!(outcome.ignored_stale_state_version);
    assert_eq!((outcome.master_addr, outcome.ha_server_addr), (None, None));
    assert_eq!(routes.read().group(N).unwrap().addrs, ids(&[(0, A)]));
    assert!(routes.read().live_broker(&BrokerKey::new(C, B)).is_none());
    assert!(routes.read().live_broker(&BrokerKey::new(C, A)).is_some());

    // Equal stateVersion: the newcomer takes id 0; the old holder stays live.
    let outcome = register(&routes, broker(C, N, B, 0).topics(&base()).state_version(5));
    assert!(!outcome.ignored_stale_state_version);
    assert_eq!(routes.read().group(N).unwrap().addrs, ids(&[(0, B)]));
    assert!(routes.read().live_broker(&BrokerKey::new(C, A)).is_some());

    // The old holder's unregistration removes nothing from the group.
    unregister(&routes, C, A, N, 0);
    assert_eq!(routes.read().group(N).unwrap().addrs, ids(&[(0, B)]));
    assert!(route(&routes.read(), "TopicTest", false).is_some());
}

#[test]
fn a_higher_state_version_takes_over_at_once() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, A, 0).topics(&base()).state_version(1));
    register(&routes, broker(C, N, B, 0).topics(&base()).state_version(2));
    assert_eq!(routes.read().group(N).unwrap().addrs, ids(&[(0, B)]));
}

#[test]
fn single_topic_registration_before_the_full_one_fails() {
    let routes = SharedRoutes::new();
    let early = try_register(&routes, broker(C, N, A, 0).topics(&[topic("Only")]));
    assert_eq!(early, Err(RegisterError::SingleTopicBeforeFullRegistration));
    assert_eq!(early.unwrap_err().to_string(), "register broker failed");
    assert!(routes.read().live_broker(&BrokerKey::new(C, A)).is_none());
    assert!(route(&routes.read(), "Only", false).is_none());
    // Steps 1-3 happened (as in Java): the group exists without members.
    assert!(routes.read().group(N).unwrap().addrs.is_empty());
    assert!(routes.read().cluster_info().cluster_addr_table[C].contains(N));

    register(&routes, broker(C, N, A, 0).topics(&base()));
    let late = register(
        &routes,
        broker(C, N, A, 0).topics(&[topic("Only")]).version(2, 2),
    );
    assert!(!late.new_broker);
    assert!(route(&routes.read(), "Only", false).is_some());
}

#[test]
fn old_version_broker_with_a_single_topic_registers() {
    // Found by the differential test against the 4.9.8 NameServer.
    let routes = SharedRoutes::new();
    let outcome = try_register(
        &routes,
        broker(C, N, A, 0).topics(&[topic("Only")]).acting(None),
    );
    assert!(outcome.is_ok());
    assert!(routes.read().live_broker(&BrokerKey::new(C, A)).is_some());
    assert!(route(&routes.read(), "Only", false).is_some());
}

#[test]
fn zero_topics_are_not_a_single_topic_registration() {
    let routes = SharedRoutes::new();
    assert!(try_register(&routes, broker(C, N, A, 0)).is_ok());
    assert_eq!(routes.read().group(N).unwrap().addrs, ids(&[(0, A)]));
}

#[test]
fn slave_promoted_in_place_keeps_one_id_per_address() {
    let routes = SharedRoutes::new();
    let own = [topic_with("TopicTest", 2, 2, 4), topic("Other")];
    register(&routes, broker(C, N, A, 0).topics(&base()));
    register(&routes, broker(C, N, B, 1).topics(&own));

    // B claims id 0 while A still holds it (equal stateVersion): A's address
    // is replaced, B's id 1 removed, and B's topics are written as it sends
    // them, although neither is its registration a first one nor did its
    // DataVersion change (Java keeps A's queue data then).
    register(&routes, broker(C, N, B, 0).topics(&own));
    assert_eq!(routes.read().group(N).unwrap().addrs, ids(&[(0, B)]));
    let r = route(&routes.read(), "TopicTest", false).unwrap();
    assert_eq!(
        (queue_of(&r, N).perm, queue_of(&r, N).read_queue_nums),
        (4, 2)
    );
}

#[test]
fn promotion_without_a_master_is_a_first_registration() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, A, 0).topics(&base()));
    register(&routes, broker(C, N, B, 1).topics(&base()));
    unregister(&routes, C, A, N, 0);
    routes.write().wipe_write_perm(N);
    // Same DataVersion as B's earlier registration, but id 0 was empty.
    register(&routes, broker(C, N, B, 0).topics(&base()));
    assert_eq!(
        queue_of(&route(&routes.read(), "TopicTest", false).unwrap(), N).perm,
        6
    );
}

#[test]
fn prime_slave_perms_follow_enable_acting_master() {
    for (acting, perm) in [(Some(true), 4), (Some(false), 6)] {
        let routes = SharedRoutes::new();
        register(&routes, broker(C, N, B, 1).acting(acting).topics(&base()));
        let r = route(&routes.read(), "TopicTest", false).unwrap();
        assert_eq!(queue_of(&r, N).perm, perm, "acting {acting:?}");
        assert_eq!(addrs_of(&r, N), ids(&[(1, B)]));
    }
    // A 4.x slave is never prime: no queue data, no route.
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, B, 1).acting(None).topics(&base()));
    assert!(route(&routes.read(), "TopicTest", true).is_none());
    assert_eq!(routes.read().group(N).unwrap().addrs, ids(&[(1, B)]));
    assert!(!routes.read().group(N).unwrap().enable_acting_master);
}

#[test]
fn only_the_smallest_slave_is_prime() {
    let routes = SharedRoutes::new();
    register(
        &routes,
        broker(C, N, B, 1).acting(Some(true)).topics(&base()),
    );
    register(
        &routes,
        broker(C, N, "127.0.0.1:10931", 2)
            .acting(Some(true))
            .topics(&[topic("FromTwo"), topic("AlsoFromTwo")]),
    );
    assert!(route(&routes.read(), "FromTwo", false).is_none());
}

#[test]
fn wiped_perms_survive_every_re_registration_until_write_is_added() {
    let routes = SharedRoutes::new();
    let perm_of = |topic: &str| queue_of(&route(&routes.read(), topic, false).unwrap(), N).perm;
    let read_only = topic_with("ReadOnly", 1, 1, 4);
    let topics = [base(), vec![read_only.clone()]].concat();
    register(&routes, broker(C, N, A, 0).topics(&topics));
    assert_eq!(routes.write().wipe_write_perm(N), 3);
    register(&routes, broker(C, N, A, 0).topics(&topics));
    assert_eq!(perm_of("TopicTest"), 4);
    // A new DataVersion (Java writes every topic as sent then) and a topic
    // created on the broker since: still without write permission.
    let created = [topics.clone(), vec![topic("Created")]].concat();
    register(&routes, broker(C, N, A, 0).topics(&created).version(2, 200));
    assert_eq!(
        [
            perm_of("TopicTest"),
            perm_of("Created"),
            perm_of("ReadOnly")
        ],
        [4, 4, 4]
    );

    // ADD_WRITE_PERM_OF_BROKER sets READ|WRITE everywhere, as Java; the
    // next registration brings back what the broker gives each topic.
    assert_eq!(routes.write().add_write_perm(N), 4);
    assert_eq!(perm_of("ReadOnly"), 6);
    register(&routes, broker(C, N, A, 0).topics(&created).version(2, 200));
    assert_eq!(
        [
            perm_of("TopicTest"),
            perm_of("Created"),
            perm_of("ReadOnly")
        ],
        [6, 6, 4]
    );
}

#[test]
fn a_wipe_ends_when_the_master_registers_anew() {
    let routes = SharedRoutes::new();
    let perm_of = |routes: &SharedRoutes| {
        queue_of(&route(&routes.read(), "TopicTest", false).unwrap(), N).perm
    };
    register(&routes, broker(C, N, A, 0).topics(&base()));
    register(&routes, broker(C, N, B, 1).topics(&base()));
    routes.write().wipe_write_perm(N);
    // A slave's registration leaves the wipe, and so does one of a group
    // that does not exist.
    register(&routes, broker(C, N, B, 1).topics(&base()));
    assert_eq!(routes.write().wipe_write_perm("nobody"), 0);
    assert!(routes.read().group("nobody").is_none());
    register(&routes, broker(C, N, A, 0).topics(&base()));
    assert_eq!(perm_of(&routes), 4);
    // The master leaves (the slave keeps the group) and comes back: a first
    // registration, written as sent, as Java writes it.
    unregister(&routes, C, A, N, 0);
    assert!(routes.read().group(N).unwrap().write_perm_wiped);
    register(&routes, broker(C, N, A, 0).topics(&base()));
    assert!(!routes.read().group(N).unwrap().write_perm_wiped);
    assert_eq!(perm_of(&routes), 6);
}

#[test]
fn every_chunk_of_a_split_registration_is_applied_with_one_data_version() {
    // A broker with enableSplitRegistration sends its topics in chunks, all
    // with its current DataVersion (5.3.4 to 5.5.0 do not advance it per
    // chunk), the static-topic mappings with the last.
    let routes = SharedRoutes::new();
    let chunks = |changed: i32| {
        [
            vec![topic("Chunk1-a"), topic("Chunk1-b")],
            vec![
                topic("Chunk2-a"),
                topic_with("Chunk2-b", changed, changed, 6),
            ],
        ]
    };
    for chunk in chunks(4) {
        register(&routes, broker(C, N, A, 0).topics(&chunk).version(5, 500));
    }
    // An operator changes Chunk2-b on the broker: the DataVersion moves on,
    // and the broker sends every chunk with the new one.
    for chunk in chunks(8) {
        register(&routes, broker(C, N, A, 0).topics(&chunk).version(6, 600));
    }
    let r = route(&routes.read(), "Chunk2-b", false).unwrap();
    assert_eq!(
        (
            queue_of(&r, N).read_queue_nums,
            queue_of(&r, N).write_queue_nums
        ),
        (8, 8),
        "the later chunk's change was not applied"
    );
    // And a perm change on the next round, same DataVersion in each chunk.
    let read_only = [
        vec![topic("Chunk1-a"), topic("Chunk1-b")],
        vec![topic("Chunk2-a"), topic_with("Chunk2-b", 8, 8, 4)],
    ];
    for chunk in read_only {
        register(&routes, broker(C, N, A, 0).topics(&chunk).version(7, 700));
    }
    assert_eq!(
        queue_of(&route(&routes.read(), "Chunk2-b", false).unwrap(), N).perm,
        4
    );

    // A wipe holds across every chunk of the broker's unchanged re-registration.
    routes.write().wipe_write_perm(N);
    for chunk in chunks(8) {
        register(&routes, broker(C, N, A, 0).topics(&chunk).version(7, 700));
    }
    for topic in ["Chunk1-a", "Chunk2-a", "Chunk2-b"] {
        assert_eq!(
            queue_of(&route(&routes.read(), topic, false).unwrap(), N).perm,
            4,
            "{topic}"
        );
    }
    routes.write().add_write_perm(N);
    for chunk in chunks(8) {
        register(&routes, broker(C, N, A, 0).topics(&chunk).version(7, 700));
    }
    assert_eq!(
        queue_of(&route(&routes.read(), "Chunk2-b", false).unwrap(), N).perm,
        6
    );
}

#[test]
fn a_compressed_re_registration_keeps_the_sys_flags_until_the_data_version_moves() {
    // A compressed body (`compressedRegister=true`) carries no topicSysFlag:
    // every topic of it reads as 0. Java leaves a re-registration's topics
    // alone while the DataVersion is the broker's last, so the unit flags the
    // broker sent stay; with a new DataVersion it writes them as sent.
    let routes = SharedRoutes::new();
    let mut unit = topic("%RETRY%group-1");
    unit.topic_sys_flag = 3;
    let mut compressed = unit.clone();
    compressed.topic_sys_flag = 0;
    let with = |tc: &TopicConfig| vec![topic("TopicTest"), tc.clone()];
    register(
        &routes,
        broker(C, N, A, 0).topics(&with(&unit)).version(5, 500),
    );
    register(
        &routes,
        broker(C, N, A, 0)
            .topics(&with(&compressed))
            .version(5, 500),
    );
    let flag = |routes: &SharedRoutes| {
        queue_of(&route(&routes.read(), "%RETRY%group-1", false).unwrap(), N).topic_sys_flag
    };
    assert_eq!(
        flag(&routes),
        3,
        "an unchanged DataVersion keeps the sys flag"
    );
    assert_eq!(
        routes.read().unit_topics(crate::route::UnitSelect::Unit),
        vec!["%RETRY%group-1".to_owned()]
    );
    register(
        &routes,
        broker(C, N, A, 0)
            .topics(&with(&compressed))
            .version(6, 600),
    );
    assert_eq!(
        flag(&routes),
        0,
        "a new DataVersion writes the topic as sent"
    );
}

#[test]
fn a_topic_deleted_from_the_nameserver_comes_back_with_the_brokers_next_data_version() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, A, 0).topics(&base()));
    routes.write().wipe_write_perm(N);
    routes.write().delete_topic("TopicTest", None);
    assert!(route(&routes.read(), "TopicTest", false).is_none());
    // Sent before the broker knew (Java re-adds it).
    register(&routes, broker(C, N, A, 0).topics(&base()));
    assert!(route(&routes.read(), "TopicTest", false).is_none());
    // The missing topic is re-added with its config, less the wiped
    // write permission (Java adds it with its perm).
    register(&routes, broker(C, N, A, 0).topics(&base()).version(2, 0));
    assert_eq!(
        queue_of(&route(&routes.read(), "TopicTest", false).unwrap(), N).perm,
        4
    );
    assert_eq!(
        queue_of(&route(&routes.read(), "Other", false).unwrap(), N).perm,
        4
    );
}

#[test]
fn topics_with_mapping_are_not_deleted_with_registration() {
    let routes = SharedRoutes::new();
    let mut reg = broker(C, N, A, 0).topics(&base());
    routes
        .register_broker(reg.clone(), T0, false, true)
        .unwrap();
    reg.topic_configs = vec![topic("Static")];
    reg.mappings.insert(
        "Static".into(),
        TopicQueueMappingInfo {
            bname: N.into(),
            topic: "Static".into(),
            total_queues: 4,
            ..TopicQueueMappingInfo::default()
        },
    );
    reg.data_version = DataVersion::new(2, 0, 200);
    routes.register_broker(reg, T0, false, true).unwrap();
    assert!(route(&routes.read(), "TopicTest", false).is_some());
    let r = route(&routes.read(), "Static", false).unwrap();
    assert_eq!(r.topic_queue_mapping_by_broker.unwrap()[N].total_queues, 4);
}

#[test]
fn mapping_info_outlives_unregistration_and_topic_deletion() {
    let routes = SharedRoutes::new();
    let mut reg = broker(C, N, A, 0).topics(&[topic("Static"), topic("x")]);
    reg.mappings.insert(
        "Static".into(),
        TopicQueueMappingInfo {
            bname: N.into(),
            epoch: 7,
            ..TopicQueueMappingInfo::default()
        },
    );
    register(&routes, reg);
    routes.write().delete_topic("Static", None);
    unregister(&routes, C, A, N, 0);
    register(
        &routes,
        broker(C, N, A, 0).topics(&[topic("Static"), topic("x")]),
    );
    let mapping = route(&routes.read(), "Static", false)
        .unwrap()
        .topic_queue_mapping_by_broker
        .expect("mapping kept until restart");
    assert_eq!(mapping[N].epoch, 7);
    assert!(route(&routes.read(), "x", false)
        .unwrap()
        .topic_queue_mapping_by_broker
        .is_none());
}

#[test]
fn group_attributes_last_writer_wins_but_cluster_is_fixed() {
    let routes = SharedRoutes::new();
    register(
        &routes,
        broker(C, N, A, 0).zone("zone-1").acting(Some(true)),
    );
    register(&routes, broker("Other", N, B, 1).acting(None));
    let group = routes.read().group(N).unwrap().clone();
    assert_eq!(group.cluster, C);
    assert_eq!(group.zone_name, None);
    assert!(!group.enable_acting_master);
    let info = routes.read().cluster_info();
    assert!(info.cluster_addr_table[C].contains(N));
    assert!(info.cluster_addr_table["Other"].contains(N));
}

#[test]
fn filter_servers_not_provided_empty_or_set() {
    let routes = SharedRoutes::new();
    let mut reg = broker(C, N, A, 0).topics(&base());
    reg.filter_servers = Some(vec!["127.0.0.1:7777".into()]);
    register(&routes, reg.clone());
    let r = route(&routes.read(), "TopicTest", false).unwrap();
    assert_eq!(r.filter_server_table[A], ["127.0.0.1:7777"]);

    reg.filter_servers = None;
    register(&routes, reg.clone());
    assert_eq!(
        route(&routes.read(), "TopicTest", false)
            .unwrap()
            .filter_server_table
            .len(),
        1
    );

    reg.filter_servers = Some(Vec::new());
    register(&routes, reg);
    assert!(route(&routes.read(), "TopicTest", false)
        .unwrap()
        .filter_server_table
        .is_empty());
}

#[test]
fn queue_data_is_keyed_by_the_topic_configs_name() {
    let routes = SharedRoutes::new();
    let tc = TopicConfig {
        topic_sys_flag: 3,
        ..topic_with("Named", 3, 5, 7)
    };
    register(&routes, broker(C, N, A, 0).topics(&[tc, topic("x")]));
    let q = queue_of(&route(&routes.read(), "Named", false).unwrap(), N).clone();
    assert_eq!(
        (
            q.read_queue_nums,
            q.write_queue_nums,
            q.perm,
            q.topic_sys_flag
        ),
        (3, 5, 7, 3)
    );
}
