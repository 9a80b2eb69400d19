//! Controller groups over real sockets: a broker set's life through the
//! wire protocol, leader failover in a three-node group, and restarts from
//! the Raft store.

use std::time::Duration;

use crate::common::{call, client, ext, group, leader, request, Replica};
use rmq_wire::RequestCode;

const NOT_LEADER: i32 = 2007;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_node_serves_a_broker_set_from_join_to_failover() {
    let nodes = group(1, &[("notifyBrokerRoleChanged", "false")]).await;
    leader(&nodes, Duration::from_secs(10)).await;
    let c = client(&nodes[0].addr).await;
    let a = Replica::join(&c, "broker-a", "127.0.0.1:30911").await;
    let b = Replica::join(&c, "broker-a", "127.0.0.1:30921").await;
    assert_eq!((a.id, b.id), (1, 2));
    call(&c, a.heartbeat(600_000, 0)).await;
    // The first election goes to the requester, which is registered and alive.
    let elected = call(&c, a.elect()).await;
    assert_eq!(elected.code, 0, "{elected:?}");
    assert_eq!(ext(&elected, "masterBrokerId"), Some("1"));
    assert_eq!(ext(&elected, "masterEpoch"), Some("1"));
    // B heartbeats with a short timeout and joins the SSS.
    call(&c, b.heartbeat(600_000, 0)).await;
    let grown = call(
        &c,
        request(
            RequestCode::ControllerAlterSyncStateSet,
            &[
                ("brokerName", "broker-a"),
                ("masterBrokerId", "1"),
                ("masterEpoch", "1"),
            ],
            Some(r#"{"syncStateSet":[1,2],"syncStateSetEpoch":1}"#),
        ),
    )
    .await;
    assert_eq!(grown.code, 0, "{grown:?}");
    assert_eq!(ext(&grown, "newSyncStateSetEpoch"), Some("2"));
    // A's connection is where its heartbeats came from; a second client
    // carries B's from now on, and A's client closes: A is gone at once.
    let c2 = client(&nodes[0].addr).await;
    call(&c2, b.heartbeat(600_000, 10)).await;
    c.close();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let info = call(
            &c2,
            request(
                RequestCode::ControllerGetReplicaInfo,
                &[("brokerName", "broker-a")],
                None,
            ),
        )
        .await;
        if ext(&info, "masterBrokerId") == Some("2") {
            assert_eq!(ext(&info, "masterEpoch"), Some("2"));
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no failover: {info:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_keep_the_state_when_the_leader_stops() {
    let mut nodes = group(3, &[("notifyBrokerRoleChanged", "false")]).await;
    let first = leader(&nodes, Duration::from_secs(15)).await;
    // Followers refuse decisions with Java's code and remark, and name the leader.
    let follower = (first + 1) % 3;
    let fc = client(&nodes[follower].addr).await;
    let refused = call(
        &fc,
        request(
            RequestCode::ControllerGetNextBrokerId,
            &[("clusterName", "c"), ("brokerName", "x")],
            None,
        ),
    )
    .await;
    assert_eq!(refused.code, NOT_LEADER);
    assert_eq!(
        refused.remark.as_deref(),
        Some("The controller is not in leader state")
    );
    // A follower names the leader once it has heard from it.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let meta = loop {
        let meta = call(
            &fc,
            request(RequestCode::ControllerGetMetadataInfo, &[], None),
        )
        .await;
        if ext(&meta, "controllerLeaderAddress").is_some() {
            break meta;
        }
        assert!(tokio::time::Instant::now() < deadline, "{meta:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        ext(&meta, "controllerLeaderAddress"),
        Some(nodes[first].addr.as_str())
    );
    assert_eq!(ext(&meta, "isLeader"), Some("false"));
    assert_eq!(ext(&meta, "group"), Some("group1"));

    let c = client(&nodes[first].addr).await;
    let a = Replica::join(&c, "broker-a", "127.0.0.1:30911").await;
    call(&c, a.heartbeat(600_000, 0)).await;
    assert_eq!(call(&c, a.elect()).await.code, 0);

    nodes[first].stop().await;
    let second = leader(&nodes, Duration::from_secs(15)).await;
    assert_ne!(second, first);
    let c = client(&nodes[second].addr).await;
    let info = call(
        &c,
        request(
            RequestCode::ControllerGetReplicaInfo,
            &[("brokerName", "broker-a")],
            None,
        ),
    )
    .await;
    assert_eq!(ext(&info, "masterBrokerId"), Some("1"), "{info:?}");
    assert_eq!(ext(&info, "masterEpoch"), Some("1"));
    let next = call(
        &c,
        request(
            RequestCode::ControllerGetNextBrokerId,
            &[
                ("clusterName", "DefaultCluster"),
                ("brokerName", "broker-a"),
            ],
            None,
        ),
    )
    .await;
    assert_eq!(ext(&next, "nextBrokerId"), Some("2"));

    // Every node stops, then all start again from their stores.
    for node in nodes.iter_mut() {
        node.stop().await;
    }
    for node in nodes.iter_mut() {
        node.start().await;
    }
    let third = leader(&nodes, Duration::from_secs(15)).await;
    let c = client(&nodes[third].addr).await;
    call(&c, a.heartbeat(600_000, 0)).await;
    let info = call(
        &c,
        request(
            RequestCode::ControllerGetReplicaInfo,
            &[("brokerName", "broker-a")],
            None,
        ),
    )
    .await;
    assert_eq!(
        (ext(&info, "masterBrokerId"), ext(&info, "masterEpoch")),
        (Some("1"), Some("1")),
        "{info:?}"
    );
    for node in nodes.iter_mut() {
        node.stop().await;
    }
}
