//! GET_ROUTEINFO_BY_TOPIC at the request level: dialect choice, remarks, order
//! configuration, acting master, zone filtering (Java `ZoneRouteRPCHook*Test`'s
//! request-level cases); and the topic requests whose input is validated or
//! defaulted.

use rmq_wire::{RequestCode as C, ResponseCode as R};

use super::*;

const DEFAULT_BODY: &str = r#"{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#;
const STANDARD_BODY: &str = r#"{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#;

fn with_topic_test(f: &Fixture) {
    let mut reg = Reg::master("broker-a", "127.0.0.1:10911", &["TopicTest", "Other"]);
    reg.topics[0].read_queue_nums = 4;
    reg.topics[0].write_queue_nums = 4;
    assert_eq!(code(&f.register(&reg)), R::Success);
}

fn route_request(ext: &[(&str, &str)], version: i32) -> RemotingCommand {
    let mut req = request(C::GetRouteInfoByTopic, ext);
    req.version = version;
    req
}

#[test]
fn dialect_follows_version_and_accept_standard_json_only() {
    let f = Fixture::new();
    with_topic_test(&f);
    let topic = [("topic", "TopicTest")];
    let standard = f.call(&route_request(&topic, 479));
    assert_eq!(
        (code(&standard), standard.remark.as_deref()),
        (R::Success, None)
    );
    assert!(standard.ext_fields.is_none(), "no header class");
    assert_eq!(body_text(&standard), STANDARD_BODY);
    assert_eq!(
        body_text(&f.call(&route_request(&topic, 401))),
        STANDARD_BODY
    );
    assert_eq!(
        body_text(&f.call(&route_request(&topic, 400))),
        DEFAULT_BODY
    );
    let asked = [("topic", "TopicTest"), ("acceptStandardJsonOnly", "true")];
    assert_eq!(
        body_text(&f.call(&route_request(&asked, 400))),
        STANDARD_BODY
    );
    let declined = [("topic", "TopicTest"), ("acceptStandardJsonOnly", "false")];
    assert_eq!(
        body_text(&f.call(&route_request(&declined, 0))),
        DEFAULT_BODY
    );
}

#[test]
fn unknown_and_missing_topic_remarks() {
    let f = Fixture::new();
    let unknown = f.call(&route_request(&[("topic", "TopicTest")], 479));
    assert_eq!(code(&unknown), R::TopicNotExist);
    assert_eq!(
        unknown.remark.as_deref(),
        Some("No topic route info in name server for the topic: TopicTest\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.")
    );
    assert!(unknown.ext_fields.is_none() && unknown.body.is_none());
    let missing = f.call(&route_request(&[("lo", "true")], 479));
    assert_eq!(code(&missing), R::TopicNotExist);
    assert!(missing
        .remark
        .unwrap()
        .starts_with("No topic route info in name server for the topic: null\nSee "));
}

#[test]
fn order_topic_conf_only_when_enabled() {
    let f = Fixture::new();
    with_topic_test(&f);
    f.call(&request(
        C::PutKvConfig,
        &[
            ("namespace", "ORDER_TOPIC_CONFIG"),
            ("key", "TopicTest"),
            ("value", "broker-a:4"),
        ],
    ));
    let topic = [("topic", "TopicTest")];
    assert!(!body_text(&f.call(&route_request(&topic, 479))).contains("orderTopicConf"));
    f.state.config.write().order_message_enable = true;
    assert!(body_text(&f.call(&route_request(&topic, 479)))
        .contains(r#""orderTopicConf":"broker-a:4","queueDatas""#));
}

#[test]
fn acting_master_rewrite_follows_support_acting_master() {
    let f = Fixture::new();
    let mut slave = Reg::master("broker-a", "127.0.0.1:10921", &["TopicTest", "Other"]);
    slave.id = 1;
    let mut req = slave.request();
    req.ext_fields
        .as_mut()
        .unwrap()
        .insert("enableActingMaster".into(), "true".into());
    assert_eq!(code(&f.call(&req)), R::Success);
    let topic = [("topic", "TopicTest")];
    assert!(body_text(&f.call(&route_request(&topic, 479))).contains(r#"{"1":"127.0.0.1:10921"}"#));
    f.state.config.write().support_acting_master = true;
    let body = body_text(&f.call(&route_request(&topic, 479)));
    assert!(body.contains(r#"{"0":"127.0.0.1:10921"}"#), "{body}");
    assert!(body.contains(r#""perm":4"#), "{body}");
}

fn two_zones(f: &Fixture) {
    for (name, addr, zone) in [
        ("BrokerA", "127.0.0.1:10911", "zone1"),
        ("BrokerB", "127.0.0.1:10912", "zone2"),
    ] {
        let mut reg = Reg::master(name, addr, &["TopicTest", "Other"]);
        reg.extra = vec![("__ZONE_NAME", zone)];
        assert_eq!(code(&f.register(&reg)), R::Success);
    }
}

fn broker_names(response: &RemotingCommand) -> Vec<String> {
    let route = rmq_protocol::TopicRouteData::from_json(response.body.as_deref().unwrap()).unwrap();
    route
        .broker_datas
        .into_iter()
        .map(|b| b.broker_name)
        .collect()
}

#[test]
fn zone_filtering_applies_only_in_zone_mode_with_a_zone() {
    let f = Fixture::new();
    two_zones(&f);
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str]);
    let cases: [Case<'_>; 5] = [
        (&[("topic", "TopicTest")], &["BrokerA", "BrokerB"]),
        (
            &[
                ("topic", "TopicTest"),
                ("__ZONE_MODE", "false"),
                ("__ZONE_NAME", "zone1"),
            ],
            &["BrokerA", "BrokerB"],
        ),
        (
            &[("topic", "TopicTest"), ("__ZONE_MODE", "true")],
            &["BrokerA", "BrokerB"],
        ),
        (
            &[
                ("topic", "TopicTest"),
                ("__ZONE_MODE", "TRUE"),
                ("__ZONE_NAME", "zone1"),
            ],
            &["BrokerA"],
        ),
        (
            &[
                ("topic", "TopicTest"),
                ("__ZONE_MODE", "true"),
                ("__ZONE_NAME", "ZONE2"),
            ],
            &["BrokerB"],
        ),
    ];
    for (ext, expected) in cases {
        let response = f.call(&route_request(ext, 479));
        assert_eq!(broker_names(&response), expected, "{ext:?}");
    }
    // The filtered body keeps the client's dialect (documented deviation).
    let filtered = f.call(&route_request(
        &[
            ("topic", "TopicTest"),
            ("__ZONE_MODE", "true"),
            ("__ZONE_NAME", "zone1"),
        ],
        479,
    ));
    assert!(body_text(&filtered).contains(r#"{"0":"127.0.0.1:10911"}"#));
    // Not found stays not found.
    let missing = f.call(&route_request(
        &[
            ("topic", "Nope"),
            ("__ZONE_MODE", "true"),
            ("__ZONE_NAME", "zone1"),
        ],
        479,
    ));
    assert_eq!(
        (code(&missing), missing.body.is_none()),
        (R::TopicNotExist, true)
    );
}

#[test]
fn register_topic_validates_name_and_queue_counts() {
    let f = Fixture::new();
    with_topic_test(&f);
    let body = |read: i32| {
        format!(
            r#"{{"brokerDatas":[],"filterServerTable":{{}},"queueDatas":[{{"brokerName":"broker-a","perm":6,"readQueueNums":{read},"topicSysFlag":0,"writeQueueNums":8}}]}}"#
        )
    };
    let register = |topic: &str, body: Option<String>| {
        let req = request(C::RegisterTopicInNamesrv, &[("topic", topic)]);
        f.call(&match body {
            Some(body) => req.with_body(body),
            None => req,
        })
    };
    let ok = register("Single", Some(body(8)));
    assert_eq!(
        (code(&ok), ok.remark.as_deref(), ok.ext_fields.is_none()),
        (R::Success, None, true)
    );
    assert_eq!(
        f.state.routes.read().queue_datas("Single").unwrap()["broker-a"].read_queue_nums,
        8
    );

    let bad_name = register("bad.name", Some(body(8)));
    assert_eq!(code(&bad_name), R::SystemError);
    assert!(bad_name.remark.unwrap().contains("illegal characters"));
    let long = register(&"t".repeat(128), Some(body(8)));
    assert!(long
        .remark
        .unwrap()
        .contains("longer than topic max length"));
    let absurd = register("Absurd", Some(body(-1)));
    assert_eq!(
        absurd.remark.as_deref(),
        Some(r#"invalid topic "Absurd": readQueueNums -1 is outside 0..=65535."#)
    );
    assert!(f.state.routes.read().queue_datas("Absurd").is_none());

    assert_eq!(code(&register("NoBody", None)), R::Success);
    assert!(f.state.routes.read().queue_datas("NoBody").is_none());
    assert_eq!(code(&register("Garbage", Some("{".into()))), R::SystemError);
}

#[test]
fn topics_by_cluster_without_cluster_is_an_empty_list() {
    let f = Fixture::new();
    with_topic_test(&f);
    let response = f.call(&request(C::GetTopicsByCluster, &[]));
    assert_eq!(code(&response), R::Success);
    assert_eq!(body_text(&response), r#"{"topicList":[]}"#);
    let response = f.call(&request(
        C::GetTopicsByCluster,
        &[("cluster", "DefaultCluster")],
    ));
    assert_eq!(
        body_text(&response),
        r#"{"topicList":["Other","TopicTest"]}"#
    );
    f.state.config.write().enable_topic_list = false;
    for code_ in [
        C::GetTopicsByCluster,
        C::GetUnitTopicList,
        C::GetHasUnitSubTopicList,
        C::GetHasUnitSubUnunitTopicList,
    ] {
        let response = f.call(&request(code_, &[("cluster", "DefaultCluster")]));
        assert_eq!(
            (code(&response), response.remark.as_deref()),
            (R::SystemError, Some("disable")),
            "{code_:?}"
        );
    }
    // The system topic list has no switch.
    assert_eq!(
        code(&f.call(&request(C::GetSystemTopicListFromNs, &[]))),
        R::Success
    );
}

#[test]
fn a_route_asked_for_again_reflects_every_change_since() {
    let f = Fixture::new();
    with_topic_test(&f);
    let topic = [("topic", "TopicTest")];
    assert_eq!(
        body_text(&f.call(&route_request(&topic, 479))),
        STANDARD_BODY
    );
    assert_eq!(
        body_text(&f.call(&route_request(&topic, 479))),
        STANDARD_BODY
    );

    let second = Reg::master("broker-b", "127.0.0.1:10912", &["TopicTest", "Other"]);
    assert_eq!(code(&f.register(&second)), R::Success);
    assert_eq!(
        broker_names(&f.call(&route_request(&topic, 479))),
        ["broker-a", "broker-b"]
    );

    let wipe = request(C::WipeWritePermOfBroker, &[("brokerName", "broker-b")]);
    assert_eq!(code(&f.call(&wipe)), R::Success);
    let body = body_text(&f.call(&route_request(&topic, 479)));
    assert!(
        body.contains(r#"{"brokerName":"broker-b","perm":4,"#),
        "{body}"
    );
    // The old-dialect answer is kept apart from the standard one.
    assert!(body_text(&f.call(&route_request(&topic, 400))).contains(r#"{0:"127.0.0.1:10912"}"#));
}
