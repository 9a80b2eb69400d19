use std::path::Path;

use rmq_controller::ControllerConfig;

use super::*;

fn defaults() -> NamesrvConfig {
    NamesrvConfig::defaults(Path::new("/home/rocketmq"), Some("/opt/rocketmq".into()))
}

#[test]
fn every_key_has_exactly_one_entry() {
    let mut keys: Vec<&str> = NamesrvConfig::KEYS.to_vec();
    keys.sort_unstable();
    let table: Vec<&str> = KEY_EFFECTS.iter().map(|entry| entry.key).collect();
    assert_eq!(table, keys, "KEY_EFFECTS: every key once, sorted");
    for entry in KEY_EFFECTS {
        assert!(!entry.note.is_empty(), "{} needs a note", entry.key);
    }
}

#[test]
fn the_warning_names_ignored_keys_set_away_from_their_default() {
    let defaults = defaults();
    assert_eq!(defaults.ignored_warning(&defaults), None);
    let mut config = defaults.clone();
    for (key, value) in [
        ("serverWorkerThreads", "16"),
        ("clusterTest", "true"),
        // Honoured: not in the warning.
        ("serverSocketBacklog", "64"),
        // Set, but to its default: not in the warning.
        ("serverSelectorThreads", "3"),
    ] {
        assert!(config.set(key, value), "{key}");
    }
    let keys: Vec<&str> = config
        .ignored_settings(&defaults)
        .iter()
        .map(|s| s.key)
        .collect();
    assert_eq!(keys, ["clusterTest", "serverWorkerThreads"]);
    let warning = config.ignored_warning(&defaults).unwrap();
    assert!(warning.contains("accepted but ignored"), "{warning}");
    assert!(
        warning.contains(&format!("serverWorkerThreads=16 ({NETTY_THREADS})")),
        "{warning}"
    );
    assert!(
        warning.contains("clusterTest=true (cluster-test mode"),
        "{warning}"
    );
    assert!(!warning.contains("serverSocketBacklog"), "{warning}");
    assert!(!warning.contains("serverSelectorThreads"), "{warning}");
}

#[test]
fn print_marks_ignored_and_unknown_keys_and_reads_back_unchanged() {
    let mut config = defaults();
    config.extra.insert("customKey".into(), "x".into());
    let text = config.to_annotated_text();
    let parsed = rmq_protocol::properties::parse(&text).unwrap();
    assert_eq!(parsed, config.to_properties());
    let without_comments: String = text
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(without_comments, config.to_text());
    let lines: Vec<&str> = text.lines().collect();
    let before = |line: &str| lines[lines.iter().position(|l| *l == line).unwrap() - 1];
    assert_eq!(
        before("serverWorkerThreads=8"),
        format!("# ignored: {NETTY_THREADS}")
    );
    assert!(before("customKey=x").starts_with("# unknown key:"));
    assert!(!before("serverSocketBacklog=1024").starts_with('#'));
    assert!(!before("listenPort=9876").starts_with('#'));
}

/// docs/configuration.md, which must hold the tables rendered below.
fn configuration_doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn default_cell(value: Option<&String>, unset: &str) -> String {
    match value.map(String::as_str) {
        None => unset.to_owned(),
        Some("") => "(empty)".to_owned(),
        Some(value) => format!("`{value}`"),
    }
}

#[test]
fn the_documented_namesrv_keys_match_the_table() {
    let defaults = NamesrvConfig::defaults(Path::new("~"), None).to_properties();
    let mut table =
        "| key | default (Java's and Waymark's) | in Waymark |\n|---|---|---|\n".to_owned();
    for entry in KEY_EFFECTS {
        let status = match entry.effect {
            Effect::Live => "live",
            Effect::AtStart => "at start",
            Effect::Ignored => "**ignored**",
        };
        let default = default_cell(defaults.get(entry.key), "`$ROCKETMQ_HOME`");
        table.push_str(&format!(
            "| `{}` | {default} | {status}: {} |\n",
            entry.key, entry.note
        ));
    }
    assert!(
        configuration_doc().contains(&table),
        "docs/configuration.md must contain this table:\n{table}"
    );
}

/// A value of `key` other than its default `text` (`None`: unset).
fn other_value(text: Option<&String>) -> String {
    match text.map(String::as_str) {
        Some("true") => "false".to_owned(),
        Some("false") => "true".to_owned(),
        Some(text) => match text.parse::<i64>() {
            Ok(number) => (number + 1).to_string(),
            Err(_) => format!("{text}x"),
        },
        None => "x".to_owned(),
    }
}

// The embedded controller reads the same file, so this crate checks the
// controller half of the document too. The controller's classification is
// its own (rmq-controller's config.rs); it is read here through its
// start-up warnings: set each key away from its default and see whether
// the warning names it, and why.
#[test]
fn the_documented_controller_keys_match_its_warnings() {
    let defaults = ControllerConfig::defaults(Path::new("~"), None);
    let default_text = defaults.to_properties();
    let mut keys: Vec<&str> = ControllerConfig::KEYS.to_vec();
    keys.sort_unstable();
    let mut table =
        "| key | default (Java's and Waymark's) | in Waymark |\n|---|---|---|\n".to_owned();
    for key in keys {
        let mut config = defaults.clone();
        assert!(
            config.set(key, &other_value(default_text.get(key))),
            "{key}"
        );
        let prefix = format!("{key} is set but has no effect: ");
        let status = config
            .warnings(&defaults)
            .iter()
            .find_map(|w| {
                w.strip_prefix(&prefix)
                    .map(|why| format!("**ignored**: {why}"))
            })
            .unwrap_or_else(|| "honoured".to_owned());
        let default = default_cell(default_text.get(key), "(unset)");
        table.push_str(&format!("| `{key}` | {default} | {status} |\n"));
    }
    assert!(
        configuration_doc().contains(&table),
        "docs/configuration.md must contain this table:\n{table}"
    );
}
