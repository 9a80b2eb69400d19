//! Role changes of a three-replica broker set against the real
//! `rmq-controller` and `rmq-namesrv`: one master whose sync-state set
//! grows to every replica; the master stops and another is elected within
//! the heartbeat timeout plus a few seconds, the NameServer route follows,
//! and the old master comes back as a slave; the change reaches the
//! replicas through NOTIFY_BROKER_ROLE_CHANGED when their periodic sync is
//! slow, and through the periodic sync when the controller sends no notices.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rmq_broker_client::{ReplicaRole, Source};

use crate::replicas::*;

/// Three replicas of `name`, started one after the other so that the
/// `i`-th has id `i + 1`; the first is master and the sync-state set holds
/// all three.
async fn three(name: &str, controllers: &str, ns: &str, slow_sync: bool) -> Vec<Replica> {
    let mut set = Vec::new();
    for expected in 1..=3 {
        let dir = scratch_dir(name);
        let mut config = fast_config(controllers, &dir);
        if slow_sync {
            config.sync_broker_metadata_period = Duration::from_secs(60);
        }
        let replica = Replica::start_with(name, controllers, &[ns], config).await;
        // One at a time, so that the first replica wins the first election.
        until("a role", WAIT, || replica.role() != ReplicaRole::Unknown).await;
        assert_eq!(replica.id(), Some(expected));
        set.push(replica);
    }
    until("replica 1 master of {1, 2, 3}", WAIT, || {
        set[0].role() == ReplicaRole::Master
            && set[0].agent().sync_state_set().sync_state_set == BTreeSet::from([1, 2, 3])
    })
    .await;
    set
}

fn expected_route(pairs: &[(i64, &Replica)]) -> BTreeMap<i64, String> {
    pairs.iter().map(|(id, r)| (*id, r.addr.clone())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_master_and_the_sync_state_set_grows() {
    let controller = Controller::start(&[]);
    let ns = Namesrv::start(&[]);
    let set = three("grow", &controller.addr, &ns.addr, false).await;
    let master = set[0].agent();
    assert_eq!(master.master_epoch(), 1);
    // Epoch 1 was {1}; two ALTERs (or one) later it holds all three.
    assert!(master.sync_state_set().sync_state_set_epoch >= 2);
    for slave in &set[1..] {
        let ReplicaRole::Slave {
            master_id,
            master_addr,
        } = slave.role()
        else {
            panic!("{} is not a slave", slave.addr);
        };
        assert_eq!((master_id, master_addr.as_str()), (1, set[0].addr.as_str()));
        assert_eq!(slave.agent().master_epoch(), 1);
    }
    // The controller agrees.
    let info = replica_info(&controller.addr, "grow").await;
    assert_eq!(info.ext("masterBrokerId"), Some("1"));
    let body = String::from_utf8(info.body.unwrap().to_vec()).unwrap();
    assert!(body.contains("\"syncStateSet\":[1,2,3]"), "{body}");
    route_becomes(
        &ns.addr,
        "grow",
        &expected_route(&[(0, &set[0]), (2, &set[1]), (3, &set[2])]),
    )
    .await;
    // stateVersion = master epoch.
    assert_eq!(master.registrar().data_version().state_version, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_master_is_replaced_and_comes_back_as_a_slave() {
    let controller = Controller::start(&[]);
    let ns = Namesrv::start(&[]);
    let mut set = three("failover", &controller.addr, &ns.addr, false).await;
    route_becomes(
        &ns.addr,
        "failover",
        &expected_route(&[(0, &set[0]), (2, &set[1]), (3, &set[2])]),
    )
    .await;

    let stopped = Instant::now();
    set[0].stop().await;
    let limit = HEARTBEAT_TIMEOUT + Duration::from_secs(5);
    until("a new master", limit, || {
        set[1..].iter().any(|r| r.role() == ReplicaRole::Master)
    })
    .await;
    let elapsed = stopped.elapsed();
    let (new, other) = if set[1].role() == ReplicaRole::Master {
        (1, 2)
    } else {
        (2, 1)
    };
    let new_id = set[new].id().unwrap();
    assert_eq!(set[new].agent().master_epoch(), 2);
    until(
        "the other follows the new master",
        WAIT,
        || matches!(set[other].role(), ReplicaRole::Slave { master_id, .. } if master_id == new_id),
    )
    .await;
    let other_id = set[other].id().unwrap();
    route_becomes(
        &ns.addr,
        "failover",
        &expected_route(&[(0, &set[new]), (other_id, &set[other])]),
    )
    .await;
    assert_eq!(set[new].agent().registrar().data_version().state_version, 2);
    eprintln!("new master after {elapsed:?}");

    // The old master returns with its identity file, as a slave.
    set[0].start_again().await;
    until(
        "the old master is a slave of the new one",
        WAIT,
        || matches!(set[0].role(), ReplicaRole::Slave { master_id, .. } if master_id == new_id),
    )
    .await;
    assert_eq!(set[0].id(), Some(1));
    route_becomes(
        &ns.addr,
        "failover",
        &expected_route(&[(0, &set[new]), (1, &set[0]), (other_id, &set[other])]),
    )
    .await;
    until("the new master's set takes it back", WAIT, || {
        set[new].agent().sync_state_set().sync_state_set == BTreeSet::from([1, 2, 3])
    })
    .await;
}

/// The source of the change that made `replica` master (or slave) at epoch 2.
fn source_at_epoch_2(replica: &Replica) -> Option<Source> {
    replica
        .changes()
        .iter()
        .find(|c| c.master_epoch == 2)
        .map(|c| c.source)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notices_carry_the_change_when_the_sync_is_slow() {
    let controller = Controller::start(&[]);
    let ns = Namesrv::start(&[]);
    // A 60 s sync: within this test only a notice can tell the replicas.
    let mut set = three("notify", &controller.addr, &ns.addr, true).await;
    set[0].stop().await;
    until("both survivors at epoch 2", WAIT, || {
        set[1..].iter().all(|r| r.agent().master_epoch() == 2)
    })
    .await;
    // The log task hears of a change after the agent made it.
    until("both changes logged", WAIT, || {
        set[1..].iter().all(|r| source_at_epoch_2(r).is_some())
    })
    .await;
    for replica in &set[1..] {
        assert_eq!(
            source_at_epoch_2(replica),
            Some(Source::Notify),
            "{:?}",
            replica.changes()
        );
    }
    assert_eq!(master_of(&[&set[1], &set[2]]).map(|_| ()), Some(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_periodic_sync_carries_the_change_without_notices() {
    let controller = Controller::start(&["notifyBrokerRoleChanged=false"]);
    let ns = Namesrv::start(&[]);
    let mut set = three("poll", &controller.addr, &ns.addr, false).await;
    set[0].stop().await;
    until("both survivors at epoch 2", WAIT, || {
        set[1..].iter().all(|r| r.agent().master_epoch() == 2)
    })
    .await;
    // The log task hears of a change after the agent made it.
    until("both changes logged", WAIT, || {
        set[1..].iter().all(|r| source_at_epoch_2(r).is_some())
    })
    .await;
    for replica in &set[1..] {
        assert_eq!(
            source_at_epoch_2(replica),
            Some(Source::Sync),
            "{:?}",
            replica.changes()
        );
    }
    let new = master_of(&[&set[1], &set[2]]).expect("one master") + 1;
    let other = 3 - new;
    let other_id = set[other].id().unwrap();
    route_becomes(
        &ns.addr,
        "poll",
        &expected_route(&[(0, &set[new]), (other_id, &set[other])]),
    )
    .await;
}
