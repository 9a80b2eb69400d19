//! Regression for apache/rocketmq#11043, as it happens in production: a
//! broker's connection drops, the broker reconnects at once and registers
//! again, and only then does the batch worker run the unregistration that was
//! queued for the dropped connection. Java removes the live broker (its route
//! vanishes until the next 30 s registration); Waymark must keep it.

use super::*;

const C: &str = "DefaultCluster";
const N: &str = "broker-a";
const MASTER: &str = "127.0.0.1:10911";
const SLAVE: &str = "127.0.0.1:10921";

fn full(addr: &str, id: i64, conn: ConnId) -> BrokerRegistration {
    broker(C, N, addr, id)
        .acting(Some(true))
        .topics(&[topic("TopicTest"), topic("Other")])
        .conn(conn)
}

#[test]
fn reconnect_and_reregister_before_the_worker_runs() {
    let routes = SharedRoutes::new();
    register(&routes, full(MASTER, 0, 1));
    register(&routes, full(SLAVE, 1, 2));

    // Connection 1 drops: the server decides the master's removal and queues it.
    let queued = routes.read().connection_closed(1);
    assert_eq!(queued.len(), 1);
    // The master reconnects on connection 3 and registers before the worker runs.
    register(&routes, full(MASTER, 0, 3));
    // The worker runs the batch.
    let outcome = routes.write().unregister_batch(&queued, true);

    assert_eq!(outcome.fenced, [BrokerKey::new(C, MASTER)]);
    assert!(
        outcome.notifications.is_empty(),
        "nothing changed, nothing to notify"
    );
    let r = route(&routes.read(), "TopicTest", true).unwrap();
    assert_eq!(addrs_of(&r, N), ids(&[(0, MASTER), (1, SLAVE)]));
    assert!(writable(queue_of(&r, N).perm), "no acting-master wipe");
    assert!(routes
        .read()
        .is_connection_of(&BrokerKey::new(C, MASTER), 3));

    // When the new connection drops for real, the master does go.
    let queued = routes.read().connection_closed(3);
    routes.write().unregister_batch(&queued, false);
    let r = route(&routes.read(), "TopicTest", true).unwrap();
    assert_eq!(addrs_of(&r, N), ids(&[(0, SLAVE)]), "acting master");
    assert!(!writable(queue_of(&r, N).perm));
}

#[test]
fn expiry_then_reregistration_over_the_same_connection() {
    // The scan decides the expiry; the broker's (late) registration arrives on
    // its still-open connection before the worker runs.
    let routes = SharedRoutes::new();
    register(&routes, full(MASTER, 0, 1).timeout(10_000));
    let queued: Vec<Unregistration> = routes
        .read()
        .expired(T0 + 10_001)
        .into_iter()
        .map(|e| e.unregistration)
        .collect();
    routes
        .register_broker(
            full(MASTER, 0, 1).timeout(10_000),
            T0 + 10_002,
            false,
            false,
        )
        .unwrap();
    routes.write().unregister_batch(&queued, false);
    assert!(route(&routes.read(), "TopicTest", false).is_some());
    assert_eq!(
        routes
            .read()
            .live_broker(&BrokerKey::new(C, MASTER))
            .unwrap()
            .last_update,
        T0 + 10_002
    );
}
