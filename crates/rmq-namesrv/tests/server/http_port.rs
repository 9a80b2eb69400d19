//! The HTTP port (docs/metrics.md): `/metrics` moves by exactly what real
//! traffic did (route queries, registrations, a removal by each of two
//! reasons, a refusal), `/health` and `/ready` (also while
//! needWaitForService holds routes back), and the JSON API over a
//! registered broker.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use rmq_wire::{RequestCode as C, ResponseCode as R};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::*;

/// `GET path` over HTTP/1.0: the status and the body.
pub(crate) async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr)
        .await
        .expect("connect to the HTTP port");
    let request = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut response))
        .await
        .expect("answered in time")
        .unwrap();
    let text = String::from_utf8(response).expect("UTF-8 answer");
    let (head, body) = text.split_once("\r\n\r\n").expect("a header block");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    (status, body.to_owned())
}

async fn json(addr: SocketAddr, path: &str) -> Value {
    let (status, body) = get(addr, path).await;
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
}

/// Every sample of a scrape: `name{labels}` → value.
pub async fn scrape(addr: SocketAddr) -> BTreeMap<String, f64> {
    let (status, text) = get(addr, "/metrics").await;
    assert_eq!(status, 200, "{text}");
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').expect("series and value");
            (series.to_owned(), value.parse().expect("a number"))
        })
        .collect()
}

fn value(samples: &BTreeMap<String, f64>, series: &str) -> f64 {
    samples.get(series).copied().unwrap_or(0.0)
}

/// How much `series` moved between two scrapes.
fn moved(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>, series: &str) -> f64 {
    value(after, series) - value(before, series)
}

#[tokio::test]
async fn metrics_move_by_what_the_traffic_did() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[("maxTopicsPerRegistration", "3")]);
    let http = server.http.expect("the HTTP port listens");
    let before = scrape(http).await;
    assert_eq!(value(&before, "waymark_brokers"), 0.0);

    // A route query for a topic nobody serves, a registration, three route
    // queries that find it.
    let client = server.client().await;
    assert_code(
        &client
            .invoke(route_request("TopicA"), TIMEOUT)
            .await
            .unwrap(),
        R::TopicNotExist,
    );
    let broker_a = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicA", "TopicB"]);
    let request_a = broker_a.request();
    let body_a = request_a.body.as_ref().map_or(0, |body| body.len());
    let conn_a = server.client().await;
    assert_code(
        &conn_a.invoke(request_a, TIMEOUT).await.unwrap(),
        R::Success,
    );
    for _ in 0..3 {
        assert_code(
            &client
                .invoke(route_request("TopicA"), TIMEOUT)
                .await
                .unwrap(),
            R::Success,
        );
    }
    // A second broker on its own connection, which then closes: removed for
    // "close". (Two topics: a broker's first registration with one topic is
    // refused, as Java refuses it.)
    let broker_b = Register::new("broker-b", "127.0.0.1:10921", 0, &["TopicC", "TopicD"]);
    let request_b = broker_b.request();
    let body_b = request_b.body.as_ref().map_or(0, |body| body.len());
    let conn_b = server.client().await;
    assert_code(
        &conn_b.invoke(request_b, TIMEOUT).await.unwrap(),
        R::Success,
    );
    let mid = scrape(http).await;
    assert_eq!(value(&mid, "waymark_brokers"), 2.0);
    assert_eq!(value(&mid, "waymark_broker_groups"), 2.0);
    assert_eq!(value(&mid, "waymark_topics"), 4.0);
    assert_eq!(value(&mid, "waymark_topic_queue_entries"), 4.0);
    assert_eq!(value(&mid, "waymark_clusters"), 1.0);
    conn_b.close();
    // broker-a leaves by UNREGISTER_BROKER.
    let unregister = request(
        C::UnregisterBroker,
        &[
            ("brokerName", "broker-a"),
            ("brokerAddr", "127.0.0.1:10911"),
            ("clusterName", "DefaultCluster"),
            ("brokerId", "0"),
        ],
    );
    assert_code(
        &client.invoke(unregister, TIMEOUT).await.unwrap(),
        R::Success,
    );
    // A registration over maxTopicsPerRegistration is refused.
    let too_many = Register::new("broker-c", "127.0.0.1:10931", 0, &["T1", "T2", "T3", "T4"]);
    let request_c = too_many.request();
    let body_c = request_c.body.as_ref().map_or(0, |body| body.len());
    let refused = client.invoke(request_c, TIMEOUT).await.unwrap();
    assert_code(&refused, R::SystemError);

    let removed = eventually(Duration::from_secs(10), || async {
        value(&scrape(http).await, "waymark_brokers") == 0.0
    })
    .await;
    assert!(removed, "both brokers leave the tables");
    let after = scrape(http).await;
    let checks = [
        (
            r#"waymark_requests_total{request="GET_ROUTEINFO_BY_TOPIC",response="SUCCESS"}"#,
            3.0,
        ),
        (
            r#"waymark_requests_total{request="GET_ROUTEINFO_BY_TOPIC",response="TOPIC_NOT_EXIST"}"#,
            1.0,
        ),
        (
            r#"waymark_requests_total{request="REGISTER_BROKER",response="SUCCESS"}"#,
            2.0,
        ),
        (
            r#"waymark_requests_total{request="REGISTER_BROKER",response="SYSTEM_ERROR"}"#,
            1.0,
        ),
        (
            r#"waymark_requests_total{request="UNREGISTER_BROKER",response="SUCCESS"}"#,
            1.0,
        ),
        (
            r#"waymark_request_duration_seconds_count{request="GET_ROUTEINFO_BY_TOPIC"}"#,
            4.0,
        ),
        ("waymark_registration_body_bytes_count", 3.0),
        (
            "waymark_registration_body_bytes_sum",
            (body_a + body_b + body_c) as f64,
        ),
        (r#"waymark_broker_removals_total{reason="close"}"#, 1.0),
        (r#"waymark_broker_removals_total{reason="unregister"}"#, 1.0),
        (r#"waymark_broker_removals_total{reason="expiry"}"#, 0.0),
        (
            r#"waymark_refusals_total{kind="topics_per_registration"}"#,
            1.0,
        ),
        (r#"waymark_refusals_total{kind="pool_busy"}"#, 0.0),
        ("waymark_connections_opened_total", 3.0),
    ];
    for (series, expected) in checks {
        assert_eq!(moved(&before, &after, series), expected, "{series}");
    }
    assert_eq!(
        value(&after, "waymark_topics"),
        0.0,
        "the topics left with their brokers"
    );
    // The bytes counters saw at least the registration bodies.
    assert!(
        moved(&before, &after, "waymark_received_bytes_total") > (body_a + body_b + body_c) as f64
    );
    assert!(moved(&before, &after, "waymark_sent_bytes_total") > 0.0);
    assert_eq!(
        value(&after, "waymark_connections_open"),
        2.0,
        "client and broker-a's"
    );
    assert!(value(&after, "process_resident_memory_bytes") > 1e6);
    assert!(value(&after, "process_open_fds") > 3.0);
    let build = after
        .keys()
        .find(|series| series.starts_with("waymark_build_info{"))
        .expect("build info");
    assert!(build.contains(r#"role="namesrv""#), "{build}");
}

#[tokio::test]
async fn health_ready_and_the_api_show_a_registered_broker() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let http = server.http.expect("the HTTP port listens");
    assert_eq!(get(http, "/health").await, (200, "ok\n".to_owned()));
    assert_eq!(get(http, "/ready").await, (200, "ready\n".to_owned()));
    let (status, page) = get(http, "/").await;
    assert_eq!(status, 200);
    assert!(page.contains("<html"), "the dashboard page: {page}");

    let broker = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicA", "TopicB"]);
    let conn = server.client().await;
    assert_code(
        &conn.invoke(broker.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );

    let overview = json(http, "/api/v1/overview").await;
    assert_eq!(overview["role"], "namesrv");
    assert_eq!(overview["brokers"], 1);
    assert_eq!(overview["topics"], 2);
    let brokers = json(http, "/api/v1/brokers").await;
    let listed = &brokers["brokers"][0];
    assert_eq!(listed["address"], "127.0.0.1:10911");
    assert_eq!(listed["brokerName"], "broker-a");
    assert_eq!(listed["role"], "master");
    assert_eq!(listed["topicCount"], 2);
    // The harness registers as a 5.x broker of the crate's RemotingCommand default.
    let expected = rmq_protocol::version::release_name(
        rmq_wire::RemotingCommand::request(C::RegisterBroker, 0).version,
    );
    assert_eq!(listed["version"].as_str(), expected.as_deref());
    assert!(expected.is_some());
    let clusters = json(http, "/api/v1/clusters").await;
    assert_eq!(clusters["clusters"][0]["name"], "DefaultCluster");
    assert_eq!(clusters["clusters"][0]["brokerNames"][0], "broker-a");

    let topics = json(http, "/api/v1/topics?search=topica").await;
    assert_eq!(topics["total"], 1);
    assert_eq!(topics["topics"][0]["name"], "TopicA");
    assert_eq!(topics["topics"][0]["queues"][0]["brokerName"], "broker-a");
    let limited = json(http, "/api/v1/topics?limit=1").await;
    assert_eq!(limited["total"], 2);
    assert_eq!(limited["truncated"], true);
    assert_eq!(limited["topics"][0]["name"], "TopicA", "the first by name");
    let (status, _) = get(http, "/api/v1/topics?limit=10001").await;
    assert_eq!(status, 400);

    // The topic's route is what GET_ROUTEINFO_BY_TOPIC answers a 4.9.4+
    // client, byte for byte.
    let (status, route) = get(http, "/api/v1/topics/TopicA").await;
    assert_eq!(status, 200);
    let answered = server
        .call(route_request("TopicA").with_ext("acceptStandardJsonOnly", "true"))
        .await;
    assert_eq!(route, body_text(&answered));
    let (status, missing) = get(http, "/api/v1/topics/Nope").await;
    assert_eq!(status, 404);
    assert!(missing.contains("Nope"), "{missing}");

    let config = json(http, "/api/v1/config").await;
    assert_eq!(config["config"]["orderMessageEnable"], "false");
    let (status, _) = get(http, "/api/v1/controller").await;
    assert_eq!(status, 404, "no controller in this process");
}

#[tokio::test]
async fn ready_waits_for_the_service_wait() {
    let dir = TempDir::new();
    let server = Server::start(
        &dir,
        &[
            ("needWaitForService", "true"),
            ("waitSecondsForService", "2"),
        ],
    );
    let http = server.http.expect("the HTTP port listens");
    assert_eq!(get(http, "/health").await.0, 200, "alive at once");
    assert_eq!(get(http, "/ready").await, (503, "starting\n".to_owned()));
    let ready = eventually(Duration::from_secs(10), || async {
        get(http, "/ready").await.0 == 200
    })
    .await;
    assert!(ready, "ready once the wait is over");
}

#[tokio::test]
async fn an_http_address_that_cannot_be_bound_stops_the_start_when_set() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let dir = TempDir::new();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_rmq-namesrv"))
        .args(["--listen", "127.0.0.1:0", "--set"])
        .arg(format!("httpListenAddr={address}"))
        .arg("--set")
        .arg(format!("kvConfigPath={}", dir.path("kv.json").display()))
        .env("HOME", &dir.0)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("httpListenAddr"), "{stderr}");
}
