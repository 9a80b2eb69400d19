//! Broker-facing requests over TCP: registration in every body format,
//! split registrations, unregistration through the batch worker, cluster
//! info, member groups and write permissions.

use rmq_protocol::{BodyFlavor, ClusterInfo, DataVersion, JavaJson, QueueData, TopicRouteData};
use rmq_wire::{RequestCode as C, ResponseCode as R};

use crate::common::*;

fn unregister(name: &str, addr: &str, id: &str) -> rmq_wire::RemotingCommand {
    request(
        C::UnregisterBroker,
        &[
            ("brokerName", name),
            ("brokerAddr", addr),
            ("clusterName", "DefaultCluster"),
            ("brokerId", id),
        ],
    )
}

async fn route_code(server: &Server, topic: &str) -> R {
    server.call(route_request(topic)).await.response_code()
}

#[tokio::test]
async fn compressed_4x_and_old_format_bodies_register() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let conn = server.client().await;

    // zlib body, as a broker with compressedRegister=true builds it.
    let reg = Register::new("broker-z", "127.0.0.1:20911", 0, &["Zipped", "Zipped2"]);
    let mut req = reg.request_with(reg.body().to_compressed(BodyFlavor::V5));
    req.ext_fields
        .as_mut()
        .unwrap()
        .insert("compressed".into(), "true".into());
    assert_code(&conn.invoke(req, TIMEOUT).await.unwrap(), R::Success);
    assert_eq!(route_code(&server, "Zipped").await, R::Success);

    // A 4.x broker: version 400, no enableActingMaster, 4.x JSON body.
    let reg = Register::new("broker-4", "127.0.0.1:30911", 0, &["Four", "Four2"]);
    let mut req = reg.request_with(reg.body().to_json_flavor(BodyFlavor::V4));
    req.version = 400;
    req.ext_fields
        .as_mut()
        .unwrap()
        .remove("enableActingMaster");
    assert_code(&conn.invoke(req, TIMEOUT).await.unwrap(), R::Success);
    assert_eq!(route_code(&server, "Four").await, R::Success);

    // Before 3.0.11: the body is a bare wrapper.
    let reg = Register::new("broker-old", "127.0.0.1:40911", 0, &["Old", "Old2"]);
    let mut req = reg.request_with(reg.wrapper().to_json_flavor(BodyFlavor::V4));
    req.version = 30;
    assert_code(&conn.invoke(req, TIMEOUT).await.unwrap(), R::Success);
    assert_eq!(route_code(&server, "Old").await, R::Success);

    let info = server.call(request(C::GetBrokerClusterInfo, &[])).await;
    let info = ClusterInfo::from_json(info.body.as_deref().unwrap()).unwrap();
    assert_eq!(info.broker_addr_table.len(), 3);
    assert!(!info.broker_addr_table["broker-4"].enable_acting_master);
}

#[tokio::test]
async fn crc_mismatch_and_single_topic_guard() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let reg = Register::new("broker-a", "127.0.0.1:10911", 0, &["a", "b"]);
    let mut req = reg.request();
    req.ext_fields
        .as_mut()
        .unwrap()
        .insert("bodyCrc32".into(), "1".into());
    let response = server.call(req).await;
    assert_code(&response, R::SystemError);
    assert_eq!(response.remark.as_deref(), Some("crc32 not match"));
    assert_eq!(response.ext_fields, Some(Default::default()));

    let response = server
        .call(Register::new("broker-a", "127.0.0.1:10911", 0, &["only"]).request())
        .await;
    assert_code(&response, R::SystemError);
    assert_eq!(response.remark.as_deref(), Some("register broker failed"));
    assert_eq!(response.ext_fields, Some(Default::default()));
}

#[tokio::test]
async fn unregister_is_answered_first_and_applied_by_the_worker() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let client = server.client().await;
    let reg = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicTest", "Other"]);
    assert_code(
        &client.invoke(reg.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    let response = server
        .call(unregister("broker-a", "127.0.0.1:10911", "0"))
        .await;
    assert_code(&response, R::Success);
    assert!(response.ext_fields.is_none() && response.remark.is_none());
    let gone = eventually(TIMEOUT, || async {
        route_code(&server, "TopicTest").await == R::TopicNotExist
    })
    .await;
    assert!(gone, "the worker removes the broker");
    let info = server.call(request(C::GetBrokerClusterInfo, &[])).await;
    assert_eq!(
        body_text(&info),
        r#"{"brokerAddrTable":{},"clusterAddrTable":{}}"#
    );
}

/// The queue data of `topic`'s route (one broker group).
async fn queue_data(server: &Server, topic: &str) -> QueueData {
    let route = server.call(route_request(topic)).await;
    assert_code(&route, R::Success);
    let route = TopicRouteData::from_json(route.body.as_deref().unwrap()).unwrap();
    assert_eq!(route.queue_datas.len(), 1, "{route:?}");
    route.queue_datas[0].clone()
}

#[tokio::test]
async fn split_registration_chunks_with_one_data_version_are_each_applied() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let client = server.client().await;
    // A broker with enableSplitRegistration sends its topics in chunks,
    // every chunk with the DataVersion it holds (5.3.4 to 5.5.0 do not
    // advance it per chunk).
    let chunks = |version: DataVersion, queues: i32, perm: i32| {
        let first = Register::new("broker-s", "127.0.0.1:50911", 0, &["SplitA", "SplitB"]);
        let mut second = Register::new("broker-s", "127.0.0.1:50911", 0, &["SplitC", "SplitD"]);
        let changed = &mut second.topics[1];
        (
            changed.read_queue_nums,
            changed.write_queue_nums,
            changed.perm,
        ) = (queues, queues, perm);
        [first, second].map(|mut chunk| {
            chunk.version = version;
            chunk
        })
    };
    let register_all = |chunks: [Register; 2]| {
        let client = &client;
        async move {
            for chunk in chunks {
                let response = client.invoke(chunk.request(), TIMEOUT).await.unwrap();
                assert_code(&response, R::Success);
            }
        }
    };
    let counts = |queue: &QueueData| (queue.read_queue_nums, queue.write_queue_nums, queue.perm);

    register_all(chunks(DataVersion::new(1, 0, 100), 16, 6)).await;
    assert_eq!(counts(&queue_data(&server, "SplitD").await), (16, 16, 6));
    // SplitD changed on the broker: a new DataVersion, sent with both
    // chunks. Java applies only the first chunk as changed.
    register_all(chunks(DataVersion::new(2, 0, 200), 8, 6)).await;
    assert_eq!(counts(&queue_data(&server, "SplitD").await), (8, 8, 6));
    register_all(chunks(DataVersion::new(3, 0, 300), 8, 4)).await;
    assert_eq!(counts(&queue_data(&server, "SplitD").await), (8, 8, 4));
    register_all(chunks(DataVersion::new(4, 0, 400), 8, 6)).await;

    // A wipe holds across the broker's unchanged re-registration, in every
    // chunk, and across a new DataVersion; adding write permission ends it.
    let wipe = server
        .call(request(
            C::WipeWritePermOfBroker,
            &[("brokerName", "broker-s")],
        ))
        .await;
    assert_eq!(wipe.ext("wipeTopicCount"), Some("4"));
    register_all(chunks(DataVersion::new(4, 0, 400), 8, 6)).await;
    register_all(chunks(DataVersion::new(5, 0, 500), 8, 6)).await;
    for topic in ["SplitA", "SplitD"] {
        assert_eq!(queue_data(&server, topic).await.perm, 4, "{topic}");
    }
    let add = server
        .call(request(
            C::AddWritePermOfBroker,
            &[("brokerName", "broker-s")],
        ))
        .await;
    assert_eq!(add.ext("addTopicCount"), Some("4"));
    register_all(chunks(DataVersion::new(5, 0, 500), 8, 6)).await;
    for topic in ["SplitA", "SplitD"] {
        assert_eq!(queue_data(&server, topic).await.perm, 6, "{topic}");
    }
}

#[tokio::test]
async fn cluster_info_member_group_and_write_perm_bodies() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let empty = server.call(request(C::GetBrokerClusterInfo, &[])).await;
    assert_code(&empty, R::Success);
    assert!(empty.ext_fields.is_none());
    assert_eq!(
        body_text(&empty),
        r#"{"brokerAddrTable":{},"clusterAddrTable":{}}"#
    );

    let client = server.client().await;
    for (addr, id) in [("127.0.0.1:10911", 0), ("127.0.0.1:10921", 1)] {
        let reg = Register::new("broker-a", addr, id, &["TopicTest", "Other", "Third"]);
        assert_code(
            &client.invoke(reg.request(), TIMEOUT).await.unwrap(),
            R::Success,
        );
    }
    let info = server.call(request(C::GetBrokerClusterInfo, &[])).await;
    assert_eq!(
        body_text(&info),
        r#"{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10921"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}"#
    );

    let group = |cluster: &str, name: &str| {
        request(
            C::GetBrokerMemberGroup,
            &[("clusterName", cluster), ("brokerName", name)],
        )
    };
    let response = server.call(group("DefaultCluster", "broker-a")).await;
    assert_code(&response, R::Success);
    assert_eq!(
        body_text(&response),
        r#"{"brokerMemberGroup":{"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10921"},"brokerName":"broker-a","cluster":"DefaultCluster"}}"#
    );
    let response = server.call(group("AnyCluster", "nobody")).await;
    assert_eq!(
        body_text(&response),
        r#"{"brokerMemberGroup":{"brokerAddrs":{},"brokerName":"nobody","cluster":"AnyCluster"}}"#
    );

    let wipe = server
        .call(request(
            C::WipeWritePermOfBroker,
            &[("brokerName", "broker-a")],
        ))
        .await;
    assert_code(&wipe, R::Success);
    assert_eq!(wipe.ext("wipeTopicCount"), Some("3"));
    let route = server.call(route_request("TopicTest")).await;
    assert!(body_text(&route).contains(r#""perm":4"#));
    let add = server
        .call(request(
            C::AddWritePermOfBroker,
            &[("brokerName", "broker-a")],
        ))
        .await;
    assert_eq!(add.ext("addTopicCount"), Some("3"));
    let none = server
        .call(request(
            C::AddWritePermOfBroker,
            &[("brokerName", "nobody")],
        ))
        .await;
    assert_eq!(
        none.ext_fields,
        Some([("addTopicCount".to_string(), "0".to_string())].into())
    );
    assert!(body_text(&server.call(route_request("TopicTest")).await).contains(r#""perm":6"#));
}

#[tokio::test]
async fn heartbeat_and_query_data_version() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let client = server.client().await;
    let reg = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicTest", "Other"]);
    client.invoke(reg.request(), TIMEOUT).await.unwrap();
    let beat = request(
        C::BrokerHeartbeat,
        &[
            ("clusterName", "DefaultCluster"),
            ("brokerAddr", "127.0.0.1:10911"),
            ("brokerName", "broker-a"),
        ],
    );
    let response = client.invoke(beat, TIMEOUT).await.unwrap();
    assert_code(&response, R::Success);
    assert!(response.ext_fields.is_none());

    let query = |body: &str| {
        request(
            C::QueryDataVersion,
            &[
                ("brokerName", "broker-a"),
                ("brokerAddr", "127.0.0.1:10911"),
                ("clusterName", "DefaultCluster"),
                ("brokerId", "0"),
            ],
        )
        .with_body(body.to_owned())
    };
    let same = client
        .invoke(
            query(r#"{"counter":1,"stateVersion":0,"timestamp":100}"#),
            TIMEOUT,
        )
        .await
        .unwrap();
    assert_eq!(same.ext("changed"), Some("false"));
    assert_eq!(
        body_text(&same),
        r#"{"counter":1,"stateVersion":0,"timestamp":100}"#
    );
    let other = client
        .invoke(
            query(r#"{"counter":2,"stateVersion":0,"timestamp":100}"#),
            TIMEOUT,
        )
        .await
        .unwrap();
    assert_eq!(other.ext("changed"), Some("true"));
    let garbage = client.invoke(query("garbage"), TIMEOUT).await.unwrap();
    assert_code(&garbage, R::SystemError);
}

#[tokio::test]
async fn a_20000_topic_registration_is_accepted_and_routable() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let names: Vec<String> = (0..20_000).map(|i| format!("BigTopic-{i:05}")).collect();
    let topics: Vec<&str> = names.iter().map(String::as_str).collect();
    let registration = Register::new("broker-big", "127.0.0.1:10911", 0, &topics).request();
    assert!(registration.body.as_ref().unwrap().len() > 1_000_000);
    // The broker's connection stays open: closing it would unregister the broker.
    let broker = server.client().await;
    assert_code(
        &broker.invoke(registration, TIMEOUT).await.unwrap(),
        R::Success,
    );

    for topic in ["BigTopic-00000", "BigTopic-12345", "BigTopic-19999"] {
        let route = server.call(route_request(topic)).await;
        assert_code(&route, R::Success);
        let route =
            rmq_protocol::TopicRouteData::from_json(route.body.as_deref().unwrap()).unwrap();
        assert_eq!(route.queue_datas.len(), 1);
        assert_eq!(route.queue_datas[0].broker_name, "broker-big");
    }
    let all = server
        .call(request(C::GetAllTopicListFromNameserver, &[]))
        .await;
    assert_code(&all, R::Success);
    let list = rmq_protocol::TopicList::from_json(all.body.as_deref().unwrap()).unwrap();
    assert_eq!(list.topic_list.len(), 20_000);
}
