//! Liveness over TCP (nameserver.md §7): a closed broker connection removes
//! the broker promptly, an older connection of a re-registered broker does
//! not, a silent broker expires after its own heartbeatTimeoutMillis (at
//! the earliest at the first expiry scan, 5 s after start), heartbeats keep it, an idle connection is closed and unregisters.

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
    // A client connection closing changes nothing.
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
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(has_route(&server, "TopicTest").await, "not yet expired");
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
    // The default timeout (120 s) of another broker is unaffected.
    let other_conn = server.client().await;
    let other = Register::new("broker-b", "127.0.0.1:10912", 0, &["B1", "B2"]);
    other_conn.invoke(other.request(), TIMEOUT).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(has_route(&server, "B1").await);
}

#[tokio::test]
async fn heartbeats_keep_a_broker_registered() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[("scanNotActiveBrokerInterval", "200")]);
    let conn = server.client().await;
    let reg = broker().ext("heartbeatTimeoutMillis", "800");
    assert_code(
        &conn.invoke(reg.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    let beat = request(
        C::BrokerHeartbeat,
        &[
            ("clusterName", "DefaultCluster"),
            ("brokerAddr", "127.0.0.1:10911"),
            ("brokerName", "broker-a"),
        ],
    );
    let query = request(
        C::QueryDataVersion,
        &[
            ("clusterName", "DefaultCluster"),
            ("brokerAddr", "127.0.0.1:10911"),
            ("brokerName", "broker-a"),
            ("brokerId", "0"),
        ],
    );
    // Past the first expiry scan (5 s after start) and several more.
    for round in 0..26 {
        // One-way, as brokers send both.
        let keepalive = if round % 2 == 0 {
            beat.clone()
        } else {
            query.clone()
        };
        conn.invoke_oneway(keepalive).unwrap();
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        has_route(&server, "TopicTest").await,
        "kept alive for 6.5 s with an 0.8 s timeout"
    );
    assert!(
        eventually(Duration::from_secs(3), || async {
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
