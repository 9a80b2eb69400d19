//! Liveness: the expiry scan's strict comparison, per-broker timeouts,
//! heartbeats (BROKER_HEARTBEAT, QUERY_DATA_VERSION), and which connection
//! closes unregister a broker.

use super::*;

const C: &str = "DefaultCluster";
const N: &str = "broker-a";
const A: &str = "127.0.0.1:10911";

fn key() -> BrokerKey {
    BrokerKey::new(C, A)
}

#[test]
fn expiry_is_strictly_after_the_timeout() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, A, 0).timeout(1_500).conn(7));
    assert!(routes.read().expired(T0 + 1_500).is_empty());
    let expired = routes.read().expired(T0 + 1_501);
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].conn, 7);
    assert_eq!(
        expired[0].unregistration,
        Unregistration {
            key: key(),
            broker_name: N.into(),
            broker_id: 0,
            fence: routes.read().generation(),
        }
    );
    // Deciding changes nothing: the entry stays until the batch runs, and is
    // found again by the next scan.
    assert!(routes.read().live_broker(&key()).is_some());
    assert_eq!(routes.read().expired(T0 + 10_000).len(), 1);
}

#[test]
fn default_timeout_is_120_s() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, A, 0));
    assert!(routes.read().expired(T0 + 120_000).is_empty());
    assert_eq!(routes.read().expired(T0 + 120_001).len(), 1);
}

#[test]
fn heartbeat_and_query_data_version_postpone_expiry() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, A, 0).timeout(1_000));
    assert!(routes.write().touch(&key(), T0 + 900));
    assert!(routes.read().expired(T0 + 1_500).is_empty());
    assert_eq!(routes.read().last_update(&key()), Some(T0 + 900));

    let (changed, stored) =
        routes
            .write()
            .query_data_version(&key(), Some(&DataVersion::new(1, 0, 100)), T0 + 1_800);
    assert!(!changed);
    assert_eq!(stored, Some(DataVersion::new(1, 0, 100)));
    assert!(routes.read().expired(T0 + 2_700).is_empty());
    assert_eq!(routes.read().expired(T0 + 2_801).len(), 1);

    // A heartbeat changes nothing else.
    let before = routes.read().live_broker(&key()).unwrap().clone();
    routes.write().touch(&key(), T0 + 5_000);
    let after = routes.read().live_broker(&key()).unwrap().clone();
    assert_eq!(
        (after.timeout_ms, after.generation, &after.data_version),
        (before.timeout_ms, before.generation, &before.data_version)
    );
}

#[test]
fn heartbeat_of_an_unknown_broker_does_nothing() {
    let routes = SharedRoutes::new();
    assert!(!routes.write().touch(&key(), T0));
    assert_eq!(routes.read().live_count(), 0);
    register(&routes, broker(C, N, A, 0));
    assert!(!routes.write().touch(&BrokerKey::new("other", A), T0));
}

#[test]
fn query_data_version_changed_cases() {
    let routes = SharedRoutes::new();
    let version = DataVersion::new(3, 0, 1_700_000_000_000);
    assert_eq!(
        routes
            .write()
            .query_data_version(&key(), Some(&version), T0),
        (true, None)
    );
    register(&routes, broker(C, N, A, 0).version(3, 1_700_000_000_000));
    assert_eq!(
        routes
            .write()
            .query_data_version(&key(), Some(&version), T0),
        (false, Some(version))
    );
    assert!(
        routes.write().query_data_version(&key(), None, T0).0,
        "absent body counts as changed"
    );
    let other = DataVersion::new(3, 1, 1_700_000_000_000);
    assert!(
        routes
            .write()
            .query_data_version(&key(), Some(&other), T0)
            .0
    );
}

#[test]
fn only_the_latest_registration_connection_unregisters() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, A, 0).conn(1));
    register(&routes, broker(C, N, A, 0).conn(2));
    assert!(
        routes.read().connection_closed(1).is_empty(),
        "an older connection"
    );
    assert!(routes.read().is_connection_of(&key(), 2));
    let decided = routes.read().connection_closed(2);
    assert_eq!(decided.len(), 1);
    assert_eq!(decided[0].key, key());
}

#[test]
fn one_connection_carrying_two_registrations_unregisters_both() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, A, 0).conn(5));
    register(&routes, broker("C2", "broker-b", A, 0).conn(5));
    let mut decided: Vec<BrokerKey> = routes
        .read()
        .connection_closed(5)
        .into_iter()
        .map(|u| u.key)
        .collect();
    decided.sort();
    assert_eq!(decided, [BrokerKey::new("C2", A), BrokerKey::new(C, A)]);
}

#[test]
fn expired_broker_without_group_member_is_not_submitted() {
    let routes = SharedRoutes::new();
    register(&routes, broker(C, N, A, 0).timeout(10));
    // The address left the group (another broker took id 0) but its live
    // entry stayed: nothing to unregister by (cluster, addr), as Java.
    register(&routes, broker(C, N, "127.0.0.1:10921", 0).timeout(10));
    let expired: Vec<BrokerKey> = routes
        .read()
        .expired(T0 + 11)
        .into_iter()
        .map(|e| e.unregistration.key)
        .collect();
    assert_eq!(expired, [BrokerKey::new(C, "127.0.0.1:10921")]);
    assert!(routes.read().live_broker(&key()).is_some());
}
