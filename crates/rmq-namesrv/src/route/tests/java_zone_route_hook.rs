//! Java `ZoneRouteRPCHookTest` and `ZoneRouteRPCHookMoreTest` at the table
//! level: when zone filtering is active and what it keeps. The request-level
//! cases (not code 105, no body, not SUCCESS) are in the handler tests.

use rmq_protocol::{BrokerData, QueueData, TopicRouteData};

use crate::route::ZoneFilter;

fn broker(name: &str, zone: Option<&str>, addrs: &[(i64, &str)]) -> BrokerData {
    BrokerData {
        broker_addrs: addrs.iter().map(|(i, a)| (*i, (*a).to_owned())).collect(),
        broker_name: name.into(),
        cluster: "cluster".into(),
        enable_acting_master: false,
        zone_name: zone.map(str::to_owned),
    }
}

fn queue(name: &str) -> QueueData {
    QueueData {
        broker_name: name.into(),
        perm: 6,
        read_queue_nums: 8,
        topic_sys_flag: 0,
        write_queue_nums: 8,
    }
}

fn zone1() -> ZoneFilter {
    ZoneFilter::from_request(Some(true), Some("zone1")).unwrap()
}

#[test]
fn active_only_with_mode_true_and_a_name() {
    assert!(ZoneFilter::from_request(Some(false), Some("zone1")).is_none());
    assert!(ZoneFilter::from_request(None, Some("zone1")).is_none());
    assert!(ZoneFilter::from_request(Some(true), None).is_none());
    assert!(ZoneFilter::from_request(Some(true), Some("  ")).is_none());
    assert_eq!(
        ZoneFilter::from_request(Some(true), Some(" zone1"))
            .unwrap()
            .zone,
        " zone1",
        "compared as sent"
    );
}

#[test]
fn keeps_own_zone_and_masterless_groups_drops_other_zones() {
    let mut route = TopicRouteData {
        broker_datas: vec![
            broker("BrokerA", Some("zone1"), &[(0, "127.0.0.1:10911")]),
            broker("BrokerB", Some("zone2"), &[(0, "127.0.0.1:10912")]),
            broker("BrokerC", Some("zone2"), &[(1, "127.0.0.1:10913")]),
            broker("BrokerD", None, &[]),
            broker("BrokerE", Some("ZONE1"), &[(0, "127.0.0.1:10915")]),
        ],
        queue_datas: ["BrokerA", "BrokerB", "BrokerC", "BrokerD", "BrokerE"]
            .into_iter()
            .map(queue)
            .collect(),
        ..TopicRouteData::default()
    };
    zone1().apply(&mut route);
    let names: Vec<&str> = route
        .broker_datas
        .iter()
        .map(|b| b.broker_name.as_str())
        .collect();
    assert_eq!(names, ["BrokerA", "BrokerC", "BrokerD", "BrokerE"]);
    let queues: Vec<&str> = route
        .queue_datas
        .iter()
        .map(|q| q.broker_name.as_str())
        .collect();
    assert_eq!(queues, ["BrokerA", "BrokerC", "BrokerD", "BrokerE"]);
}

#[test]
fn filter_servers_of_removed_groups_go() {
    let mut route = TopicRouteData {
        broker_datas: vec![broker("BrokerA", Some("zone1"), &[(0, "127.0.0.1:10911")])],
        queue_datas: vec![queue("BrokerA")],
        ..TopicRouteData::default()
    };
    route
        .filter_server_table
        .insert("127.0.0.1:10911".into(), vec!["f1".into()]);
    let mut filtered = route.clone();
    zone1().apply(&mut filtered);
    assert_eq!(filtered.filter_server_table.len(), 1);

    route
        .broker_datas
        .push(broker("BrokerB", Some("zone2"), &[(0, "127.0.0.1:10912")]));
    route.queue_datas.push(queue("BrokerB"));
    route
        .filter_server_table
        .insert("127.0.0.1:10912".into(), vec!["f2".into()]);
    zone1().apply(&mut route);
    assert_eq!(route.filter_server_table.len(), 1);
    assert!(route.filter_server_table.contains_key("127.0.0.1:10911"));
}
