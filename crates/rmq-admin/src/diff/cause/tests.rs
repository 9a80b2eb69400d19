//! The cause logic on hand-made cluster views: one test per cause.

use rmq_protocol::cluster_status::{MemberStatus, NodeStatus};

use super::*;
use crate::diff::role::ClusterRole;

/// A broker copy: name, address, source, relayed from, counter.
type Copy<'a> = (&'a str, &'a str, BrokerSource, Option<&'a str>, i64);

fn node(
    name: &str,
    cluster_id: &str,
    ready: bool,
    members: &[(&str, Liveness, usize)],
    brokers: &[Copy<'_>],
) -> Snapshot {
    let body = ClusterStatusBody {
        enabled: true,
        node: Some(NodeStatus {
            name: name.into(),
            generation: 1,
            ready,
            gossip_addr: format!("{name}-gossip"),
            cluster_id: cluster_id.into(),
            ..NodeStatus::default()
        }),
        members: members
            .iter()
            .map(|&(name, liveness, behind)| MemberStatus {
                name: name.into(),
                generation: 1,
                liveness,
                ready: true,
                behind,
                ..MemberStatus::default()
            })
            .collect(),
        brokers: brokers
            .iter()
            .map(|&(broker, address, source, from, counter)| BrokerStatus {
                cluster: "DefaultCluster".into(),
                broker_name: Some(broker.into()),
                broker_id: Some(0),
                address: address.into(),
                source,
                relayed_from: from.map(str::to_owned),
                data_version: DataVersionStatus {
                    counter,
                    ..DataVersionStatus::default()
                },
            })
            .collect(),
    };
    Snapshot {
        cluster: ClusterRole::Node(Box::new(body)),
        ..Snapshot::default()
    }
}

fn lone() -> Snapshot {
    Snapshot {
        cluster: ClusterRole::NotClusterNode,
        ..Snapshot::default()
    }
}

fn diff(object: &str, field: &str, values: &[Option<&str>]) -> Difference {
    Difference {
        object: object.into(),
        field: field.into(),
        values: values.iter().map(|v| v.map(str::to_owned)).collect(),
    }
}

fn views<'a>(snapshots: &'a [(&'a str, Snapshot)]) -> Vec<View<'a>> {
    snapshots
        .iter()
        .map(|(label, snapshot)| View { label, snapshot })
        .collect()
}

const A_ADDR: &str = "10.0.0.9:10911";
const LIVE: Liveness = Liveness::Live;
const DIRECT: BrokerSource = BrokerSource::Direct;
const RELAYED: BrokerSource = BrokerSource::Relayed;

#[test]
fn a_name_server_outside_any_cluster_is_named() {
    let snapshots = [
        (
            "ns1",
            node(
                "ns1",
                "prod",
                true,
                &[],
                &[("broker-a", A_ADDR, DIRECT, None, 1)],
            ),
        ),
        ("ns3", lone()),
    ];
    let causes = causes(
        &views(&snapshots),
        &diff("broker broker-a", "addr 0", &[Some(A_ADDR), None]),
    );
    assert_eq!(causes, [Cause::NotClusterNode { ns: "ns3".into() }]);
    assert_eq!(
        causes[0].text(),
        "ns3 is not a Waymark cluster node (a Java NameServer, or its cluster is off): it knows only the brokers registered with it"
    );

    let java = [("ns1", lone()), ("ns2", lone())];
    assert_eq!(
        super::causes(
            &views(&java),
            &diff("broker broker-a", "addr 0", &[Some(A_ADDR), None])
        ),
        [Cause::NoClusterNodes]
    );
}

#[test]
fn name_servers_of_two_clusters_are_told_apart_by_id_or_by_members() {
    let by_id = [
        (
            "ns1",
            node(
                "ns1",
                "prod",
                true,
                &[],
                &[("broker-a", A_ADDR, DIRECT, None, 1)],
            ),
        ),
        ("ns3", node("ns3", "test", true, &[], &[])),
    ];
    let d = diff("broker broker-a", "addr 0", &[Some(A_ADDR), None]);
    let found = causes(&views(&by_id), &d);
    assert_eq!(
        found,
        [Cause::OtherCluster {
            ns: "ns3".into(),
            other: "ns1".into(),
            ids: Some(("test".into(), "prod".into())),
        }]
    );
    assert_eq!(
        found[0].text(),
        "ns3 is not in ns1's cluster (clusterId test, not prod)"
    );

    // The same id, but neither knows the other nor a member in common:
    // two deployments seeded apart.
    let apart = [
        (
            "ns1",
            node(
                "ns1",
                "prod",
                true,
                &[("ns2", LIVE, 0)],
                &[("broker-a", A_ADDR, DIRECT, None, 1)],
            ),
        ),
        ("ns3", node("ns3", "prod", true, &[("ns4", LIVE, 0)], &[])),
    ];
    let found = causes(&views(&apart), &d);
    assert_eq!(
        found[0].text(),
        "ns3 is not in ns1's cluster (no member in common)"
    );

    // A member in common joins them: then the cause is elsewhere.
    let joined = [
        (
            "ns1",
            node(
                "ns1",
                "prod",
                true,
                &[("ns2", LIVE, 0)],
                &[("broker-a", A_ADDR, DIRECT, None, 1)],
            ),
        ),
        ("ns3", node("ns3", "prod", true, &[("ns2", LIVE, 0)], &[])),
    ];
    let found = causes(&views(&joined), &d);
    assert!(
        !found
            .iter()
            .any(|c| matches!(c, Cause::OtherCluster { .. })),
        "{found:?}"
    );
}

#[test]
fn a_bootstrapping_node_is_not_ready_and_still_pulling() {
    let snapshots = [
        (
            "ns1",
            node(
                "ns1",
                "prod",
                true,
                &[("ns3", LIVE, 0)],
                &[("broker-a", A_ADDR, DIRECT, None, 1)],
            ),
        ),
        ("ns3", node("ns3", "prod", false, &[("ns1", LIVE, 2)], &[])),
    ];
    let found = causes(
        &views(&snapshots),
        &diff(
            "cluster DefaultCluster",
            "member broker-a",
            &[Some("yes"), None],
        ),
    );
    assert_eq!(
        found,
        [
            Cause::NotReady { ns: "ns3".into() },
            Cause::Pulling {
                ns: "ns3".into(),
                holder: "ns1".into(),
                behind: 2
            },
        ]
    );
    assert_eq!(found[0].text(), "ns3 is not ready yet (bootstrapping)");
    assert_eq!(found[1].text(), "ns3 is still pulling (2 behind ns1)");
}

#[test]
fn a_node_that_sees_the_holder_dead_or_does_not_know_it_says_so() {
    let snapshots = [
        (
            "ns1",
            node(
                "ns1",
                "prod",
                true,
                &[("ns2", LIVE, 0)],
                &[("broker-a", A_ADDR, DIRECT, None, 1)],
            ),
        ),
        (
            "ns2",
            node("ns2", "prod", true, &[("ns1", Liveness::Dead, 0)], &[]),
        ),
    ];
    let d = diff("broker broker-a", "addr 0", &[Some(A_ADDR), None]);
    let found = causes(&views(&snapshots), &d);
    assert_eq!(
        found,
        [Cause::HolderDead {
            ns: "ns2".into(),
            holder: "ns1".into(),
            broker: "broker-a".into()
        }]
    );
    assert_eq!(
        found[0].text(),
        "ns2 sees ns1 dead (ns1 holds broker-a directly)"
    );

    // ns2 holds broker-a relayed from ns5, which is not compared and
    // which ns1 has never heard of.
    let snapshots = [
        ("ns1", node("ns1", "prod", true, &[("ns2", LIVE, 0)], &[])),
        (
            "ns2",
            node(
                "ns2",
                "prod",
                true,
                &[("ns1", LIVE, 0), ("ns5", LIVE, 0)],
                &[("broker-a", A_ADDR, RELAYED, Some("ns5"), 1)],
            ),
        ),
    ];
    let found = causes(
        &views(&snapshots),
        &diff("broker broker-a", "addr 0", &[None, Some(A_ADDR)]),
    );
    assert_eq!(
        found,
        [Cause::HolderUnknown {
            ns: "ns1".into(),
            holder: "ns5".into(),
            broker: "broker-a".into()
        }]
    );
}

#[test]
fn a_relayed_copy_of_another_registration_names_holder_and_source() {
    let snapshots = [
        (
            "ns1",
            node(
                "ns1",
                "prod",
                true,
                &[("ns2", LIVE, 0)],
                &[("broker-a", A_ADDR, DIRECT, None, 5)],
            ),
        ),
        (
            "ns2",
            node(
                "ns2",
                "prod",
                true,
                &[("ns1", LIVE, 1)],
                &[("broker-a", A_ADDR, RELAYED, Some("ns1"), 4)],
            ),
        ),
    ];
    let found = causes(
        &views(&snapshots),
        &diff(
            "topic T",
            "queues broker-a",
            &[
                Some("read=8 write=8 sysFlag=0"),
                Some("read=4 write=4 sysFlag=0"),
            ],
        ),
    );
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].text(), "ns2 is still pulling (1 behind ns1)");
    assert_eq!(
        found[1].text(),
        "broker-a held directly by ns1, relayed at ns2 from ns1 (not the same registration)"
    );
}

#[test]
fn the_same_registration_on_both_leaves_an_admin_write_or_the_kv_store() {
    let snapshots = [
        (
            "ns1",
            node(
                "ns1",
                "prod",
                true,
                &[("ns2", LIVE, 0)],
                &[("broker-a", A_ADDR, DIRECT, None, 5)],
            ),
        ),
        (
            "ns2",
            node(
                "ns2",
                "prod",
                true,
                &[("ns1", LIVE, 0)],
                &[("broker-a", A_ADDR, RELAYED, Some("ns1"), 5)],
            ),
        ),
    ];
    let views = views(&snapshots);
    let perm = causes(
        &views,
        &diff(
            "topic T",
            "perm broker-a",
            &[Some("6(RW-)"), Some("4(R--)")],
        ),
    );
    assert_eq!(
        perm,
        [Cause::PerNameServerWrite {
            broker: Some("broker-a".into())
        }]
    );
    assert_eq!(
        perm[0].text(),
        "both hold the same registration of broker-a: an admin write (write permission, topic) applies to one NameServer only"
    );
    let order = causes(
        &views,
        &diff("topic T", "orderConf", &[Some("broker-a:4"), None]),
    );
    assert_eq!(order, [Cause::KvPerNameServer]);
    // A topic without a route on either side names no broker.
    let listed = causes(&views, &diff("topic T", "listed", &[Some("yes"), None]));
    assert_eq!(listed, [Cause::PerNameServerWrite { broker: None }]);
}

#[test]
fn a_topic_listed_on_one_side_is_traced_to_the_brokers_serving_it() {
    let mut ns1 = node(
        "ns1",
        "prod",
        true,
        &[("ns2", LIVE, 0)],
        &[("broker-a", A_ADDR, DIRECT, None, 1)],
    );
    ns1.facts.insert(
        ("topic T".into(), "queues broker-a".into()),
        "read=4 write=4 sysFlag=0".into(),
    );
    let snapshots = [
        ("ns1", ns1),
        ("ns2", node("ns2", "prod", true, &[("ns1", LIVE, 1)], &[])),
    ];
    let found = causes(
        &views(&snapshots),
        &diff("topic T", "listed", &[Some("yes"), None]),
    );
    assert_eq!(
        found,
        [Cause::Pulling {
            ns: "ns2".into(),
            holder: "ns1".into(),
            behind: 1
        }]
    );
}

#[test]
fn nothing_in_the_status_to_explain_it_is_said() {
    let snapshots = [
        (
            "ns1",
            node(
                "ns1",
                "prod",
                true,
                &[("ns2", LIVE, 0)],
                &[("broker-a", A_ADDR, DIRECT, None, 1)],
            ),
        ),
        ("ns2", node("ns2", "prod", true, &[("ns1", LIVE, 0)], &[])),
    ];
    let found = causes(
        &views(&snapshots),
        &diff("broker broker-a", "addr 0", &[Some(A_ADDR), None]),
    );
    assert_eq!(found, [Cause::Unexplained]);
}

#[test]
fn causes_of_three_name_servers_come_once_per_cause() {
    let snapshots = [
        (
            "ns1",
            node(
                "ns1",
                "prod",
                true,
                &[("ns2", LIVE, 0)],
                &[("broker-a", A_ADDR, DIRECT, None, 1)],
            ),
        ),
        (
            "ns2",
            node(
                "ns2",
                "prod",
                true,
                &[("ns1", LIVE, 0)],
                &[("broker-a", A_ADDR, RELAYED, Some("ns1"), 1)],
            ),
        ),
        ("ns3", lone()),
    ];
    let found = causes(
        &views(&snapshots),
        &diff(
            "broker broker-a",
            "addr 0",
            &[Some(A_ADDR), Some(A_ADDR), None],
        ),
    );
    assert_eq!(found, [Cause::NotClusterNode { ns: "ns3".into() }]);
    assert_eq!(found[0].to_json()["kind"], "notClusterNode");
}

#[test]
fn the_summary_shows_the_cluster_id_and_readiness() {
    assert_eq!(node("ns1", "prod", true, &[], &[]).cluster.cell(), "prod");
    assert_eq!(
        node("ns1", "prod", false, &[], &[]).cluster.cell(),
        "prod (not ready)"
    );
    assert_eq!(lone().cluster.cell(), "-");
    assert_eq!(lone().cluster.to_json()["state"], "none");
    let json = node("ns1", "prod", true, &[("ns2", LIVE, 3)], &[])
        .cluster
        .to_json();
    assert_eq!(json["members"][0]["behind"], 3);
    assert_eq!(json["members"][0]["liveness"], "live");
}
