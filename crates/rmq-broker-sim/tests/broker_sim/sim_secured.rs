//! `rmq-broker-sim --once` against a Waymark NameServer with authentication
//! on and TLS enforced: brokers sign with `--access-key`/`--secret-key` (the
//! secret from the environment) and speak TLS with `--tls --tls-trust`;
//! without credentials each registration is refused with NO_PERMISSION.
//! Waymark's NameServer only: Java's authenticates nothing.

use std::process::{Command, Output};

use rmq_testkit::pki::Pki;
use rmq_testkit::Namesrv;

const KEY: &str = "sim-broker-key";
const SECRET: &str = "sim-broker-secret";

/// Runs the simulator with `args` and `env`, and nothing else it reads from
/// the environment.
fn sim(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rmq-broker-sim"));
    command.args(args);
    for read in ["NAMESRV_ADDR", "ROCKETMQ_ACCESS_KEY", "ROCKETMQ_SECRET_KEY"] {
        command.env_remove(read);
    }
    command.envs(env.iter().copied()).output().unwrap()
}

#[test]
fn signed_brokers_register_over_tls_and_unsigned_ones_are_refused() {
    let pki = Pki::new("sim-secured");
    let cert = pki.issue("server", "waymark-ns", &[]);
    let accounts = pki.dir.join("accounts.yml");
    std::fs::write(
        &accounts,
        format!("accounts:\n  - accessKey: {KEY}\n    secretKey: {SECRET}\n"),
    )
    .unwrap();
    let ns = Namesrv::waymark(&[
        "authenticationEnabled=true",
        &format!("authenticationAccountsFile={}", accounts.display()),
        "tls.server.mode=enforcing",
        &format!("tls.server.certPath={}", cert.cert.display()),
        &format!("tls.server.keyPath={}", cert.key.display()),
    ]);
    let ca = pki.ca_path();
    let ca = ca.to_str().unwrap();
    let once = [
        "-n",
        ns.addr.as_str(),
        "--brokers",
        "2",
        "--topics",
        "5",
        "--once",
    ];

    let mut args = once.to_vec();
    args.extend_from_slice(&["--access-key", KEY, "--tls", "--tls-trust", ca]);
    let signed = sim(&args, &[("ROCKETMQ_SECRET_KEY", SECRET)]);
    let stdout = String::from_utf8_lossy(&signed.stdout);
    assert!(signed.status.success(), "{stdout}");
    assert!(
        stdout.contains("summary brokers=2 ok=2 failed=0"),
        "{stdout}"
    );

    let mut args = once.to_vec();
    args.extend_from_slice(&["--tls", "--tls-trust", ca]);
    let unsigned = sim(&args, &[]);
    let stdout = String::from_utf8_lossy(&unsigned.stdout);
    assert!(!unsigned.status.success(), "{stdout}");
    let refused = stdout
        .lines()
        .filter(|l| l.starts_with("register ") && l.contains("NO_PERMISSION (16)"))
        .count();
    assert_eq!(refused, 2, "{stdout}");

    // Half the key pair, or TLS without a way to check the server: usage errors.
    let mut args = once.to_vec();
    args.extend_from_slice(&["--access-key", KEY]);
    assert_eq!(sim(&args, &[]).status.code(), Some(2));
    let mut args = once.to_vec();
    args.push("--tls");
    let no_check = sim(&args, &[]);
    assert_eq!(no_check.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&no_check.stderr);
    assert!(
        stderr.contains("--tls-trust") && stderr.contains("--tls-insecure"),
        "{stderr}"
    );
}
