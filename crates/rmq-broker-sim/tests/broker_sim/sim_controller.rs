//! `rmq-broker-sim --controller … --replicas 3` against the real
//! `rmq-controller` and `rmq-namesrv` (`rmq-testkit`): the replicas get
//! ids 1, 2, 3, the NameServer route shows the master as id 0 and the
//! slaves under their controller ids; stopping the master's replica (a
//! stdin command, or `--stop-master-after`) makes another master and the
//! route follows; the old master comes back as a slave.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rmq_testkit::{Controller, Namesrv};

/// How long a step may take.
const WAIT: Duration = Duration::from_secs(20);
/// The replicas' controllerHeartBeatTimeoutMills.
const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(2);

/// A running simulator; killed on drop.
struct Sim {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Sim {
    fn start(controller: &str, namesrv: &str, store: &std::path::Path, extra: &[&str]) -> Sim {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rmq-broker-sim"))
            .args(["-n", namesrv, "--controller", controller, "--replicas", "3"])
            .args(["--base-port", "0", "--topics", "2", "--no-system-topics"])
            .args(["--no-clamp", "--period", "300ms", "--store-dir"])
            .arg(store)
            .args([
                "--set=brokerHeartbeatInterval=200",
                "--set=controllerHeartBeatTimeoutMills=2000",
                "--set=syncBrokerMetadataPeriod=300",
                "--set=checkSyncStateSetPeriod=200",
                "--set=syncControllerMetadataPeriod=1000",
            ])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start rmq-broker-sim");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Sim {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for the next line for which `check` holds.
    fn line_where(&mut self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "no line {what} within {WAIT:?}; output:\n{}",
                    self.seen.join("\n")
                )
            });
            self.seen.push(line.clone());
            if check(&line) {
                return line;
            }
        }
    }

    fn command(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{text}").unwrap();
        stdin.flush().unwrap();
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value of `key=` in an output line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let start = line
        .find(&format!(" {key}="))
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
        + key.len()
        + 2;
    line[start..].split(' ').next().unwrap()
}

fn is_role(line: &str, to: &str, epoch: &str) -> bool {
    line.starts_with("role ") && field(line, "to") == to && field(line, "epoch") == epoch
}

/// Waits until the route of `SimTopic0` at `ns` is `expected`.
async fn route_becomes(ns: &str, expected: &BTreeMap<i64, String>) {
    let deadline = Instant::now() + WAIT;
    let mut last = BTreeMap::new();
    while Instant::now() < deadline {
        if let Ok(Some(route)) = rmq_testkit::admin::route(ns, "SimTopic0").await {
            last = route
                .broker_datas
                .into_iter()
                .map(|b| b.broker_addrs)
                .next()
                .unwrap_or_default();
            if &last == expected {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("route {last:?}, expected {expected:?}");
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "rmq-broker-sim-test-{name}-{}-{}",
        std::process::id(),
        nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_fail_over_and_the_route_follows() {
    let controller = Controller::start(&[]);
    let ns = Namesrv::start(&[]);
    let store = scratch("failover");
    let mut sim = Sim::start(&controller.addr, &ns.addr, &store, &[]);

    // Ids in start order, one master, the set grows to all three.
    let mut addrs = BTreeMap::new();
    for r in 0..3 {
        let label = format!("broker-0/{r}");
        let line = sim.line_where("with an id", |l| {
            l.starts_with("id ") && field(l, "replica") == label
        });
        assert_eq!(field(&line, "id"), (r + 1).to_string(), "{line}");
        addrs.insert(r + 1, field(&line, "addr").to_owned());
    }
    sim.line_where("with the full set", |l| {
        l.starts_with("sss ") && field(l, "set") == "1,2,3"
    });
    for r in 0..3 {
        let file = store
            .join("broker-0")
            .join(r.to_string())
            .join("brokerIdentity");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            format!("DefaultCluster#broker-0#{}", r + 1)
        );
    }
    let route = BTreeMap::from([
        (0, addrs[&1].clone()),
        (2, addrs[&2].clone()),
        (3, addrs[&3].clone()),
    ]);
    route_becomes(&ns.addr, &route).await;

    // The master's replica stops; another takes over.
    let stopped_at = Instant::now();
    sim.command("stop master");
    let stopped = sim.line_where("stopped", |l| l.starts_with("stopped "));
    assert_eq!(field(&stopped, "replica"), "broker-0/0");
    let promoted = sim.line_where("a new master", |l| is_role(l, "master", "2"));
    assert!(
        stopped_at.elapsed() < HEARTBEAT_TIMEOUT + Duration::from_secs(5),
        "{:?}",
        stopped_at.elapsed()
    );
    let new_id: i64 = field(&promoted, "id").parse().unwrap();
    let other_id = 5 - new_id;
    route_becomes(
        &ns.addr,
        &BTreeMap::from([
            (0, addrs[&new_id].clone()),
            (other_id, addrs[&other_id].clone()),
        ]),
    )
    .await;

    // The old master comes back with its identity file, as a slave.
    sim.command("start broker-0/0");
    let back = sim.line_where("the old master as a slave", |l| {
        is_role(l, "slave", "2") && field(l, "replica") == "broker-0/0"
    });
    assert_eq!(field(&back, "id"), "1");
    assert_eq!(
        field(&back, "master"),
        format!("{new_id}@{}", addrs[&new_id])
    );
    route_becomes(
        &ns.addr,
        &BTreeMap::from([
            (0, addrs[&new_id].clone()),
            (1, addrs[&1].clone()),
            (other_id, addrs[&other_id].clone()),
        ]),
    )
    .await;
    drop(sim);
    let _ = std::fs::remove_dir_all(&store);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_master_after_runs_a_failover_unattended() {
    let controller = Controller::start(&[]);
    let ns = Namesrv::start(&[]);
    let store = scratch("unattended");
    let mut sim = Sim::start(
        &controller.addr,
        &ns.addr,
        &store,
        &["--stop-master-after", "2s", "--duration", "5s"],
    );
    sim.stdin = None; // end of input changes nothing
    let first = sim.line_where("a first master", |l| is_role(l, "master", "1"));
    let stopped = sim.line_where("stopped", |l| l.starts_with("stopped "));
    assert_eq!(field(&stopped, "replica"), field(&first, "replica"));
    assert_eq!(field(&stopped, "role"), "master");
    let second = sim.line_where("a second master", |l| is_role(l, "master", "2"));
    assert_ne!(field(&second, "replica"), field(&first, "replica"));
    // The two running replicas unregister at the end; the stopped one cannot.
    sim.line_where("an unregistration", |l| l.starts_with("unregister "));
    sim.line_where("another unregistration", |l| l.starts_with("unregister "));
    let status = sim.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let _ = std::fs::remove_dir_all(&store);
}
