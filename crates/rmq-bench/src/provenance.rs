//! What a run was measured from (commit, dirty tree, disturbed measurements) and the rule that
//! keeps the report from being rewritten from either unless allowed.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::peer::PeerKind;
use crate::results::{Results, Run};
use crate::scenario::DISTURBED_PERCENT;

/// The work tree a run measured: commit, `git describe --always --dirty`, and its changes
/// ([`counts_as_change`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GitState {
    pub commit: String,
    pub describe: String,
    pub changes: Vec<String>,
}

impl GitState {
    /// Reads the state of the work tree at `root`; `None` when git cannot
    /// tell (no git, not a repository).
    pub fn probe(root: &Path) -> Option<GitState> {
        let git = |args: &[&str]| -> Option<String> {
            let out = Command::new("git").arg("-C").arg(root).args(args).output();
            let out = out.ok().filter(|out| out.status.success())?;
            Some(String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let commit = git(&["rev-parse", "HEAD"])?.trim().to_owned();
        let describe = git(&["describe", "--always", "--dirty"])?.trim().to_owned();
        let status = git(&["status", "--porcelain"])?;
        let changes = status.lines().filter(|l| counts_as_change(l));
        let changes = changes.map(str::to_owned).collect();
        Some(GitState {
            commit,
            describe,
            changes,
        })
    }

    /// Whether the tree held changes that are not committed.
    pub fn is_dirty(&self) -> bool {
        !self.changes.is_empty()
    }
}

/// Whether a `git status --porcelain` line is a change to the measured code (not `.bench/`,
/// `target*/`).
pub fn counts_as_change(line: &str) -> bool {
    let Some(path) = line.get(3..) else {
        return false;
    };
    let path = path.trim().trim_matches('"');
    let first = path.split('/').next().unwrap_or(path);
    !(path.is_empty() || first == ".bench" || first.starts_with("target"))
}

/// A run during which others used more than [`DISTURBED_PERCENT`] of a CPU in a kept window.
#[derive(Debug, Clone, PartialEq)]
pub struct Disturbance {
    pub what: String,
    pub peer: PeerKind,
    pub others_cpu_percent: f64,
}

/// Every run of `results` that other processes disturbed.
pub fn disturbances(results: &Results) -> Vec<Disturbance> {
    let runs = results.scenarios.iter();
    let runs = runs.flat_map(|(id, scenario)| scenario.runs.iter().map(move |run| (id, run)));
    let disturbed = |(id, run): (&String, &Run)| {
        let worst = run.result.as_ref().and_then(most_others);
        let others_cpu_percent = worst.filter(|p| *p > DISTURBED_PERCENT)?;
        let (what, peer) = (format!("{id} {}", run.part).trim_end().to_owned(), run.peer);
        Some(Disturbance {
            what,
            peer,
            others_cpu_percent,
        })
    };
    runs.filter_map(disturbed).collect()
}

/// The largest `others_cpu_percent` anywhere in `value`.
fn most_others(value: &Value) -> Option<f64> {
    let children: Box<dyn Iterator<Item = &Value>> = match value {
        Value::Object(map) => Box::new(map.values()),
        Value::Array(items) => Box::new(items.iter()),
        _ => return None,
    };
    let own = value.get("others_cpu_percent").and_then(Value::as_f64);
    children.filter_map(most_others).chain(own).reduce(f64::max)
}

/// What the report may be written from anyway (`--allow-dirty`, `--allow-disturbed`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Allow {
    pub dirty: bool,
    pub disturbed: bool,
}

/// Why the report must not be written from `results`, if it must not.
pub fn refusal(results: &Results, allow: Allow) -> Option<String> {
    let mut why = Vec::new();
    let dirty = results.git.as_ref().filter(|g| g.is_dirty());
    if let Some(git) = dirty.filter(|_| !allow.dirty) {
        why.push(format!(
            "the work tree was dirty (git {}: {}); commit first, or pass --allow-dirty",
            git.describe,
            list(&git.changes, 5)
        ));
    }
    let disturbed = disturbances(results);
    if !disturbed.is_empty() && !allow.disturbed {
        why.push(format!(
            "other processes used more than {DISTURBED_PERCENT:.0} % of a CPU during {}; \
             measure on a quiet machine, or pass --allow-disturbed",
            describe(&disturbed)
        ));
    }
    (!why.is_empty()).then(|| why.join("; and "))
}

/// `a, b, c and 4 more`.
pub fn list(items: &[String], at_most: usize) -> String {
    let shown: Vec<&str> = items.iter().take(at_most).map(|s| s.trim()).collect();
    let mut text = shown.join(", ");
    if items.len() > at_most {
        let _ = write!(text, " and {} more", items.len() - at_most);
    }
    text
}

/// `route-qps Waymark (18 %), register two-cpus Java (22 %)`.
pub fn describe(disturbed: &[Disturbance]) -> String {
    let part = |d: &Disturbance| {
        let (what, peer) = (&d.what, d.peer.title());
        format!("{what} {peer} ({:.0} %)", d.others_cpu_percent)
    };
    list(&disturbed.iter().map(part).collect::<Vec<_>>(), 12)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn results(dirty: bool, others: f64) -> Results {
        let runs = json!([
            {"peer": "waymark", "result": {"others_cpu_percent": others, "steps": [{"others_cpu_percent": 1.0}]}},
            {"peer": "waymark", "part": "two-cpus", "result": {"steady_server_cpu": {"others_cpu_percent": 2.0}}},
        ]);
        let changes = [" M crates/rmq-namesrv/src/lib.rs".into()];
        let git = GitState {
            commit: "0123abcd".into(),
            describe: if dirty { "0123abc-dirty" } else { "0123abc" }.into(),
            changes: changes[..usize::from(dirty)].to_vec(),
        };
        let runs = serde_json::from_value(json!({"runs": runs})).unwrap();
        Results {
            git: Some(git),
            scenarios: [("route-qps".into(), runs)].into(),
            ..Results::default()
        }
    }

    #[test]
    fn the_runs_own_directories_are_no_change() {
        assert!(counts_as_change(" M crates/rmq-bench/src/load.rs"));
        assert!(counts_as_change("?? docs/new.md"));
        for own in ["?? .bench/", "?? target-bench/", "?? target/release/x", ""] {
            assert!(!counts_as_change(own), "{own}");
        }
    }

    #[test]
    fn a_dirty_tree_or_a_disturbed_run_is_refused_unless_allowed() {
        let allow = |dirty, disturbed| Allow { dirty, disturbed };
        let (none, dirty_ok, disturbed_ok) =
            (allow(false, false), allow(true, false), allow(false, true));
        assert_eq!(refusal(&results(false, 3.0), none), None);

        let dirty = results(true, 3.0);
        let why = refusal(&dirty, none).unwrap();
        assert!(why.contains("0123abc-dirty") && why.contains("crates/rmq-namesrv/src/lib.rs"));
        assert_eq!(refusal(&dirty, dirty_ok), None);

        // Found however deep the outcome keeps its window (a step, a part).
        let mut disturbed = results(false, 40.0);
        let found = describe(&disturbances(&disturbed));
        assert_eq!(found, "route-qps Waymark (40 %)");
        let runs = &mut disturbed.scenarios.get_mut("route-qps").unwrap().runs;
        runs[0].result = Some(json!({"steps": [{"others_cpu_percent": 22.0}]}));
        runs[1].result = Some(json!({"steady_server_cpu": {"others_cpu_percent": 30.0}}));
        let found = describe(&disturbances(&disturbed));
        assert_eq!(
            found,
            "route-qps Waymark (22 %), route-qps two-cpus Waymark (30 %)"
        );
        let why = refusal(&disturbed, none).unwrap();
        assert!(why.contains("route-qps two-cpus Waymark (30 %)"), "{why}");
        assert!(refusal(&disturbed, dirty_ok).is_some());
        assert_eq!(refusal(&disturbed, disturbed_ok), None);

        // Both at once: both named, both needed.
        let why = refusal(&results(true, 40.0), none).unwrap();
        assert!(why.contains("--allow-dirty") && why.contains("--allow-disturbed"));
        // Results from before git was recorded: nothing to refuse on.
        assert_eq!(refusal(&Results::default(), none), None);
    }
}
