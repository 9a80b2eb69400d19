//! `namesrv diff` against real `rmq-namesrv` processes forming a Waymark
//! NameServer cluster: converged, the cluster has no difference although
//! each broker registered with one node only; beside a lone NameServer
//! (its cluster off, as a Java NameServer) or a node of another cluster,
//! every difference names that NameServer as its cause.

use std::time::{Duration, Instant};

use crate::common::{admin, Brokers, NameServer, BROKER_A0, BROKER_A1, BROKER_B0};
use rmq_protocol::cluster_status::ClusterStatusBody;
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

/// Long enough for gossip and pulls on a loaded two-core machine.
const CONVERGE: Duration = Duration::from_secs(30);

/// A cluster node of `cluster_id`, seeded with `seeds` (a gossip address).
fn node(cluster_id: &str, seeds: Option<&str>) -> NameServer {
    let id = format!("clusterId={cluster_id}");
    let seeds = seeds.map(|seeds| format!("clusterSeeds={seeds}"));
    let mut options = vec![
        "clusterGossipAddr=127.0.0.1:0",
        id.as_str(),
        "clusterGossipIntervalMillis=100",
    ];
    options.extend(seeds.as_deref());
    NameServer::start_with(&options)
}

/// WAYMARK_GET_CLUSTER_STATUS of `ns`.
fn status(ns: &NameServer) -> ClusterStatusBody {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let client = RpcClient::connect(ns.addr.as_str(), ClientConfig::default())
            .await
            .expect("connect");
        let request = RemotingCommand::request(RequestCode::WaymarkGetClusterStatus, 0);
        let response = client
            .invoke(request, Duration::from_secs(5))
            .await
            .expect("an answer");
        assert_eq!(response.response_code(), ResponseCode::Success);
        ClusterStatusBody::from_json(response.body.as_deref().unwrap_or_default())
            .expect("a status body")
    })
}

fn gossip_addr(ns: &NameServer) -> String {
    status(ns).node.expect("a cluster node").gossip_addr
}

/// Polls every 100 ms until every node of `nodes` holds `brokers` brokers
/// and is behind no member, or panics naming what they hold.
fn wait_converged(nodes: &[&NameServer], brokers: usize) {
    let deadline = Instant::now() + CONVERGE;
    loop {
        let views: Vec<ClusterStatusBody> = nodes.iter().map(|ns| status(ns)).collect();
        let done = views.iter().all(|view| {
            view.brokers.len() == brokers
                && view.members.iter().all(|m| m.behind == 0)
                && view.node.as_ref().is_some_and(|n| n.ready)
        });
        if done {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "not converged within {CONVERGE:?}: {views:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_converged_cluster_has_no_difference() {
    let first = node("diff", None);
    let seeds = gossip_addr(&first);
    let (second, third) = (node("diff", Some(&seeds)), node("diff", Some(&seeds)));
    // Each broker registers with one node only.
    let mut brokers = Brokers::new();
    brokers.register(&first.addr, &BROKER_A0);
    brokers.register(&first.addr, &BROKER_A1);
    brokers.register(&second.addr, &BROKER_B0);
    wait_converged(&[&first, &second, &third], 3);

    let list = format!("{};{};{}", first.addr, second.addr, third.addr);
    let run = admin(&["-n", &list, "namesrv", "diff"]);
    assert_eq!(run.code, 0, "{run:?}");
    for ns in [&first, &second, &third] {
        assert!(
            run.has_row(&[&ns.addr, "1", "2", "3", "diff"]),
            "{}",
            run.stdout
        );
    }
    assert!(
        run.stdout.ends_with("The 3 NameServers agree.\n"),
        "{}",
        run.stdout
    );

    let run = admin(&["-n", &list, "--json", "namesrv", "diff"]);
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(json["agree"], true);
    assert_eq!(json["differences"], serde_json::json!([]));
    let cluster = &json["results"][2]["result"]["cluster"];
    assert_eq!(cluster["state"], "node");
    assert_eq!(cluster["clusterId"], "diff");
    assert_eq!(cluster["relayedBrokers"], 3, "{cluster}");
    assert_eq!(cluster["members"].as_array().map(Vec::len), Some(2));
}

#[test]
fn a_lone_name_server_beside_a_cluster_is_the_cause_of_every_difference() {
    let first = node("diff", None);
    let second = node("diff", Some(&gossip_addr(&first)));
    // Its cluster off: it answers WAYMARK_GET_CLUSTER_STATUS as a Java
    // NameServer answers any code it does not know.
    let lone = NameServer::start();
    let mut brokers = Brokers::new();
    brokers.register(&first.addr, &BROKER_A0);
    brokers.register(&lone.addr, &BROKER_B0);
    wait_converged(&[&first, &second], 1);

    let list = format!("{};{};{}", first.addr, second.addr, lone.addr);
    let run = admin(&["-n", &list, "namesrv", "diff"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.has_row(&[&lone.addr, "1", "1", "2", "-"]),
        "{}",
        run.stdout
    );
    assert!(
        run.has_row(&[&second.addr, "1", "1", "2", "diff"]),
        "{}",
        run.stdout
    );
    // broker-a is held by the cluster and missing at the lone one, broker-b
    // the other way round: both for the same reason.
    assert!(
        run.has_row(&[
            "broker",
            "broker-a",
            "addr",
            "0",
            "127.0.0.1:10911",
            "127.0.0.1:10911",
            "-",
            "1"
        ]),
        "{}",
        run.stdout
    );
    assert!(
        run.has_row(&[
            "broker",
            "broker-b",
            "addr",
            "0",
            "-",
            "-",
            "127.0.0.1:10931",
            "1"
        ]),
        "{}",
        run.stdout
    );
    let cause = format!(
        "Causes:\n1: {} is not a Waymark cluster node (a Java NameServer, or its cluster is off): it knows only the brokers registered with it\n",
        lone.addr
    );
    assert!(run.stdout.ends_with(&cause), "{}", run.stdout);

    let run = admin(&["-n", &list, "--json", "namesrv", "diff"]);
    let json = run.json();
    assert_eq!(json["agree"], false);
    let differences = json["differences"].as_array().expect("differences");
    assert!(!differences.is_empty());
    for difference in differences {
        assert_eq!(
            difference["causes"].as_array().map(Vec::len),
            Some(1),
            "{difference}"
        );
        assert_eq!(difference["causes"][0]["kind"], "notClusterNode");
    }
    assert_eq!(json["results"][2]["result"]["cluster"]["state"], "none");
}

#[test]
fn a_node_of_another_cluster_is_named() {
    let prod = node("prod", None);
    let test = node("test", None);
    let mut brokers = Brokers::new();
    brokers.register(&prod.addr, &BROKER_A0);
    let list = format!("{};{}", prod.addr, test.addr);
    let run = admin(&["-n", &list, "namesrv", "diff"]);
    assert_eq!(run.code, 1, "{run:?}");
    let cause = format!(
        "Causes:\n1: {} is not in {}'s cluster (clusterId test, not prod)\n",
        test.addr, prod.addr
    );
    assert!(run.stdout.ends_with(&cause), "{}", run.stdout);
    let json = admin(&["-n", &list, "--json", "namesrv", "diff"]).json();
    assert_eq!(json["differences"][0]["causes"][0]["kind"], "otherCluster");
}
