//! Fuzzes the UPDATE_NAMESRV_CONFIG path: the body is parsed as
//! `java.util.Properties` text, every entry is checked
//! (`NamesrvConfig::check_update`), and an accepted update is applied and
//! written as the properties file (`to_file_text`), as the handler does.
//!
//! Invariants:
//!
//! * nothing panics;
//! * any parsed entries, rendered for a file (`properties::render_for_file`),
//!   parse back to the same entries, one line each: a value cannot start a
//!   line, a comment or a continuation of its own;
//! * an update the handler would accept (every entry passes the check, no
//!   black-listed key) gives a file that parses back to exactly the
//!   configuration's options, one line per option, and reading that file
//!   into a fresh configuration gives the same configuration: no key the
//!   update did not set can appear, none can vanish;
//! * the unescaped GET_NAMESRV_CONFIG text of that configuration has one line
//!   per option too (the check refuses control characters for that reason).
//!
//! Run from `fuzz/`: `RUSTC_BOOTSTRAP=1 cargo fuzz run config_update -- -max_total_time=60`.

#![no_main]

use std::collections::BTreeMap;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use rmq_namesrv::NamesrvConfig;
use rmq_protocol::properties;

fuzz_target!(|data: &[u8]| {
    // The handler reads the body the same way.
    let text = String::from_utf8_lossy(data);
    let Ok(updates) = properties::parse(&text) else {
        return;
    };

    let file = properties::render_for_file(entries(&updates));
    assert_eq!(lines(&file), updates.len(), "{file:?}");
    assert_eq!(
        properties::parse(&file).ok().as_ref(),
        Some(&updates),
        "{file:?}"
    );

    let accepted = updates
        .iter()
        .all(|(key, value)| NamesrvConfig::check_update(key, value).is_ok());
    if !accepted {
        return;
    }
    let mut config = base();
    if updates.keys().any(|key| config.black_list().contains(key)) {
        return;
    }
    config.apply_update(&updates);

    let options = config.to_properties();
    let file = config.to_file_text();
    assert_eq!(lines(&file), options.len(), "{file:?}");
    let read = properties::parse(&file).expect("the written file parses");
    assert_eq!(read, options, "{file:?}");
    let mut reloaded = base();
    let unknown = reloaded.apply_file(&read);
    assert_eq!(unknown, Vec::<String>::new());
    assert_eq!(reloaded, config);

    let shown = config.to_text();
    assert!(!shown.contains('\r'), "{shown:?}");
    assert_eq!(lines(&shown), options.len(), "{shown:?}");
});

/// A configuration as a NameServer started with `-c` has it: Java's
/// defaults under a fixed home.
fn base() -> NamesrvConfig {
    NamesrvConfig::defaults(
        Path::new("/home/rocketmq"),
        Some("/opt/rocketmq".to_owned()),
    )
}

fn entries(map: &BTreeMap<String, String>) -> impl Iterator<Item = (&str, &str)> {
    map.iter().map(|(k, v)| (k.as_str(), v.as_str()))
}

/// Natural lines as `Properties.load` counts them: every `\n` and `\r` ends
/// one (a correct writer escapes both inside keys and values, so a `\r\n`
/// pair counting twice can only make a broken file fail the check). The text
/// must end with a line break, or the last entry would run into whatever a
/// later writer appends.
fn lines(text: &str) -> usize {
    assert!(text.is_empty() || text.ends_with('\n'), "{text:?}");
    text.matches(['\n', '\r']).count()
}
