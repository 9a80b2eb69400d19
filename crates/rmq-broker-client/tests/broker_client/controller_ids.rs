//! Controller broker ids against the real `rmq-controller`: three replicas
//! get ids 1, 2, 3 and keep them in identity files written as Java writes
//! them; a restarted replica uses its file; a crash between
//! CONTROLLER_APPLY_BROKER_ID and the identity file (the temporary file
//! left behind) applies the same id again; a temporary file whose id is
//! taken is dropped and a new id obtained.

use std::collections::BTreeMap;

use rmq_broker_client::controller::IdOrigin;
use rmq_broker_client::ReplicaRole;
use rmq_wire::RequestCode;

use crate::replicas::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_get_ids_1_2_3_in_java_identity_files() {
    let controller = Controller::start(&[]);
    let ns = Namesrv::start(&[]);
    let mut set = Vec::new();
    for expected in 1..=3 {
        let replica = Replica::start("ids-a", &controller.addr, &[&ns.addr]).await;
        // One at a time, so that the first replica wins the first election.
        until("a role", WAIT, || replica.role() != ReplicaRole::Unknown).await;
        // The agent takes its id before it tells the log task.
        until("the id logged", WAIT, || !replica.ids().is_empty()).await;
        assert_eq!(replica.id(), Some(expected));
        assert_eq!(replica.ids(), [(expected, IdOrigin::Assigned)]);
        assert_eq!(
            replica.identity_file(),
            format!("DefaultCluster#ids-a#{expected}")
        );
        assert!(!replica.has_temp_file());
        set.push(replica);
    }
    assert_eq!(next_id(&controller.addr, "ids-a").await, 4);

    // The first to ask was elected; the others follow it.
    let all: Vec<&Replica> = set.iter().collect();
    until("one master and two slaves", WAIT, || {
        master_of(&all) == Some(0)
            && set[1..]
                .iter()
                .all(|r| matches!(r.role(), ReplicaRole::Slave { master_id: 1, .. }))
    })
    .await;
    let expected = BTreeMap::from([
        (0, set[0].addr.clone()),
        (2, set[1].addr.clone()),
        (3, set[2].addr.clone()),
    ]);
    route_becomes(&ns.addr, "ids-a", &expected).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_replica_uses_the_id_of_its_file() {
    let controller = Controller::start(&[]);
    let ns = Namesrv::start(&[]);
    let first = Replica::start("ids-b", &controller.addr, &[&ns.addr]).await;
    until("the first is master", WAIT, || {
        first.role() == ReplicaRole::Master
    })
    .await;
    let mut second = Replica::start("ids-b", &controller.addr, &[&ns.addr]).await;
    until("the second is a slave", WAIT, || {
        matches!(second.role(), ReplicaRole::Slave { .. })
    })
    .await;
    assert_eq!(second.id(), Some(2));

    second.stop().await;
    second.start_again().await;
    // Logged by a task of its own, after the agent took the id.
    until("an id again", WAIT, || !second.ids().is_empty()).await;
    assert_eq!(second.ids(), [(2, IdOrigin::File)]);
    until("a slave again", WAIT, || {
        matches!(second.role(), ReplicaRole::Slave { master_id: 1, .. })
    })
    .await;
    assert_eq!(
        next_id(&controller.addr, "ids-b").await,
        3,
        "no id was spent"
    );
    let expected = BTreeMap::from([(0, first.addr.clone()), (2, second.addr.clone())]);
    route_becomes(&ns.addr, "ids-b", &expected).await;
}

/// Applies `id` for `addr` directly, as a broker that then crashed would
/// have, and leaves its temporary file in `dir`.
async fn apply_then_crash(
    controller: &str,
    name: &str,
    id: i64,
    addr: &str,
    dir: &std::path::Path,
) {
    let code = format!("{addr};1700000000000");
    let applied = call_leader(
        controller,
        request(
            RequestCode::ControllerApplyBrokerId,
            &[
                ("clusterName", CLUSTER),
                ("brokerName", name),
                ("appliedBrokerId", &id.to_string()),
                ("registerCheckCode", &code),
            ],
        ),
    )
    .await;
    assert_eq!(applied.code, 0, "{applied:?}");
    std::fs::write(
        dir.join("brokerIdentity-temp"),
        format!("{CLUSTER}#{name}#{id}#{code}"),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_between_apply_and_identity_file_applies_the_same_id_again() {
    let controller = Controller::start(&[]);
    let ns = Namesrv::start(&[]);
    let dir = scratch_dir("ids-c");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    assert_eq!(next_id(&controller.addr, "ids-c").await, 1);
    apply_then_crash(&controller.addr, "ids-c", 1, &addr, &dir).await;
    assert_eq!(next_id(&controller.addr, "ids-c").await, 2);

    let config = fast_config(&controller.addr, &dir);
    let mut replica = Replica::unstarted("ids-c", &controller.addr, &[&ns.addr], config, &listener);
    replica.launch(listener);
    until("an id", WAIT, || !replica.ids().is_empty()).await;
    assert_eq!(replica.ids(), [(1, IdOrigin::Reapplied)]);
    assert_eq!(replica.identity_file(), "DefaultCluster#ids-c#1");
    assert!(!replica.has_temp_file());
    assert_eq!(
        next_id(&controller.addr, "ids-c").await,
        2,
        "the same id, not a new one"
    );
    until("master", WAIT, || replica.role() == ReplicaRole::Master).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_temporary_file_whose_id_was_taken_is_dropped_for_a_new_id() {
    let controller = Controller::start(&[]);
    let ns = Namesrv::start(&[]);
    let owner = Replica::start("ids-d", &controller.addr, &[&ns.addr]).await;
    until("the owner has id 1", WAIT, || owner.id() == Some(1)).await;

    // A temporary file for id 1 with another check code.
    let dir = scratch_dir("ids-d");
    std::fs::write(
        dir.join("brokerIdentity-temp"),
        "DefaultCluster#ids-d#1#127.0.0.1:1;1700000000000",
    )
    .unwrap();
    let config = fast_config(&controller.addr, &dir);
    let replica = Replica::start_with("ids-d", &controller.addr, &[&ns.addr], config).await;
    until("an id", WAIT, || !replica.ids().is_empty()).await;
    assert_eq!(replica.ids(), [(2, IdOrigin::Assigned)]);
    assert_eq!(replica.identity_file(), "DefaultCluster#ids-d#2");
    assert!(!replica.has_temp_file());
}
