//! Fencing of decided removals (apache/rocketmq#11043): an unregistration
//! carries the table's generation at the time it was decided, and a broker
//! that registered again after that survives it. A removal decided after the
//! latest registration still removes.

use super::*;

const C: &str = "DefaultCluster";
const N: &str = "broker-a";
const A: &str = "127.0.0.1:10911";

fn key() -> BrokerKey {
    BrokerKey::new(C, A)
}

fn registered() -> SharedRoutes {
    let routes = SharedRoutes::new();
    register(
        &routes,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .timeout(1_000)
            .conn(1),
    );
    routes
}

fn still_registered(table: &RouteTable) {
    assert!(table.live_broker(&key()).is_some());
    assert_eq!(table.group(N).unwrap().addrs, ids(&[(0, A)]));
    assert!(route(table, "t1", false).is_some());
}

fn removed(table: &RouteTable) {
    assert!(table.live_broker(&key()).is_none());
    assert!(table.group(N).is_none());
    assert!(route(table, "t1", false).is_none());
}

#[test]
fn generation_grows_with_every_registration_only() {
    let routes = SharedRoutes::new();
    assert_eq!(routes.read().generation(), 0);
    register(&routes, broker(C, N, A, 0));
    let first = routes.read().generation();
    register(&routes, broker(C, N, A, 0));
    assert!(routes.read().generation() > first);
    assert_eq!(
        routes.read().live_broker(&key()).unwrap().generation,
        routes.read().generation()
    );
    let before = routes.read().generation();
    routes.write().touch(&key(), T0 + 1);
    routes.write().wipe_write_perm(N);
    let _ = try_register(
        &routes,
        broker(C, N, "10.0.0.9:1", 5).topics(&[topic("one")]),
    );
    assert_eq!(
        routes.read().generation(),
        before,
        "no registration, no new generation"
    );
}

#[test]
fn expiry_decided_before_a_new_registration_is_fenced() {
    let routes = registered();
    let decided = routes.read().expired(T0 + 1_001);
    assert_eq!(decided.len(), 1);
    register(
        &routes,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .conn(2),
    );
    let batch: Vec<Unregistration> = decided.into_iter().map(|e| e.unregistration).collect();
    let outcome = routes.write().unregister_batch(&batch, false);
    assert_eq!(outcome.fenced, [key()]);
    assert!(outcome.removed_brokers.is_empty());
    still_registered(&routes.read());
}

#[test]
fn connection_close_decided_before_a_new_registration_is_fenced() {
    let routes = registered();
    let decided = routes.read().connection_closed(1);
    register(
        &routes,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .conn(2),
    );
    let outcome = routes.write().unregister_batch(&decided, false);
    assert_eq!(outcome.fenced, [key()]);
    still_registered(&routes.read());
}

#[test]
fn unregister_request_followed_by_a_restart_is_fenced() {
    let routes = registered();
    let decided = unregistration(&routes.read(), C, A, N, 0);
    register(
        &routes,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .conn(3),
    );
    routes.write().unregister_batch(&[decided], false);
    still_registered(&routes.read());
}

#[test]
fn a_removal_decided_after_the_latest_registration_removes() {
    let routes = registered();
    register(
        &routes,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .conn(2),
    );
    let decided = routes.read().connection_closed(2);
    let outcome = routes.write().unregister_batch(&decided, false);
    assert!(outcome.fenced.is_empty());
    removed(&routes.read());
}

#[test]
fn undecided_expiry_removes() {
    let routes = registered();
    let batch: Vec<Unregistration> = routes
        .read()
        .expired(T0 + 1_001)
        .into_iter()
        .map(|e| e.unregistration)
        .collect();
    routes.write().unregister_batch(&batch, false);
    removed(&routes.read());
}

#[test]
fn registrations_of_other_brokers_do_not_fence() {
    let routes = registered();
    let decided = routes.read().connection_closed(1);
    register(&routes, broker(C, "broker-b", "127.0.0.2:10911", 0).conn(9));
    routes.write().unregister_batch(&decided, false);
    removed(&routes.read());
    assert!(routes.read().group("broker-b").is_some());
}

#[test]
fn a_heartbeat_is_not_a_registration() {
    // Java closes an expired broker's connection and removes it; a heartbeat
    // that slips in between does not save it (it re-registers, which does).
    let routes = registered();
    let batch: Vec<Unregistration> = routes
        .read()
        .expired(T0 + 1_001)
        .into_iter()
        .map(|e| e.unregistration)
        .collect();
    routes.write().touch(&key(), T0 + 1_002);
    routes.write().unregister_batch(&batch, false);
    removed(&routes.read());
}

#[test]
fn a_mixed_batch_applies_only_the_unfenced_removals() {
    let routes = registered();
    register(
        &routes,
        broker(C, "broker-b", "127.0.0.2:10911", 0)
            .topics(&[topic("tb"), topic("t2")])
            .conn(8),
    );
    let stale = routes.read().connection_closed(1);
    let fresh_b = routes.read().connection_closed(8);
    register(
        &routes,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .conn(2),
    );
    let batch: Vec<Unregistration> = stale.into_iter().chain(fresh_b).collect();
    let outcome = routes.write().unregister_batch(&batch, false);
    assert_eq!(outcome.fenced, [key()]);
    assert_eq!(outcome.removed_groups, ["broker-b"]);
    still_registered(&routes.read());
    assert!(route(&routes.read(), "tb", false).is_none());
}

#[test]
fn a_fenced_removal_leaves_no_trace_even_when_decided_twice() {
    let routes = registered();
    let first = routes.read().connection_closed(1);
    let second: Vec<Unregistration> = routes
        .read()
        .expired(T0 + 5_000)
        .into_iter()
        .map(|e| e.unregistration)
        .collect();
    register(
        &routes,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .conn(2),
    );
    let batch: Vec<Unregistration> = first.into_iter().chain(second).collect();
    let outcome = routes.write().unregister_batch(&batch, false);
    assert_eq!(outcome.fenced.len(), 2);
    still_registered(&routes.read());
}
