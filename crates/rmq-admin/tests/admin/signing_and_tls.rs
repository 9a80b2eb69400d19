//! `rmq-admin` against a Waymark NameServer with authentication on
//! (`authenticationEnabled=true` and an accounts file) and, further down,
//! TLS enforced: unsigned writes are refused with NO_PERMISSION and exit
//! code 3, writes signed with `--access-key`/`--secret-key`, the
//! environment, `--tools-yml` or `$ROCKETMQ_HOME/conf/tools.yml` are
//! served; `--tls` with a trust file (or `--tls-insecure`, or a client
//! certificate for mutual TLS) reaches an enforcing NameServer, plain does
//! not. Waymark's NameServer only: Java's authenticates nothing.

use std::path::Path;

use crate::common::{admin, admin_env, NameServer, Run};
use rmq_testkit::pki::{Issued, Pki};

const ADMIN_KEY: &str = "ops-admin-key";
const ADMIN_SECRET: &str = "ops-admin-secret";
const BROKER_KEY: &str = "broker-key-1";
const BROKER_SECRET: &str = "broker-secret-1";

/// Writes the accounts file (one admin, one broker account) into `dir`
/// and returns the options that switch authentication on with it.
fn auth_options(dir: &Path) -> Vec<String> {
    let file = dir.join("accounts.yml");
    std::fs::write(
        &file,
        format!(
            "accounts:\n  - accessKey: {ADMIN_KEY}\n    secretKey: {ADMIN_SECRET}\n    admin: true\n  - accessKey: {BROKER_KEY}\n    secretKey: {BROKER_SECRET}\n    admin: false\n"
        ),
    )
    .unwrap();
    vec![
        "authenticationEnabled=true".to_owned(),
        format!("authenticationAccountsFile={}", file.display()),
    ]
}

fn start(options: &[String]) -> NameServer {
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    NameServer::start_with(&options)
}

/// Options for an enforcing TLS NameServer serving `cert`.
fn enforcing(cert: &Issued) -> Vec<String> {
    vec![
        "tls.server.mode=enforcing".to_owned(),
        format!("tls.server.certPath={}", cert.cert.display()),
        format!("tls.server.keyPath={}", cert.key.display()),
    ]
}

fn assert_refused(run: &Run, addr: &str, reason: &str) {
    assert_eq!(run.code, 3, "{run:?}");
    let line = format!("error: NameServer {addr}: NO_PERMISSION (16): ");
    assert!(run.stderr.contains(&line), "{}", run.stderr);
    assert!(run.stderr.contains(reason), "{}", run.stderr);
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn unsigned_writes_are_refused_and_signed_ones_served() {
    let pki = Pki::new("admin-auth");
    let ns = start(&auth_options(&pki.dir));
    let put = ["kv", "put", "ORDER_TOPIC_CONFIG", "TopicA", "broker-a:4"];
    let with = |flags: &[&str]| -> Vec<String> {
        ["-n", ns.addr.as_str()]
            .iter()
            .chain(flags)
            .chain(&put)
            .map(|s| s.to_string())
            .collect()
    };
    let run_with = |flags: &[&str], env: &[(&str, &str)]| {
        let args = with(flags);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        admin_env(&args, env)
    };

    let unsigned = run_with(&[], &[]);
    assert_refused(&unsigned, &ns.addr, "username cannot be null");
    assert!(unsigned.stderr.contains("request code 100"), "{unsigned:?}");
    let json = run_with(&["--json"], &[]).json();
    assert_eq!(json["exitCode"], 3);
    let error = &json["results"][0]["error"];
    assert_eq!(
        (error["code"].as_i64(), error["codeName"].as_str()),
        (Some(16), Some("NO_PERMISSION"))
    );
    assert!(error["remark"]
        .as_str()
        .is_some_and(|r| r.contains("request code 100")));

    let wrong = run_with(
        &["--access-key", ADMIN_KEY, "--secret-key", "not-the-secret"],
        &[],
    );
    assert_refused(&wrong, &ns.addr, "check signature failed");
    assert!(!wrong.stderr.contains("not-the-secret"), "{wrong:?}");
    let not_admin = run_with(
        &["--access-key", BROKER_KEY, "--secret-key", BROKER_SECRET],
        &[],
    );
    assert_refused(&not_admin, &ns.addr, "admin permission needed");

    let flags = run_with(
        &["--access-key", ADMIN_KEY, "--secret-key", ADMIN_SECRET],
        &[],
    );
    assert_eq!(flags.code, 0, "{flags:?}");
    // The secret from the environment, the key from a flag or the environment.
    let env_secret = run_with(
        &["--access-key", ADMIN_KEY],
        &[("ROCKETMQ_SECRET_KEY", ADMIN_SECRET)],
    );
    assert_eq!(env_secret.code, 0, "{env_secret:?}");
    let env_only = run_with(
        &[],
        &[
            ("ROCKETMQ_ACCESS_KEY", ADMIN_KEY),
            ("ROCKETMQ_SECRET_KEY", ADMIN_SECRET),
        ],
    );
    assert_eq!(env_only.code, 0, "{env_only:?}");

    // Another write command, signed the same way: UPDATE_NAMESRV_CONFIG.
    let config = admin(&[
        "-n",
        &ns.addr,
        "--access-key",
        ADMIN_KEY,
        "--secret-key",
        ADMIN_SECRET,
        "config",
        "set",
        "orderMessageEnable=true",
    ]);
    assert_eq!(config.code, 0, "{config:?}");
    let config = admin(&["-n", &ns.addr, "config", "set", "orderMessageEnable=false"]);
    assert_refused(&config, &ns.addr, "request code 318");

    // Reads stay open.
    let get = admin(&["-n", &ns.addr, "kv", "get", "ORDER_TOPIC_CONFIG", "TopicA"]);
    assert_eq!(get.code, 0, "{get:?}");
    assert!(get.stdout.contains("broker-a:4"), "{}", get.stdout);
}

#[test]
fn tools_yml_signs_when_named_and_from_rocketmq_home() {
    let pki = Pki::new("admin-tools-yml");
    let ns = start(&auth_options(&pki.dir));
    let tools = pki.dir.join("tools.yml");
    std::fs::write(
        &tools,
        format!("accessKey: {ADMIN_KEY}\nsecretKey: {ADMIN_SECRET}\n"),
    )
    .unwrap();
    let put = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec!["-n", ns.addr.as_str()];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["kv", "put", "ORDER_TOPIC_CONFIG", "TopicB", "broker-a:4"]);
        admin_env(&args, env)
    };

    let named = put(&["--tools-yml", path(&tools)], &[]);
    assert_eq!(named.code, 0, "{named:?}");
    assert!(named.stderr.is_empty(), "{}", named.stderr);

    let broken = pki.dir.join("broken.yml");
    std::fs::write(&broken, format!("accessKey: {ADMIN_KEY}\n")).unwrap();
    let usage = put(&["--tools-yml", path(&broken)], &[]);
    assert_eq!(usage.code, 2, "{usage:?}");
    assert!(
        usage.stderr.contains(path(&broken)) && usage.stderr.contains("secretKey"),
        "{}",
        usage.stderr
    );

    // mqadmin's own place: $ROCKETMQ_HOME/conf/tools.yml, announced.
    let home = pki.dir.join("home");
    std::fs::create_dir_all(home.join("conf")).unwrap();
    std::fs::copy(&tools, home.join("conf/tools.yml")).unwrap();
    let implicit = put(&[], &[("ROCKETMQ_HOME", path(&home))]);
    assert_eq!(implicit.code, 0, "{implicit:?}");
    let note: Vec<&str> = implicit.stderr.lines().collect();
    assert_eq!(note.len(), 1, "{}", implicit.stderr);
    assert!(
        note[0].starts_with("note: ")
            && note[0].contains(ADMIN_KEY)
            && note[0].contains("conf/tools.yml"),
        "{}",
        note[0]
    );

    // An implicit file that cannot be used: a warning, then unsigned, as mqadmin.
    std::fs::write(home.join("conf/tools.yml"), "accessKey: [broken\n").unwrap();
    let unsigned = put(&[], &[("ROCKETMQ_HOME", path(&home))]);
    assert_refused(&unsigned, &ns.addr, "username cannot be null");
    assert!(
        unsigned.stderr.starts_with("warning: ") && unsigned.stderr.contains("unsigned"),
        "{}",
        unsigned.stderr
    );
}

#[test]
fn tls_reaches_an_enforcing_name_server_and_plain_does_not() {
    let pki = Pki::new("admin-tls");
    let cert = pki.issue("server", "waymark-ns", &[]);
    let mut options = auth_options(&pki.dir);
    options.extend(enforcing(&cert));
    let ns = start(&options);
    let ca = pki.ca_path();
    let signed = ["--access-key", ADMIN_KEY, "--secret-key", ADMIN_SECRET];
    let put = |tls: &[&str]| {
        let mut args = vec!["-n", ns.addr.as_str()];
        args.extend_from_slice(&signed);
        args.extend_from_slice(tls);
        args.extend_from_slice(&["kv", "put", "ORDER_TOPIC_CONFIG", "TopicA", "broker-a:8"]);
        admin(&args)
    };

    let verified = put(&["--tls", "--tls-trust", path(&ca)]);
    assert_eq!(verified.code, 0, "{verified:?}");
    assert!(verified.stderr.is_empty(), "{}", verified.stderr);

    let plain = put(&[]);
    assert_eq!(plain.code, 3, "{plain:?}");
    assert!(
        plain
            .stderr
            .contains(&format!("error: NameServer {}: ", ns.addr)),
        "{}",
        plain.stderr
    );

    let insecure = put(&["--tls", "--tls-insecure"]);
    assert_eq!(insecure.code, 0, "{insecure:?}");
    assert!(
        insecure.stderr.starts_with("warning: --tls-insecure"),
        "{}",
        insecure.stderr
    );

    let stranger = Pki::new("admin-tls-other-ca");
    let mistrusting = put(&["--tls", "--tls-trust", path(&stranger.ca_path())]);
    assert_eq!(mistrusting.code, 3, "{mistrusting:?}");
    assert!(
        mistrusting.stderr.contains("TLS handshake failed"),
        "{}",
        mistrusting.stderr
    );

    let no_check = put(&["--tls"]);
    assert_eq!(no_check.code, 2, "{no_check:?}");
    assert!(
        no_check.stderr.contains("--tls-trust") && no_check.stderr.contains("--tls-insecure"),
        "{}",
        no_check.stderr
    );
    let no_switch = put(&["--tls-trust", path(&ca)]);
    assert_eq!(no_switch.code, 2, "{no_switch:?}");
}

#[test]
fn a_client_certificate_passes_mutual_tls() {
    let pki = Pki::new("admin-mtls");
    let cert = pki.issue("server", "waymark-ns", &[]);
    let client = pki.issue("client", "ops.example", &[]);
    let mut options = enforcing(&cert);
    options.push(format!(
        "tls.server.trustCertPath={}",
        pki.ca_path().display()
    ));
    options.push("tls.server.need.client.auth=require".to_owned());
    let ns = start(&options);
    let ca = pki.ca_path();
    let list = |extra: &[&str]| {
        let mut args = vec!["-n", ns.addr.as_str(), "--tls", "--tls-trust", path(&ca)];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["cluster", "list"]);
        admin(&args)
    };

    let anonymous = list(&[]);
    assert_eq!(anonymous.code, 3, "{anonymous:?}");
    let identified = list(&[
        "--tls-cert",
        path(&client.cert),
        "--tls-key",
        path(&client.key),
    ]);
    assert_eq!(identified.code, 0, "{identified:?}");

    // The same through Java's tls.config.file.
    let file = pki.dir.join("tls.properties");
    std::fs::write(
        &file,
        format!(
            "tls.client.certPath={}\ntls.client.keyPath={}\n",
            client.cert.display(),
            client.key.display()
        ),
    )
    .unwrap();
    let from_file = list(&["--tls-config-file", path(&file)]);
    assert_eq!(from_file.code, 0, "{from_file:?}");
}

/// The controller commands connect as the NameServer commands do. The
/// controller serves TLS next to plain (`permissive`): the test kit finds
/// its leader over a plain socket, so an enforcing one cannot be started
/// here; a CA it does not trust shows that TLS is spoken nonetheless.
#[test]
fn controller_commands_sign_and_speak_tls_too() {
    let pki = Pki::new("admin-controller");
    let cert = pki.issue("controller", "waymark-controller", &[]);
    let mut options = auth_options(&pki.dir);
    options.extend([
        "tls.server.mode=permissive".to_owned(),
        format!("tls.server.certPath={}", cert.cert.display()),
        format!("tls.server.keyPath={}", cert.key.display()),
    ]);
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let controller = rmq_testkit::Controller::start(&options);
    let ca = pki.ca_path();
    let update = |extra: &[&str]| {
        let mut args = vec!["controller", "-a", controller.addr.as_str()];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[
            "config",
            "update",
            "-k",
            "electMasterMaxRetryCount",
            "-v",
            "5",
        ]);
        admin(&args)
    };
    let signed = ["--access-key", ADMIN_KEY, "--secret-key", ADMIN_SECRET];

    let unsigned = update(&["--tls", "--tls-trust", path(&ca)]);
    assert_eq!(unsigned.code, 3, "{unsigned:?}");
    assert!(
        unsigned.stderr.contains(&format!(
            "error: controller {}: NO_PERMISSION (16): ",
            controller.addr
        )),
        "{}",
        unsigned.stderr
    );

    let mut both = signed.to_vec();
    both.extend_from_slice(&["--tls", "--tls-trust", path(&ca)]);
    let served = update(&both);
    assert_eq!(served.code, 0, "{served:?}");

    let stranger = Pki::new("admin-controller-other-ca");
    let stranger_ca = stranger.ca_path();
    let mut mistrusting = signed.to_vec();
    mistrusting.extend_from_slice(&["--tls", "--tls-trust", path(&stranger_ca)]);
    let refused = update(&mistrusting);
    assert_eq!(refused.code, 3, "{refused:?}");
    assert!(
        refused.stderr.contains("TLS handshake failed"),
        "{}",
        refused.stderr
    );

    // Leader-only commands find the leader over the same connections.
    let mut args = vec!["controller", "-a", controller.addr.as_str(), "--json"];
    args.extend_from_slice(&both);
    args.extend_from_slice(&["sync-state-set", "-b", "broker-none"]);
    let leader = admin(&args);
    let json = leader.json();
    let kind = json["results"][0]["error"]["kind"].as_str();
    assert!(
        json["results"][0]["ok"] == true || kind == Some("response"),
        "the leader answered over TLS: {leader:?}"
    );
}
