//! Java `RouteInfoManagerNewTest`, second half: role switches, acting master
//! (prime slave, read-only perm, id-0 rewrite with `supportActingMaster=true`)
//! and connection loss.

use super::java_route_info_manager_new::{
    master, slave, BASE, CLUSTER, MASTER, MASTER_CONN, NAME, SLAVE, SLAVE_CONN,
};
use super::*;

fn acting_off(reg: BrokerRegistration) -> BrokerRegistration {
    reg.acting(Some(false))
}

/// Runs every unregistration a closed connection gives, at once.
fn close_connection(routes: &SharedRoutes, conn: ConnId) -> UnregisterOutcome {
    let decided = routes.read().connection_closed(conn);
    routes.write().unregister_batch(&decided, false)
}

/// switchBrokerRole: master leaves, slave comes back as master, old master
/// comes back as slave; `leave` is how the master leaves.
fn switch_roles(leave: fn(&SharedRoutes)) {
    let routes = SharedRoutes::new();
    register(&routes, acting_off(master(&[])));
    register(&routes, acting_off(slave(&[])));

    leave(&routes);
    let r = route(&routes.read(), BASE, true).unwrap();
    assert_eq!(addrs_of(&r, NAME), ids(&[(1, SLAVE)]));

    let mut promoted = acting_off(slave(&[])).version(2, 200);
    promoted.broker_id = 0;
    register(&routes, promoted);
    let r = route(&routes.read(), BASE, true).unwrap();
    assert_eq!(addrs_of(&r, NAME), ids(&[(0, SLAVE)]));

    let mut demoted = acting_off(master(&[])).version(3, 300);
    demoted.broker_id = 1;
    register(&routes, demoted);
    let r = route(&routes.read(), BASE, true).unwrap();
    assert_eq!(addrs_of(&r, NAME), ids(&[(0, SLAVE), (1, MASTER)]));
    assert!(writable(queue_of(&r, NAME).perm));
}

#[test]
fn switch_broker_role() {
    switch_roles(|routes| {
        unregister(routes, CLUSTER, MASTER, NAME, 0);
    });
}

#[test]
fn switch_broker_role_channel_destroy() {
    switch_roles(|routes| {
        let outcome = close_connection(routes, MASTER_CONN);
        assert_eq!(outcome.removed_brokers, [BrokerKey::new(CLUSTER, MASTER)]);
    });
}

#[test]
fn unregister_master_with_acting_master_shows_the_slave_as_read_only_master() {
    let routes = SharedRoutes::new();
    register(&routes, master(&[]));
    register(&routes, slave(&[]));
    unregister(&routes, CLUSTER, MASTER, NAME, 0);
    let r = route(&routes.read(), BASE, true).unwrap();
    assert_eq!(addrs_of(&r, NAME), ids(&[(0, SLAVE)]));
    assert_eq!(queue_of(&r, NAME).perm, 4);
    // The tables keep the slave under its own id; only the route is rewritten.
    assert_eq!(routes.read().group(NAME).unwrap().addrs, ids(&[(1, SLAVE)]));
    assert_eq!(
        addrs_of(&route(&routes.read(), BASE, false).unwrap(), NAME),
        ids(&[(1, SLAVE)])
    );
}

#[test]
fn unregister_master_old_version_keeps_slave_id_and_perm() {
    let routes = SharedRoutes::new();
    register(&routes, acting_off(master(&[])));
    register(&routes, acting_off(slave(&[])));
    unregister(&routes, CLUSTER, MASTER, NAME, 0);
    let r = route(&routes.read(), BASE, true).unwrap();
    assert!(!addrs_of(&r, NAME).contains_key(&0));
    assert_eq!(queue_of(&r, NAME).perm, 6);
}

#[test]
fn route_with_slave_loses_and_regains_write_with_the_master() {
    let routes = SharedRoutes::new();
    register(&routes, master(&[]));
    register(&routes, slave(&[]));
    assert!(writable(
        queue_of(&route(&routes.read(), BASE, true).unwrap(), NAME).perm
    ));

    unregister(&routes, CLUSTER, MASTER, NAME, 0);
    let r = route(&routes.read(), BASE, true).unwrap();
    assert_eq!(addrs_of(&r, NAME).len(), 1);
    assert!(!writable(queue_of(&r, NAME).perm));

    // Same DataVersion as before: registerFirst (no id 0) restores the perms.
    register(&routes, master(&[]));
    let r = route(&routes.read(), BASE, true).unwrap();
    assert_eq!(addrs_of(&r, NAME), ids(&[(0, MASTER), (1, SLAVE)]));
    assert!(writable(queue_of(&r, NAME).perm));
}

#[test]
fn partition_and_global_order_routes_of_a_prime_slave() {
    // Slave alone: it is the prime slave, registered read-only, shown as id 0.
    let routes = SharedRoutes::new();
    register(&routes, slave(&["order"]));
    let r = route(&routes.read(), "order", true).unwrap();
    assert_eq!(addrs_of(&r, NAME), ids(&[(0, SLAVE)]));
    assert!(!writable(queue_of(&r, NAME).perm));

    // Master and slave, then the master leaves: the same picture.
    let routes = SharedRoutes::new();
    register(&routes, master(&["order"]));
    register(&routes, slave(&["order"]));
    unregister(&routes, CLUSTER, MASTER, NAME, 0);
    let r = route(&routes.read(), "order", true).unwrap();
    assert_eq!(addrs_of(&r, NAME), ids(&[(0, SLAVE)]));
    assert!(!writable(queue_of(&r, NAME).perm));

    // Two groups, one lost its master.
    let routes = SharedRoutes::new();
    register(&routes, master(&["order"]));
    register(&routes, slave(&["order"]));
    let second = |addr: &str, id| {
        broker(CLUSTER, "Broker_2", addr, id)
            .acting(Some(true))
            .topics(&[topic(BASE), topic("order")])
            .conn(20 + id as ConnId)
    };
    register(&routes, second("127.0.0.2:10911", 0));
    register(&routes, second("127.0.0.2:30911", 1));
    unregister(&routes, CLUSTER, MASTER, NAME, 0);
    let r = route(&routes.read(), "order", true).unwrap();
    assert_eq!(addrs_of(&r, NAME), ids(&[(0, SLAVE)]));
    assert_eq!(
        addrs_of(&r, "Broker_2"),
        ids(&[(0, "127.0.0.2:10911"), (1, "127.0.0.2:30911")])
    );
    assert!(!writable(queue_of(&r, NAME).perm));
    assert!(writable(queue_of(&r, "Broker_2").perm));
}

#[test]
fn register_only_slave_broker() {
    let routes = SharedRoutes::new();
    register(&routes, slave(&[]));
    let r = route(&routes.read(), BASE, true).expect("a prime slave's topics have a route");
    assert!(!writable(queue_of(&r, NAME).perm));

    register(&routes, master(&[]));
    assert!(writable(
        queue_of(&route(&routes.read(), BASE, true).unwrap(), NAME).perm
    ));

    unregister(&routes, CLUSTER, MASTER, NAME, 0);
    assert!(!writable(
        queue_of(&route(&routes.read(), BASE, true).unwrap(), NAME).perm
    ));

    register(&routes, master(&[]));
    assert!(writable(
        queue_of(&route(&routes.read(), BASE, true).unwrap(), NAME).perm
    ));
}

#[test]
fn on_channel_destroy_of_a_lone_master() {
    let routes = SharedRoutes::new();
    register(&routes, master(&["t1"]));
    close_connection(&routes, MASTER_CONN);
    assert!(route(&routes.read(), BASE, true).is_none());
    assert!(route(&routes.read(), "t1", true).is_none());
}

#[test]
fn on_channel_destroy_by_broker_info() {
    let routes = SharedRoutes::new();
    register(&routes, master(&["t1"]));
    let decided = routes
        .read()
        .unregistration_for(&BrokerKey::new(CLUSTER, MASTER))
        .expect("found by (cluster, addr)");
    assert_eq!((decided.broker_name.as_str(), decided.broker_id), (NAME, 0));
    routes.write().unregister_batch(&[decided], false);
    assert!(route(&routes.read(), "t1", true).is_none());
    assert!(routes
        .read()
        .unregistration_for(&BrokerKey::new("other", MASTER))
        .is_none());
}

#[test]
fn on_channel_destroy_master_then_slave() {
    let routes = SharedRoutes::new();
    register(&routes, master(&[]));
    register(&routes, slave(&[]));
    close_connection(&routes, MASTER_CONN);
    assert_eq!(routes.read().group(NAME).unwrap().addrs, ids(&[(1, SLAVE)]));
    assert_eq!(
        addrs_of(&route(&routes.read(), BASE, false).unwrap(), NAME),
        ids(&[(1, SLAVE)])
    );
    close_connection(&routes, SLAVE_CONN);
    assert!(route(&routes.read(), BASE, true).is_none());
    assert!(routes.read().group(NAME).is_none());
}

#[test]
fn a_client_connection_closing_changes_nothing() {
    // BrokerHousekeepingServiceTest: events of an unknown connection.
    let routes = SharedRoutes::new();
    register(&routes, master(&[]));
    assert!(routes.read().connection_closed(999).is_empty());
    assert!(route(&routes.read(), BASE, true).is_some());
    assert!(RouteTable::new().connection_closed(0).is_empty());
}

#[test]
fn sync_broker_member_topic_is_never_rewritten() {
    let routes = SharedRoutes::new();
    let member_topic = format!("rmq_sys_SYNC_BROKER_MEMBER_{NAME}");
    register(&routes, master(&[&member_topic]));
    register(&routes, slave(&[&member_topic]));
    unregister(&routes, CLUSTER, MASTER, NAME, 0);
    let r = route(&routes.read(), &member_topic, true).unwrap();
    assert_eq!(addrs_of(&r, NAME), ids(&[(1, SLAVE)]));
    assert_eq!(
        addrs_of(&route(&routes.read(), BASE, true).unwrap(), NAME),
        ids(&[(0, SLAVE)])
    );
}
