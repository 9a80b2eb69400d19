//! `rmq-admin route watch` against a real NameServer, Waymark's or, when
//! the environment selects it (`WAYMARK_JAVA_NAMESRV_CLASSPATH`), Java's:
//! the routes at start, then a permission wipe as it happens — pushed by
//! Waymark, polled from Java (the note on standard error says which) — and
//! the exit after `--count` changes.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::{Broker, Brokers};
use rmq_testkit::{Kind, Namesrv};

const WATCHED: Broker<'static> = Broker {
    cluster: "DefaultCluster",
    name: "broker-a",
    id: 0,
    addr: "127.0.0.1:10911",
    topics: &[("Watched", 4, 6), ("broker-a", 1, 7)],
};

#[test]
fn watch_prints_the_routes_then_each_change() {
    let ns = Namesrv::start(&[]);
    let java = ns.kind() == Kind::Java;
    let mut brokers = Brokers::new();
    brokers.register(&ns.addr, &WATCHED);

    let mut watch = Command::new(env!("CARGO_BIN_EXE_rmq-admin"))
        .args(["-n", &ns.addr, "route", "watch", "Watched", "Missing"])
        .args(["--count", "1", "--poll-ms", "100"])
        .env_remove("NAMESRV_ADDR")
        .env_remove("ROCKETMQ_HOME")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rmq-admin");
    let (lines, received) = mpsc::channel();
    let stdout = watch.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let next = || {
        received
            .recv_timeout(Duration::from_secs(10))
            .expect("a line within 10 s")
    };
    let mut start = [next(), next()];
    start.sort_by_key(|line| !line.contains("Watched"));
    let cells = |line: &str| line.split("  ").map(str::to_owned).collect::<Vec<_>>();
    let watched = cells(&start[0]);
    assert_eq!(watched[1..3], ["Watched", "now"], "{start:?}");
    assert_eq!(
        watched[3],
        "broker-a 0=127.0.0.1:10911 read 4 write 4 perm 6(RW-)"
    );
    assert_eq!(
        cells(&start[1])[1..],
        ["Missing", "now", "no route (TOPIC_NOT_EXIST)"]
    );

    let wiped = rmq_testkit::admin::wipe_write_perm(&ns.addr, "broker-a");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    assert_eq!(runtime.block_on(wiped).unwrap(), 2);
    let change = cells(&next());
    let how = if java { "poll" } else { "push" };
    assert_eq!(
        change[1..],
        [
            "Watched",
            how,
            "broker-a 0=127.0.0.1:10911 read 4 write 4 perm 4(R--)"
        ]
    );
    assert!(
        change[0].ends_with('Z') && change[0].contains('T'),
        "an RFC 3339 UTC time: {change:?}"
    );

    let status = watch.wait().expect("rmq-admin exits after --count changes");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut watch.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{status:?} {stderr}");
    let note = if java {
        "has no route push"
    } else {
        "by route push"
    };
    assert!(stderr.contains(note), "{stderr}");
}
