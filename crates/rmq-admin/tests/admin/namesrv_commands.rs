//! Every sub-command against one real `rmq-namesrv`: table output, `--json`
//! output and exit codes.

use crate::common::{admin, Brokers, NameServer, BROKER_A0, BROKER_A1, BROKER_B0};

/// A NameServer with broker-a (ids 0 and 1) and broker-b registered.
fn loaded() -> (NameServer, Brokers) {
    let ns = NameServer::start();
    let mut brokers = Brokers::new();
    for broker in [BROKER_A0, BROKER_A1, BROKER_B0] {
        brokers.register(&ns.addr, &broker);
    }
    (ns, brokers)
}

#[test]
fn topic_route_shows_an_order_topics_configuration() {
    let ns = NameServer::start_with(&["orderMessageEnable=true"]);
    let mut brokers = Brokers::new();
    for broker in [BROKER_A0, BROKER_B0] {
        brokers.register(&ns.addr, &broker);
    }
    let a = &ns.addr;
    let plain = admin(&["-n", a, "topic", "route", "TopicTest"]);
    assert_eq!(plain.code, 0, "{plain:?}");
    assert!(!plain.stdout.contains("#Order Conf"), "{}", plain.stdout);
    let put = admin(&[
        "-n",
        a,
        "kv",
        "put",
        "ORDER_TOPIC_CONFIG",
        "TopicTest",
        "broker-a:4;broker-b:4",
    ]);
    assert_eq!(put.code, 0, "{put:?}");
    let run = admin(&["-n", a, "topic", "route", "TopicTest"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("\n\n#NameServer "), "{}", run.stdout);
    assert!(run.stdout.contains(" #Order Conf\n"), "{}", run.stdout);
    assert!(run.has_row(&[a, "broker-a:4;broker-b:4"]), "{}", run.stdout);
    let json = admin(&["-n", a, "--json", "topic", "route", "TopicTest"]);
    assert_eq!(
        json.json()["results"][0]["result"]["orderTopicConf"],
        "broker-a:4;broker-b:4"
    );
}

#[test]
fn cluster_list_shows_every_broker_address() {
    let (ns, _brokers) = loaded();
    let run = admin(&["-n", &ns.addr, "cluster", "list"]);
    assert_eq!(run.code, 0, "{run:?}");
    let header = &run.rows()[0];
    assert_eq!(
        header.join(" "),
        "#NameServer #Cluster Name #Broker Name #BID #Addr"
    );
    let a = &ns.addr;
    assert!(run.has_row(&[a, "DefaultCluster", "broker-a", "0", "127.0.0.1:10911"]));
    assert!(run.has_row(&[a, "DefaultCluster", "broker-a", "1", "127.0.0.1:10921"]));
    assert!(run.has_row(&[a, "DefaultCluster", "broker-b", "0", "127.0.0.1:10931"]));
    assert!(run.stderr.is_empty(), "{}", run.stderr);

    let run = admin(&["-n", &ns.addr, "--json", "cluster", "list"]);
    assert_eq!(run.code, 0);
    let json = run.json();
    assert_eq!(json["command"], "cluster list");
    assert_eq!(json["exitCode"], 0);
    let result = &json["results"][0];
    assert_eq!(
        (result["nameServer"].as_str(), result["ok"].as_bool()),
        (Some(a.as_str()), Some(true))
    );
    let info = &result["result"];
    assert_eq!(
        info["clusterAddrTable"]["DefaultCluster"],
        serde_json::json!(["broker-a", "broker-b"])
    );
    assert_eq!(
        info["brokerAddrTable"]["broker-a"]["brokerAddrs"]["1"],
        "127.0.0.1:10921"
    );
}

#[test]
fn topic_route_as_table_and_json_and_unknown_topic() {
    let (ns, _brokers) = loaded();
    let a = &ns.addr;
    let run = admin(&["-n", a, "topic", "route", "TopicTest"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("#NameServer"), "{}", run.stdout);
    assert!(run.has_row(&[
        a,
        "DefaultCluster",
        "broker-a",
        "1",
        "127.0.0.1:10921",
        "4",
        "4",
        "6(RW-)"
    ]));
    assert!(run.has_row(&[
        a,
        "DefaultCluster",
        "broker-b",
        "0",
        "127.0.0.1:10931",
        "4",
        "4",
        "6(RW-)"
    ]));

    let run = admin(&["-n", a, "topic", "route", "TopicOrder", "--json"]);
    assert_eq!(run.code, 0);
    let route = &run.json()["results"][0]["result"];
    assert_eq!(route["queueDatas"].as_array().map(Vec::len), Some(1));
    assert_eq!(route["queueDatas"][0]["readQueueNums"], 8);
    assert_eq!(route["queueDatas"][0]["perm"], 6);
    assert_eq!(
        route["brokerDatas"][0]["brokerAddrs"]["0"],
        "127.0.0.1:10911"
    );

    let run = admin(&["-n", a, "topic", "route", "NoSuchTopic"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.contains(&format!("error: NameServer {a}: TOPIC_NOT_EXIST (17): No topic route info in name server for the topic: NoSuchTopic")),
        "{}",
        run.stderr
    );
    let run = admin(&["-n", a, "topic", "route", "NoSuchTopic", "--json"]);
    let error = &run.json()["results"][0]["error"];
    assert_eq!(
        (error["code"].as_i64(), error["codeName"].as_str()),
        (Some(17), Some("TOPIC_NOT_EXIST"))
    );
}

#[test]
fn topic_list_and_delete() {
    let (ns, _brokers) = loaded();
    let a = &ns.addr;
    let run = admin(&["-n", a, "topic", "list"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.has_row(&[a, "TopicOrder"]) && run.has_row(&[a, "TopicTest"]));
    let run = admin(&["-n", a, "topic", "list", "--cluster", "NoCluster"]);
    assert!(run.has_row(&[a, "(none)"]), "{}", run.stdout);
    let run = admin(&["-n", a, "--json", "topic", "list", "-c", "DefaultCluster"]);
    assert_eq!(
        run.json()["results"][0]["result"]["topicList"],
        serde_json::json!(["SELF_TEST_TOPIC", "TopicOrder", "TopicTest"])
    );

    let run = admin(&["-n", a, "topic", "delete", "TopicOrder"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.has_row(&[a, "OK"]));
    assert_eq!(admin(&["-n", a, "topic", "route", "TopicOrder"]).code, 3);
    let run = admin(&[
        "-n",
        a,
        "topic",
        "delete",
        "TopicTest",
        "--cluster",
        "DefaultCluster",
        "--json",
    ]);
    assert_eq!(run.json()["results"][0]["ok"], true);
    assert!(!admin(&["-n", a, "topic", "list"])
        .stdout
        .contains("TopicTest"));
}

#[test]
fn kv_put_get_list_delete() {
    let ns = NameServer::start();
    let a = &ns.addr;
    let run = admin(&[
        "-n",
        a,
        "kv",
        "put",
        "ORDER_TOPIC_CONFIG",
        "TopicOrder",
        "broker-a:4;broker-b:4",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.has_row(&[a, "OK"]));
    admin(&["-n", a, "kv", "put", "ORDER_TOPIC_CONFIG", "Other", "x"]);

    let run = admin(&["-n", a, "kv", "get", "ORDER_TOPIC_CONFIG", "TopicOrder"]);
    assert!(run.has_row(&[a, "broker-a:4;broker-b:4"]), "{}", run.stdout);
    let run = admin(&[
        "-n",
        a,
        "kv",
        "get",
        "ORDER_TOPIC_CONFIG",
        "TopicOrder",
        "--json",
    ]);
    assert_eq!(
        run.json()["results"][0]["result"]["value"],
        "broker-a:4;broker-b:4"
    );

    let run = admin(&["-n", a, "kv", "list", "ORDER_TOPIC_CONFIG"]);
    assert!(
        run.has_row(&[a, "Other", "x"]) && run.has_row(&[a, "TopicOrder", "broker-a:4;broker-b:4"])
    );

    assert_eq!(
        admin(&["-n", a, "kv", "delete", "ORDER_TOPIC_CONFIG", "TopicOrder"]).code,
        0
    );
    let run = admin(&["-n", a, "kv", "get", "ORDER_TOPIC_CONFIG", "TopicOrder"]);
    assert_eq!(run.code, 3);
    assert!(
        run.stderr.contains(&format!("error: NameServer {a}: QUERY_NOT_FOUND (22): No config item, Namespace: ORDER_TOPIC_CONFIG Key: TopicOrder")),
        "{}",
        run.stderr
    );
    let run = admin(&["-n", a, "kv", "list", "NO_NAMESPACE"]);
    assert_eq!(run.code, 3);
    assert!(
        run.stderr.contains("QUERY_NOT_FOUND (22)"),
        "{}",
        run.stderr
    );
}

#[test]
fn config_get_set_and_black_listed_key() {
    let ns = NameServer::start();
    let a = &ns.addr;
    let run = admin(&["-n", a, "config", "get", "orderMessageEnable", "noSuchKey"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.has_row(&[a, "orderMessageEnable", "false"]));
    assert!(run.has_row(&[a, "noSuchKey", "(unset)"]));

    let run = admin(&[
        "-n",
        a,
        "config",
        "set",
        "orderMessageEnable=true",
        "waitSecondsForService=7",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = admin(&["-n", a, "--json", "config", "get"]);
    let config = &run.json()["results"][0]["result"];
    assert_eq!(config["orderMessageEnable"], "true");
    assert_eq!(config["waitSecondsForService"], "7");

    let run = admin(&["-n", a, "config", "set", "kvConfigPath=/tmp/evil.json"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "error: NameServer {a}: NO_PERMISSION (16): Can not update config in black list."
        )),
        "{}",
        run.stderr
    );
    let run = admin(&["-n", a, "config", "set", "configStorePath=/x", "--json"]);
    let error = &run.json()["results"][0]["error"];
    assert_eq!(error["codeName"], "NO_PERMISSION");
    assert_eq!(error["code"], 16);
    assert_eq!(error["remark"], "Can not update config in black list.");
    assert_eq!(admin(&["-n", a, "config", "set", "novalue"]).code, 2);
}

#[test]
fn broker_perms_and_member_group() {
    let (ns, _brokers) = loaded();
    let a = &ns.addr;
    let run = admin(&["-n", a, "broker", "wipe-write-perm", "broker-a"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("#Wiped Topics"));
    assert!(run.has_row(&[a, "broker-a", "2"]), "{}", run.stdout);
    let run = admin(&["-n", a, "topic", "route", "TopicTest"]);
    assert!(run.has_row(&[
        a,
        "DefaultCluster",
        "broker-a",
        "0",
        "127.0.0.1:10911",
        "4",
        "4",
        "4(R--)"
    ]));
    assert!(run.has_row(&[
        a,
        "DefaultCluster",
        "broker-b",
        "0",
        "127.0.0.1:10931",
        "4",
        "4",
        "6(RW-)"
    ]));

    let run = admin(&["-n", a, "--json", "broker", "add-write-perm", "broker-a"]);
    assert_eq!(run.json()["results"][0]["result"]["addTopicCount"], 2);
    let run = admin(&["-n", a, "topic", "route", "TopicTest"]);
    assert!(run.has_row(&[
        a,
        "DefaultCluster",
        "broker-a",
        "0",
        "127.0.0.1:10911",
        "4",
        "4",
        "6(RW-)"
    ]));

    let run = admin(&["-n", a, "broker", "member-group", "broker-a"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.has_row(&[a, "DefaultCluster", "broker-a", "0", "127.0.0.1:10911"]));
    assert!(run.has_row(&[a, "DefaultCluster", "broker-a", "1", "127.0.0.1:10921"]));
    let run = admin(&["-n", a, "broker", "member-group", "nobody", "--json"]);
    let group = &run.json()["results"][0]["result"]["brokerMemberGroup"];
    assert_eq!(group["brokerName"], "nobody");
    assert_eq!(group["brokerAddrs"], serde_json::json!({}));

    // A broker name no NameServer knows is a failure, not "0 topics changed".
    for command in ["wipe-write-perm", "add-write-perm"] {
        let run = admin(&["-n", a, "broker", command, "broker-typo"]);
        assert_eq!(run.code, 3, "{command}: {run:?}");
        assert!(
            run.stderr.contains("\"broker-typo\""),
            "{command}: {}",
            run.stderr
        );
        assert!(
            !run.stdout.contains("broker-typo"),
            "{command}: {}",
            run.stdout
        );
    }
}

#[test]
fn mqadmin_command_names_run_the_same_commands() {
    let (ns, _brokers) = loaded();
    let a = &ns.addr;
    let pairs: [(&[&str], &[&str]); 3] = [
        (
            &["topicRoute", "-t", "TopicTest"],
            &["topic", "route", "TopicTest"],
        ),
        (&["clusterList"], &["cluster", "list"]),
        (&["getNamesrvConfig"], &["config", "get"]),
    ];
    for (mqadmin, own) in pairs {
        let alias = admin(&[&["-n", a.as_str()], mqadmin].concat());
        let written_out = admin(&[&["-n", a.as_str()], own].concat());
        assert_eq!(alias.code, 0, "{mqadmin:?}: {alias:?}");
        assert_eq!(alias.stdout, written_out.stdout, "{mqadmin:?}");
    }
    let run = admin(&["-n", a, "updateKvConfig", "-s", "NS", "-k", "K", "-v", "V"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = admin(&["-n", a, "kv", "get", "NS", "K"]);
    assert!(run.has_row(&[a, "V"]), "{}", run.stdout);
}
