//! A registration compared with the table before it is written
//! (`RouteTable::topic_changes`, used by `SharedRoutes::register_broker`):
//! the entries it finds differing, when that finding may be used, and that a
//! registration through it leaves the table the one-piece oracle leaves,
//! whatever came before.

use proptest::prelude::*;
use rmq_protocol::TopicConfig;

use super::oracle::register_in_one_piece;
use super::{broker, contents, topic, topic_with, unregistration, Edit};
use crate::route::{perm, BrokerRegistration, RouteTable, SharedRoutes};

#[test]
fn an_unchanged_re_registration_differs_in_no_topic_and_writes_none() {
    let topics = [topic("t1"), topic("t2"), topic("t3")];
    let routes = SharedRoutes::new();
    let first = broker("c", "broker-a", "a:1", 0).topics(&topics);
    routes.register_broker(first, 1_000, false, true).unwrap();
    let edits = routes.read().topic_edits();

    let again = broker("c", "broker-a", "a:1", 0)
        .topics(&topics)
        .version(2, 0);
    let changes = routes
        .read()
        .topic_changes(&again.broker_name, &again.topic_configs);
    assert_eq!(changes.positions(), &[] as &[usize]);
    assert_eq!(changes.new_topics(), 0);
    let changes_before = routes.changes();
    routes.register_broker(again, 2_000, false, true).unwrap();

    assert_eq!(
        routes.read().topic_edits(),
        edits,
        "the topic map was written"
    );
    // The broker's part was written: its version is the new one.
    let table = routes.read();
    let live = table
        .live_broker(&crate::route::BrokerKey::new("c", "a:1"))
        .unwrap();
    assert_eq!(live.data_version.counter, 2);
    // No route changed: the route snapshot is not encoded again for it,
    // nor route push woken.
    assert_eq!(routes.changes(), changes_before);
}

#[test]
fn a_re_registration_that_changes_what_routes_are_made_of_counts_as_a_change() {
    let topics = [topic("t1"), topic("t2")];
    let first = || broker("c", "broker-a", "a:1", 0).topics(&topics);
    let changes: [(&str, BrokerRegistration); 5] = [
        (
            "a changed topic",
            broker("c", "broker-a", "a:1", 0)
                .topics(&[topic("t1"), topic_with("t2", 4, 4, 6)])
                .version(2, 0),
        ),
        ("a zone", first().zone("z1").version(2, 0)),
        ("acting master", first().acting(Some(true)).version(2, 0)),
        ("another HA address", first().ha("a:2").version(2, 0)),
        (
            "a slave joining",
            broker("c", "broker-a", "a:3", 1).topics(&topics),
        ),
    ];
    for (what, again) in changes {
        let routes = SharedRoutes::new();
        routes.register_broker(first(), 1_000, false, true).unwrap();
        let before = routes.changes();
        routes.register_broker(again, 2_000, false, true).unwrap();
        assert!(routes.changes() > before, "{what}");
    }
}

#[test]
fn a_list_written_as_sent_is_held_until_the_topic_map_is_written() {
    let topics = [topic("t1"), topic("t2")];
    let key = crate::route::BrokerKey::new("c", "a:1");
    let routes = SharedRoutes::new();
    let held = |routes: &SharedRoutes| routes.read().live_broker(&key).unwrap().held_topics;
    let reg = broker("c", "broker-a", "a:1", 0).topics(&topics);
    routes
        .register_broker(reg.clone(), 1_000, false, false)
        .unwrap();
    let first = held(&routes).expect("a first registration writes its list as sent");
    assert_eq!(first.edits, routes.read().topic_edits());

    // Unchanged and again: still held, the topic map untouched.
    routes
        .register_broker(reg.clone().version(2, 0), 2_000, false, false)
        .unwrap();
    assert_eq!(held(&routes), Some(first));

    // Another writer: the same list is compared again. The wiped write
    // permission stays, whatever the DataVersion, so the list is not held
    // as sent.
    assert_eq!(routes.write().wipe_write_perm("broker-a"), 2);
    let perm_of_t1 = |routes: &SharedRoutes| {
        let table = routes.read();
        let queue = table.queue_datas("t1").unwrap().values().next().copied();
        queue.map(|q| q.perm)
    };
    for counter in [2, 3] {
        routes
            .register_broker(reg.clone().version(counter, 0), 3_000, false, false)
            .unwrap();
        assert_eq!(held(&routes), None);
        assert_eq!(perm_of_t1(&routes), Some(perm::READ));
    }

    // Write permission added back: every topic is written as sent, held again.
    routes.write().add_write_perm("broker-a");
    routes
        .register_broker(reg.version(3, 0), 4_000, false, false)
        .unwrap();
    let again = held(&routes).expect("held after a full write");
    assert_eq!(again.fingerprint, first.fingerprint);
    assert_eq!(again.edits, routes.read().topic_edits());
    assert_eq!(perm_of_t1(&routes), Some(6));
}

#[test]
fn changed_missing_and_new_topics_are_found() {
    let routes = SharedRoutes::new();
    let first = broker("c", "broker-a", "a:1", 0).topics(&[topic("same"), topic("perm")]);
    routes.register_broker(first, 1_000, false, false).unwrap();
    let other = broker("c", "broker-b", "b:1", 0).topics(&[topic("elsewhere"), topic("more")]);
    routes.register_broker(other, 1_000, false, false).unwrap();

    let sent = [
        topic("same"),
        topic_with("perm", 8, 8, perm::READ),
        topic("elsewhere"),
        topic("new"),
    ];
    let table = routes.read();
    let changes = table.topic_changes("broker-a", &sent);
    // "elsewhere" exists, but not with broker-a's entry; only "new" is a
    // topic the table lacks.
    assert_eq!(changes.positions(), &[1, 2, 3]);
    assert_eq!(changes.new_topics(), 1);
}

#[test]
fn a_repeated_topic_is_written_at_each_of_its_places() {
    let routes = SharedRoutes::new();
    let first = broker("c", "broker-a", "a:1", 0).topics(&[topic("t"), topic("u")]);
    routes.register_broker(first, 1_000, false, false).unwrap();

    let table = routes.read();
    // The second "t" matches the table, the first does not: both are
    // written, in order, so the last one wins as in a one-piece write.
    let sent = [topic_with("t", 1, 1, 6), topic("u"), topic("t")];
    let changes = table.topic_changes("broker-a", &sent);
    assert_eq!(changes.positions(), &[0, 2]);
}

#[test]
fn a_write_to_the_topic_map_after_the_comparison_voids_it() {
    let routes = SharedRoutes::new();
    let reg = broker("c", "broker-a", "a:1", 0).topics(&[topic("t"), topic("u")]);
    routes
        .register_broker(reg.clone(), 1_000, false, false)
        .unwrap();

    let again = reg.clone().version(2, 0);
    let mut table = routes.write();
    let changes = table.topic_changes(&again.broker_name, &again.topic_configs);
    let (_, work) = table
        .begin_registration(&again, 2_000, false, false)
        .unwrap();
    let work = work.unwrap();
    assert!(
        work.may_use(&changes, table.topic_edits()),
        "the broker's own part is no write to the topic map"
    );

    let changes = table.topic_changes(&again.broker_name, &again.topic_configs);
    assert_eq!(table.wipe_write_perm("broker-a"), 2);
    assert!(!work.may_use(&changes, table.topic_edits()));
}

#[test]
fn a_prime_slave_of_an_acting_master_group_does_not_use_the_comparison() {
    let routes = SharedRoutes::new();
    let slave = broker("c", "broker-a", "a:2", 1)
        .acting(Some(true))
        .topics(&[topic("t"), topic("u")]);
    routes
        .register_broker(slave.clone(), 1_000, false, false)
        .unwrap();
    let again = slave.version(2, 0);
    let mut table = routes.write();
    let changes = table.topic_changes(&again.broker_name, &again.topic_configs);
    let (_, work) = table
        .begin_registration(&again, 2_000, false, false)
        .unwrap();
    assert!(!work.unwrap().may_use(&changes, table.topic_edits()));
}

/// One step of a history applied to both tables.
#[derive(Debug, Clone)]
enum Step {
    Register {
        name: usize,
        id: i64,
        acting: bool,
        counter: i64,
        topics: Vec<(usize, i32, i32)>,
        delete_missing: bool,
    },
    /// The last list `name`/`id` registered, again, with DataVersion `counter`.
    Repeat {
        name: usize,
        id: i64,
        counter: i64,
    },
    WipeWritePerm(usize),
    AddWritePerm(usize),
    /// DELETE_TOPIC_IN_NAMESRV of a topic, with the cluster's name or without.
    DeleteTopic(usize, bool),
    Unregister {
        name: usize,
        id: i64,
    },
}

const NAMES: [&str; 3] = ["broker-a", "broker-b", "broker-c"];

fn topic_name(n: usize) -> String {
    format!("topic-{n:05}")
}

fn registration(name: usize, id: i64, acting: bool, counter: i64) -> BrokerRegistration {
    broker("c", NAMES[name], &format!("{}:{id}", NAMES[name]), id)
        .acting(Some(acting))
        .version(counter, 0)
}

fn step() -> impl Strategy<Value = Step> {
    // Small topic and number ranges, so that registrations repeat topics,
    // find them changed or unchanged, and list one twice.
    let topics = prop::collection::vec(
        (0usize..40, 1i32..3, prop::sample::select(vec![6, 4, 2])),
        0..24,
    );
    // A few lists long enough to be written in several slices.
    let long = (0usize..2, 2_100usize..4_500)
        .prop_map(|(base, len)| (0..len).map(|n| (base * 1_000 + n, 4, 6)).collect());
    prop_oneof![
        6 => (0usize..3, 0i64..2, any::<bool>(), 0i64..3, prop_oneof![8 => topics, 1 => long], any::<bool>())
            .prop_map(|(name, id, acting, counter, topics, delete_missing)| Step::Register {
                name, id, acting, counter, topics, delete_missing,
            }),
        4 => (0usize..3, 0i64..2, 0i64..3)
            .prop_map(|(name, id, counter)| Step::Repeat { name, id, counter }),
        1 => (0usize..3).prop_map(Step::WipeWritePerm),
        1 => (0usize..3).prop_map(Step::AddWritePerm),
        1 => (0usize..40, any::<bool>()).prop_map(|(n, in_cluster)| Step::DeleteTopic(n, in_cluster)),
        1 => (0usize..3, 0i64..2).prop_map(|(name, id)| Step::Unregister { name, id }),
    ]
}

/// Every topic's route, with and without acting master, and the cluster info.
fn seen_by_clients(table: &RouteTable) -> String {
    let mut seen: Vec<String> = table
        .topics
        .keys()
        .map(|topic| {
            let routes = [false, true].map(|acting| table.topic_route(topic, acting));
            format!("{topic}: {routes:?}")
        })
        .collect();
    seen.sort();
    format!("{seen:?} {:?}", table.cluster_info())
}

fn configs(topics: &[(usize, i32, i32)]) -> Vec<TopicConfig> {
    topics
        .iter()
        .map(|&(n, queues, perm)| topic_with(&topic_name(n), queues, queues, perm))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn registering_through_the_comparison_leaves_the_one_piece_table(
        steps in prop::collection::vec(step(), 1..24)
    ) {
        let shared = SharedRoutes::new();
        let mut whole = RouteTable::new();
        let mut sent = std::collections::HashMap::new();
        for (at, step) in steps.into_iter().enumerate() {
            let now = 1_000 + at as u64;
            // A step that leaves the change count as it was must leave
            // every route and the cluster info as they were: cached route
            // bodies and the route snapshot rely on it.
            let changes_before = shared.changes();
            let seen = seen_by_clients(&shared.read());
            match step {
                Step::Register { name, id, acting, counter, topics, delete_missing } => {
                    let reg = registration(name, id, acting, counter).topics(&configs(&topics));
                    sent.insert((name, id), (reg.clone(), delete_missing));
                    let compared = shared.register_broker(reg.clone(), now, true, delete_missing);
                    let one_piece =
                        register_in_one_piece(&mut whole, reg, now, true, delete_missing);
                    prop_assert_eq!(compared, one_piece, "step {}", at);
                }
                Step::Repeat { name, id, counter } => {
                    if let Some((reg, delete_missing)) = sent.get(&(name, id)) {
                        let reg = reg.clone().version(counter, 0);
                        let compared =
                            shared.register_broker(reg.clone(), now, true, *delete_missing);
                        let one_piece =
                            register_in_one_piece(&mut whole, reg, now, true, *delete_missing);
                        prop_assert_eq!(compared, one_piece, "step {}", at);
                    }
                }
                Step::WipeWritePerm(name) => {
                    let a = shared.write().wipe_write_perm(NAMES[name]);
                    prop_assert_eq!(a, whole.wipe_write_perm(NAMES[name]));
                }
                Step::AddWritePerm(name) => {
                    let a = shared.write().add_write_perm(NAMES[name]);
                    prop_assert_eq!(a, whole.add_write_perm(NAMES[name]));
                }
                Step::DeleteTopic(n, in_cluster) => {
                    let cluster = in_cluster.then_some("c");
                    let a = shared.write().delete_topic(&topic_name(n), cluster);
                    prop_assert_eq!(a, whole.delete_topic(&topic_name(n), cluster));
                }
                Step::Unregister { name, id } => {
                    let addr = format!("{}:{id}", NAMES[name]);
                    let request = unregistration(&shared.read(), "c", &addr, NAMES[name], id);
                    let a = shared.write().unregister_batch(&[request], false);
                    let request = unregistration(&whole, "c", &addr, NAMES[name], id);
                    prop_assert_eq!(a, whole.unregister_batch(&[request], false));
                }
            }
            prop_assert_eq!(contents(&shared.read()), contents(&whole), "after step {}", at);
            // Deleted topics held back alike, whichever path a registration took.
            prop_assert_eq!(
                shared.read().tombstone_count(), whole.tombstone_count(), "after step {}", at
            );
            // The groups too, with their write-permission wipes.
            let groups: Vec<_> = shared.read().groups().cloned().collect();
            prop_assert_eq!(groups, whole.groups().cloned().collect::<Vec<_>>(), "after step {}", at);
            if shared.changes() == changes_before {
                prop_assert_eq!(
                    seen_by_clients(&shared.read()), seen, "uncounted change at step {}", at
                );
            }
        }
    }
}
