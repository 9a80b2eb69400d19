//! Seeing the NameServer cluster (docs/metrics.md, "Cluster";
//! docs/protocol-extensions.md, WAYMARK_GET_CLUSTER_STATUS): two real
//! nodes, a broker registered with one and relayed by the other, what
//! each says over the remoting port and at `/api/v1/cluster`, and the
//! cluster's series moving in scrapes as the broker comes and goes, as a
//! pull is refused or cannot connect, and as garbage and another
//! cluster's gossip arrive. A node with the cluster off answers as a Java
//! NameServer does.

use std::collections::BTreeMap;
use std::time::Duration;

use rmq_auth::Credentials;
use rmq_protocol::cluster_status::{BrokerSource, ClusterStatusBody, Liveness};
use rmq_wire::{RequestCode as C, ResponseCode as R};
use serde_json::Value;

use crate::common::*;
use crate::http_port::{get, scrape};

/// Long enough for gossip (500 ms rounds) and a pull on a loaded machine.
const CONVERGE: Duration = Duration::from_secs(20);

fn value(samples: &BTreeMap<String, f64>, series: &str) -> f64 {
    samples
        .get(series)
        .copied()
        .unwrap_or_else(|| panic!("no {series} in the scrape"))
}

/// WAYMARK_GET_CLUSTER_STATUS, decoded.
async fn status(server: &Server) -> ClusterStatusBody {
    let response = server.call(request(C::WaymarkGetClusterStatus, &[])).await;
    assert_code(&response, R::Success);
    ClusterStatusBody::from_json(response.body.as_deref().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {}", body_text(&response)))
}

/// A node of this file's cluster with `sets`; the first has no seeds.
fn node(dir: &TempDir, seeds: Option<&str>, sets: &[(&str, &str)]) -> Server {
    cluster_node(dir, "visibility", seeds, sets)
}

async fn gossip_addr(server: &Server) -> String {
    status(server)
        .await
        .node
        .expect("a cluster node")
        .gossip_addr
}

#[tokio::test]
async fn without_a_cluster_the_status_is_not_supported_and_the_api_says_off() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    let response = server.call(request(C::WaymarkGetClusterStatus, &[])).await;
    assert_code(&response, R::RequestCodeNotSupported);
    assert_eq!(
        response.remark.as_deref(),
        Some(" request type 61011 not supported"),
        "as a Java NameServer answers a code it does not know"
    );
    let http = server.http.expect("the HTTP port listens");
    let (code, body) = get(http, "/api/v1/cluster").await;
    assert_eq!((code, body.as_str()), (200, r#"{"enabled":false}"#));
    let (_, overview) = get(http, "/api/v1/overview").await;
    let overview: Value = serde_json::from_str(&overview).unwrap();
    assert_eq!(overview["cluster"], false);
    let (_, metrics) = get(http, "/metrics").await;
    assert!(!metrics.contains("waymark_cluster_"), "{metrics}");
}

#[tokio::test]
async fn a_relayed_broker_shows_in_the_status_the_api_and_the_metrics() {
    let (dir_a, dir_b) = (TempDir::new(), TempDir::new());
    let a = node(&dir_a, None, &[]);
    let seeds = gossip_addr(&a).await;
    let b = node(&dir_b, Some(&seeds), &[]);
    let (http_a, http_b) = (a.http.unwrap(), b.http.unwrap());
    let before = scrape(http_b).await;
    assert_eq!(
        value(&before, r#"waymark_cluster_pulls_total{result="ok"}"#),
        0.0
    );
    assert_eq!(
        value(&before, r#"waymark_cluster_brokers{source="relayed"}"#),
        0.0
    );

    // A broker registers with a only, and stays while its connection does.
    let broker = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicA", "TopicB"]);
    let conn = a.client().await;
    assert_code(
        &conn.invoke(broker.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    let a_name = a.addr.to_string();
    let relayed = eventually(CONVERGE, || async {
        status(&b).await.brokers.iter().any(|broker| {
            broker.source == BrokerSource::Relayed
                && broker.relayed_from.as_deref() == Some(a_name.as_str())
        })
    })
    .await;
    assert!(relayed, "b relays broker-a from a: {:?}", status(&b).await);
    // The failure detector judges a member live after a few heartbeats;
    // until then it is unknown.
    let b_name = b.addr.to_string();
    let judged = eventually(CONVERGE, || async {
        let live = |view: &ClusterStatusBody, name: &str| {
            view.member(name)
                .is_some_and(|m| m.liveness == Liveness::Live)
        };
        live(&status(&b).await, &a_name) && live(&status(&a).await, &b_name)
    })
    .await;
    assert!(judged, "a and b see each other live");

    let at_b = status(&b).await;
    let node_b = at_b.node.clone().unwrap();
    assert_eq!(node_b.name, b.addr.to_string());
    assert_eq!(node_b.cluster_id, "visibility");
    assert!(node_b.ready);
    assert_eq!((node_b.direct_brokers, node_b.relayed_brokers), (0, 1));
    let member_a = at_b.member(&a_name).expect("b knows a");
    assert_eq!(member_a.liveness, Liveness::Live);
    assert_eq!(member_a.remoting_addr.as_deref(), Some(a_name.as_str()));
    assert_eq!(member_a.gossip_addr, seeds);
    assert_eq!((member_a.direct_brokers, member_a.behind), (1, 0));
    let copy = &at_b.brokers[0];
    assert_eq!(
        (
            copy.broker_name.as_deref(),
            copy.broker_id,
            copy.address.as_str()
        ),
        (Some("broker-a"), Some(0), "127.0.0.1:10911")
    );
    let at_a = status(&a).await;
    assert_eq!(at_a.brokers[0].source, BrokerSource::Direct);
    assert_eq!(at_a.brokers[0].data_version, copy.data_version);

    // The same view over HTTP; only the agreement age may have moved.
    let (code, json) = get(http_b, "/api/v1/cluster").await;
    assert_eq!(code, 200, "{json}");
    let mut api: ClusterStatusBody = serde_json::from_str(&json).unwrap();
    let mut remoting = status(&b).await;
    for view in [&mut api, &mut remoting] {
        view.node.as_mut().unwrap().since_agreement_millis = None;
    }
    assert_eq!(api, remoting);
    let (_, overview) = get(http_b, "/api/v1/overview").await;
    assert_eq!(
        serde_json::from_str::<Value>(&overview).unwrap()["cluster"],
        true
    );

    let mid = scrape(http_b).await;
    assert!(value(&mid, r#"waymark_cluster_pulls_total{result="ok"}"#) >= 1.0);
    assert_eq!(
        value(&mid, r#"waymark_cluster_pulls_total{result="failed"}"#),
        0.0
    );
    assert!(value(&mid, "waymark_cluster_relayed_applied_total") >= 1.0);
    assert!(value(&mid, "waymark_cluster_pull_seconds_total") > 0.0);
    assert_eq!(
        value(&mid, r#"waymark_cluster_brokers{source="relayed"}"#),
        1.0
    );
    assert_eq!(
        value(&mid, r#"waymark_cluster_brokers{source="direct"}"#),
        0.0
    );
    assert_eq!(value(&mid, r#"waymark_cluster_members{state="live"}"#), 1.0);
    assert_eq!(
        value(
            &mid,
            &format!(r#"waymark_cluster_digests_behind{{peer="{a_name}"}}"#)
        ),
        0.0
    );
    assert_eq!(value(&mid, "waymark_cluster_ready"), 1.0);
    assert!(value(&mid, "waymark_cluster_since_agreement_seconds") >= 0.0);
    assert!(
        value(
            &mid,
            r#"waymark_cluster_gossip_bytes_total{direction="received"}"#
        ) > 0.0
    );
    let at_a = scrape(http_a).await;
    assert_eq!(
        value(&at_a, r#"waymark_cluster_brokers{source="direct"}"#),
        1.0
    );

    // The broker's connection closes: a removes it, and b lets the relayed
    // copy go, counting it as a removal by the cluster. The count follows
    // the table's removal by a moment, so a scrape between the two sees the
    // broker gone and not yet counted: both are awaited together.
    conn.close();
    let gone = eventually(CONVERGE, || async {
        let after = scrape(http_b).await;
        value(&after, r#"waymark_cluster_brokers{source="relayed"}"#) == 0.0
            && value(&after, r#"waymark_broker_removals_total{reason="cluster"}"#) == 1.0
    })
    .await;
    let after = scrape(http_b).await;
    assert!(
        gone,
        "b drops the relayed broker and counts it: {:?}\n{after:?}",
        status(&b).await
    );
    assert!(status(&b).await.brokers.is_empty());
}

#[tokio::test]
async fn a_refused_pull_counts_as_failed_and_leaves_the_node_behind() {
    // a protects its reads, WAYMARK_PULL_REGISTRATION among them, and b
    // has no credentials to sign its pulls with.
    let (dir_a, dir_b) = (TempDir::new(), TempDir::new());
    let accounts = dir_a.path("acl.yml");
    std::fs::write(
        &accounts,
        "accounts:\n  - accessKey: broker-key\n    secretKey: broker-secret-1\n    admin: false\n",
    )
    .unwrap();
    let accounts = accounts.display().to_string();
    let a = node(
        &dir_a,
        None,
        &[
            ("authenticationEnabled", "true"),
            ("authenticationAccountsFile", &accounts),
            ("authenticationProtectConfigReads", "true"),
        ],
    );
    let b = node(
        &dir_b,
        Some(&gossip_addr(&a).await),
        &[("clusterBootstrapTimeoutMillis", "0")],
    );
    let mut register =
        Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicA", "TopicB"]).request();
    Credentials::new("broker-key", "broker-secret-1").sign_request(&mut register);
    let conn = a.client().await;
    assert_code(&conn.invoke(register, TIMEOUT).await.unwrap(), R::Success);

    let http_b = b.http.unwrap();
    let a_name = a.addr.to_string();
    // The per-peer series is there while the failure detector counts a
    // up (live, or not judged yet): wait for both.
    let behind = format!(r#"waymark_cluster_digests_behind{{peer="{a_name}"}}"#);
    let refused = eventually(CONVERGE, || async {
        let samples = scrape(http_b).await;
        samples
            .get(r#"waymark_cluster_pulls_total{result="failed"}"#)
            .is_some_and(|failed| *failed >= 1.0)
            && samples.get(&behind) == Some(&1.0)
    })
    .await;
    assert!(refused, "b's pull is refused: {:?}", status(&b).await);
    let samples = scrape(http_b).await;
    assert_eq!(
        value(&samples, r#"waymark_cluster_pulls_total{result="ok"}"#),
        0.0
    );
    assert_eq!(
        value(&samples, r#"waymark_cluster_brokers{source="relayed"}"#),
        0.0
    );
    let at_b = status(&b).await;
    assert_eq!(at_b.member(&a_name).map(|m| m.behind), Some(1));
    assert!(at_b.brokers.is_empty());
    // The status itself stays open, as GET_BROKER_CLUSTER_INFO: a asks no
    // signature for it.
    assert!(status(&a).await.enabled);
    drop(conn);
}

#[tokio::test]
async fn a_pull_from_a_node_whose_remoting_port_cannot_be_reached_counts_as_failed() {
    // a advertises a remoting address nobody listens on: its peers learn
    // its brokers by gossip and cannot pull them.
    let (dir_a, dir_b) = (TempDir::new(), TempDir::new());
    let unreachable = rmq_testkit::ports::refused_addr().to_string();
    let a = node(&dir_a, None, &[("clusterAdvertiseAddr", &unreachable)]);
    let b = node(
        &dir_b,
        Some(&gossip_addr(&a).await),
        &[("clusterBootstrapTimeoutMillis", "0")],
    );
    let conn = a.client().await;
    let broker = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicA", "TopicB"]);
    assert_code(
        &conn.invoke(broker.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    let http_b = b.http.unwrap();
    let failed = eventually(CONVERGE, || async {
        value(
            &scrape(http_b).await,
            r#"waymark_cluster_pulls_total{result="failed"}"#,
        ) >= 1.0
    })
    .await;
    assert!(failed, "the pull fails: {:?}", status(&b).await);
    let at_b = status(&b).await;
    assert_eq!(
        at_b.member(&unreachable)
            .map(|m| (m.direct_brokers, m.behind)),
        Some((1, 1))
    );
    drop(conn);
}

#[tokio::test]
async fn garbage_and_gossip_of_another_cluster_are_refused_and_counted() {
    let (dir_a, dir_other) = (TempDir::new(), TempDir::new());
    let a = node(&dir_a, None, &[]);
    let gossip = gossip_addr(&a).await;
    let http_a = a.http.unwrap();
    let refusals = |kind: &str| format!(r#"waymark_cluster_refusals_total{{kind="{kind}"}}"#);
    let before = scrape(http_a).await;
    assert_eq!(value(&before, &refusals("garbage")), 0.0);
    assert_eq!(value(&before, &refusals("foreign_cluster")), 0.0);

    // A datagram that is no gossip message.
    let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    socket.send_to(b"not gossip", &gossip).await.unwrap();
    // A node of another cluster seeded with a's gossip address.
    let _other = Server::start(
        &dir_other,
        &[
            ("clusterGossipAddr", "127.0.0.1:0"),
            ("clusterId", "another"),
            ("clusterSeeds", &gossip),
        ],
    );
    let counted = eventually(CONVERGE, || async {
        let samples = scrape(http_a).await;
        value(&samples, &refusals("garbage")) >= 1.0
            && value(&samples, &refusals("foreign_cluster")) >= 1.0
    })
    .await;
    assert!(counted, "{:?}", scrape(http_a).await);
    // Nothing of the other cluster joined.
    assert!(status(&a).await.members.is_empty());
}
