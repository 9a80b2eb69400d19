//! A master whose heartbeats stop reaching the controller while its
//! connection stays open (a partition, not a crash): the controller
//! expires it after its heartbeat timeout and elects another replica
//! within the timeout plus a few seconds; the route follows, the old
//! master's periodic registrations (older stateVersion) do not take id 0
//! back, and it turns slave once it hears the controller's answer.
//!
//! Each replica reaches the controller through its own gate, a TCP relay
//! the test can freeze; requests to the leader go to the address the
//! controller names, so only the heartbeats are cut off.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmq_broker_client::ReplicaRole;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::replicas::*;

/// A relay to `target` that stops passing bytes once frozen, keeping its
/// connections open.
struct Gate {
    addr: String,
    frozen: Arc<AtomicBool>,
}

impl Gate {
    async fn open(target: &str) -> Gate {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let frozen = Arc::new(AtomicBool::new(false));
        let (target, gate) = (target.to_owned(), frozen.clone());
        tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let Ok(outbound) = TcpStream::connect(&target).await else {
                    continue;
                };
                let (ri, wi) = inbound.into_split();
                let (ro, wo) = outbound.into_split();
                tokio::spawn(pump(ri, wo, gate.clone()));
                tokio::spawn(pump(ro, wi, gate.clone()));
            }
        });
        Gate { addr, frozen }
    }

    fn freeze(&self) {
        self.frozen.store(true, Ordering::SeqCst);
    }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    frozen: Arc<AtomicBool>,
) {
    let mut buf = vec![0; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        while frozen.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_master_is_replaced_after_its_heartbeat_timeout() {
    let controller = Controller::start(&[]);
    let ns = Namesrv::start(&[]);
    let mut gates = Vec::new();
    let mut set = Vec::new();
    for expected in 1..=3 {
        let gate = Gate::open(&controller.addr).await;
        let replica = Replica::start("silent", &gate.addr, &[&ns.addr]).await;
        // One at a time: through a relay the heartbeat may reach the
        // controller after the election request, which then fails and is
        // retried; meanwhile a later replica could win the first election.
        until("a role", WAIT, || replica.role() != ReplicaRole::Unknown).await;
        assert_eq!(replica.id(), Some(expected));
        gates.push(gate);
        set.push(replica);
    }
    until("replica 1 master of {1, 2, 3}", WAIT, || {
        set[0].role() == ReplicaRole::Master
            && set[0].agent().sync_state_set().sync_state_set == BTreeSet::from([1, 2, 3])
    })
    .await;

    let silenced = Instant::now();
    gates[0].freeze();
    let limit = HEARTBEAT_TIMEOUT + Duration::from_secs(5);
    until("a new master", limit, || {
        set[1..].iter().any(|r| r.role() == ReplicaRole::Master)
    })
    .await;
    let elapsed = silenced.elapsed();
    // Not before the controller could know: the timeout had to pass.
    assert!(
        elapsed >= HEARTBEAT_TIMEOUT - Duration::from_millis(500),
        "{elapsed:?}"
    );
    eprintln!("new master {elapsed:?} after the heartbeats stopped");

    let new = if set[1].role() == ReplicaRole::Master {
        1
    } else {
        2
    };
    let other = 3 - new;
    let new_id = set[new].id().unwrap();
    until(
        "the old master turns slave",
        WAIT,
        || matches!(set[0].role(), ReplicaRole::Slave { master_id, .. } if master_id == new_id),
    )
    .await;
    until(
        "the other follows",
        WAIT,
        || matches!(set[other].role(), ReplicaRole::Slave { master_id, .. } if master_id == new_id),
    )
    .await;
    let expected = BTreeMap::from([
        (0, set[new].addr.clone()),
        (1, set[0].addr.clone()),
        (set[other].id().unwrap(), set[other].addr.clone()),
    ]);
    route_becomes(&ns.addr, "silent", &expected).await;
}
