//! The controller binary as the tests run it: a three-node group comes up,
//! survives kill -9 of its leader, and the killed node rejoins from its
//! store.

use std::time::{Duration, Instant};

use rmq_testkit::Controller;
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode};

/// The leader address every node of `nodes` reports
/// (CONTROLLER_GET_METADATA_INFO), once they agree on one other than `not`.
async fn agreed_leader(nodes: &[&Controller], not: Option<&str>, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    loop {
        let mut seen = Vec::new();
        for node in nodes {
            let Ok(client) = RpcClient::connect(node.addr.as_str(), ClientConfig::default()).await
            else {
                continue;
            };
            let request = RemotingCommand::request(RequestCode::ControllerGetMetadataInfo, 0);
            if let Ok(answer) = client.invoke(request, Duration::from_secs(2)).await {
                seen.push(answer.ext("controllerLeaderAddress").map(str::to_owned));
            }
        }
        if seen.len() == nodes.len() {
            if let Some(Some(leader)) = seen.first() {
                if Some(leader.as_str()) != not
                    && seen.iter().all(|s| s.as_deref() == Some(leader.as_str()))
                {
                    return leader.clone();
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "no agreed leader within {limit:?}: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_group_survives_the_kill_of_its_leader() {
    let mut group = Controller::start_group::<3>(&[]);
    let leader = agreed_leader(
        &group.iter().collect::<Vec<_>>(),
        None,
        Duration::from_secs(20),
    )
    .await;
    let killed = group
        .iter()
        .position(|n| n.addr == leader)
        .expect("the leader is a member");
    group[killed].stop();
    let others: Vec<&Controller> = group.iter().filter(|n| n.is_running()).collect();
    let next = agreed_leader(&others, Some(&leader), Duration::from_secs(20)).await;
    assert_ne!(next, leader);
    group[killed].start_again();
    let all: Vec<&Controller> = group.iter().collect();
    assert_eq!(
        agreed_leader(&all, None, Duration::from_secs(20)).await,
        next
    );
}
