//! Warm restart over TCP: a NameServer killed and started again on the same
//! `routeSnapshotPath` answers every route and list query byte for byte as
//! before, with no TOPIC_NOT_EXIST, before any broker has registered again;
//! a restored broker that never registers again leaves after its timeout,
//! one that does stays. With the key empty a restart is cold, as Java's; a
//! damaged snapshot is a warning and an empty start.

use std::path::Path;
use std::time::{Duration, Instant};

use rmq_transport::RpcClient;
use rmq_wire::{RemotingCommand, RequestCode as C, ResponseCode as R};

use crate::common::*;

/// `prefix0` … `prefix{n-1}`, then `extra`.
fn names(prefix: &str, n: usize, extra: &[&str]) -> Vec<String> {
    (0..n)
        .map(|i| format!("{prefix}{i}"))
        .chain(extra.iter().map(|t| (*t).to_owned()))
        .collect()
}

/// Three broker groups in two clusters, one with a slave, 40 topics.
fn brokers() -> Vec<Register> {
    let a = names("TopicA", 15, &["Shared", "SharedAll"]);
    let b = names("TopicB", 15, &["Shared"]);
    let c = names("TopicC", 8, &["SharedAll"]);
    fn refs(list: &[String]) -> Vec<&str> {
        list.iter().map(String::as_str).collect()
    }
    let mut master_a =
        Register::new("broker-a", "127.0.0.1:10911", 0, &refs(&a)).ext("__ZONE_NAME", "zone1");
    master_a.topics[0].topic_sys_flag = 1;
    let slave_a = Register::new("broker-a", "127.0.0.1:10921", 1, &refs(&a));
    let b = Register::new("broker-b", "127.0.0.1:10912", 0, &refs(&b));
    let mut c = Register::new("broker-c", "127.0.0.1:10913", 0, &refs(&c));
    c.cluster = "OtherCluster".into();
    vec![master_a, slave_a, b, c]
}

fn all_topics(brokers: &[Register]) -> Vec<String> {
    let mut topics: Vec<String> = brokers
        .iter()
        .flat_map(|b| b.topics.iter().map(|t| t.topic_name.clone()))
        .collect();
    topics.sort();
    topics.dedup();
    topics
}

/// Registers every broker on one connection (kept open by the caller).
async fn register_all(server: &Server, brokers: &[Register]) -> RpcClient {
    let client = server.client().await;
    for reg in brokers {
        assert_code(
            &client.invoke(reg.request(), TIMEOUT).await.unwrap(),
            R::Success,
        );
    }
    client
}

/// What a client sees: code, remark, header fields and body of a response.
fn seen(response: &RemotingCommand) -> String {
    format!(
        "{:?} {:?} {:?} {}",
        response.response_code(),
        response.remark,
        response.ext_fields,
        body_text(response)
    )
}

/// Every route (in both JSON dialects a client may get) and every list.
async fn answers(server: &Server, topics: &[String]) -> Vec<String> {
    let client = server.client().await;
    let mut requests: Vec<RemotingCommand> = Vec::new();
    for topic in topics {
        requests.push(route_request(topic));
        // A 5.5.1 client's version: the standard JSON dialect.
        let mut standard = route_request(topic);
        standard.version = 515;
        requests.push(standard);
    }
    requests.push(request(C::GetBrokerClusterInfo, &[]));
    requests.push(request(C::GetAllTopicListFromNameserver, &[]));
    for cluster in ["DefaultCluster", "OtherCluster"] {
        requests.push(request(C::GetTopicsByCluster, &[("cluster", cluster)]));
    }
    requests.push(request(C::GetSystemTopicListFromNs, &[]));
    requests.push(request(C::GetUnitTopicList, &[]));
    let mut out = Vec::new();
    for req in requests {
        let response = client.invoke(req, TIMEOUT).await.unwrap();
        out.push(seen(&response));
    }
    out
}

/// Waits until the snapshot names every topic: the debounced writer has
/// caught up with the registrations.
async fn snapshot_holds(path: &Path, topics: &[String]) {
    let written = eventually(Duration::from_secs(5), || async {
        let text = read(path);
        topics.iter().all(|t| text.contains(&format!("\"{t}\"")))
    })
    .await;
    assert!(written, "the snapshot names every topic within 5 s");
}

fn route_codes_not_exist(answers: &[String]) -> usize {
    answers
        .iter()
        .filter(|a| a.starts_with("TopicNotExist"))
        .count()
}

#[tokio::test]
async fn a_restarted_server_answers_every_route_as_before() {
    let dir = TempDir::new();
    let snapshot = dir.path("routes.snapshot");
    let path = snapshot.display().to_string();
    let sets = [("routeSnapshotPath", path.as_str())];
    let brokers = brokers();
    let topics = all_topics(&brokers);
    assert_eq!(topics.len(), 40);

    let server = Server::start(&dir, &sets);
    let conn = register_all(&server, &brokers).await;
    let before = answers(&server, &topics).await;
    assert_eq!(route_codes_not_exist(&before), 0);
    snapshot_holds(&snapshot, &topics).await;
    // Killed, as by a crash or kill -9: only the periodic write counts.
    server.stop();
    drop(conn);

    let server = Server::start(&dir, &sets);
    // Ready (the probe a load balancer or Kubernetes asks) only once the
    // snapshot is loaded: the first answer is ready, and routes are there.
    let http = server.http.expect("the HTTP port listens");
    assert_eq!(crate::http_port::get(http, "/ready").await.0, 200);
    let after = answers(&server, &topics).await;
    assert_eq!(route_codes_not_exist(&after), 0, "no TOPIC_NOT_EXIST");
    assert_eq!(after.len(), before.len());
    for (before, after) in before.iter().zip(&after) {
        assert_eq!(before, after, "the same answer after the restart");
    }
    let log = read(&dir.path("server.log"));
    assert!(log.contains("routes restored from the snapshot"), "{log}");

    // Brokers registering again, with the same data, change no answer.
    let conn = register_all(&server, &brokers).await;
    assert_eq!(answers(&server, &topics).await, before);
    drop(conn);
}

#[tokio::test]
async fn a_stopping_server_writes_what_changed_since_the_last_write() {
    let dir = TempDir::new();
    let snapshot = dir.path("routes.snapshot");
    let path = snapshot.display().to_string();
    let sets = [("routeSnapshotPath", path.as_str())];
    let server = Server::start(&dir, &sets);
    let first = brokers();
    let conn = register_all(&server, &first[..1]).await;
    snapshot_holds(&snapshot, &["TopicA0".into()]).await;
    // Registered and stopped at once, well within the second between two
    // periodic writes: only the write at shutdown can hold broker-b. And it
    // must be taken before the drain closes the broker's connection, which
    // unregisters both brokers.
    let late = &first[2];
    assert_code(
        &conn.invoke(late.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    drop(conn);
    let status = server.terminate(Duration::from_secs(15));
    assert!(status.success(), "{status:?}");
    assert!(
        read(&snapshot).contains("\"TopicB0\""),
        "written at shutdown; log:\n{}",
        read(&dir.path("server.log"))
    );

    let server = Server::start(&dir, &sets);
    assert_code(&server.call(route_request("TopicB0")).await, R::Success);
}

#[tokio::test]
async fn a_restored_broker_leaves_after_its_timeout_unless_it_registers() {
    let dir = TempDir::new();
    let snapshot = dir.path("routes.snapshot");
    let path = snapshot.display().to_string();
    let sets = [
        ("routeSnapshotPath", path.as_str()),
        ("scanNotActiveBrokerInterval", "200"),
    ];
    let gone = Register::new(
        "broker-gone",
        "127.0.0.1:10931",
        0,
        &["GoneTopic", "GoneOther"],
    )
    .ext("heartbeatTimeoutMillis", "1500");
    let back = Register::new(
        "broker-back",
        "127.0.0.1:10932",
        0,
        &["BackTopic", "BackOther"],
    )
    .ext("heartbeatTimeoutMillis", "1500");
    let server = Server::start(&dir, &sets);
    let conn = register_all(&server, &[gone.clone(), back.clone()]).await;
    snapshot_holds(&snapshot, &["GoneTopic".into(), "BackTopic".into()]).await;
    server.stop();
    drop(conn);

    let server = Server::start(&dir, &sets);
    let started = Instant::now();
    for topic in ["GoneTopic", "BackTopic"] {
        assert_code(&server.call(route_request(topic)).await, R::Success);
    }
    // broker-back registers again, now with the default timeout (120 s).
    let back = Register::new(
        "broker-back",
        "127.0.0.1:10932",
        0,
        &["BackTopic", "BackOther"],
    );
    let conn = register_all(&server, &[back]).await;

    let expired = eventually(Duration::from_secs(10), || async {
        server
            .call(route_request("GoneTopic"))
            .await
            .response_code()
            == R::TopicNotExist
    })
    .await;
    assert!(expired, "the broker that never came back leaves");
    // Not before its timeout, and at the earliest at the first expiry scan.
    assert!(started.elapsed() >= Duration::from_millis(1_500));
    assert_code(&server.call(route_request("BackTopic")).await, R::Success);
    let info = body_text(&server.call(request(C::GetBrokerClusterInfo, &[])).await);
    assert!(
        info.contains("broker-back") && !info.contains("broker-gone"),
        "{info}"
    );
    drop(conn);
}

#[tokio::test]
async fn an_empty_path_turns_snapshots_off() {
    let dir = TempDir::new();
    let sets = [("routeSnapshotPath", "")];
    let server = Server::start(&dir, &sets);
    let conn = register_all(&server, &brokers()[..1]).await;
    // Stopped as a service manager stops it: with a snapshot path, this
    // stop writes the routes whatever the periodic writer did (the test
    // above), so no file means no snapshot at all.
    drop(conn);
    let status = server.terminate(Duration::from_secs(15));
    assert!(status.success(), "{status:?}");
    assert!(!dir.path("namesrv").join("routes.snapshot").exists());

    let server = Server::start(&dir, &sets);
    assert_code(
        &server.call(route_request("TopicA0")).await,
        R::TopicNotExist,
    );
}

#[tokio::test]
async fn the_snapshot_is_on_by_default_next_to_the_kv_store_default() {
    let dir = TempDir::new();
    // HOME is the test's directory: the default is HOME/namesrv/routes.snapshot.
    let default = dir.path("namesrv").join("routes.snapshot");
    let server = Server::start(&dir, &[]);
    let conn = register_all(&server, &brokers()[..1]).await;
    snapshot_holds(&default, &["TopicA0".into()]).await;
    drop(conn);
    drop(server);
}

#[tokio::test]
async fn a_damaged_snapshot_is_a_warning_and_an_empty_start() {
    let dir = TempDir::new();
    let snapshot = dir.path("routes.snapshot");
    std::fs::write(
        &snapshot,
        br#"{"format":"waymark-route-snapshot","version":1,"groups":[{"#,
    )
    .unwrap();
    let path = snapshot.display().to_string();
    let server = Server::start(&dir, &[("routeSnapshotPath", path.as_str())]);
    assert_code(
        &server.call(route_request("TopicA0")).await,
        R::TopicNotExist,
    );
    let log = read(&dir.path("server.log"));
    assert!(log.contains("route snapshot unusable"), "{log}");
    assert!(
        dir.path("routes.snapshot.corrupt").exists(),
        "kept for inspection"
    );

    // A file over routeSnapshotMaxBytes is not read.
    drop(server);
    let conn_dir = TempDir::new();
    let big = conn_dir.path("routes.snapshot");
    let path = big.display().to_string();
    let server = Server::start(&conn_dir, &[("routeSnapshotPath", path.as_str())]);
    let conn = register_all(&server, &brokers()[..1]).await;
    snapshot_holds(&big, &["TopicA0".into()]).await;
    server.stop();
    drop(conn);
    let server = Server::start(
        &conn_dir,
        &[
            ("routeSnapshotPath", path.as_str()),
            ("routeSnapshotMaxBytes", "100"),
        ],
    );
    assert_code(
        &server.call(route_request("TopicA0")).await,
        R::TopicNotExist,
    );
    let log = read(&conn_dir.path("server.log"));
    assert!(
        log.contains("larger than routeSnapshotMaxBytes (100)"),
        "{log}"
    );
}
