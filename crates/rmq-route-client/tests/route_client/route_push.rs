//! Route push against a real NameServer: a subscriber hears of a new
//! broker, a removed broker, a permission wipe and a master change within
//! 100 ms of the NameServer answering the request that made it, and
//! cluster membership as it changes; a
//! subscription resumed from an old cursor gets exactly what changed since;
//! a subscriber that stops reading is cut off without holding back anyone
//! else; and a started `RouteClient` follows by push where the NameServer
//! offers it and by polling where it does not (the Java NameServer, when
//! the environment selects it).

use std::time::{Duration, Instant};

use crate::common::{self, add_write_perm, register_as, wipe_write_perm, Namesrv};
use rmq_protocol::route_push::Cursor;
use rmq_protocol::TopicRouteData;
use rmq_route_client::push::{PushConfig, PushError, PushEvent, RouteSubscription};
use rmq_route_client::{PushState, RouteClient};
use rmq_testkit::Kind;
use rmq_transport::{ClientConfig, RpcClient};

/// The bound the route push promises, from the NameServer's answer to the
/// change to the subscriber reading the push.
const PUSH_BOUND: Duration = Duration::from_millis(100);

async fn subscription(ns: &Namesrv) -> RouteSubscription {
    RouteSubscription::connect(&ns.addr, PushConfig::default())
        .await
        .expect("connect")
}

/// The next push of `topic`, skipping others (and `synced`).
async fn next_route(sub: &mut RouteSubscription, topic: &str) -> Option<TopicRouteData> {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(5), sub.next())
            .await
            .expect("a push within 5 s")
            .expect("a push");
        if let PushEvent::Route {
            topic: pushed,
            route,
        } = event
        {
            if pushed == topic {
                return route;
            }
        }
    }
}

/// Whether no push arrives within `wait`.
async fn quiet_for(sub: &mut RouteSubscription, wait: Duration) -> bool {
    tokio::time::timeout(wait, sub.next()).await.is_err()
}

async fn connect(ns: &Namesrv) -> RpcClient {
    RpcClient::connect(ns.addr.as_str(), ClientConfig::default())
        .await
        .expect("connect")
}

fn brokers(route: &TopicRouteData) -> Vec<(String, Vec<(i64, String)>)> {
    let mut brokers: Vec<_> = route
        .broker_datas
        .iter()
        .map(|b| {
            let addrs = b
                .broker_addrs
                .iter()
                .map(|(id, a)| (*id, a.clone()))
                .collect();
            (b.broker_name.clone(), addrs)
        })
        .collect();
    brokers.sort();
    brokers
}

fn perms(route: &TopicRouteData) -> Vec<(String, i32)> {
    let mut perms: Vec<_> = route
        .queue_datas
        .iter()
        .map(|q| (q.broker_name.clone(), q.perm))
        .collect();
    perms.sort();
    perms
}

/// Waits for `topic`'s next push and checks it came within [`PUSH_BOUND`]
/// of `applied` (when the change's answer arrived).
async fn pushed_in_time(
    sub: &mut RouteSubscription,
    topic: &str,
    applied: Instant,
    what: &str,
) -> Option<TopicRouteData> {
    let route = next_route(sub, topic).await;
    let took = applied.elapsed();
    assert!(
        took <= PUSH_BOUND,
        "{what}: pushed {took:?} after it was applied"
    );
    route
}

#[tokio::test]
async fn each_kind_of_change_is_pushed_within_100_ms() {
    let ns = Namesrv::waymark(&[]);
    let mut sub = subscription(&ns).await;
    sub.subscribe(["Pushed"], false, None).await.unwrap();
    assert_eq!(next_route(&mut sub, "Pushed").await, None, "no route yet");

    let a = connect(&ns).await;
    register_as(
        &a,
        "broker-a",
        "127.0.0.1:10911",
        0,
        1,
        &[("Pushed", 4, 4, 6)],
    )
    .await
    .unwrap();
    let applied = Instant::now();
    let route = pushed_in_time(&mut sub, "Pushed", applied, "a new broker")
        .await
        .expect("routed");
    assert_eq!(
        brokers(&route),
        [("broker-a".into(), vec![(0, "127.0.0.1:10911".into())])]
    );

    let b = connect(&ns).await;
    register_as(
        &b,
        "broker-b",
        "127.0.0.1:10921",
        0,
        1,
        &[("Pushed", 4, 4, 6)],
    )
    .await
    .unwrap();
    let applied = Instant::now();
    let route = pushed_in_time(&mut sub, "Pushed", applied, "a second broker")
        .await
        .expect("routed");
    assert_eq!(route.broker_datas.len(), 2);

    // Its own topic, named after it, and Pushed.
    assert_eq!(wipe_write_perm(&ns.addr, "broker-b").await.unwrap(), 2);
    let applied = Instant::now();
    let route = pushed_in_time(&mut sub, "Pushed", applied, "a permission wipe")
        .await
        .expect("routed");
    assert_eq!(
        perms(&route),
        [("broker-a".into(), 6), ("broker-b".into(), 4)]
    );

    // A master change as a failover makes it: a slave joins, the master's
    // connection closes (the NameServer unregisters it), the slave comes
    // back as the master at its own address.
    let slave = connect(&ns).await;
    register_as(
        &slave,
        "broker-a",
        "127.0.0.1:10912",
        1,
        1,
        &[("Pushed", 4, 4, 6)],
    )
    .await
    .unwrap();
    let applied = Instant::now();
    let route = pushed_in_time(&mut sub, "Pushed", applied, "a slave joining")
        .await
        .expect("routed");
    assert_eq!(brokers(&route)[0].1.len(), 2);
    a.close();
    let route = next_route(&mut sub, "Pushed").await.expect("routed");
    assert_eq!(
        brokers(&route)[0].1,
        [(1, "127.0.0.1:10912".to_owned())],
        "master gone"
    );
    register_as(
        &slave,
        "broker-a",
        "127.0.0.1:10912",
        0,
        2,
        &[("Pushed", 4, 4, 6)],
    )
    .await
    .unwrap();
    let applied = Instant::now();
    let route = pushed_in_time(&mut sub, "Pushed", applied, "a master change")
        .await
        .expect("routed");
    assert!(
        brokers(&route)[0]
            .1
            .contains(&(0, "127.0.0.1:10912".to_owned())),
        "the new master: {:?}",
        brokers(&route)
    );

    // A removed broker: UNREGISTER_BROKER, as a broker shutting down sends.
    let unregister = rmq_wire::RemotingCommand::request(rmq_wire::RequestCode::UnregisterBroker, 0)
        .with_header(&rmq_protocol::headers::UnregisterBrokerRequestHeader {
            broker_name: "broker-b".into(),
            broker_addr: "127.0.0.1:10921".into(),
            cluster_name: "DefaultCluster".into(),
            broker_id: 0,
        });
    let answer = b.invoke(unregister, Duration::from_secs(5)).await.unwrap();
    assert_eq!(answer.code, 0);
    let applied = Instant::now();
    let route = pushed_in_time(&mut sub, "Pushed", applied, "a removed broker")
        .await
        .expect("routed");
    assert_eq!(
        brokers(&route)
            .into_iter()
            .map(|(name, _)| name)
            .collect::<Vec<_>>(),
        ["broker-a"]
    );
    assert!(sub.cursor().is_some(), "live pushes carry the cursor");
}

/// Reads pushes until the subscription holds a cursor.
async fn settle(sub: &mut RouteSubscription) -> Cursor {
    let deadline = Instant::now() + Duration::from_secs(5);
    while sub.cursor().is_none() {
        assert!(Instant::now() < deadline, "no cursor");
        let _ = tokio::time::timeout(Duration::from_millis(100), sub.next()).await;
    }
    sub.cursor().unwrap()
}

#[tokio::test]
async fn a_subscription_resumed_from_its_cursor_gets_what_changed_since() {
    let ns = Namesrv::waymark(&[]);
    let broker = connect(&ns).await;
    register_as(
        &broker,
        "broker-a",
        "127.0.0.1:10911",
        0,
        1,
        &[("Moves", 4, 4, 6), ("Stays", 2, 2, 6)],
    )
    .await
    .unwrap();

    let mut first = subscription(&ns).await;
    first
        .subscribe(["Moves", "Stays"], false, None)
        .await
        .unwrap();
    let mut seen = vec![
        (next_route(&mut first, "Moves").await.is_some()),
        (next_route(&mut first, "Stays").await.is_some()),
    ];
    seen.sort();
    assert_eq!(seen, [true, true]);
    let cursor = settle(&mut first).await;
    drop(first);

    // While nobody listens: Moves changes twice, Stays not at all.
    register_as(
        &broker,
        "broker-a",
        "127.0.0.1:10911",
        0,
        2,
        &[("Moves", 8, 8, 6), ("Stays", 2, 2, 6)],
    )
    .await
    .unwrap();
    register_as(
        &broker,
        "broker-a",
        "127.0.0.1:10911",
        0,
        3,
        &[("Moves", 16, 16, 6), ("Stays", 2, 2, 6)],
    )
    .await
    .unwrap();

    let mut resumed = subscription(&ns).await;
    resumed
        .subscribe(["Moves", "Stays"], false, Some(cursor))
        .await
        .unwrap();
    let moved = next_route(&mut resumed, "Moves").await.expect("routed");
    assert_eq!(
        moved.queue_datas[0].write_queue_nums, 16,
        "the latest route"
    );
    // What a resumed subscription is owed is queued with its answer, so a
    // push of Stays would follow that of Moves within milliseconds on
    // loopback; 300 ms without one means none was owed.
    assert!(
        quiet_for(&mut resumed, Duration::from_millis(300)).await,
        "Stays is not sent again"
    );
    assert!(resumed
        .cursor()
        .is_some_and(|now| now.version > cursor.version));

    // A cursor of another NameServer run is not trusted: everything again.
    let stranger = Cursor {
        instance: cursor.instance ^ 1,
        version: cursor.version,
    };
    let mut fresh = subscription(&ns).await;
    fresh
        .subscribe(["Moves", "Stays"], false, Some(stranger))
        .await
        .unwrap();
    let mut topics = Vec::new();
    for _ in 0..2 {
        if let PushEvent::Route { topic, .. } = fresh.next().await.unwrap() {
            topics.push(topic);
        }
    }
    topics.sort();
    assert_eq!(topics, ["Moves", "Stays"]);
}

#[tokio::test]
async fn a_subscriber_that_stops_reading_is_cut_off_and_holds_back_nobody() {
    let ns = Namesrv::waymark(&[
        "routePushQueueBytesPerSubscriber=65536",
        "routePushStallSeconds=2",
        // Small kernel buffers, so that what is not read stays queued in
        // the NameServer, where its budget applies.
        "serverSocketSndBufSize=8192",
    ]);
    let topics: Vec<String> = (0..1000).map(|i| format!("Bulk{i}")).collect();
    let topic_refs: Vec<(&str, i32, i32, i32)> =
        topics.iter().map(|t| (t.as_str(), 4, 4, 6)).collect();
    let broker = connect(&ns).await;
    register_as(&broker, "broker-a", "127.0.0.1:10911", 0, 1, &topic_refs)
        .await
        .unwrap();

    // A subscriber with a small receive buffer that never reads.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stalled = socket.connect(ns.addr.parse().unwrap()).await.unwrap();
    let subscribe =
        rmq_wire::RemotingCommand::request(rmq_wire::RequestCode::WaymarkSubscribeRoutes, 1)
            .with_header(&rmq_protocol::headers::SubscribeRoutesRequestHeader {
                topics: rmq_protocol::route_push::join_topics(topics.iter().map(String::as_str)),
                ..Default::default()
            });
    let frame = rmq_wire::frame::encode_to_bytes(&subscribe);
    tokio::io::AsyncWriteExt::write_all(&mut stalled, &frame)
        .await
        .unwrap();

    // A subscriber that reads.
    let mut reader = subscription(&ns).await;
    reader
        .subscribe(topics.iter().map(String::as_str), false, None)
        .await
        .unwrap();

    // Every topic's permission flips 20 times: megabytes of pushes for
    // the one that does not read.
    for round in 0..20 {
        if round % 2 == 0 {
            wipe_write_perm(&ns.addr, "broker-a").await.unwrap();
        } else {
            add_write_perm(&ns.addr, "broker-a").await.unwrap();
        }
        // Route queries are answered meanwhile.
        let route = rmq_testkit::admin::route(&ns.addr, "Bulk7").await.unwrap();
        assert!(route.is_some());
    }
    // The reader ends with the final state of every topic (even rounds
    // wipe, the last round, 19, added the permission back).
    let mut last = std::collections::HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while last.len() < topics.len() || last.values().any(|perm| *perm != 6) {
        assert!(
            Instant::now() < deadline,
            "reader did not converge: {} topics",
            last.len()
        );
        if let Ok(Ok(PushEvent::Route {
            topic,
            route: Some(route),
        })) = tokio::time::timeout(Duration::from_secs(1), reader.next()).await
        {
            last.insert(topic, route.queue_datas[0].perm);
        }
    }

    // The stalled one is cut off once it has been behind for 2 s, and
    // counted as a refusal of its budget. It must not be read before that
    // (reading would end the stall): wait for the count.
    let http = ns.http.as_deref().expect("HTTP port").to_string();
    let cut_off = "\nwaymark_refusals_total{kind=\"route_push_stalled\"} 1\n";
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let metrics = http_get(&http, "/metrics").await;
        if metrics.contains(cut_off) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the stalled subscriber was not cut off within 10 s: {metrics}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Reading now drains what was queued, then the end of the stream.
    let mut sink = vec![0u8; 1 << 16];
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match tokio::io::AsyncReadExt::read(&mut stalled, &mut sink).await {
                Ok(0) | Err(_) => return true,
                Ok(_) => continue,
            }
        }
    })
    .await;
    assert_eq!(
        closed,
        Ok(true),
        "the NameServer closed the stalled subscriber"
    );
    // Counted once, the reader not at all.
    let metrics = http_get(&http, "/metrics").await;
    assert!(metrics.contains(cut_off), "{metrics}");
    // The reader, coalesced at times too (its bursts are over the budget),
    // was told when it had caught up: it holds a cursor.
    settle(&mut reader).await;
}

#[tokio::test]
async fn a_route_client_follows_by_push_and_falls_back_to_polling() {
    let ns = Namesrv::start(&[]);
    let java = ns.kind() == Kind::Java;
    // Against Waymark a poll would come too late to pass: only push can.
    let poll = if java {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(120)
    };
    let mut config = common::config(&[&ns.addr], poll);
    config.poll_initial_delay = poll;
    let client = RouteClient::start(config);
    let mut state = client.push_state();
    let broker = connect(&ns).await;
    register_as(
        &broker,
        "broker-a",
        "127.0.0.1:10911",
        0,
        1,
        &[("Followed", 4, 4, 6)],
    )
    .await
    .unwrap();
    let mut watch = client.watch("Followed").await;
    assert!(watch.borrow_and_update().is_some(), "fetched on watch");

    let expected = if java {
        PushState::Polling {
            addr: ns.addr.clone(),
        }
    } else {
        PushState::Pushing {
            addr: ns.addr.clone(),
        }
    };
    let reached = tokio::time::timeout(
        Duration::from_secs(10),
        state.wait_for(|now| *now == expected),
    )
    .await
    .is_ok();
    assert!(
        reached,
        "push state {:?}, expected {expected:?}",
        *state.borrow()
    );

    let second = connect(&ns).await;
    register_as(
        &second,
        "broker-b",
        "127.0.0.1:10921",
        0,
        1,
        &[("Followed", 4, 4, 6)],
    )
    .await
    .unwrap();
    tokio::time::timeout(Duration::from_secs(5), watch.changed())
        .await
        .expect("the change seen within 5 s")
        .unwrap();
    let view = watch.borrow_and_update().clone().unwrap();
    assert_eq!(view.route.broker_datas.len(), 2);

    // Against Java, asking by push directly says why.
    if java {
        let mut sub = subscription(&ns).await;
        let refused = sub.subscribe(["Followed"], false, None).await;
        assert!(
            matches!(refused, Err(PushError::NotSupported { .. })),
            "{refused:?}"
        );
    }
}

/// The next push, which must be cluster membership.
async fn next_cluster(sub: &mut RouteSubscription) -> rmq_protocol::ClusterInfo {
    match tokio::time::timeout(Duration::from_secs(5), sub.next()).await {
        Ok(Ok(PushEvent::Cluster(info))) => info,
        other => panic!("expected cluster membership, got {other:?}"),
    }
}

#[tokio::test]
async fn cluster_membership_is_pushed_too() {
    let ns = Namesrv::waymark(&[]);
    let mut sub = subscription(&ns).await;
    sub.subscribe([], true, None).await.unwrap();
    assert!(next_cluster(&mut sub).await.broker_addr_table.is_empty());
    let broker = connect(&ns).await;
    register_as(
        &broker,
        "broker-a",
        "127.0.0.1:10911",
        0,
        1,
        &[("T", 1, 1, 6)],
    )
    .await
    .unwrap();
    let info = next_cluster(&mut sub).await;
    let names: Vec<String> = info.cluster_addr_table["DefaultCluster"]
        .iter()
        .cloned()
        .collect();
    assert_eq!(names, ["broker-a"]);
}

/// The body of `GET path` on `addr` (HTTP/1.0).
async fn http_get(addr: &str, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("a header block");
    assert!(
        head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
        "{head}"
    );
    body.to_owned()
}
