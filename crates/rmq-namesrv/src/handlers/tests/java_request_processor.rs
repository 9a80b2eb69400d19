//! Java `RequestProcessorTest`: the default and client processors over a route
//! table pre-loaded with broker `default-broker` at `127.0.0.1:10911`, cluster
//! `default-cluster`, id 1234, topics `unit-test0/1`.

use rmq_protocol::{QueueData, TopicList};
use rmq_wire::{ExtFields, RequestCode as C, ResponseCode as R};

use super::*;
use crate::route::{BrokerRegistration, SharedRoutes};

fn preloaded() -> Fixture {
    let fixture = Fixture::new();
    preload(&fixture.state.routes);
    fixture
}

fn preload(routes: &SharedRoutes) {
    let reg = BrokerRegistration {
        cluster: "default-cluster".into(),
        broker_addr: "127.0.0.1:10911".into(),
        broker_name: "default-broker".into(),
        broker_id: 1234,
        ha_server_addr: "127.0.0.1:1001".into(),
        zone_name: None,
        heartbeat_timeout_ms: None,
        enable_acting_master: None,
        data_version: DataVersion::default(),
        topic_configs: Vec::new(),
        mappings: Default::default(),
        filter_servers: Some(Vec::new()),
        conn: 0,
        client_version: 0,
    };
    routes.register_broker(reg, 0, false, false).unwrap();
    for topic in ["unit-test0", "unit-test1"] {
        let queue = QueueData {
            broker_name: "default-broker".into(),
            perm: 6,
            read_queue_nums: 8,
            topic_sys_flag: 0,
            write_queue_nums: 8,
        };
        assert!(routes.write().register_topic(topic, vec![queue]));
    }
}

/// Java's `getRemotingCommand`: ext fields of a register header, and a topic.
fn with_unrelated_ext(code: C) -> RemotingCommand {
    request(
        code,
        &[
            ("brokerName", "broker"),
            ("brokerAddr", "10.10.1.1"),
            ("clusterName", "cluster"),
            ("haServerAddr", "10.10.2.1"),
            ("brokerId", "2333"),
            ("topic", "unit-test"),
        ],
    )
}

fn kv(code: C) -> RemotingCommand {
    request(
        code,
        &[
            ("namespace", "namespace"),
            ("key", "key"),
            ("value", "value"),
        ],
    )
}

#[test]
fn put_get_delete_kv_config() {
    let f = preloaded();
    let put = f.call(&kv(C::PutKvConfig));
    assert_eq!((code(&put), put.remark.as_deref()), (R::Success, None));
    assert_eq!(f.state.kv.read().get("namespace", "key"), Some("value"));

    let got = f.call(&kv(C::GetKvConfig));
    assert_eq!((code(&got), got.remark.as_deref()), (R::Success, None));
    assert_eq!(got.ext("value"), Some("value"));

    let deleted = f.call(&kv(C::DeleteKvConfig));
    assert_eq!(
        (code(&deleted), deleted.remark.as_deref()),
        (R::Success, None)
    );
    assert_eq!(f.state.kv.read().get("namespace", "key"), None);

    let missing = f.call(&kv(C::GetKvConfig));
    assert_eq!(code(&missing), R::QueryNotFound);
    assert_eq!(
        missing.remark.as_deref(),
        Some("No config item, Namespace: namespace Key: key")
    );
    assert_eq!(missing.ext("value"), None);
    assert_eq!(missing.ext_fields, Some(ExtFields::new()), "a header class");
}

#[test]
fn put_kv_without_namespace_or_key() {
    let f = Fixture::new();
    for ext in [
        &[("key", "k"), ("value", "v")][..],
        &[("namespace", "n")][..],
    ] {
        let response = f.call(&request(C::PutKvConfig, ext));
        assert_eq!(code(&response), R::SystemError);
        assert_eq!(response.remark.as_deref(), Some("namespace or key is null"));
    }
    // A missing value stores nothing readable; the namespace exists.
    let response = f.call(&request(
        C::PutKvConfig,
        &[("namespace", "n"), ("key", "k")],
    ));
    assert_eq!(code(&response), R::Success);
    assert_eq!(f.state.kv.read().get("n", "k"), None);
    let list = f.call(&request(C::GetKvlistByNamespace, &[("namespace", "n")]));
    assert_eq!(body_text(&list), r#"{"table":{}}"#);
}

#[test]
fn unknown_request_code() {
    let f = Fixture::new();
    let response = f.call(&request(C::Unknown(99_999), &[]));
    assert_eq!(code(&response), R::RequestCodeNotSupported);
    assert_eq!(
        response.remark.as_deref(),
        Some(" request type 99999 not supported")
    );
    assert!(response.ext_fields.is_none() && response.body.is_none());
    // A code the NameServer only sends is not served either.
    let response = f.call(&request(C::NotifyMinBrokerIdChange, &[]));
    assert_eq!(code(&response), R::RequestCodeNotSupported);
}

#[test]
fn update_namesrv_config_and_its_black_list() {
    let f = Fixture::new();
    let update =
        |text: &str| f.call(&request(C::UpdateNamesrvConfig, &[]).with_body(text.to_owned()));
    assert_eq!(code(&update("enableTopicList=true")), R::Success);
    for key in [
        "configStorePath",
        "kvConfigPath",
        "configBlackList",
        "rocketmqHome",
    ] {
        let response = update(&format!("{key}=/tmp/evil"));
        assert_eq!(code(&response), R::NoPermission, "{key}");
        assert!(response
            .remark
            .unwrap()
            .contains("Can not update config in black list"));
    }
    assert!(!f.state.config.read().config_store_path.contains("evil"));
    // A Java map's toString: key `{key`, value `value}`; unknown keys accepted.
    assert_eq!(code(&update("{key=value}")), R::Success);
    // No body: nothing to do.
    assert_eq!(
        code(&f.call(&request(C::UpdateNamesrvConfig, &[]))),
        R::Success
    );
}

#[test]
fn cluster_keys_are_start_up_only_and_their_secret_is_never_shown() {
    let f = Fixture::with(|config| {
        config
            .extra
            .insert("clusterSecretKey".into(), "s3cret".into());
        config
            .extra
            .insert("clusterAccessKey".into(), "member".into());
    });
    for key in [
        "clusterSecretKey",
        "clusterGossipAddr",
        "clusterSeeds",
        "clusterId",
    ] {
        let response = f.call(&request(C::UpdateNamesrvConfig, &[]).with_body(format!("{key}=x")));
        assert_eq!(code(&response), R::NoPermission, "{key}");
    }
    let shown = f.call(&request(C::GetNamesrvConfig, &[]));
    let text = body_text(&shown);
    assert!(text.contains("clusterSecretKey=***\n"), "{text}");
    assert!(text.contains("clusterAccessKey=***\n"), "{text}");
    assert!(
        !text.contains("s3cret") && !text.contains("member"),
        "{text}"
    );
}

#[test]
fn register_broker_old_and_new_body_format() {
    for version in [0, 100] {
        let f = preloaded();
        let mut reg = Reg::master("broker", "10.10.1.1", &["unit-test0", "unit-test1"]);
        reg.cluster = "cluster";
        reg.id = 2333;
        let mut req = reg.request();
        req.version = version;
        let response = f.call(&req);
        assert_eq!(
            (code(&response), response.remark.as_deref()),
            (R::Success, None),
            "version {version}"
        );
        let routes = f.state.routes.read();
        let group = routes.group("broker").unwrap();
        assert_eq!(group.addrs, [(2333, "10.10.1.1".to_string())].into());
    }
}

#[test]
fn unregister_is_asynchronous() {
    let f = preloaded();
    let response = f.call(&with_unrelated_ext(C::UnregisterBroker));
    assert_eq!(
        (code(&response), response.remark.as_deref()),
        (R::Success, None)
    );
    // Queued, not run (the worker is not running here).
    assert!(f.state.routes.read().group("default-broker").is_some());
    assert_eq!(f.queues.unregistrations.len(), 1);
}

#[test]
fn all_topic_list_and_its_switch() {
    let f = preloaded();
    let response = f.call(&request(C::GetAllTopicListFromNameserver, &[]));
    assert_eq!(
        (code(&response), response.remark.as_deref()),
        (R::Success, None)
    );
    assert_eq!(
        TopicList::from_json(response.body.as_deref().unwrap()).unwrap(),
        TopicList::new(["unit-test0", "unit-test1"])
    );
    f.state.config.write().enable_all_topic_list = false;
    let response = f.call(&request(C::GetAllTopicListFromNameserver, &[]));
    assert_eq!(
        (code(&response), response.remark.as_deref()),
        (R::SystemError, Some("disable"))
    );
}

#[test]
fn route_of_known_and_unknown_topic() {
    let f = preloaded();
    let known = f.call(&request(C::GetRouteInfoByTopic, &[("topic", "unit-test0")]));
    assert_eq!(code(&known), R::Success);
    let unknown = f.call(&request(C::GetRouteInfoByTopic, &[("topic", "test")]));
    assert_eq!(code(&unknown), R::TopicNotExist);
}

#[test]
fn every_other_request_succeeds_with_unrelated_ext_fields() {
    let f = preloaded();
    for code_ in [
        C::GetBrokerClusterInfo,
        C::QueryDataVersion,
        C::GetBrokerMemberGroup,
        C::BrokerHeartbeat,
        C::AddWritePermOfBroker,
        C::WipeWritePermOfBroker,
        C::DeleteTopicInNamesrv,
        C::GetTopicsByCluster,
        C::GetSystemTopicListFromNs,
        C::GetUnitTopicList,
        C::GetHasUnitSubTopicList,
        C::GetHasUnitSubUnunitTopicList,
        C::GetNamesrvConfig,
    ] {
        let response = f.call(&with_unrelated_ext(code_));
        assert_eq!(
            code(&response),
            R::Success,
            "{code_:?}: {:?}",
            response.remark
        );
    }
}

#[test]
fn kv_list_by_namespace() {
    let f = Fixture::new();
    let list = || {
        f.call(&request(
            C::GetKvlistByNamespace,
            &[("namespace", "namespace")],
        ))
    };
    let missing = list();
    assert_eq!(code(&missing), R::QueryNotFound);
    assert_eq!(
        missing.remark.as_deref(),
        Some("No config item, Namespace: namespace")
    );
    f.call(&kv(C::PutKvConfig));
    let found = list();
    assert_eq!(code(&found), R::Success);
    assert_eq!(body_text(&found), r#"{"table":{"key":"value"}}"#);
}
