//! Route and topic requests over TCP: topic lists with their bodies, deletion
//! and re-adding, single-topic registration with validation, zone filtering,
//! missing topic.

use rmq_wire::{RequestCode as C, ResponseCode as R};

use crate::common::*;

/// Registers two brokers on one connection, returned: the brokers stay
/// registered while it is open.
async fn two_brokers(server: &Server) -> rmq_transport::RpcClient {
    let client = server.client().await;
    let mut a = Register::new(
        "broker-a",
        "127.0.0.1:10911",
        0,
        &["Shared", "OnlyA", "UnitTopic"],
    )
    .ext("__ZONE_NAME", "zone1");
    a.topics[2].topic_sys_flag = 1;
    let mut b = Register::new(
        "broker-b",
        "127.0.0.1:10912",
        0,
        &["Shared", "OnlyB", "SubTopic"],
    )
    .ext("__ZONE_NAME", "zone2");
    b.topics[2].topic_sys_flag = 2;
    b.cluster = "OtherCluster".into();
    for reg in [a, b] {
        assert_code(
            &client.invoke(reg.request(), TIMEOUT).await.unwrap(),
            R::Success,
        );
    }
    client
}

#[tokio::test]
async fn topic_lists() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let all = server
        .call(request(C::GetAllTopicListFromNameserver, &[]))
        .await;
    assert_eq!(
        (body_text(&all).as_str(), all.ext_fields.is_none()),
        (r#"{"topicList":[]}"#, true)
    );
    let system = server.call(request(C::GetSystemTopicListFromNs, &[])).await;
    assert_eq!(body_text(&system), r#"{"topicList":[]}"#);

    let _brokers = two_brokers(&server).await;
    let all = server
        .call(request(C::GetAllTopicListFromNameserver, &[]))
        .await;
    assert_eq!(
        body_text(&all),
        r#"{"topicList":["OnlyA","OnlyB","Shared","SubTopic","UnitTopic"]}"#
    );
    let by_cluster = server
        .call(request(
            C::GetTopicsByCluster,
            &[("cluster", "DefaultCluster")],
        ))
        .await;
    assert_eq!(
        body_text(&by_cluster),
        r#"{"topicList":["OnlyA","Shared","UnitTopic"]}"#
    );
    let unknown = server
        .call(request(C::GetTopicsByCluster, &[("cluster", "Nope")]))
        .await;
    assert_eq!(body_text(&unknown), r#"{"topicList":[]}"#);
    let system = server.call(request(C::GetSystemTopicListFromNs, &[])).await;
    assert_eq!(
        body_text(&system),
        r#"{"brokerAddr":"127.0.0.1:10911","topicList":["DefaultCluster","OtherCluster","broker-a","broker-b"]}"#
    );
    for (code, expected) in [
        (C::GetUnitTopicList, r#"{"topicList":["UnitTopic"]}"#),
        (C::GetHasUnitSubTopicList, r#"{"topicList":["SubTopic"]}"#),
        (
            C::GetHasUnitSubUnunitTopicList,
            r#"{"topicList":["SubTopic"]}"#,
        ),
    ] {
        assert_eq!(
            body_text(&server.call(request(code, &[])).await),
            expected,
            "{code:?}"
        );
    }

    let update = |text: &str| request(C::UpdateNamesrvConfig, &[]).with_body(text.to_owned());
    assert_code(
        &server
            .call(update("enableAllTopicList=false\nenableTopicList=false\n"))
            .await,
        R::Success,
    );
    for code in [
        C::GetAllTopicListFromNameserver,
        C::GetTopicsByCluster,
        C::GetUnitTopicList,
    ] {
        let response = server
            .call(request(code, &[("cluster", "DefaultCluster")]))
            .await;
        assert_code(&response, R::SystemError);
        assert_eq!(response.remark.as_deref(), Some("disable"));
    }
}

#[tokio::test]
async fn delete_topic_and_its_return_with_the_brokers_next_data_version() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let brokers = two_brokers(&server).await;
    let delete = |topic: &str, cluster: Option<&str>| {
        let mut ext = vec![("topic", topic)];
        ext.extend(cluster.map(|c| ("clusterName", c)));
        request(C::DeleteTopicInNamesrv, &ext)
    };
    let response = server.call(delete("Shared", Some("DefaultCluster"))).await;
    assert_code(&response, R::Success);
    assert!(response.ext_fields.is_none());
    let route = body_text(&server.call(route_request("Shared")).await);
    assert!(
        !route.contains("broker-a") && route.contains("broker-b"),
        "{route}"
    );
    server.call(delete("Shared", None)).await;
    assert_code(
        &server.call(route_request("Shared")).await,
        R::TopicNotExist,
    );

    // broker-a still has the topic: its next registration with another
    // DataVersion re-adds it (one with the DataVersion the deletion saw
    // does not: tests/server/deleted_topics.rs).
    let mut a = Register::new(
        "broker-a",
        "127.0.0.1:10911",
        0,
        &["Shared", "OnlyA", "UnitTopic"],
    )
    .ext("__ZONE_NAME", "zone1");
    a.version = rmq_protocol::DataVersion::new(2, 0, 200);
    brokers.invoke(a.request(), TIMEOUT).await.unwrap();
    let route = body_text(&server.call(route_request("Shared")).await);
    assert!(
        route.contains("broker-a") && !route.contains("broker-b"),
        "{route}"
    );
}

#[tokio::test]
async fn register_topic_in_namesrv() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let _brokers = two_brokers(&server).await;
    let body = |broker: &str, read: i32| {
        format!(
            r#"{{"brokerDatas":[],"filterServerTable":{{}},"queueDatas":[{{"brokerName":"{broker}","perm":6,"readQueueNums":{read},"topicSysFlag":0,"writeQueueNums":8}}]}}"#
        )
    };
    let register = |topic: &str, body: String| {
        request(C::RegisterTopicInNamesrv, &[("topic", topic)]).with_body(body)
    };

    assert_code(
        &server.call(register("Single", body("ghost", 8))).await,
        R::Success,
    );
    assert_code(
        &server.call(route_request("Single")).await,
        R::TopicNotExist,
    );
    let response = server.call(register("Single", body("broker-a", 8))).await;
    assert_code(&response, R::Success);
    assert!(response.ext_fields.is_none());
    assert!(body_text(&server.call(route_request("Single")).await).contains(r#""readQueueNums":8"#));

    let response = server
        .call(register("Bad Topic", body("broker-a", 8)))
        .await;
    assert_code(&response, R::SystemError);
    assert!(response.remark.unwrap().contains("illegal characters"));
    let response = server
        .call(register("Huge", body("broker-a", 70_000)))
        .await;
    assert_code(&response, R::SystemError);
    assert!(response.remark.unwrap().contains("readQueueNums 70000"));
    assert_code(&server.call(route_request("Huge")).await, R::TopicNotExist);

    // Java answers SUCCESS here and does nothing (a deliberate difference,
    // docs/compatibility.md): the caller learns its request was incomplete.
    let response = server
        .call(request(C::RegisterTopicInNamesrv, &[]).with_body(body("broker-a", 8)))
        .await;
    assert_code(&response, R::SystemError);
    let remark = response.remark.unwrap();
    assert!(remark.contains("topic"), "{remark}");
}

#[tokio::test]
async fn route_without_topic_and_zone_filtering() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let _brokers = two_brokers(&server).await;
    let response = server.call(request(C::GetRouteInfoByTopic, &[])).await;
    assert_code(&response, R::TopicNotExist);
    assert!(response.remark.unwrap().contains("for the topic: null\n"));

    let zoned = |zone: &str| {
        request(
            C::GetRouteInfoByTopic,
            &[
                ("topic", "Shared"),
                ("__ZONE_MODE", "true"),
                ("__ZONE_NAME", zone),
            ],
        )
    };
    let route = body_text(&server.call(zoned("zone2")).await);
    assert!(
        route.contains("broker-b") && !route.contains("broker-a"),
        "{route}"
    );
    let route = body_text(&server.call(route_request("Shared")).await);
    assert!(
        route.contains("broker-b") && route.contains("broker-a"),
        "{route}"
    );
}
