//! Topics of relayed copies (registrations pulled from another NameServer of
//! the cluster): a copy carries the holder's whole list, so the topics it no
//! longer lists leave; a copy whose list is the one the previous copy
//! applied skips that search, and so leaves what this node's own topic
//! administration added meanwhile until the list changes.

use rmq_protocol::QueueData;

use super::*;

const C: &str = "DefaultCluster";
const N: &str = "broker-a";
const A: &str = "127.0.0.1:10911";

fn relayed(routes: &SharedRoutes, topics: &[&str], counter: i64) {
    let topics: Vec<TopicConfig> = topics.iter().map(|t| topic(t)).collect();
    let reg = broker(C, N, A, 0)
        .topics(&topics)
        .version(counter, 100 + counter);
    routes
        .register_relayed(reg, "ns2:9876".into(), T0)
        .expect("relayed copy accepted");
}

fn routes_broker(routes: &SharedRoutes, topic: &str) -> bool {
    route(&routes.read(), topic, false)
        .is_some_and(|r| r.queue_datas.iter().any(|q| q.broker_name == N))
}

/// Another broker's topics, so that a search of the whole map has something to read.
fn with_neighbour() -> SharedRoutes {
    let routes = SharedRoutes::new();
    let topics: Vec<TopicConfig> = (0..50).map(|i| topic(&format!("Other-{i}"))).collect();
    register(
        &routes,
        broker(C, "broker-b", "127.0.0.2:10911", 0).topics(&topics),
    );
    routes
}

#[test]
fn a_relayed_copy_drops_the_topics_its_list_no_longer_has() {
    let routes = with_neighbour();
    relayed(&routes, &["T1", "T2", "T3"], 1);
    assert!(["T1", "T2", "T3"].iter().all(|t| routes_broker(&routes, t)));
    relayed(&routes, &["T1", "T2"], 2);
    assert!(routes_broker(&routes, "T1") && routes_broker(&routes, "T2"));
    assert!(
        route(&routes.read(), "T3", false).is_none(),
        "T3 had no other broker"
    );
    // The same list again changes nothing, and the neighbour is untouched.
    relayed(&routes, &["T1", "T2"], 3);
    assert!(routes_broker(&routes, "T1") && routes_broker(&routes, "T2"));
    assert!(!routes_broker(&routes, "T3"));
    assert_eq!(routes.read().topic_count(), 52);
}

#[test]
fn the_same_list_keeps_an_admin_added_topic_until_the_list_changes() {
    let routes = with_neighbour();
    relayed(&routes, &["T1", "T2"], 1);
    let queue = QueueData {
        broker_name: N.into(),
        perm: 6,
        read_queue_nums: 4,
        topic_sys_flag: 0,
        write_queue_nums: 4,
    };
    assert!(routes.write().register_topic("Added", vec![queue]));
    relayed(&routes, &["T1", "T2"], 2);
    assert!(
        routes_broker(&routes, "Added"),
        "REGISTER_TOPIC_IN_NAMESRV is this node's own write, as a broker's unchanged re-registration keeps it"
    );
    relayed(&routes, &["T1", "T3"], 3);
    assert!(!routes_broker(&routes, "Added") && !routes_broker(&routes, "T2"));
    assert!(routes_broker(&routes, "T1") && routes_broker(&routes, "T3"));
}

#[test]
fn a_relayed_copy_after_a_direct_registration_drops_what_the_direct_one_listed_beyond_it() {
    let routes = with_neighbour();
    // The broker registered here itself, then left; its group stays with a
    // slave, and so do the master's topics (as in Java).
    let topics = [topic("T1"), topic("T2"), topic("T3")];
    register(&routes, broker(C, N, A, 0).topics(&topics).conn(7));
    register(&routes, broker(C, N, "127.0.0.1:10921", 1).conn(8));
    unregister(&routes, C, A, N, 0);
    assert!(routes_broker(&routes, "T3"));
    relayed(&routes, &["T1", "T2"], 5);
    assert!(routes_broker(&routes, "T1") && routes_broker(&routes, "T2"));
    assert!(
        !routes_broker(&routes, "T3"),
        "the copy's list is the master's whole list"
    );
}

#[test]
fn a_relayed_copy_pulled_again_with_its_list_unchanged_writes_no_topic() {
    let routes = with_neighbour();
    relayed(&routes, &["T1", "T2", "T3"], 1);
    let edits = routes.read().topic_edits();
    // Each re-registration of the broker at its holder is pulled again with
    // a new DataVersion and the same list: the map is not written, so the
    // comparisons and the lists kept for pull answers stay valid.
    for counter in 2..5 {
        relayed(&routes, &["T1", "T2", "T3"], counter);
    }
    assert_eq!(
        routes.read().topic_edits(),
        edits,
        "the topic map was written"
    );
    let table = routes.read();
    let live = table
        .live_broker(&BrokerKey::new(C, A))
        .expect("the copy is live");
    assert_eq!(
        live.data_version.counter, 4,
        "the newest copy's version is held"
    );
}

/// Broker `b`'s registration: twenty topics, each shared by four brokers,
/// so that registrations of different brokers write the same topics.
fn steady(b: usize, counter: i64) -> BrokerRegistration {
    let topics: Vec<TopicConfig> = (0..20).map(|t| topic(&format!("T{}-{t}", b / 4))).collect();
    broker(C, &format!("broker-{b}"), &format!("127.0.0.{b}:10911"), 0)
        .topics(&topics)
        .version(counter, 100 + counter)
}

/// Brokers below 8 register here directly, the others are relayed.
fn apply_steady(routes: &SharedRoutes, b: usize, counter: i64) {
    if b < 8 {
        routes.register_broker(steady(b, counter), T0, false, false)
    } else {
        routes.register_relayed(steady(b, counter), "ns2:9876".into(), T0)
    }
    .expect("accepted");
}

#[test]
fn steady_re_registrations_side_by_side_write_no_topic() {
    let routes = std::sync::Arc::new(SharedRoutes::new());
    for b in 0..16 {
        apply_steady(&routes, b, 1);
    }
    let edits = routes.read().topic_edits();
    // Registrations of different brokers compare under the read lock side
    // by side and write under the write lock in turn; none of them changes
    // a topic, so none may count as a write.
    let threads: Vec<_> = (0..4)
        .map(|thread| {
            let routes = routes.clone();
            std::thread::spawn(move || {
                for counter in 2..300 {
                    for b in (thread..16).step_by(4) {
                        apply_steady(&routes, b, counter);
                    }
                }
            })
        })
        .collect();
    // Meanwhile another broker adds a topic now and then: a real write,
    // which the registrations that compared before it must not answer by
    // writing their unchanged topics again (counted, each would invalidate
    // the comparisons of the others, and so on while registrations keep
    // coming).
    const ADDED: usize = 50;
    let mut added: Vec<TopicConfig> = (0..5).map(|t| topic(&format!("New-{t}"))).collect();
    for n in 0..ADDED {
        added.push(topic(&format!("Added-{n}")));
        let reg = broker(C, "broker-new", "127.0.0.99:10911", 0)
            .topics(&added)
            .version(n as i64 + 1, 0);
        routes
            .register_broker(reg, T0, false, false)
            .expect("accepted");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    for thread in threads {
        thread.join().unwrap();
    }
    // Each added topic opens the map at most twice (room for it, then the
    // topic), and the new broker's first registration (five topics) once
    // for each and once for room.
    let writes = routes.read().topic_edits() - edits;
    assert!(
        writes <= 2 * ADDED as u64 + 6,
        "{writes} writes for {ADDED} added topics"
    );
}
