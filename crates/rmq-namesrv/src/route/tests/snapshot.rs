//! The route snapshot's format: a restored table answers every route query
//! as the table it was taken from; its brokers are provisional until they
//! register again or expire one timeout after the restart; damaged, foreign
//! and other-version files are errors, never panics.

use rmq_protocol::TopicQueueMappingInfo;

use super::super::{sys_flag, SnapshotError, UnitSelect, RESTORED_CONN, SNAPSHOT_VERSION};
use super::*;

const C: &str = "DefaultCluster";
const C2: &str = "OtherCluster";

/// The time the restored server started at, on its own clock.
const RESTART: Millis = 50;

/// Several groups, clusters, a slave, a zone, an acting-master group without
/// master, filter servers, a static-topic mapping, unit flags and a wiped
/// write permission: every part a route answer is made of.
fn rich_routes() -> SharedRoutes {
    let routes = SharedRoutes::new();
    let unit = TopicConfig {
        topic_sys_flag: sys_flag::UNIT | sys_flag::UNIT_SUB,
        ..topic("UnitTopic")
    };
    let mut a = broker(C, "broker-a", "10.0.0.1:10911", 0)
        .topics(&[topic("TopicA"), topic("Shared"), unit])
        .zone("zone-1")
        .timeout(30_000);
    a.filter_servers = Some(vec!["10.0.0.1:30000".into()]);
    a.mappings.insert(
        "TopicA".into(),
        TopicQueueMappingInfo {
            bname: "broker-a".into(),
            topic: "TopicA".into(),
            total_queues: 4,
            epoch: 7,
            curr_id_map: [(0, 0), (1, 3)].into_iter().collect(),
            ..TopicQueueMappingInfo::default()
        },
    );
    register(&routes, a);
    register(
        &routes,
        broker(C, "broker-a", "10.0.0.2:10911", 1)
            .topics(&[topic("TopicA"), topic("Shared")])
            .ha("10.0.0.2:10912")
            .version(3, 300),
    );
    register(
        &routes,
        broker(C2, "broker-b", "10.0.0.3:10911", 0)
            .topics(&[topic_with("TopicB", 4, 2, 6), topic("Shared")])
            .timeout(5_000),
    );
    // An acting-master group of which only a slave is left: read-only and
    // rewritten in routes when supportActingMaster is on.
    register(
        &routes,
        broker(C, "broker-c", "10.0.0.4:10911", 1)
            .topics(&[topic("TopicC"), topic("OnlyC")])
            .acting(Some(true)),
    );
    routes.write().wipe_write_perm("broker-c");
    routes.write().wipe_write_perm("broker-b");
    routes
}

/// Every answer the tables give, for comparing two tables.
fn answers(table: &RouteTable) -> Vec<String> {
    let mut out = Vec::new();
    for topic in table.all_topics() {
        for acting in [false, true] {
            out.push(format!(
                "{topic} {acting} {:?}",
                table.topic_route(&topic, acting)
            ));
        }
    }
    out.push(format!("{:?}", table.cluster_info()));
    out.push(format!("{:?}", table.all_topics()));
    for cluster in [C, C2, "none"] {
        out.push(format!("{cluster} {:?}", table.topics_of_cluster(cluster)));
    }
    out.push(format!("{:?}", table.system_topics()));
    for select in [
        UnitSelect::Unit,
        UnitSelect::HasUnitSub,
        UnitSelect::HasUnitSubNotUnit,
    ] {
        out.push(format!("{select:?} {:?}", table.unit_topics(select)));
    }
    out
}

#[test]
fn a_restored_table_answers_every_query_as_the_original() {
    let routes = rich_routes();
    let bytes = routes.read().snapshot();
    let restored = RouteTable::restore(&bytes, RESTART).unwrap();
    assert_eq!(answers(&restored), answers(&routes.read()));
    assert_eq!(restored.all_topics().len(), 6);
    assert!(restored
        .topic_route("TopicA", false)
        .unwrap()
        .topic_queue_mapping_by_broker
        .is_some());
    assert!(!restored
        .topic_route("TopicA", false)
        .unwrap()
        .filter_server_table
        .is_empty());
    // The same table, the same bytes: a restart that changed nothing
    // rewrites nothing.
    assert_eq!(restored.snapshot(), bytes);
    assert_eq!(rich_routes().read().snapshot(), bytes);
}

#[test]
fn restored_brokers_are_provisional_with_their_timeouts_from_the_restart() {
    let routes = rich_routes();
    let restored = RouteTable::restore(&routes.read().snapshot(), RESTART).unwrap();
    assert_eq!(restored.live_count(), 4);
    assert_eq!(restored.provisional_count(), 4);
    let key = BrokerKey::new(C, "10.0.0.2:10911");
    let live = restored.live_broker(&key).unwrap();
    let original = routes.read();
    let before = original.live_broker(&key).unwrap();
    assert!(live.provisional);
    assert_eq!(live.conn, RESTORED_CONN);
    assert_eq!(live.last_update, RESTART);
    assert_eq!(
        (live.timeout_ms, live.data_version, &live.ha_server_addr),
        (
            before.timeout_ms,
            before.data_version,
            &before.ha_server_addr
        )
    );
    // broker-b's 5 s timeout counts from the restart, not from its last
    // registration in the old process.
    assert!(restored.expired(RESTART + 5_000).is_empty());
    let expired = restored.expired(RESTART + 5_001);
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].unregistration.broker_name, "broker-b");
}

#[test]
fn a_provisional_broker_expires_like_any_other_and_leaves_the_routes() {
    let mut restored = RouteTable::restore(&rich_routes().read().snapshot(), RESTART).unwrap();
    let batch: Vec<Unregistration> = restored
        .expired(RESTART + 5_001)
        .into_iter()
        .map(|e| e.unregistration)
        .collect();
    let outcome = restored.unregister_batch(&batch, false);
    assert_eq!(outcome.removed_groups, vec!["broker-b".to_owned()]);
    assert_eq!(route(&restored, "TopicB", false), None);
    assert!(route(&restored, "Shared", false).is_some());
}

#[test]
fn registering_again_makes_an_ordinary_entry_and_rewrites_its_topics() {
    // Restored as the server restores it: into its shared routes.
    let routes = SharedRoutes::new();
    *routes.write() = RouteTable::restore(&rich_routes().read().snapshot(), RESTART).unwrap();
    let key = BrokerKey::new(C2, "10.0.0.3:10911");
    // Asked first, the broker is told to register in full, although its
    // version is the one the snapshot holds.
    let (changed, _) = routes.write_liveness().query_data_version(
        &key,
        Some(&DataVersion::new(1, 0, 100)),
        RESTART + 10,
    );
    assert!(changed, "a provisional entry counts as changed");
    // A restored broker has no connection that could close.
    assert!(routes.read().connection_closed(RESTORED_CONN).is_empty());

    let again = broker(C2, "broker-b", "10.0.0.3:10911", 0)
        .topics(&[topic_with("TopicB", 4, 2, 6), topic("Shared")])
        .timeout(5_000)
        .conn(9);
    let outcome = routes
        .register_broker(again, RESTART + 1_000, false, false)
        .unwrap();
    assert!(outcome.confirmed_restored && !outcome.new_broker);
    let restored = routes.read();
    let live = restored.live_broker(&key).unwrap();
    assert!(!live.provisional);
    assert_eq!((live.conn, live.last_update), (9, RESTART + 1_000));
    assert_eq!(restored.provisional_count(), 3);
    // Rewritten from the registration (TopicB's queue numbers), but the
    // write permission wiped before the restart stays wiped: the snapshot
    // keeps the wipe.
    assert!(restored.group("broker-b").unwrap().write_perm_wiped);
    let topic_b = route(&restored, "TopicB", false).unwrap();
    let topic_b = queue_of(&topic_b, "broker-b");
    assert_eq!(
        (
            topic_b.perm,
            topic_b.read_queue_nums,
            topic_b.write_queue_nums
        ),
        (4, 4, 2)
    );
    // Its timeout now counts from the registration.
    assert!(restored
        .expired(RESTART + 5_001)
        .iter()
        .all(|e| e.unregistration.key != key));
    assert!(restored.connection_closed(9).len() == 1);
}

#[test]
fn an_empty_table_round_trips() {
    let bytes = RouteTable::new().snapshot();
    let restored = RouteTable::restore(&bytes, RESTART).unwrap();
    assert_eq!(restored.topic_count(), 0);
    assert_eq!(restored.live_count(), 0);
}

#[test]
fn damaged_and_foreign_files_are_errors() {
    let bytes = rich_routes().read().snapshot();
    for cut in [0, 1, bytes.len() / 3, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            matches!(
                RouteTable::restore(&bytes[..cut], RESTART),
                Err(SnapshotError::Format(_))
            ),
            "truncated at {cut}"
        );
    }
    let foreign: [&[u8]; 5] = [
        br#"{"configTable":{}}"#,
        b"\x00\xff\xfe binary",
        b"[]",
        b"null",
        br#"{"format":"waymark-route-snapshot","version":1,"groups":"x"}"#,
    ];
    for input in foreign {
        assert!(RouteTable::restore(input, RESTART).is_err(), "{input:?}");
    }
    let other = br#"{"format":"kvConfig","version":1}"#;
    assert!(matches!(
        RouteTable::restore(other, RESTART),
        Err(SnapshotError::Marker(marker)) if marker == "kvConfig"
    ));
    // Any damaged byte is an error or a table, never a panic.
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..2_000 {
        let mut damaged = bytes.clone();
        let at = rng.usize(..damaged.len());
        damaged[at] = rng.u8(..);
        let _ = RouteTable::restore(&damaged, RESTART);
    }
}

#[test]
fn another_version_is_refused_by_its_number() {
    let text = String::from_utf8(rich_routes().read().snapshot()).unwrap();
    let current = format!("\"version\":{SNAPSHOT_VERSION}");
    assert!(text.contains(&current));
    for found in [0, SNAPSHOT_VERSION + 1] {
        let other = text.replace(&current, &format!("\"version\":{found}"));
        match RouteTable::restore(other.as_bytes(), RESTART) {
            Err(SnapshotError::Version { found: reported }) => assert_eq!(reported, found),
            other => panic!("version {found}: {:?}", other.map(|t| t.topic_count())),
        }
    }
    // A later layout is refused before its fields are looked at.
    let future = format!(
        r#"{{"format":"waymark-route-snapshot","version":{},"routes":[1,2]}}"#,
        SNAPSHOT_VERSION + 1
    );
    assert!(matches!(
        RouteTable::restore(future.as_bytes(), RESTART),
        Err(SnapshotError::Version { .. })
    ));
}
