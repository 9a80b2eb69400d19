//! The address server on the HTTP port (docs/deployment.md, "Address
//! server"): what `GET /rocketmq/{subgroup}` lists from each of its three
//! sources — this NameServer alone, `addressServerList`, and a cluster of
//! real nodes, where a member still bootstrapping or gone is never listed —
//! and the paths and values it refuses.

use std::time::Duration;

use rmq_wire::ResponseCode as R;

use crate::common::*;
use crate::http_port::get;

/// Long enough for gossip (100 ms rounds here), a pull, and the failure
/// detector to judge a stopped node dead, on a loaded machine.
const CONVERGE: Duration = Duration::from_secs(30);

/// A node of this file's cluster with `sets`; the first has no seeds.
fn node(dir: &TempDir, seeds: Option<&str>, sets: &[(&str, &str)]) -> Server {
    cluster_node(dir, "address-server", seeds, sets)
}

/// The gossip address a node prints at start-up.
async fn gossip_addr(server: &Server) -> String {
    let (status, body) = get(server.http.unwrap(), "/api/v1/cluster").await;
    assert_eq!(status, 200, "{body}");
    let view: serde_json::Value = serde_json::from_str(&body).unwrap();
    view["node"]["gossipAddr"]
        .as_str()
        .expect("a cluster node")
        .to_owned()
}

/// The member `name` (its remoting address) as `server` sees it.
async fn member(server: &Server, name: &str) -> Option<serde_json::Value> {
    let (_, body) = get(server.http.unwrap(), "/api/v1/cluster").await;
    let view: serde_json::Value = serde_json::from_str(&body).ok()?;
    view["members"]
        .as_array()?
        .iter()
        .find(|member| member["name"] == name)
        .cloned()
}

/// What `server`'s address server answers: the status and the body.
async fn listed(server: &Server) -> (u16, String) {
    get(server.http.unwrap(), "/rocketmq/nsaddr").await
}

/// `addresses` as the address server writes them: sorted, `;`-separated.
fn list_of(addresses: &[&Server]) -> String {
    let mut addresses: Vec<String> = addresses.iter().map(|s| s.addr.to_string()).collect();
    addresses.sort();
    addresses.join(";")
}

#[tokio::test]
async fn a_lone_nameserver_lists_itself() {
    let dir = TempDir::new();
    let server = Server::start(&dir, &[]);
    assert_eq!(listed(&server).await, (200, server.addr.to_string()));
    let http = server.http.unwrap();
    for path in ["/rocketmq/other", "/rocketmq/nsaddr/x", "/rocketmq/"] {
        assert_eq!(get(http, path).await.0, 404, "{path}");
    }
}

#[tokio::test]
async fn a_configured_list_is_served_as_configured_under_its_subgroup() {
    let dir = TempDir::new();
    let server = Server::start(
        &dir,
        &[
            ("addressServerSubgroup", "unit-a"),
            ("addressServerList", " 10.0.0.2:9876 ; ns1.example:9876"),
        ],
    );
    let http = server.http.unwrap();
    assert_eq!(
        get(http, "/rocketmq/unit-a").await,
        (200, "10.0.0.2:9876;ns1.example:9876".to_owned())
    );
    assert_eq!(get(http, "/rocketmq/nsaddr").await.0, 404);
}

#[test]
fn bad_values_stop_the_start_naming_the_key() {
    for (key, value) in [
        ("addressServerSubgroup", "a/b"),
        ("addressServerSubgroup", ""),
        ("addressServerList", "10.0.0.1"),
        ("addressServerList", "10.0.0.1:9876;"),
    ] {
        let dir = TempDir::new();
        let kv = dir.path("kv.json").display().to_string();
        let stderr = Server::refused_start(
            &dir,
            &[
                ("httpListenAddr", "127.0.0.1:0"),
                ("kvConfigPath", &kv),
                (key, value),
            ],
        );
        assert!(stderr.contains(key), "{key}={value}: {stderr}");
    }
}

#[tokio::test]
async fn the_cluster_lists_its_ready_members_and_never_one_starting_or_gone() {
    let (dir_a, dir_b, dir_c) = (TempDir::new(), TempDir::new(), TempDir::new());
    // The cluster's list wins over a configured one.
    let a = node(&dir_a, None, &[("addressServerList", "10.9.9.9:9876")]);
    let seeds = gossip_addr(&a).await;
    // A broker with two topics on a, which b refuses to take (one topic per
    // registration at most): b never holds a's brokers as it should, so it
    // stays in bootstrap, not ready, for the hour its timeout allows.
    let conn = a.client().await;
    let broker = Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicA", "TopicB"]);
    assert_code(
        &conn.invoke(broker.request(), TIMEOUT).await.unwrap(),
        R::Success,
    );
    let b = node(
        &dir_b,
        Some(&seeds),
        &[
            ("maxTopicsPerRegistration", "1"),
            ("clusterBootstrapTimeoutMillis", "3600000"),
        ],
    );
    let c = node(&dir_c, Some(&seeds), &[]);

    let a_and_c = list_of(&[&a, &c]);
    let b_name = b.addr.to_string();
    // Each node judges the others live on its own: b's list is awaited with
    // a's and c's, not assumed from them.
    let joined = eventually(CONVERGE, || async {
        listed(&a).await == (200, a_and_c.clone())
            && listed(&c).await == (200, a_and_c.clone())
            && listed(&b).await == (200, a_and_c.clone())
            && member(&a, &b_name)
                .await
                .is_some_and(|b| b["liveness"] == "live")
    })
    .await;
    assert!(
        joined,
        "a, c and b list a and c, a hears from b: {:?} {:?} {:?} {:?}",
        listed(&a).await,
        listed(&c).await,
        listed(&b).await,
        member(&a, &b_name).await
    );
    // b is a live member, not ready: never listed, not even by itself.
    let b_at_a = member(&a, &b_name).await.unwrap();
    assert_eq!(b_at_a["ready"], false, "{b_at_a}");
    let b_view = get(b.http.unwrap(), "/api/v1/cluster").await.1;
    let b_view: serde_json::Value = serde_json::from_str(&b_view).unwrap();
    assert_eq!(b_view["node"]["ready"], false, "{b_view}");

    // c leaves: a and b stop listing it once each hears from it no more, and
    // b never lists itself.
    c.terminate(Duration::from_secs(10));
    let a_alone = a.addr.to_string();
    let left = eventually(CONVERGE, || async {
        listed(&a).await == (200, a_alone.clone()) && listed(&b).await == (200, a_alone.clone())
    })
    .await;
    assert!(
        left,
        "a and b stop listing c: {:?} {:?}",
        listed(&a).await,
        listed(&b).await
    );
    drop(conn);
}
