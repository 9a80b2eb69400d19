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
