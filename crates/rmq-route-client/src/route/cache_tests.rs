//! Unit tests of `RouteCache`: what each fetched route does to the cache.

use rmq_protocol::TopicRouteData;

use super::*;
use crate::view::tests::{broker, names, queue};

fn route(brokers: &[(&str, &[i64])]) -> TopicRouteData {
    TopicRouteData {
        queue_datas: brokers.iter().map(|(b, _)| queue(b, 4, 4, 6)).collect(),
        broker_datas: brokers.iter().map(|(b, ids)| broker(b, ids)).collect(),
        ..TopicRouteData::default()
    }
}

#[test]
fn first_route_is_a_change_then_only_real_changes_count() {
    let mut cache = RouteCache::default();
    assert!(matches!(
        cache.apply("T", route(&[("a", &[0])])).unwrap(),
        Applied::Changed(_)
    ));
    assert!(matches!(
        cache.apply("T", route(&[("a", &[0])])).unwrap(),
        Applied::Unchanged
    ));
    let mut moved = route(&[("a", &[0])]);
    moved.broker_datas[0].cluster = "Elsewhere".into();
    assert!(
        !cache.apply("T", moved).unwrap().updated(),
        "cluster is not compared"
    );
    let applied = cache
        .apply("T", route(&[("a", &[0]), ("b", &[0])]))
        .unwrap();
    let Applied::Changed(view) = applied else {
        panic!("{applied:?}")
    };
    assert_eq!(view.publish.queues.len(), 8);
    assert_eq!(cache.view("T").unwrap().route.broker_datas.len(), 2);
}

#[test]
fn a_published_topic_without_queues_is_always_refreshed() {
    let mut cache = RouteCache::default();
    cache.add_published("T");
    assert!(cache.needs_update("T"));
    // Read-only: no publish queues, so the same route is re-applied.
    let mut read_only = route(&[("a", &[0])]);
    read_only.queue_datas[0].perm = 4;
    assert!(matches!(
        cache.apply("T", read_only.clone()).unwrap(),
        Applied::Changed(_)
    ));
    assert!(matches!(
        cache.apply("T", read_only).unwrap(),
        Applied::Refreshed(_)
    ));
    assert!(cache.needs_update("T"));
    assert!(cache.apply("T", route(&[("a", &[0])])).unwrap().updated());
    assert!(!cache.needs_update("T"));
}

#[test]
fn a_subscribed_topic_needs_a_view_only_once() {
    let mut cache = RouteCache::default();
    cache.add_subscribed("S");
    cache.add_published("P");
    assert_eq!(cache.refresh_topics(), ["P", "S"]);
    assert!(cache.needs_update("S"));
    cache.apply("S", route(&[("a", &[0])])).unwrap();
    assert!(!cache.needs_update("S"));
    cache.remove_subscribed("S");
    assert_eq!(cache.refresh_topics(), ["P"]);
    assert!(cache.view("S").is_some(), "the route stays cached");
}

#[test]
fn a_bad_order_conf_changes_nothing() {
    let mut cache = RouteCache::default();
    cache.apply("T", route(&[("a", &[0])])).unwrap();
    let mut bad = route(&[("b", &[0])]);
    bad.order_topic_conf = Some("b".into());
    assert!(cache.apply("T", bad).is_err());
    assert_eq!(
        names(cache.view("T").unwrap().publish.queues.clone())[0],
        "a:0"
    );
    assert!(cache.broker_addr_in_publish("b").is_none());
}

fn at(name: &str, addrs: &[(i64, &str)]) -> TopicRouteData {
    let mut r = route(&[(name, &[])]);
    r.broker_datas[0].broker_addrs = addrs.iter().map(|(i, a)| (*i, a.to_string())).collect();
    r
}

#[test]
fn broker_addresses_are_replaced_and_cleaned() {
    let mut cache = RouteCache::default();
    cache.apply("T1", at("a", &[(0, "a0"), (1, "a1")])).unwrap();
    cache.apply("T2", at("b", &[(0, "b0")])).unwrap();
    assert_eq!(cache.broker_addr_in_publish("a").as_deref(), Some("a0"));
    // T2 now lists `a` with its master only: the map is replaced, not merged.
    let mut both = at("a", &[(0, "a0")]);
    both.queue_datas.push(queue("b", 4, 4, 6));
    both.broker_datas
        .push(at("b", &[(0, "b0")]).broker_datas.remove(0));
    cache.apply("T2", both).unwrap();
    assert_eq!(cache.broker_addrs()["a"].len(), 1);
    assert!(cache.clean_offline_brokers().is_empty());
    // Both topics move to `c`: a and b are listed nowhere any more.
    cache.apply("T1", at("c", &[(0, "c0")])).unwrap();
    cache.apply("T2", at("c", &[(0, "c0")])).unwrap();
    let mut removed = cache.clean_offline_brokers();
    removed.sort();
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(removed, [pair("a", "a0"), pair("b", "b0")]);
    assert!(cache.broker_addr_in_publish("a").is_none());
    assert_eq!(cache.broker_addrs().len(), 1);
}

#[test]
fn subscribe_address_lookup_falls_back_as_java_does() {
    let mut cache = RouteCache::default();
    cache
        .apply(
            "T",
            route(&[("m", &[0, 1]), ("s", &[1, 2]), ("gap", &[0, 3])]),
        )
        .unwrap();
    let found = |name, id, only| {
        cache
            .broker_addr_in_subscribe(name, id, only)
            .map(|f| (f.addr, f.slave))
    };
    let addr = |id: i64| format!("10.0.0.{}:10911", id + 1);
    // (broker, id, onlyThisBroker) → (address, slave)
    let table = [
        ("m", 0, false, Some((addr(0), false))),
        ("m", 1, false, Some((addr(1), true))),
        ("s", 0, false, Some((addr(1), true))), // no master: first entry
        ("s", 0, true, None),
        ("s", 1, true, Some((addr(1), true))),
        ("gap", 2, true, Some((addr(3), true))), // id 2 missing → id 3
        ("gap", 1, false, Some((addr(0), false))), // 1 and 2 missing → first
        ("none", 0, false, None),
    ];
    for (name, id, only, want) in table {
        assert_eq!(found(name, id, only), want, "{name} {id} {only}");
    }
    assert_eq!(
        cache.broker_addr_in_publish("s"),
        None,
        "publish needs the master"
    );
}

#[test]
fn default_route_is_capped_from_read_counts() {
    let mut tbw = route(&[("a", &[0]), ("b", &[0])]);
    tbw.queue_datas[0].read_queue_nums = 8;
    tbw.queue_datas[0].write_queue_nums = 2;
    tbw.queue_datas[1].read_queue_nums = 3;
    let capped = cap_default_route(tbw, 4);
    let counts: Vec<_> = capped
        .queue_datas
        .iter()
        .map(|q| (q.read_queue_nums, q.write_queue_nums))
        .collect();
    assert_eq!(counts, [(4, 4), (3, 3)]);
}
