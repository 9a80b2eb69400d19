//! Failures are reported per NameServer, with documented exit codes and
//! never a panic: a NameServer that is down, one that never answers, bad
//! usage; and `NAMESRV_ADDR` and `--help`.

use std::time::{Duration, Instant};

use crate::common::{admin, admin_env, dead_addr, silent_addr, Brokers, NameServer, BROKER_A0};

#[test]
fn one_name_server_down_others_still_answer() {
    let up = NameServer::start();
    let mut brokers = Brokers::new();
    brokers.register(&up.addr, &BROKER_A0);
    let down = dead_addr();
    let list = format!("{down};{}", up.addr);
    let run = admin(&["-n", &list, "cluster", "list"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.has_row(&[
        &up.addr,
        "DefaultCluster",
        "broker-a",
        "0",
        "127.0.0.1:10911"
    ]));
    assert!(!run.stdout.contains(&down), "{}", run.stdout);
    let line = format!("error: NameServer {down}: cannot connect: ");
    assert!(run.stderr.contains(&line), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);

    let run = admin(&["-n", &list, "--json", "topic", "list"]);
    assert_eq!(run.code, 1);
    let json = run.json();
    assert_eq!(json["exitCode"], 1);
    assert_eq!(json["results"][0]["nameServer"], down.as_str());
    assert_eq!(json["results"][0]["ok"], false);
    assert_eq!(json["results"][0]["error"]["kind"], "connect");
    assert_eq!(json["results"][1]["ok"], true);
}

#[test]
fn every_name_server_down_is_exit_3() {
    let (x, y) = (dead_addr(), dead_addr());
    let run = admin(&["-n", &format!("{x};{y}"), "kv", "put", "ns", "k", "v"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(run
        .stderr
        .contains(&format!("error: NameServer {x}: cannot connect")));
    assert!(run
        .stderr
        .contains(&format!("error: NameServer {y}: cannot connect")));
}

#[test]
fn silent_name_servers_time_out_concurrently() {
    let (x, y) = (silent_addr(), silent_addr());
    let started = Instant::now();
    let run = admin(&[
        "-n",
        &format!("{x};{y}"),
        "--timeout-ms",
        "800",
        "cluster",
        "list",
    ]);
    let elapsed = started.elapsed();
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr
            .contains(&format!("error: NameServer {x}: no response within 800 ms")),
        "{}",
        run.stderr
    );
    assert!(run
        .stderr
        .contains(&format!("error: NameServer {y}: no response within 800 ms")));
    assert!(
        elapsed < Duration::from_millis(1500),
        "not concurrent: {elapsed:?}"
    );

    let up = NameServer::start();
    let run = admin(&[
        "-n",
        &format!("{x};{}", up.addr),
        "--timeout-ms",
        "300",
        "--json",
        "config",
        "get",
        "bindAddress",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let json = run.json();
    assert_eq!(json["results"][0]["error"]["kind"], "timeout");
    assert_eq!(json["results"][1]["result"]["bindAddress"], "127.0.0.1");
}

#[test]
fn namesrv_addr_is_honoured_and_dash_n_wins() {
    let up = NameServer::start();
    let run = admin_env(&["topic", "list"], &[("NAMESRV_ADDR", &up.addr)]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.has_row(&[&up.addr, "(none)"]), "{}", run.stdout);
    let down = dead_addr();
    let run = admin_env(
        &["-n", &up.addr, "topic", "list"],
        &[("NAMESRV_ADDR", &down)],
    );
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn usage_errors_are_exit_2() {
    let run = admin(&["cluster", "list"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("NAMESRV_ADDR"), "{}", run.stderr);
    assert_eq!(admin(&["-n", "no-port", "cluster", "list"]).code, 2);
    assert_eq!(
        admin(&["-n", "127.0.0.1:9876", "cluster", "frobnicate"]).code,
        2
    );
    assert_eq!(
        admin(&[
            "-n",
            "127.0.0.1:9876",
            "--timeout-ms",
            "x",
            "cluster",
            "list"
        ])
        .code,
        2
    );
    assert_eq!(admin(&["-n", "127.0.0.1:9876", "config", "set"]).code, 2);
}

#[test]
fn help_documents_exit_codes_and_examples() {
    let run = admin(&["--help"]);
    assert_eq!(run.code, 0);
    for text in [
        "Exit codes:",
        "0  every NameServer answered",
        "3  no NameServer answered",
        "NAMESRV_ADDR",
        "namesrv",
        "--timeout-ms",
    ] {
        assert!(
            run.stdout.contains(text),
            "{text:?} missing from\n{}",
            run.stdout
        );
    }
    for command in [
        ["cluster", "list"],
        ["topic", "route"],
        ["kv", "put"],
        ["broker", "wipe-write-perm"],
        ["config", "set"],
        ["namesrv", "diff"],
    ] {
        let run = admin(&[command[0], command[1], "--help"]);
        assert_eq!(run.code, 0);
        assert!(
            run.stdout.contains("Example"),
            "no example for {command:?}:\n{}",
            run.stdout
        );
    }
}
