//! `rmq-broker-sim` stopped by SIGTERM, as `kill`, systemd and container
//! runtimes stop it: the brokers unregister (UNREGISTER_BROKER, as a Java
//! broker's shutdown hook does) before it exits.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use rmq_testkit::Namesrv;

#[tokio::test]
async fn sigterm_unregisters_every_broker_before_exiting() {
    let ns = Namesrv::start(&[]);
    let mut sim = Command::new(env!("CARGO_BIN_EXE_rmq-broker-sim"))
        .args(["-n", &ns.addr, "--brokers", "2", "--topics", "5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (lines_tx, lines) = mpsc::channel();
    let stdout = sim.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut registered = 0;
    while registered < 2 {
        let line = lines
            .recv_timeout(Duration::from_secs(20))
            .expect("both brokers register");
        registered += usize::from(line.starts_with("register ") && line.contains(" ok=1/1 "));
    }
    let clusters = rmq_testkit::admin::cluster_info(&ns.addr).await.unwrap();
    assert_eq!(clusters.broker_addr_table.len(), 2);

    let kill = Command::new("kill")
        .args(["-TERM", &sim.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let mut unregistered = Vec::new();
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(20)) {
        if line.starts_with("unregister ") {
            unregistered.push(line);
        }
    }
    let status = sim.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert_eq!(unregistered.len(), 2, "{unregistered:?}");
    assert!(
        unregistered.iter().all(|line| line.ends_with("ok=1/1")),
        "{unregistered:?}"
    );
    let clusters = rmq_testkit::admin::cluster_info(&ns.addr).await.unwrap();
    assert!(clusters.broker_addr_table.is_empty(), "{clusters:?}");
}
