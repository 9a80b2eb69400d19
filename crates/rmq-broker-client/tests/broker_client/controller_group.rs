//! A broker set served by a three-node `rmq-controller` group whose leader
//! is killed: the replicas find the new leader, a stopped master is still
//! replaced (and the NameServer route follows), and a new replica still
//! gets an id.

use std::collections::BTreeSet;
use std::time::Duration;

use rmq_broker_client::ReplicaRole;
use rmq_wire::RequestCode;

use crate::replicas::*;

/// The leader address `node` reports, if any.
async fn leader_seen_by(node: &str) -> Option<String> {
    let answer = call(node, request(RequestCode::ControllerGetMetadataInfo, &[])).await;
    answer.ext("controllerLeaderAddress").map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_set_is_served_after_the_controller_leader_dies() {
    let mut group = Controller::start_group::<3>(&[]);
    let controllers = group
        .iter()
        .map(|c| c.addr.as_str())
        .collect::<Vec<_>>()
        .join(";");
    let ns = Namesrv::start(&[]);
    let mut set = Vec::new();
    for expected in 1..=3 {
        let replica = Replica::start("group", &controllers, &[&ns.addr]).await;
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

    let leader = leader_seen_by(&group[0].addr).await.expect("a leader");
    let killed = group
        .iter()
        .position(|c| c.addr == leader)
        .expect("a member");
    group[killed].stop();
    let survivor = group.iter().find(|c| c.is_running()).unwrap().addr.clone();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let next = loop {
        match leader_seen_by(&survivor).await {
            Some(seen) if seen != leader => break seen,
            _ => {}
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no new controller leader"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    eprintln!("controller leader {leader} killed, new leader {next}");

    // The broker master stops: the new controller leader elects another.
    set[0].stop().await;
    until("a new broker master", Duration::from_secs(30), || {
        set[1..].iter().any(|r| r.role() == ReplicaRole::Master)
    })
    .await;
    let new = if set[1].role() == ReplicaRole::Master {
        1
    } else {
        2
    };
    let other = 3 - new;
    until("the other follows", WAIT, || {
        matches!(set[other].role(), ReplicaRole::Slave { master_id, .. } if Some(master_id) == set[new].id())
    })
    .await;
    let expected = [
        (0, set[new].addr.clone()),
        (set[other].id().unwrap(), set[other].addr.clone()),
    ]
    .into_iter()
    .collect();
    route_becomes(&ns.addr, "group", &expected).await;

    // Ids are still handed out.
    let late = Replica::start("group", &controllers, &[&ns.addr]).await;
    until("a fourth id", WAIT, || late.id().is_some()).await;
    assert_eq!(late.id(), Some(4));
    until("the fourth is a slave", WAIT, || {
        matches!(late.role(), ReplicaRole::Slave { master_id, .. } if Some(master_id) == set[new].id())
    })
    .await;
}
