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

fn registered() -> RouteTable {
    let mut table = RouteTable::new();
    register(
        &mut table,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .timeout(1_000)
            .conn(1),
    );
    table
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
    let mut table = RouteTable::new();
    assert_eq!(table.generation(), 0);
    register(&mut table, broker(C, N, A, 0));
    let first = table.generation();
    register(&mut table, broker(C, N, A, 0));
    assert!(table.generation() > first);
    assert_eq!(
        table.live_broker(&key()).unwrap().generation,
        table.generation()
    );
    let before = table.generation();
    table.touch(&key(), T0 + 1);
    table.wipe_write_perm(N);
    let _ = try_register(
        &mut table,
        broker(C, N, "10.0.0.9:1", 5).topics(&[topic("one")]),
    );
    assert_eq!(
        table.generation(),
        before,
        "no registration, no new generation"
    );
}

#[test]
fn expiry_decided_before_a_new_registration_is_fenced() {
    let mut table = registered();
    let decided = table.expired(T0 + 1_001);
    assert_eq!(decided.len(), 1);
    register(
        &mut table,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .conn(2),
    );
    let batch: Vec<Unregistration> = decided.into_iter().map(|e| e.unregistration).collect();
    let outcome = table.unregister_batch(&batch, false);
    assert_eq!(outcome.fenced, [key()]);
    assert!(outcome.removed_brokers.is_empty());
    still_registered(&table);
}

#[test]
fn connection_close_decided_before_a_new_registration_is_fenced() {
    let mut table = registered();
    let decided = table.connection_closed(1);
    register(
        &mut table,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .conn(2),
    );
    let outcome = table.unregister_batch(&decided, false);
    assert_eq!(outcome.fenced, [key()]);
    still_registered(&table);
}

#[test]
fn unregister_request_followed_by_a_restart_is_fenced() {
    let mut table = registered();
    let decided = unregistration(&table, C, A, N, 0);
    register(
        &mut table,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .conn(3),
    );
    table.unregister_batch(&[decided], false);
    still_registered(&table);
}

#[test]
fn a_removal_decided_after_the_latest_registration_removes() {
    let mut table = registered();
    register(
        &mut table,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .conn(2),
    );
    let decided = table.connection_closed(2);
    let outcome = table.unregister_batch(&decided, false);
    assert!(outcome.fenced.is_empty());
    removed(&table);
}

#[test]
fn undecided_expiry_removes() {
    let mut table = registered();
    let batch: Vec<Unregistration> = table
        .expired(T0 + 1_001)
        .into_iter()
        .map(|e| e.unregistration)
        .collect();
    table.unregister_batch(&batch, false);
    removed(&table);
}

#[test]
fn registrations_of_other_brokers_do_not_fence() {
    let mut table = registered();
    let decided = table.connection_closed(1);
    register(
        &mut table,
        broker(C, "broker-b", "127.0.0.2:10911", 0).conn(9),
    );
    table.unregister_batch(&decided, false);
    removed(&table);
    assert!(table.group("broker-b").is_some());
}

#[test]
fn a_heartbeat_is_not_a_registration() {
    // Java closes an expired broker's connection and removes it; a heartbeat
    // that slips in between does not save it (it re-registers, which does).
    let mut table = registered();
    let batch: Vec<Unregistration> = table
        .expired(T0 + 1_001)
        .into_iter()
        .map(|e| e.unregistration)
        .collect();
    table.touch(&key(), T0 + 1_002);
    table.unregister_batch(&batch, false);
    removed(&table);
}

#[test]
fn a_mixed_batch_applies_only_the_unfenced_removals() {
    let mut table = registered();
    register(
        &mut table,
        broker(C, "broker-b", "127.0.0.2:10911", 0)
            .topics(&[topic("tb"), topic("t2")])
            .conn(8),
    );
    let stale = table.connection_closed(1);
    let fresh_b = table.connection_closed(8);
    register(
        &mut table,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .conn(2),
    );
    let batch: Vec<Unregistration> = stale.into_iter().chain(fresh_b).collect();
    let outcome = table.unregister_batch(&batch, false);
    assert_eq!(outcome.fenced, [key()]);
    assert_eq!(outcome.removed_groups, ["broker-b"]);
    still_registered(&table);
    assert!(route(&table, "tb", false).is_none());
}

#[test]
fn a_fenced_removal_leaves_no_trace_even_when_decided_twice() {
    let mut table = registered();
    let first = table.connection_closed(1);
    let second: Vec<Unregistration> = table
        .expired(T0 + 5_000)
        .into_iter()
        .map(|e| e.unregistration)
        .collect();
    register(
        &mut table,
        broker(C, N, A, 0)
            .topics(&[topic("t1"), topic("t2")])
            .conn(2),
    );
    let batch: Vec<Unregistration> = first.into_iter().chain(second).collect();
    let outcome = table.unregister_batch(&batch, false);
    assert_eq!(outcome.fenced.len(), 2);
    still_registered(&table);
}
