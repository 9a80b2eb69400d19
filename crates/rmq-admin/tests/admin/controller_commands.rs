//! Every `controller` sub-command against real `rmq-controller` processes
//! (one node, or a group of three), with broker sets created by speaking
//! the broker side of the protocol: table output, `--json` output and exit
//! codes, refusals with their code names, and leader-only requests given
//! only a follower's address.

use crate::common::controller::BrokerSets;
use crate::common::{admin, dead_addr, Brokers, NameServer, BROKER_A0};
use rmq_testkit::Controller;

/// broker-a with replica 1 master, 2 in the sync-state set and 3 outside
/// it, all alive: master epoch 1, SSS {1, 2} at SSS epoch 2. Returns the
/// replicas' addresses by id (index 0 is id 1).
fn broker_a(sets: &mut BrokerSets) -> [String; 3] {
    let addrs = [dead_addr(), dead_addr(), dead_addr()];
    assert_eq!(sets.join("broker-a", &addrs[0]), 1);
    let elected = sets.elect_as_broker("broker-a", 1);
    assert_eq!(elected.code, 0, "{elected:?}");
    assert_eq!(sets.join("broker-a", &addrs[1]), 2);
    sets.alter_sync_state_set("broker-a", 1, 1, &[1, 2], 1);
    assert_eq!(sets.join("broker-a", &addrs[2]), 3);
    addrs
}

/// One node with broker-a.
fn one_node() -> (Controller, BrokerSets, [String; 3]) {
    let node = Controller::start(&[]);
    let mut sets = BrokerSets::new(&[&node.addr]);
    let addrs = broker_a(&mut sets);
    (node, sets, addrs)
}

#[test]
fn metadata_and_config_of_every_node_of_a_three_node_group() {
    let nodes = Controller::start_group::<3>(&[]);
    let all: Vec<&str> = nodes.iter().map(|n| n.addr.as_str()).collect();
    let leader = BrokerSets::new(&all).leader();
    let leader_id = &nodes.iter().find(|n| n.addr == leader).expect("leader").id;
    let peers = nodes
        .iter()
        .map(|n| format!("{}:{}", n.id, n.addr))
        .collect::<Vec<_>>()
        .join(";");
    let list = all.join(";");

    let run = admin(&["controller", "-a", &list, "metadata"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.rows()[0].join(" "),
        "#Controller #Group #Leader ID #Leader Addr #Is Leader #Peers"
    );
    for node in &nodes {
        let is_leader = if node.addr == leader { "true" } else { "false" };
        let row = [
            node.addr.as_str(),
            "group1",
            leader_id,
            &leader,
            is_leader,
            &peers,
        ];
        assert!(run.has_row(&row), "no {row:?} in\n{}", run.stdout);
    }
    assert_eq!(run.rows().len(), 4, "{}", run.stdout);

    let run = admin(&["controller", "metadata", "-a", &list, "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(json["command"], "controller metadata");
    let results = json["results"].as_array().expect("results");
    assert_eq!(results.len(), 3);
    for (result, node) in results.iter().zip(&nodes) {
        assert_eq!(result["controller"], node.addr.as_str());
        assert_eq!(result["ok"], true);
        let metadata = &result["result"];
        assert_eq!(metadata["group"], "group1");
        assert_eq!(metadata["controllerLeaderAddress"], leader.as_str());
        assert_eq!(metadata["isLeader"], node.addr == leader);
        assert_eq!(metadata["peers"].as_array().map(Vec::len), Some(3));
    }

    let down = dead_addr();
    let run = admin(&[
        "controller",
        "-a",
        &format!("{};{down}", all[0]),
        "metadata",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains(&format!("error: controller {down}: cannot connect")),
        "{}",
        run.stderr
    );

    // Configuration goes to every node given.
    let run = admin(&[
        "controller",
        "-a",
        &list,
        "config",
        "update",
        "-k",
        "electMasterMaxRetryCount",
        "-v",
        "5",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    for addr in &all {
        assert!(run.has_row(&[addr, "OK"]), "{}", run.stdout);
    }
    let run = admin(&[
        "controller",
        "-a",
        &list,
        "config",
        "get",
        "electMasterMaxRetryCount",
        "noSuchKey",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    for addr in &all {
        assert!(run.has_row(&[addr, "electMasterMaxRetryCount", "5"]));
        assert!(run.has_row(&[addr, "noSuchKey", "(unset)"]));
    }
    let run = admin(&["controller", "-a", all[1], "--json", "config", "get"]);
    let config = &run.json()["results"][0]["result"];
    assert_eq!(config["controllerDLegerGroup"], "group1");
    assert_eq!(config["controllerDLegerSelfId"], nodes[1].id.as_str());

    let run = admin(&[
        "controller",
        "-a",
        &list,
        "config",
        "update",
        "-k",
        "configStorePath",
        "-v",
        "/tmp/elsewhere",
    ]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    for addr in &all {
        let line = format!(
            "error: controller {addr}: NO_PERMISSION (16): Can not update config in black list."
        );
        assert!(run.stderr.contains(&line), "{}", run.stderr);
    }
    let run = admin(&[
        "controller",
        "-a",
        all[0],
        "--json",
        "config",
        "update",
        "-k",
        "configBlackList",
        "-v",
        "",
    ]);
    let error = &run.json()["results"][0]["error"];
    assert_eq!(
        (error["code"].as_i64(), error["codeName"].as_str()),
        (Some(16), Some("NO_PERMISSION"))
    );
}

#[test]
fn a_follower_alone_reaches_the_leader() {
    let nodes = Controller::start_group::<3>(&[]);
    let all: Vec<&str> = nodes.iter().map(|n| n.addr.as_str()).collect();
    let mut sets = BrokerSets::new(&all);
    let addrs = broker_a(&mut sets);
    let leader = sets.leader();
    let follower = all.iter().find(|a| **a != leader).expect("a follower");

    let run = admin(&[
        "controller",
        "-a",
        follower,
        "sync-state-set",
        "-b",
        "broker-a",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let a1 = addrs[0].as_str();
    assert!(
        run.has_row(&[&leader, "broker-a", "1", a1, "1", "2", "1", a1, "true", "true"]),
        "{}",
        run.stdout
    );
    assert_eq!(run.rows().len(), 4, "{}", run.stdout);

    let run = admin(&[
        "controller",
        "-a",
        follower,
        "elect-master",
        "-b",
        "broker-a",
        "-i",
        "2",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let a2 = addrs[1].as_str();
    let row = [
        &leader,
        "DefaultCluster",
        "broker-a",
        "SUCCESS",
        "2",
        a2,
        "2",
        "3",
        "2",
    ];
    assert!(run.has_row(&row), "{}", run.stdout);

    let run = admin(&[
        "controller",
        "-a",
        follower,
        "--json",
        "sync-state-set",
        "-b",
        "broker-a",
    ]);
    let result = &run.json()["results"][0];
    assert_eq!(result["controller"], leader.as_str());
    assert_eq!(
        result["result"]["replicasInfoTable"]["broker-a"]["masterBrokerId"],
        2
    );
}

#[test]
fn sync_state_set_shows_alive_and_dead_replicas() {
    let (node, mut sets, addrs) = one_node();
    sets.kill("broker-a", 3);
    let c = node.addr.as_str();
    let [a1, a2, a3] = [&addrs[0], &addrs[1], &addrs[2]].map(String::as_str);

    let run = admin(&[
        "controller",
        "-a",
        c,
        "sync-state-set",
        "-b",
        "broker-a,ghost",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.rows()[0].join(" "),
        "#Controller #Broker Name #Master BID #Master Addr #Master Epoch #SSS Epoch #BID #Addr #In Sync #Alive"
    );
    let master = ["broker-a", "1", a1, "1", "2"];
    for replica in [
        ["1", a1, "true", "true"],
        ["2", a2, "true", "true"],
        ["3", a3, "false", "false"],
    ] {
        let row: Vec<&str> = std::iter::once(c).chain(master).chain(replica).collect();
        assert!(run.has_row(&row), "no {row:?} in\n{}", run.stdout);
    }
    assert!(run.has_row(&[c, "ghost", "(unknown)"]), "{}", run.stdout);

    let run = admin(&[
        "controller",
        "-a",
        c,
        "--json",
        "sync-state-set",
        "-b",
        "broker-a",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(json["command"], "controller sync-state-set");
    let set = &json["results"][0]["result"]["replicasInfoTable"]["broker-a"];
    assert_eq!(set["masterBrokerId"], 1);
    assert_eq!(set["masterAddress"], a1);
    assert_eq!(set["masterEpoch"], 1);
    assert_eq!(set["syncStateSetEpoch"], 2);
    assert_eq!(set["inSyncReplicas"].as_array().map(Vec::len), Some(2));
    assert_eq!(set["notInSyncReplicas"][0]["brokerId"], 3);
    assert_eq!(set["notInSyncReplicas"][0]["alive"], false);

    // A cluster's broker names come from the NameServers.
    let ns = NameServer::start();
    let mut brokers = Brokers::new();
    brokers.register(&ns.addr, &BROKER_A0);
    let run = admin(&[
        "controller",
        "-a",
        c,
        "-n",
        &ns.addr,
        "sync-state-set",
        "-c",
        "DefaultCluster",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.has_row(&[c, "broker-a", "1", a1, "1", "2", "3", a3, "false", "false"]));
    let run = admin(&[
        "controller",
        "-a",
        c,
        "-n",
        &ns.addr,
        "--json",
        "sync-state-set",
        "-c",
        "DefaultCluster",
    ]);
    let json = run.json();
    assert_eq!(
        json["nameServers"][0]["result"],
        serde_json::json!(["broker-a"])
    );
    assert_eq!(
        json["results"][0]["result"]["replicasInfoTable"]["broker-a"]["masterBrokerId"],
        1
    );
    let run = admin(&[
        "controller",
        "-a",
        c,
        "-n",
        &ns.addr,
        "sync-state-set",
        "-c",
        "NoCluster",
    ]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "error: NameServer {}: not found: cluster NoCluster is not in its cluster table",
            ns.addr
        )),
        "{}",
        run.stderr
    );
    let run = admin(&[
        "controller",
        "-a",
        c,
        "sync-state-set",
        "-c",
        "DefaultCluster",
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("NAMESRV_ADDR"), "{}", run.stderr);
}

#[test]
fn elect_master_success_master_still_exist_and_refusals() {
    let (node, _sets, addrs) = one_node();
    let c = node.addr.as_str();
    let a2 = addrs[1].as_str();
    let elect = |id: &str, json: bool| {
        let mut args = vec![
            "controller",
            "-a",
            c,
            "elect-master",
            "-b",
            "broker-a",
            "-i",
            id,
        ];
        if json {
            args.push("--json");
        }
        admin(&args)
    };

    // Another alive member of the SSS: a new master, epoch + 1, SSS {it}.
    let run = elect("2", true);
    assert_eq!(run.code, 0, "{run:?}");
    let result = &run.json()["results"][0]["result"];
    assert_eq!(result["code"], 0);
    assert_eq!(result["codeName"], "SUCCESS");
    assert_eq!(result["masterBrokerId"], 2);
    assert_eq!(result["masterAddress"], a2);
    assert_eq!(result["masterEpoch"], 2);
    assert_eq!(result["syncStateSetEpoch"], 3);
    assert_eq!(result["syncStateSet"], serde_json::json!([2]));
    let members = &result["brokerMemberGroup"]["brokerAddrs"];
    assert_eq!(members.as_object().map(|m| m.len()), Some(3), "{members}");
    assert_eq!(members["3"], addrs[2].as_str());

    // The current master: MASTER_STILL_EXIST, shown, not a failure.
    let run = elect("2", false);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.rows()[0].join(" "),
        "#Controller #Cluster Name #Broker Name #Result #Master BID #Master Addr #Master Epoch #SSS Epoch #SyncStateSet"
    );
    let row = [
        c,
        "DefaultCluster",
        "broker-a",
        "CONTROLLER_MASTER_STILL_EXIST",
        "2",
        a2,
        "2",
        "3",
        "2",
    ];
    assert!(run.has_row(&row), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("CONTROLLER_MASTER_STILL_EXIST (2011): The old master 2 is still alive"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let run = elect("2", true);
    assert_eq!(run.code, 0);
    assert_eq!(run.json()["results"][0]["result"]["code"], 2011);

    // Outside the SSS: refused, nothing changes.
    let run = elect("3", false);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.contains(&format!(
            "error: controller {c}: CONTROLLER_ELECT_MASTER_FAILED (2012): Failed to elect a new master"
        )),
        "{}",
        run.stderr
    );
    let run = elect("7", true);
    assert_eq!(run.code, 3);
    let error = &run.json()["results"][0]["error"];
    assert_eq!(
        (error["code"].as_i64(), error["codeName"].as_str()),
        (Some(2012), Some("CONTROLLER_ELECT_MASTER_FAILED"))
    );
    let run = admin(&[
        "controller",
        "-a",
        c,
        "elect-master",
        "-b",
        "ghost",
        "-i",
        "1",
    ]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr
            .contains("CONTROLLER_BROKER_NEED_TO_BE_REGISTERED (2010)"),
        "{}",
        run.stderr
    );

    let run = admin(&["controller", "-a", c, "sync-state-set", "-b", "broker-a"]);
    assert!(run.has_row(&[c, "broker-a", "2", a2, "2", "3", "2", a2, "true", "true"]));
}

#[test]
fn clean_broker_metadata_of_dead_and_alive_replicas() {
    let (node, mut sets, addrs) = one_node();
    sets.kill("broker-a", 3);
    let c = node.addr.as_str();
    let clean = |args: &[&str]| {
        let mut all = vec![
            "controller",
            "-a",
            c,
            "clean-broker-metadata",
            "-b",
            "broker-a",
        ];
        all.extend_from_slice(args);
        admin(&all)
    };

    let run = clean(&["-i", "2"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "error: controller {c}: CONTROLLER_INVALID_CLEAN_BROKER_METADATA (2009): Broker [broker-a, 2] is still alive, clean up failure"
        )),
        "{}",
        run.stderr
    );
    let run = clean(&[]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr
            .contains("(2009): Broker broker-a is still alive, clean up failure"),
        "{}",
        run.stderr
    );

    let run = clean(&["-i", "3"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.rows()[0].join(" "),
        "#Controller #Cluster Name #Broker Name #Broker IDs #Result"
    );
    assert!(
        run.has_row(&[c, "DefaultCluster", "broker-a", "3", "OK"]),
        "{}",
        run.stdout
    );
    assert_eq!(sets.alive("broker-a", 3), None);
    let run = admin(&["controller", "-a", c, "sync-state-set", "-b", "broker-a"]);
    assert_eq!(run.rows().len(), 3, "{}", run.stdout);
    assert!(!run.stdout.contains(&addrs[2]), "{}", run.stdout);

    assert_eq!(clean(&["-i", "2", "-l"]).code, 2);
    assert_eq!(clean(&["-i", "x"]).code, 2);

    // The whole set, living replicas included.
    let run = clean(&["-l", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let result = &run.json()["results"][0]["result"];
    assert_eq!(result["brokerIds"], serde_json::Value::Null);
    assert_eq!(result["cleanLivingBroker"], true);
    let run = admin(&["controller", "-a", c, "sync-state-set", "-b", "broker-a"]);
    assert!(run.has_row(&[c, "broker-a", "(unknown)"]), "{}", run.stdout);
}

#[test]
fn controller_usage_unreachable_controllers_and_help() {
    let run = admin(&["controller", "metadata"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("no controller given"), "{}", run.stderr);
    assert_eq!(admin(&["controller", "-a", "no-port", "metadata"]).code, 2);
    assert_eq!(
        admin(&["controller", "-a", "127.0.0.1:9878", "sync-state-set"]).code,
        2
    );

    let (x, y) = (dead_addr(), dead_addr());
    let run = admin(&[
        "controller",
        "-a",
        &format!("{x};{y}"),
        "sync-state-set",
        "-b",
        "broker-a",
    ]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    for addr in [&x, &y] {
        let line = format!("error: controller {addr}: cannot connect");
        assert!(run.stderr.contains(&line), "{}", run.stderr);
    }

    let run = admin(&["--help"]);
    assert!(run.stdout.contains("controller"), "{}", run.stdout);
    assert!(run.stdout.contains("-a"), "{}", run.stdout);
    for command in [
        vec!["controller", "metadata"],
        vec!["controller", "sync-state-set"],
        vec!["controller", "elect-master"],
        vec!["controller", "clean-broker-metadata"],
        vec!["controller", "config", "get"],
        vec!["controller", "config", "update"],
    ] {
        let mut args = command.clone();
        args.push("--help");
        let run = admin(&args);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(
            run.stdout.contains("Example"),
            "no example for {command:?}:\n{}",
            run.stdout
        );
    }
}
