//! `rmq-broker-sim --once` against the NameServer under test (`rmq-testkit`):
//! one line per registration, slaves see their master, and `--help` says it
//! stores nothing.

use std::process::Command;

use rmq_testkit::Namesrv;

#[test]
fn once_registers_every_broker_and_reports_each() {
    let ns = Namesrv::start(&[]);
    let addr = ns.addr.clone();

    let output = Command::new(env!("CARGO_BIN_EXE_rmq-broker-sim"))
        .args(["-n", &addr, "--brokers", "2", "--slaves-per-broker", "1"])
        .args(["--topics", "50", "--once"])
        .output()
        .unwrap();
    drop(ns);

    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}");
    let registers: Vec<_> = stdout
        .lines()
        .filter(|l| l.starts_with("register "))
        .collect();
    assert_eq!(registers.len(), 4, "{stdout}");
    assert!(registers
        .iter()
        .all(|l| l.contains(" ok=1/1 ") && l.contains(" topics=55 ")));
    let slaves: Vec<_> = registers.iter().filter(|l| l.contains(" id=1 ")).collect();
    assert_eq!(slaves.len(), 2);
    assert!(
        slaves.iter().all(|l| l.contains("master=127.0.0.1:")),
        "{stdout}"
    );
    assert!(
        stdout.contains("summary brokers=4 ok=4 failed=0"),
        "{stdout}"
    );
}

#[test]
fn help_says_no_messages_are_stored() {
    let output = Command::new(env!("CARGO_BIN_EXE_rmq-broker-sim"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(output.stdout).unwrap();
    assert!(help.contains("stores no messages"), "{help}");
}
