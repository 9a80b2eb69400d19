//! Registrations above Java's 16 MiB frame limit (apache/rocketmq#5296: a
//! broker with more than about 70,000 topics cannot register): refused by
//! default, as Java refuses them, and served once
//! `com.rocketmq.remoting.frameMaxLength` is raised.

use std::time::Duration;

use rmq_wire::{frame, RequestCode as C, ResponseCode as R};

use crate::common::*;

/// Topics enough for a body over 16 MiB.
const TOPICS: usize = 100_000;

fn topic(index: usize) -> String {
    format!("large-registration-topic-{index:06}")
}

fn large_registration() -> (Register, usize) {
    let names: Vec<String> = (0..TOPICS).map(topic).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let register = Register::new("broker-large", "127.0.0.1:10911", 0, &names);
    let frame_len = frame::encode_to_bytes(&register.request()).len();
    assert!(
        frame_len > 16 << 20,
        "the registration is {frame_len} bytes, not over 16 MiB"
    );
    (register, frame_len)
}

#[tokio::test]
async fn a_registration_over_16_mib_closes_its_connection_by_default() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let (register, _) = large_registration();
    let bytes = frame::encode_to_bytes(&register.request());
    // The length word alone decides; the server closes before the rest.
    let mut raw = Raw::connect(server.addr).await;
    raw.send(&bytes[..64]).await;
    assert!(raw.closed_by_peer(Duration::from_secs(5)).await);
    let route = server.call(route_request(&topic(0))).await;
    assert_code(&route, R::TopicNotExist);
    server.stop();
}

#[tokio::test]
async fn a_raised_frame_limit_admits_it_and_every_topic_is_routable() {
    let dir = TempDir::new();
    let server = Server::start(
        &dir,
        &[("com.rocketmq.remoting.frameMaxLength", "67108864")],
    );
    let (register, frame_len) = large_registration();
    let client = server.client().await;
    let response = client
        .invoke(register.request(), Duration::from_secs(60))
        .await
        .expect("a response to the registration");
    assert_code(&response, R::Success);
    for index in [0, 1, TOPICS / 2, TOPICS - 1] {
        let route = server.call(route_request(&topic(index))).await;
        assert_code(&route, R::Success);
        assert!(
            body_text(&route).contains("broker-large"),
            "{}",
            topic(index)
        );
    }
    let list = server
        .call(request(C::GetAllTopicListFromNameserver, &[]))
        .await;
    assert_code(&list, R::Success);
    let body: serde_json::Value = serde_json::from_str(&body_text(&list)).expect("JSON");
    let listed: std::collections::HashSet<&str> = body["topicList"]
        .as_array()
        .expect("a topic list")
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    let listed = (0..TOPICS)
        .filter(|index| listed.contains(topic(*index).as_str()))
        .count();
    assert_eq!(
        listed, TOPICS,
        "topics listed of a {frame_len}-byte registration"
    );
    server.stop();
}
