//! `rmq-broker-sim` processes registering with the NameServer under test
//! (`rmq-testkit`: Waymark or Java) while a started `rmq-route-client`
//! follows their topic: the client's views hold every simulated broker,
//! and one fleet's exit (UNREGISTER_BROKER) is seen through the watch.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::{brokers, client_config, names, next_change};
use rmq_route_client::RouteClient;
use rmq_testkit::Namesrv;

/// A running simulator; killed on drop.
struct Sim {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Sim {
    /// `rmq-broker-sim -n <namesrv>` with `args`, fast periodic registration.
    fn start(namesrv: &str, args: &[&str]) -> Sim {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rmq-broker-sim"))
            .args(["-n", namesrv, "--no-clamp", "--period", "300ms"])
            .args(["--topics", "2", "--queues", "2", "--no-system-topics"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start rmq-broker-sim");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Sim { child, lines }
    }

    /// Waits for the line containing `text`.
    fn line_with(&self, text: &str) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("no line with {text:?}"));
            if line.contains(text) {
                return line;
            }
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulated_brokers_routes_and_their_exit_reach_the_client() {
    let ns = Namesrv::start(&[]);
    // Two groups that stay, one that leaves when told to.
    let staying = Sim::start(
        &ns.addr,
        &[
            "--brokers",
            "2",
            "--broker-name",
            "stay",
            "--duration",
            "60s",
        ],
    );
    let leaving = Sim::start(
        &ns.addr,
        &[
            "--brokers",
            "1",
            "--broker-name",
            "leave",
            "--base-port",
            "30911",
        ],
    );
    for sim in [&staying, &leaving] {
        let line = sim.line_with("register trigger=startup");
        assert!(line.contains(" ok=1/1 "), "{line}");
    }
    let line = staying.line_with("broker=stay-1");
    assert!(line.contains(" ok=1/1 "), "{line}");

    let client = RouteClient::start(client_config(&[&ns.addr]));
    let view = client
        .publish_view("SimTopic0")
        .await
        .expect("publish view");
    assert_eq!(brokers(&view), ["leave-0", "stay-0", "stay-1"]);
    assert_eq!(
        names(&view.publish.queues),
        [
            "leave-0:0",
            "leave-0:1",
            "stay-0:0",
            "stay-0:1",
            "stay-1:0",
            "stay-1:1"
        ]
    );
    assert_eq!(
        client.broker_addr_in_publish("leave-0").as_deref(),
        Some("127.0.0.1:30911")
    );

    let mut watch = client.watch("SimTopic0").await;
    watch.borrow_and_update();
    // The leaving simulator is stopped as an operator would: Ctrl-C makes it
    // unregister and exit.
    let pid = leaving.child.id().to_string();
    let status = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(status.success());
    let line = leaving.line_with("unregister broker=leave-0");
    assert!(line.contains(" ok=1/1"), "{line}");
    let left = next_change(&mut watch).await;
    assert_eq!(brokers(&left), ["stay-0", "stay-1"]);
    assert_eq!(
        names(&left.publish.queues),
        ["stay-0:0", "stay-0:1", "stay-1:0", "stay-1:1"]
    );
    drop(staying);
}
