//! conf/namesrv.properties names every key `rmq-namesrv -p` prints and no
//! other (so the example cannot drift from the binary), and the NameServer
//! starts with it unchanged, with no unknown key.

use std::collections::BTreeSet;
use std::process::Command;

use crate::common::*;

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../conf/namesrv.properties");

/// The keys of `key=value` and `#key=value` lines.
fn keys(text: &str, commented: bool) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = match line.strip_prefix('#') {
                Some(rest) if commented => rest,
                Some(_) => return None,
                None => line,
            };
            let (key, _) = line.split_once('=')?;
            let key = key.trim();
            let is_key =
                !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '.');
            is_key.then(|| key.to_owned())
        })
        .collect()
}

#[test]
fn the_example_names_every_key_and_only_those() {
    let dir = TempDir::new();
    let printed = Command::new(env!("CARGO_BIN_EXE_rmq-namesrv"))
        // With TLS settings, -p prints the TLS keys too.
        .args(["-p", "--set", "tls.server.mode=disabled"])
        .env("HOME", &dir.0)
        .output()
        .unwrap();
    assert!(printed.status.success());
    let printed = keys(&String::from_utf8_lossy(&printed.stdout), false);
    let example = keys(&read(std::path::Path::new(EXAMPLE)), true);
    let missing: Vec<_> = printed.difference(&example).collect();
    assert!(
        missing.is_empty(),
        "keys -p prints that conf/namesrv.properties lacks: {missing:?}"
    );
    // The example may name Java's TLS keys, which -p prints only when set.
    let unknown: Vec<_> = example
        .difference(&printed)
        .filter(|key| !key.starts_with("tls."))
        .collect();
    assert!(
        unknown.is_empty(),
        "keys in conf/namesrv.properties that -p does not print: {unknown:?}"
    );
}

#[test]
fn the_name_server_starts_with_the_example() {
    let dir = TempDir::new();
    let args: Vec<String> = ["-c", EXAMPLE, "--listen", "127.0.0.1:0"]
        .into_iter()
        .map(str::to_owned)
        .chain(["--set".to_owned(), "httpListenAddr=127.0.0.1:0".to_owned()])
        .chain([
            "--set".to_owned(),
            format!("configStorePath={}", dir.path("ns.properties").display()),
        ])
        .collect();
    let server = Server::spawn(&dir, &args, &[]);
    assert!(server.http.is_some());
    server.stop();
    let log = read(&dir.path("server.log"));
    assert!(!log.contains("unknown configuration key"), "{log}");
    assert!(log.contains("load config properties file OK"), "{log}");
}
