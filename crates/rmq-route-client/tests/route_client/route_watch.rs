//! The periodic refresh and `watch` against a real `rmq-namesrv`: a second
//! broker joining, a broker whose connection closes (it leaves the route)
//! and a broker whose write permission is wiped (it leaves the publish view
//! only) are all seen as changes; unchanged refreshes are silent.

use std::time::Duration;

use crate::common::{self, names, register, wipe_write_perm, Namesrv};
use rmq_route_client::{RouteClient, RouteWatch, TopicView};

const POLL: Duration = Duration::from_millis(100);

/// Waits for the next change and returns the view it carries.
async fn next_change(watch: &mut RouteWatch) -> std::sync::Arc<TopicView> {
    tokio::time::timeout(Duration::from_secs(5), watch.changed())
        .await
        .expect("a change within 5 s")
        .expect("client alive");
    watch.borrow_and_update().clone().expect("a view")
}

fn brokers(view: &TopicView) -> Vec<String> {
    let mut names: Vec<String> = view
        .route
        .broker_datas
        .iter()
        .map(|b| b.broker_name.clone())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn watch_sees_a_broker_join_and_a_broker_leave() -> anyhow::Result<()> {
    let ns = Namesrv::start(&[]);
    let a = register(
        &ns.addr,
        "broker-a",
        "127.0.0.1:10911",
        &[("Watched", 2, 2, 6)],
    )
    .await?;
    let client = RouteClient::start(common::config(&[&ns.addr], POLL));

    // The first route arrives with the watch itself (fetched on subscribe).
    let mut watch = client.watch("Watched").await;
    let first = watch.borrow_and_update().clone().expect("fetched on watch");
    assert_eq!(brokers(&first), ["broker-a"]);

    // Refreshes of an unchanged route are not signalled. Polling goes on
    // beside the route push, every POLL: in four intervals the client has
    // refreshed the route about four times, and a refresh that signalled
    // would show.
    tokio::time::sleep(POLL * 4).await;
    assert!(!watch.has_changed()?, "no change, no signal");

    let b = register(
        &ns.addr,
        "broker-b",
        "127.0.0.1:10921",
        &[("Watched", 2, 2, 6)],
    )
    .await?;
    let joined = next_change(&mut watch).await;
    assert_eq!(brokers(&joined), ["broker-a", "broker-b"]);
    assert_eq!(
        names(&joined.publish.queues),
        ["broker-a:0", "broker-a:1", "broker-b:0", "broker-b:1"]
    );

    // broker-a's connection closes: the NameServer unregisters it.
    a.conn.close();
    let left = next_change(&mut watch).await;
    assert_eq!(brokers(&left), ["broker-b"]);
    assert_eq!(names(&left.subscribe), ["broker-b:0", "broker-b:1"]);
    assert!(client
        .route("Watched")
        .is_some_and(|v| v.route.broker_datas.len() == 1));

    // A second watcher starts from the current view.
    let second = client.watch("Watched").await;
    assert_eq!(brokers(second.borrow().as_ref().unwrap()), ["broker-b"]);
    drop(b);
    client.shutdown();
    Ok(())
}

#[tokio::test]
async fn watching_an_unknown_topic_waits_for_its_first_route() -> anyhow::Result<()> {
    let ns = Namesrv::start(&[]);
    let client = RouteClient::start(common::config(&[&ns.addr], POLL));
    let mut watch = client.watch("Later").await;
    assert!(watch.borrow().is_none(), "TOPIC_NOT_EXIST: nothing yet");

    let _a = register(
        &ns.addr,
        "broker-a",
        "127.0.0.1:10911",
        &[("Later", 1, 1, 6)],
    )
    .await?;
    let view = next_change(&mut watch).await;
    assert_eq!(names(&view.publish.queues), ["broker-a:0"]);

    // Dropping the client ends the refresh task; the watch then closes.
    drop(client);
    let closed = tokio::time::timeout(Duration::from_secs(5), watch.changed()).await?;
    assert!(closed.is_err(), "sender gone with the client");
    Ok(())
}

#[tokio::test]
async fn wiped_broker_leaves_the_publish_view_only() -> anyhow::Result<()> {
    let ns = Namesrv::start(&[]);
    let _a = register(
        &ns.addr,
        "broker-a",
        "127.0.0.1:10911",
        &[("Wiped", 2, 2, 6)],
    )
    .await?;
    let _b = register(
        &ns.addr,
        "broker-b",
        "127.0.0.1:10921",
        &[("Wiped", 2, 2, 6)],
    )
    .await?;
    let client = RouteClient::start(common::config(&[&ns.addr], Duration::from_millis(100)));

    let mut watch = client.watch("Wiped").await;
    let before = watch.borrow_and_update().clone().expect("route");
    assert_eq!(
        names(&before.publish.queues),
        ["broker-a:0", "broker-a:1", "broker-b:0", "broker-b:1"]
    );

    wipe_write_perm(&ns.addr, "broker-a").await?;
    tokio::time::timeout(Duration::from_secs(5), watch.changed()).await??;
    let after = watch.borrow_and_update().clone().expect("route");
    let perm_a = after
        .route
        .queue_datas
        .iter()
        .find(|q| q.broker_name == "broker-a")
        .unwrap()
        .perm;
    assert_eq!(perm_a, 4, "read only");
    assert_eq!(names(&after.publish.queues), ["broker-b:0", "broker-b:1"]);
    assert_eq!(
        names(&after.subscribe),
        ["broker-a:0", "broker-a:1", "broker-b:0", "broker-b:1"]
    );

    // Selection only ever picks broker-b now.
    for _ in 0..8 {
        let mq = client.select_queue(&after, None, false).unwrap();
        assert_eq!(mq.broker_name, "broker-b");
    }
    Ok(())
}
