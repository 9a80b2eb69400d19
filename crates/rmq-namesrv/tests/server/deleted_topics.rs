//! Deleted topics stay deleted over TCP: after DELETE_TOPIC_IN_NAMESRV, a
//! registration carrying the DataVersion the broker had sent before (one
//! that was on its way, or a broker that kept the topic and changed
//! nothing) does not bring the topic back; one with another DataVersion
//! does. The marks that hold it back are bounded per broker group.

use rmq_protocol::DataVersion;
use rmq_wire::{RequestCode as C, ResponseCode as R};

use crate::common::*;

/// TOMBSTONES_PER_GROUP in the route table.
const MARKS_PER_GROUP: usize = 1_024;

fn delete(topic: &str) -> rmq_wire::RemotingCommand {
    request(C::DeleteTopicInNamesrv, &[("topic", topic)])
}

async fn routed(server: &Server, topic: &str) -> bool {
    let response = server.call(route_request(topic)).await;
    match response.response_code() {
        R::Success => true,
        R::TopicNotExist => false,
        other => panic!("route of {topic}: {other:?}"),
    }
}

#[tokio::test]
async fn a_registration_with_the_old_data_version_does_not_bring_a_deleted_topic_back() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let broker = server.client().await;
    let mut reg = Register::new("broker-a", "127.0.0.1:10911", 0, &["Kept", "Gone"]);
    reg.version = DataVersion::new(5, 0, 1_000);
    // Twice: the second is the unchanged body a broker repeats.
    for _ in 0..2 {
        assert_code(
            &broker.invoke(reg.request(), TIMEOUT).await.unwrap(),
            R::Success,
        );
    }
    assert!(routed(&server, "Gone").await);

    assert_code(&server.call(delete("Gone")).await, R::Success);
    for _ in 0..3 {
        assert_code(
            &broker.invoke(reg.request(), TIMEOUT).await.unwrap(),
            R::Success,
        );
        assert!(
            !routed(&server, "Gone").await,
            "re-added by the old DataVersion"
        );
    }
    assert!(routed(&server, "Kept").await);

    // The broker re-created the topic: its DataVersion moved on.
    reg.version = DataVersion::new(6, 0, 2_000);
    assert_code(
        &broker.invoke(reg.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    assert!(
        routed(&server, "Gone").await,
        "not re-added by a newer DataVersion"
    );

    // Deleted again at the new DataVersion, and held back again.
    assert_code(&server.call(delete("Gone")).await, R::Success);
    assert_code(
        &broker.invoke(reg.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    assert!(!routed(&server, "Gone").await);
}

#[tokio::test]
async fn the_marks_of_a_group_are_bounded_the_oldest_going_first() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let broker = server.client().await;
    let names: Vec<String> = (0..=MARKS_PER_GROUP).map(|n| format!("T{n:04}")).collect();
    let topics: Vec<&str> = names.iter().map(String::as_str).collect();
    let reg = Register::new("broker-a", "127.0.0.1:10911", 0, &topics);
    assert_code(
        &broker.invoke(reg.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );

    let admin = server.client().await;
    for name in &names {
        assert_code(
            &admin.invoke(delete(name), TIMEOUT).await.unwrap(),
            R::Success,
        );
    }
    assert_code(
        &broker.invoke(reg.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    // One mark past the bound: the first deletion's went, and only its
    // topic is back.
    assert!(routed(&server, &names[0]).await);
    assert!(!routed(&server, &names[1]).await);
    assert!(!routed(&server, &names[MARKS_PER_GROUP]).await);
    let all = server
        .call(request(C::GetAllTopicListFromNameserver, &[]))
        .await;
    let listed = body_text(&all);
    assert_eq!(listed.matches("\"T").count(), 1, "{listed}");
}
