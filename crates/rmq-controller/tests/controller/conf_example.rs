//! conf/controller.properties names every key `rmq-controller -p` prints and
//! no other, and `-c` reads it with no unknown key.

use std::collections::BTreeSet;
use std::process::Command;

const EXAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../conf/controller.properties"
);

/// The keys of `key=value` and `#key=value` lines.
fn keys(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = line.strip_prefix('#').unwrap_or(line);
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
    let home = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_rmq-controller"))
        .args(["-c", EXAMPLE, "-p", "--set", "tls.server.mode=disabled"])
        .env("HOME", home.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("unknown"), "{stderr}");
    let printed = keys(&String::from_utf8_lossy(&output.stdout));
    let example = keys(&std::fs::read_to_string(EXAMPLE).unwrap());
    let missing: Vec<_> = printed.difference(&example).collect();
    assert!(
        missing.is_empty(),
        "keys -p prints that conf/controller.properties lacks: {missing:?}"
    );
    let unknown: Vec<_> = example
        .difference(&printed)
        .filter(|key| !key.starts_with("tls."))
        .collect();
    assert!(
        unknown.is_empty(),
        "keys in conf/controller.properties that -p does not print: {unknown:?}"
    );
}
