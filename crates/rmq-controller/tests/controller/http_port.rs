//! The controller's HTTP port (docs/metrics.md): the broker sets in
//! `/api/v1/controller`, and `/metrics` moving with a broker set's join,
//! heartbeats and election; the binary's `httpListenAddr`.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{call, client, group, leader, Replica};
use rmq_ops::http::Readiness;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// `GET path` over HTTP/1.0: the status and the body.
async fn get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let request = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8(response).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a header block");
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

/// The value of `series` in a scrape, 0 when absent.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map_or(0.0, |value| value.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_and_api_follow_a_broker_set() {
    let nodes = group(1, &[("notifyBrokerRoleChanged", "false")]).await;
    leader(&nodes, Duration::from_secs(10)).await;
    let node = nodes[0].node().clone();
    let mut registry = prometheus_client::registry::Registry::default();
    rmq_ops::metrics::build_info(&mut registry, "controller");
    rmq_controller::metrics::register(&mut registry, &node);
    let readiness = Readiness::default();
    readiness.set_ready();
    let router = rmq_controller::http::router(node.clone(), Arc::new(registry), readiness);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let http = listener.local_addr().unwrap();
    tokio::spawn(rmq_ops::http::serve(
        listener,
        router,
        std::future::pending(),
    ));

    let (_, before) = get(http, "/metrics").await;
    assert_eq!(
        sample(&before, "waymark_controller_is_leader"),
        1.0,
        "{before}"
    );
    assert_eq!(sample(&before, "waymark_controller_broker_sets"), 0.0);
    assert!(sample(&before, "waymark_controller_raft_term") >= 1.0);

    let c = client(&nodes[0].addr).await;
    let a = Replica::join(&c, "broker-a", "127.0.0.1:30911").await;
    let b = Replica::join(&c, "broker-a", "127.0.0.1:30921").await;
    for replica in [&a, &b] {
        call(&c, replica.heartbeat(10_000, 100)).await;
    }
    let elected = call(&c, a.elect()).await;
    assert_eq!(elected.code, 0, "{elected:?}");

    let (status, body) = get(http, "/api/v1/controller").await;
    assert_eq!(status, 200, "{body}");
    let view: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(view["isLeader"], true);
    let set = &view["brokerSets"][0];
    assert_eq!(set["brokerName"], "broker-a");
    assert_eq!(set["masterBrokerId"], a.id);
    assert_eq!(set["masterAddress"], "127.0.0.1:30911");
    assert_eq!(set["masterEpoch"], 1);
    assert_eq!(set["replicas"].as_array().map(Vec::len), Some(2));
    assert_eq!(set["replicas"][0]["alive"], true);

    let (_, after) = get(http, "/metrics").await;
    let labels = r#"{cluster="DefaultCluster",broker_name="broker-a"}"#;
    assert_eq!(sample(&after, "waymark_controller_broker_sets"), 1.0);
    assert_eq!(sample(&after, "waymark_controller_replicas_alive"), 2.0);
    assert_eq!(sample(&after, "waymark_controller_elections_total"), 1.0);
    assert_eq!(
        sample(&after, &format!("waymark_controller_master_epoch{labels}")),
        1.0
    );
    assert_eq!(
        sample(
            &after,
            &format!("waymark_controller_master_broker_id{labels}")
        ),
        a.id as f64
    );
    assert!(
        sample(&after, "waymark_controller_raft_applied_index")
            > sample(&before, "waymark_controller_raft_applied_index")
    );
    let elections =
        r#"waymark_requests_total{request="CONTROLLER_ELECT_MASTER",response="SUCCESS"}"#;
    assert_eq!(sample(&after, elections), 1.0, "{after}");
    let heartbeats = r#"waymark_requests_total{request="BROKER_HEARTBEAT",response="SUCCESS"}"#;
    assert_eq!(sample(&after, heartbeats), 2.0, "{after}");
    assert!(sample(&after, "waymark_connections_open") >= 1.0);

    let (status, overview) = get(http, "/api/v1/overview").await;
    assert_eq!(status, 200);
    assert!(overview.contains(r#""role":"controller""#), "{overview}");
    assert_eq!(get(http, "/health").await.0, 200);
    assert_eq!(get(http, "/ready").await.0, 200);
}

#[test]
fn the_binary_prints_and_checks_the_http_address() {
    let printed = std::process::Command::new(env!("CARGO_BIN_EXE_rmq-controller"))
        .args([
            "--set",
            "controllerDLegerGroup=g1",
            "--set",
            "controllerDLegerPeers=n0-127.0.0.1:9878",
            "--set",
            "controllerDLegerSelfId=n0",
            "-p",
        ])
        .output()
        .unwrap();
    assert!(printed.status.success());
    let text = String::from_utf8_lossy(&printed.stdout);
    assert!(text.contains("\nhttpListenAddr=127.0.0.1:9879\n"), "{text}");

    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_rmq-controller"))
        .args(["--set", "httpListenAddr=nowhere", "-p"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("httpListenAddr"), "{stderr}");
}
