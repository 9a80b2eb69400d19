//! `namesrv diff` against two real `rmq-namesrv` processes: agreement,
//! every kind of disagreement, and a NameServer that is down.

use crate::common::{
    admin, dead_addr, Broker, Brokers, NameServer, BROKER_A0, BROKER_A1, BROKER_B0,
};

#[test]
fn identical_name_servers_agree() {
    let (one, two) = (NameServer::start(), NameServer::start());
    let mut brokers = Brokers::new();
    for ns in [&one, &two] {
        for broker in [BROKER_A0, BROKER_A1, BROKER_B0] {
            brokers.register(&ns.addr, &broker);
        }
    }
    let list = format!("{};{}", one.addr, two.addr);
    let run = admin(&["-n", &list, "namesrv", "diff"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.has_row(&[&one.addr, "1", "2", "3", "-"]),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("The 2 NameServers agree."),
        "{}",
        run.stdout
    );

    let run = admin(&["-n", &list, "namesrv", "diff", "--json"]);
    let json = run.json();
    assert_eq!(json["agree"], true);
    assert_eq!(json["differences"], serde_json::json!([]));
    assert_eq!(json["results"][1]["result"]["topics"], 3);
}

#[test]
fn disagreeing_name_servers_list_every_difference() {
    let (one, two) = (NameServer::start(), NameServer::start());
    let mut brokers = Brokers::new();
    for broker in [BROKER_A0, BROKER_A1, BROKER_B0] {
        brokers.register(&one.addr, &broker);
    }
    // The second NameServer missed broker-a's slave and broker-b, and knows
    // broker-a's TopicTest with fewer queues and read-only.
    let stale_a = Broker {
        topics: &[("TopicTest", 2, 4), ("TopicOrder", 8, 6)],
        ..BROKER_A0
    };
    brokers.register(&two.addr, &stale_a);
    let (a, b) = (one.addr.as_str(), two.addr.as_str());
    let list = format!("{a};{b}");
    let run = admin(&["-n", &list, "namesrv", "diff"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("The NameServers disagree: 12 differences."),
        "{}",
        run.stdout
    );
    let header = format!("#Object #Field #{a} #{b} #Cause");
    assert!(run
        .stdout
        .lines()
        .any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == header));
    for row in [
        [
            "broker",
            "broker-a",
            "addr",
            "1",
            "127.0.0.1:10921",
            "-",
            "1",
        ]
        .as_slice(),
        &[
            "broker",
            "broker-b",
            "addr",
            "0",
            "127.0.0.1:10931",
            "-",
            "1",
        ],
        &["broker", "broker-b", "cluster", "DefaultCluster", "-", "1"],
        &["broker", "broker-b", "actingMaster", "false", "-", "1"],
        &[
            "cluster",
            "DefaultCluster",
            "member",
            "broker-b",
            "yes",
            "-",
            "1",
        ],
        &[
            "topic",
            "TopicTest",
            "perm",
            "broker-a",
            "6(RW-)",
            "4(R--)",
            "1",
        ],
        &[
            "topic",
            "TopicTest",
            "queues",
            "broker-a",
            "read=4",
            "write=4",
            "sysFlag=0",
            "read=2",
            "write=2",
            "sysFlag=0",
            "1",
        ],
        &["topic", "TopicTest", "perm", "broker-b", "6(RW-)", "-", "1"],
        &[
            "topic",
            "TopicTest",
            "queues",
            "broker-b",
            "read=4",
            "write=4",
            "sysFlag=0",
            "-",
            "1",
        ],
        &["topic", "SELF_TEST_TOPIC", "listed", "yes", "-", "1"],
        &[
            "topic",
            "SELF_TEST_TOPIC",
            "perm",
            "broker-b",
            "6(RW-)",
            "-",
            "1",
        ],
        &[
            "topic",
            "SELF_TEST_TOPIC",
            "queues",
            "broker-b",
            "read=1",
            "write=1",
            "sysFlag=0",
            "-",
            "1",
        ],
    ] {
        assert!(run.has_row(row), "missing {row:?} in\n{}", run.stdout);
    }
    // Neither is a cluster node: nothing but registrations fills them.
    assert!(
        run.stdout.ends_with(
            "Causes:\n1: no NameServer compared is a Waymark cluster node: each knows only the brokers registered with it\n"
        ),
        "{}",
        run.stdout
    );

    let run = admin(&["-n", &list, "--json", "namesrv", "diff"]);
    assert_eq!(run.code, 1);
    let json = run.json();
    assert_eq!(
        (json["agree"].as_bool(), json["exitCode"].as_i64()),
        (Some(false), Some(1))
    );
    let differences = json["differences"].as_array().expect("differences");
    assert_eq!(differences.len(), 12);
    let perm = differences
        .iter()
        .find(|d| d["object"] == "topic TopicTest" && d["field"] == "perm broker-a")
        .expect("perm difference");
    assert_eq!(perm["values"][a], "6(RW-)");
    assert_eq!(perm["values"][b], "4(R--)");
    assert_eq!(perm["causes"][0]["kind"], "noClusterNodes");
    assert_eq!(json["results"][0]["result"]["cluster"]["state"], "none");
    let missing = differences
        .iter()
        .find(|d| d["object"] == "broker broker-b" && d["field"] == "addr 0")
        .expect("address difference");
    assert_eq!(missing["values"][b], serde_json::Value::Null);
}

#[test]
fn a_wiped_perm_on_one_name_server_is_a_difference() {
    let (one, two) = (NameServer::start(), NameServer::start());
    let mut brokers = Brokers::new();
    for ns in [&one, &two] {
        brokers.register(&ns.addr, &BROKER_A0);
    }
    assert_eq!(
        admin(&["-n", &two.addr, "broker", "wipe-write-perm", "broker-a"]).code,
        0
    );
    let list = format!("{};{}", one.addr, two.addr);
    let run = admin(&["-n", &list, "namesrv", "diff"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.has_row(&[
        "topic",
        "TopicOrder",
        "perm",
        "broker-a",
        "6(RW-)",
        "4(R--)",
        "1"
    ]));
    assert!(run.has_row(&[
        "topic",
        "TopicTest",
        "perm",
        "broker-a",
        "6(RW-)",
        "4(R--)",
        "1"
    ]));
    assert!(run.stdout.contains("2 differences"), "{}", run.stdout);
}

#[test]
fn a_name_server_that_is_down_is_named_and_the_diff_fails() {
    let up = NameServer::start();
    let mut brokers = Brokers::new();
    brokers.register(&up.addr, &BROKER_A0);
    let down = dead_addr();
    let list = format!("{};{down}", up.addr);
    let run = admin(&["-n", &list, "namesrv", "diff"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains(&format!("error: NameServer {down}: cannot connect")),
        "{}",
        run.stderr
    );
    assert!(
        run.has_row(&[&up.addr, "1", "1", "2", "-"]),
        "{}",
        run.stdout
    );
    assert!(run
        .stdout
        .contains("Cannot compare: only 1 of 2 NameServers answered."));

    let run = admin(&[
        "-n",
        &format!("{down};{}", dead_addr()),
        "namesrv",
        "diff",
        "--json",
    ]);
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(run.json()["results"][0]["error"]["kind"], "connect");

    let run = admin(&["-n", &up.addr, "namesrv", "diff"]);
    assert_eq!(run.code, 2, "one NameServer is a usage error: {run:?}");
}
