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
    let mut table = RouteTable::new();
    register(&mut table, full(MASTER, 0, 1));
    register(&mut table, full(SLAVE, 1, 2));

    // Connection 1 drops: the server decides the master's removal and queues it.
    let queued = table.connection_closed(1);
    assert_eq!(queued.len(), 1);
    // The master reconnects on connection 3 and registers before the worker runs.
    register(&mut table, full(MASTER, 0, 3));
    // The worker runs the batch.
    let outcome = table.unregister_batch(&queued, true);

    assert_eq!(outcome.fenced, [BrokerKey::new(C, MASTER)]);
    assert!(
        outcome.notifications.is_empty(),
        "nothing changed, nothing to notify"
    );
    let r = route(&table, "TopicTest", true).unwrap();
    assert_eq!(addrs_of(&r, N), ids(&[(0, MASTER), (1, SLAVE)]));
    assert!(writable(queue_of(&r, N).perm), "no acting-master wipe");
    assert!(table.is_connection_of(&BrokerKey::new(C, MASTER), 3));

    // When the new connection drops for real, the master does go.
    let queued = table.connection_closed(3);
    table.unregister_batch(&queued, false);
    let r = route(&table, "TopicTest", true).unwrap();
    assert_eq!(addrs_of(&r, N), ids(&[(0, SLAVE)]), "acting master");
    assert!(!writable(queue_of(&r, N).perm));
}

#[test]
fn expiry_then_reregistration_over_the_same_connection() {
    // The scan decides the expiry; the broker's (late) registration arrives on
    // its still-open connection before the worker runs.
    let mut table = RouteTable::new();
    register(&mut table, full(MASTER, 0, 1).timeout(10_000));
    let queued: Vec<Unregistration> = table
        .expired(T0 + 10_001)
        .into_iter()
        .map(|e| e.unregistration)
        .collect();
    table
        .register_broker(
            full(MASTER, 0, 1).timeout(10_000),
            T0 + 10_002,
            false,
            false,
        )
        .unwrap();
    table.unregister_batch(&queued, false);
    assert!(route(&table, "TopicTest", false).is_some());
    assert_eq!(
        table
            .live_broker(&BrokerKey::new(C, MASTER))
            .unwrap()
            .last_update,
        T0 + 10_002
    );
}
