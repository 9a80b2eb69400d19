//! Liveness over TCP: a closed broker connection removes the broker
//! promptly, an older connection of a re-registered broker does not, a
//! silent broker expires after its own heartbeatTimeoutMillis (at the
//! earliest at the first expiry scan, 5 s after start), heartbeats keep it,
//! an idle connection is closed and unregisters.

use std::time::{Duration, Instant};

use rmq_wire::{RequestCode as C, ResponseCode as R};

use crate::common::*;

async fn has_route(server: &Server, topic: &str) -> bool {
    server.call(route_request(topic)).await.response_code() == R::Success
}

fn broker() -> Register {
    Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicTest", "Other"])
}

#[tokio::test]
async fn closing_the_broker_connection_unregisters_it() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let broker_conn = server.client().await;
    assert_code(
        &broker_conn
            .invoke(broker().request(), TIMEOUT)
            .await
            .unwrap(),
        R::Success,
    );
    assert!(has_route(&server, "TopicTest").await);
    // A client connection closing changes nothing. Waited 200 ms: the
    // broker's own close below takes its route away within the first polls
    // (the close queues the unregistration at once, the worker runs it when
    // woken), so one queued by the client's close would have run by then.
    server.client().await.close();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(has_route(&server, "TopicTest").await);

    broker_conn.close();
    let started = Instant::now();
    assert!(
        eventually(Duration::from_secs(2), || async {
            !has_route(&server, "TopicTest").await
        })
        .await
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn an_older_connection_closing_does_not_unregister() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let old = server.client().await;
    assert_code(
        &old.invoke(broker().request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    let new = server.client().await;
    assert_code(
        &new.invoke(broker().request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    // Waited 300 ms after the old connection's close: the new one's close
    // below unregisters within the first polls, so an unregistration queued
    // by the old one would have run by then.
    old.close();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        has_route(&server, "TopicTest").await,
        "re-registered on another connection"
    );
    new.close();
    assert!(
        eventually(Duration::from_secs(2), || async {
            !has_route(&server, "TopicTest").await
        })
        .await
    );
}

#[tokio::test]
async fn a_silent_broker_expires_after_its_timeout() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[("scanNotActiveBrokerInterval", "200")]);
    let conn = server.client().await;
    let started = Instant::now();
    let reg = broker().ext("heartbeatTimeoutMillis", "1200");
    assert_code(
        &conn.invoke(reg.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    // Registered with it and silent as long: another broker on the default
    // timeout (120 s), which must outlive broker-a.
    let other_conn = server.client().await;
    let other = Register::new("broker-b", "127.0.0.1:10912", 0, &["B1", "B2"]);
    assert_code(
        &other_conn.invoke(other.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    assert!(
        eventually(Duration::from_secs(8), || async {
            !has_route(&server, "TopicTest").await
        })
        .await
    );
    // Regression: the first scan runs 5 s after start whatever the interval,
    // as Java's (it used to run one interval after start).
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(4_500),
        "expired before the first scan at 5 s: {took:?}"
    );
    // As Java, the server closes the expired broker's connection.
    assert!(
        eventually(Duration::from_secs(2), || async { conn.is_closed() }).await,
        "the expired broker's connection is closed"
    );
    // broker-b's default timeout (120 s) is unaffected. Waited 500 ms after
    // broker-a went: two more scans (every 200 ms), each of which would have
    // expired broker-b had it been given broker-a's 1.2 s, as it registered
    // with broker-a and has been as silent since.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(has_route(&server, "B1").await);
}

#[tokio::test]
async fn heartbeats_keep_a_broker_registered() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[("scanNotActiveBrokerInterval", "200")]);
    let conn = server.client().await;
    // A timeout 15 times the interval of the heartbeats below: only a stall
    // of the test or the server of nearly 3 s between two of them could
    // expire the broker.
    let reg = broker().ext("heartbeatTimeoutMillis", "3000");
    assert_code(
        &conn.invoke(reg.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    let registered = Instant::now();
    let beat = request(
        C::BrokerHeartbeat,
        &[
            ("clusterName", "DefaultCluster"),
            ("brokerAddr", "127.0.0.1:10911"),
            ("brokerName", "broker-a"),
        ],
    );
    let query = reg.query_data_version(reg.version);
    // 6.5 s of heartbeats, timed, not counted: without them the broker
    // would be gone by 5.2 s after its registration (at the first expiry
    // scan, 5 s after start, or the first one past its 3 s timeout).
    let mut round = 0;
    while registered.elapsed() < Duration::from_millis(6_500) {
        // One-way, as brokers send both.
        let keepalive = if round % 2 == 0 {
            beat.clone()
        } else {
            query.clone()
        };
        conn.invoke_oneway(keepalive)
            .expect("sent (the server closes the connection of a broker it expired)");
        round += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        has_route(&server, "TopicTest").await,
        "kept alive for {:?} with a 3 s timeout",
        registered.elapsed()
    );
    // And without them it goes: 3 s of silence and the next scan.
    assert!(
        eventually(Duration::from_secs(6), || async {
            !has_route(&server, "TopicTest").await
        })
        .await
    );
}

/// A Java broker with `forceRegister=false` sends QUERY_DATA_VERSION each
/// period and registers in full only when the answer says `changed`. As
/// Java's `queryBrokerTopicConfig` (which calls
/// `updateBrokerInfoUpdateTimestamp`), the query alone keeps the broker
/// alive, and it answers `changed=false` for the registered version.
#[tokio::test]
async fn query_data_version_alone_keeps_a_broker_registered() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[("scanNotActiveBrokerInterval", "200")]);
    let conn = server.client().await;
    let reg = broker().ext("heartbeatTimeoutMillis", "2000");
    assert_code(
        &conn.invoke(reg.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    let registered = Instant::now();
    let query = reg.query_data_version(reg.version);
    // 7 s, three and a half timeouts, past the first scan at 5 s: a query
    // every 250 ms, each answered unchanged.
    while registered.elapsed() < Duration::from_millis(7_000) {
        let answer = conn.invoke(query.clone(), TIMEOUT).await.unwrap();
        assert_code(&answer, R::Success);
        assert_eq!(answer.ext("changed"), Some("false"));
        assert!(has_route(&server, "TopicTest").await);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // Without them it goes: 2 s of silence and the next scan.
    assert!(
        eventually(Duration::from_secs(5), || async {
            !has_route(&server, "TopicTest").await
        })
        .await
    );
}

#[tokio::test]
async fn an_idle_broker_connection_is_closed_and_unregisters() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[("serverChannelMaxIdleTimeSeconds", "1")]);
    let mut raw = Raw::connect(server.addr).await;
    raw.send_command(&broker().request()).await;
    assert_eq!(
        raw.read_command(TIMEOUT).await.unwrap().response_code(),
        R::Success
    );
    assert!(
        raw.closed_by_peer(Duration::from_secs(3)).await,
        "closed after 1 s idle"
    );
    assert!(
        eventually(Duration::from_secs(2), || async {
            !has_route(&server, "TopicTest").await
        })
        .await
    );
}
