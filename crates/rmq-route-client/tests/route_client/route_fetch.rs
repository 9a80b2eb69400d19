//! On-demand route fetches against a real `rmq-namesrv`: a route appears
//! after a registration, TOPIC_NOT_EXIST keeps what is cached, the producer
//! lookup borrows `TBW102`, and order configuration shapes the publish view.

use std::time::Duration;

use crate::common::{self, names, register, Namesrv};
use rmq_route_client::{RouteClient, RouteError};

const NO_POLL: Duration = Duration::from_secs(3600);

#[tokio::test]
async fn route_appears_after_registration_and_unknown_topic_is_handled() -> anyhow::Result<()> {
    let ns = Namesrv::start(&[]);
    let client = RouteClient::new(common::config(&[&ns.addr], NO_POLL));

    // Unknown topic: TOPIC_NOT_EXIST is an answer, not a failure of the update.
    let error = client.fetch_route("TopicA").await.unwrap_err();
    assert!(error.is_topic_not_exist(), "{error:?}");
    assert!(!client.update_route("TopicA").await?);
    assert!(client.route("TopicA").is_none());

    let broker = register(
        &ns.addr,
        "broker-a",
        "127.0.0.1:10911",
        &[("TopicA", 4, 4, 6)],
    )
    .await?;
    assert!(
        client.update_route("TopicA").await?,
        "first route is a change"
    );
    let view = client.route("TopicA").expect("cached");
    assert_eq!(
        names(&view.publish.queues),
        ["broker-a:0", "broker-a:1", "broker-a:2", "broker-a:3"]
    );
    assert_eq!(view.subscribe.len(), 4);
    assert_eq!(
        client.broker_addr_in_publish("broker-a").as_deref(),
        Some("127.0.0.1:10911")
    );
    assert!(
        !client.update_route("TopicA").await?,
        "same route is no change"
    );

    // The broker leaves: the NameServer forgets the topic, the client keeps
    // its last route (Java's quirk).
    broker.conn.close();
    let mut gone = false;
    for _ in 0..50 {
        if client
            .fetch_route("TopicA")
            .await
            .is_err_and(|e| e.is_topic_not_exist())
        {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the NameServer should unregister a closed broker");
    assert!(!client.update_route("TopicA").await?);
    assert_eq!(client.route("TopicA").unwrap().publish.queues.len(), 4);
    Ok(())
}

#[tokio::test]
async fn publish_view_borrows_the_default_topic_route() -> anyhow::Result<()> {
    let ns = Namesrv::start(&[]);
    let client = RouteClient::new(common::config(&[&ns.addr], NO_POLL));

    // Nothing anywhere: no route info (client code 10005).
    let error = client.publish_view("NewTopic").await.unwrap_err();
    assert!(matches!(error, RouteError::NoRouteInfo { .. }), "{error:?}");
    assert_eq!(error.code(), Some(10005));

    // A broker with auto-create: TBW102 with 8 queues; capped at 4.
    let _a = register(
        &ns.addr,
        "broker-a",
        "127.0.0.1:10911",
        &[("TBW102", 8, 8, 7)],
    )
    .await?;
    let view = client.publish_view("NewTopic").await?;
    assert_eq!(
        names(&view.publish.queues),
        ["broker-a:0", "broker-a:1", "broker-a:2", "broker-a:3"]
    );
    assert!(view.publish.queues.iter().all(|q| q.topic == "NewTopic"));
    assert_eq!(view.route.queue_datas[0].read_queue_nums, 4);
    assert_eq!(view.route.queue_datas[0].write_queue_nums, 4);
    assert!(
        client.route("NewTopic").is_some(),
        "stored under the real topic"
    );

    // Once the topic really exists, the refresh replaces the borrowed route.
    let _b = register(
        &ns.addr,
        "broker-b",
        "127.0.0.1:10921",
        &[("NewTopic", 2, 2, 6)],
    )
    .await?;
    client.refresh_all().await?;
    let view = client.publish_view("NewTopic").await?;
    assert_eq!(names(&view.publish.queues), ["broker-b:0", "broker-b:1"]);
    Ok(())
}

#[tokio::test]
async fn empty_name_server_list_is_reported() {
    let client = RouteClient::new(rmq_route_client::RouteClientConfig::default());
    let error = client.update_route("T").await.unwrap_err();
    assert!(
        matches!(error, RouteError::NoNameServer) && error.is_transport(),
        "{error:?}"
    );
    assert_eq!(error.code(), Some(10004));
}

#[tokio::test]
async fn order_topic_conf_shapes_the_publish_view() -> anyhow::Result<()> {
    let ns = Namesrv::start(&["orderMessageEnable=true"]);
    let client = RouteClient::new(common::config(&[&ns.addr], NO_POLL));
    let _a = register(
        &ns.addr,
        "broker-a",
        "127.0.0.1:10911",
        &[("Ordered", 4, 4, 6)],
    )
    .await?;
    let _b = register(
        &ns.addr,
        "broker-b",
        "127.0.0.1:10921",
        &[("Ordered", 4, 4, 4)],
    )
    .await?;
    common::put_order_conf(&ns.addr, "Ordered", "broker-b:2;broker-a:1").await?;

    let view = client.publish_view("Ordered").await?;
    assert!(view.publish.order_topic);
    // Conf order, no permission check: read-only broker-b is listed.
    assert_eq!(
        names(&view.publish.queues),
        ["broker-b:0", "broker-b:1", "broker-a:0"]
    );
    // The subscribe view ignores the conf.
    assert_eq!(view.subscribe.len(), 8);

    // A changed conf is a changed route.
    common::put_order_conf(&ns.addr, "Ordered", "broker-a:2").await?;
    assert!(client.update_route("Ordered").await?);
    let view = client.route("Ordered").unwrap();
    assert_eq!(names(&view.publish.queues), ["broker-a:0", "broker-a:1"]);
    Ok(())
}
