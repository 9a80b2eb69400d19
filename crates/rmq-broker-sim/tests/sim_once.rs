//! `rmq-broker-sim --once` against the real `rmq-namesrv`: one line per
//! registration, slaves see their master, and `--help` says it stores nothing.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// `target/<profile>/rmq-namesrv`, built if absent.
fn namesrv_binary() -> PathBuf {
    let sim = PathBuf::from(env!("CARGO_BIN_EXE_rmq-broker-sim"));
    let dir = sim.parent().unwrap().to_path_buf();
    let binary = dir.join(format!("rmq-namesrv{}", std::env::consts::EXE_SUFFIX));
    if !binary.exists() {
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "-p", "rmq-namesrv"])
            .env("CARGO_TARGET_DIR", dir.parent().unwrap())
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap();
        assert!(status.success());
    }
    binary
}

#[test]
fn once_registers_every_broker_and_reports_each() {
    let dir = std::env::temp_dir().join(format!("rmq-broker-sim-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut ns = Command::new(namesrv_binary())
        .args(["--listen", "127.0.0.1:0", "--set"])
        .arg(format!("kvConfigPath={}", dir.join("kv.json").display()))
        .arg("--set")
        .arg(format!(
            "configStorePath={}",
            dir.join("ns.properties").display()
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(ns.stdout.take().unwrap()).lines();
    let boot = lines.next().unwrap().unwrap();
    assert!(boot.contains("boot success"), "{boot}");
    let addr = boot.rsplit("address ").next().unwrap().trim().to_owned();

    let output = Command::new(env!("CARGO_BIN_EXE_rmq-broker-sim"))
        .args(["-n", &addr, "--brokers", "2", "--slaves-per-broker", "1"])
        .args(["--topics", "50", "--once"])
        .output()
        .unwrap();
    let _ = ns.kill();
    let _ = ns.wait();
    let _ = std::fs::remove_dir_all(&dir);

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
