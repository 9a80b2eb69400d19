//! What a run was measured from and on: the commit, whether the work tree
//! held uncommitted changes, and which measurements other processes
//! disturbed; and the rule that keeps `docs/benchmarks.md` from being
//! rewritten from either unless the caller says so (`--allow-dirty`,
//! `--allow-disturbed`).
//!
//! The results file is written whatever the rule decides: only the report
//! is refused. A report written anyway says so at the top of each section
//! it generates ([`crate::report`]). Reading git is the only I/O here
//! ([`GitState::probe`]); the decisions are pure functions of the results.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::compare::DISTURBED_PERCENT;
use crate::peer::PeerKind;
use crate::results::{PeerOutcome, Results};

/// The work tree a run measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GitState {
    /// The commit checked out (`git rev-parse HEAD`).
    pub commit: String,
    /// `git describe --always --dirty`.
    pub describe: String,
    /// `git status --porcelain` lines of uncommitted changes, without the
    /// run's own directories ([`counts_as_change`]).
    pub changes: Vec<String>,
}

impl GitState {
    /// Reads the state of the work tree at `root`; `None` when git cannot
    /// tell (no git, not a repository).
    pub fn probe(root: &Path) -> Option<GitState> {
        let git = |args: &[&str]| -> Option<String> {
            let out = Command::new("git")
                .arg("-C")
                .arg(root)
                .args(args)
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let commit = git(&["rev-parse", "HEAD"])?.trim().to_owned();
        let describe = git(&["describe", "--always", "--dirty"])?.trim().to_owned();
        let status = git(&["status", "--porcelain"])?;
        Some(GitState {
            commit,
            describe,
            changes: status
                .lines()
                .filter(|l| counts_as_change(l))
                .map(str::to_owned)
                .collect(),
        })
    }

    /// Whether the tree held changes that are not committed.
    pub fn is_dirty(&self) -> bool {
        !self.changes.is_empty()
    }
}

/// Whether a `git status --porcelain` line is a change to the measured
/// code: everything but the run's own directories (`.bench/`, `target*/`),
/// which are ignored by git anyway and listed only with a changed
/// `.gitignore`.
pub fn counts_as_change(line: &str) -> bool {
    let Some(path) = line.get(3..) else {
        return false;
    };
    let path = path.trim().trim_matches('"');
    let first = path.split('/').next().unwrap_or(path);
    !(path.is_empty() || first == ".bench" || first.starts_with("target"))
}

/// A measurement during which other processes used more CPU than
/// [`DISTURBED_PERCENT`], in the run that was kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Disturbance {
    /// Scenario and part, e.g. `route-sweep 50,000/s`.
    pub what: String,
    /// Which peer.
    pub peer: PeerKind,
    /// Other processes' CPU, % of one CPU.
    pub others_cpu_percent: f64,
}

/// Every kept measurement of `results` that other processes disturbed.
pub fn disturbances(results: &Results) -> Vec<Disturbance> {
    let mut found = Vec::new();
    let mut check = |what: String, peer: PeerKind, percent: Option<f64>| {
        if let Some(p) = percent.filter(|p| *p > DISTURBED_PERCENT) {
            found.push(Disturbance {
                what,
                peer,
                others_cpu_percent: p,
            });
        }
    };
    for (peer, x) in ok(&results.route_qps) {
        check("route-qps".into(), peer, x.others_cpu_percent);
    }
    for (peer, x) in ok(&results.route_sweep) {
        for step in &x.steps {
            let what = format!("route-sweep {:.0}/s", step.rate);
            check(what, peer, step.others_cpu_percent);
        }
    }
    for (peer, x) in ok(&results.route_under_storm) {
        check("route-under-storm".into(), peer, x.others_cpu_percent);
    }
    for (peer, x) in ok(&results.register) {
        let first = x.first_server_cpu.as_ref().map(|c| c.others_cpu_percent);
        check("register first round".into(), peer, first);
        let steady = x.steady_server_cpu.as_ref().map(|c| c.others_cpu_percent);
        check("register steady phase".into(), peer, steady);
    }
    for (peer, x) in ok(&results.controller_heartbeats) {
        check("controller heartbeats".into(), peer, x.others_cpu_percent);
    }
    for (peer, x) in ok(&results.controller_failover) {
        check("controller failover".into(), peer, x.others_cpu_percent);
    }
    for (peer, x) in ok(&results.security_signing) {
        let windows = [
            ("unsigned", Some(&x.unsigned)),
            ("signed", Some(&x.signed)),
            ("unchanged unsigned", x.unchanged_unsigned.as_ref()),
            ("unchanged signed", x.unchanged_signed.as_ref()),
        ];
        for (part, window) in windows {
            let percent = window.and_then(|w| w.others_cpu_percent);
            check(format!("security {part} registrations"), peer, percent);
        }
    }
    for (peer, x) in ok(&results.security_tls) {
        check(
            "security plain queries".into(),
            peer,
            x.plain.others_cpu_percent,
        );
        check(
            "security TLS queries".into(),
            peer,
            x.tls.others_cpu_percent,
        );
    }
    found
}

fn ok<T>(outcomes: &[PeerOutcome<T>]) -> impl Iterator<Item = (PeerKind, &T)> {
    outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().map(|r| (o.peer, r)))
}

/// What the caller allowed the report to be written from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Allow {
    /// A work tree with uncommitted changes (`--allow-dirty`).
    pub dirty: bool,
    /// Measurements disturbed by other processes (`--allow-disturbed`).
    pub disturbed: bool,
}

/// Why the report must not be written from `results`, if it must not.
pub fn refusal(results: &Results, allow: Allow) -> Option<String> {
    let mut why = Vec::new();
    if let Some(git) = results.git.as_ref().filter(|g| g.is_dirty()) {
        if !allow.dirty {
            why.push(format!(
                "the work tree was dirty (git {}: {}); commit first, or pass --allow-dirty",
                git.describe,
                list(&git.changes, 5)
            ));
        }
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
fn list(items: &[String], at_most: usize) -> String {
    let shown: Vec<&str> = items.iter().take(at_most).map(|s| s.trim()).collect();
    let mut text = shown.join(", ");
    if items.len() > at_most {
        let _ = write!(text, " and {} more", items.len() - at_most);
    }
    text
}

/// `route-qps Waymark (18 %), register steady phase Java (22 %)`.
pub fn describe(disturbed: &[Disturbance]) -> String {
    let parts: Vec<String> = disturbed
        .iter()
        .map(|d| {
            format!(
                "{} {} ({:.0} %)",
                d.what,
                d.peer.title(),
                d.others_cpu_percent
            )
        })
        .collect();
    list(&parts, 12)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::route_qps::{Params, RouteQps};
    use crate::stats::Latency;

    fn qps(others: f64) -> RouteQps {
        RouteQps {
            params: Params::defaults(true),
            qps: 1.0,
            latency: Latency::default(),
            errors: 0,
            first_error: None,
            mean_response_bytes: 0.0,
            rss_kib: None,
            server_cpus: None,
            others_cpu_percent: Some(others),
            server_cpu: None,
            answered: 0,
            cpu_us_per_query: None,
        }
    }

    fn results(dirty: bool, others: f64) -> Results {
        Results {
            git: Some(GitState {
                commit: "0123abcd".into(),
                describe: if dirty { "0123abc-dirty" } else { "0123abc" }.into(),
                changes: if dirty {
                    vec![" M crates/rmq-namesrv/src/lib.rs".into()]
                } else {
                    Vec::new()
                },
            }),
            route_qps: vec![PeerOutcome::of(PeerKind::Waymark, Ok(qps(others)))],
            ..Results::default()
        }
    }

    #[test]
    fn the_runs_own_directories_are_no_change() {
        assert!(counts_as_change(" M crates/rmq-bench/src/load.rs"));
        assert!(counts_as_change("?? docs/new.md"));
        assert!(counts_as_change(" M docs/bench-rss.png"));
        assert!(!counts_as_change("?? .bench/"));
        assert!(!counts_as_change("?? target-bench/"));
        assert!(!counts_as_change("?? target/release/x"));
        assert!(!counts_as_change(""));
    }

    #[test]
    fn a_dirty_tree_or_a_disturbed_run_is_refused_unless_allowed() {
        let clean = results(false, 3.0);
        assert_eq!(refusal(&clean, Allow::default()), None);

        let dirty = results(true, 3.0);
        let why = refusal(&dirty, Allow::default()).unwrap();
        assert!(
            why.contains("dirty") && why.contains("0123abc-dirty"),
            "{why}"
        );
        assert!(why.contains("crates/rmq-namesrv/src/lib.rs"), "{why}");
        let allowed = Allow {
            dirty: true,
            ..Allow::default()
        };
        assert_eq!(refusal(&dirty, allowed), None);

        let disturbed = results(false, 40.0);
        let found = disturbances(&disturbed);
        assert_eq!(found.len(), 1);
        assert_eq!(describe(&found), "route-qps Waymark (40 %)");
        let why = refusal(&disturbed, Allow::default()).unwrap();
        assert!(why.contains("route-qps Waymark (40 %)"), "{why}");
        assert!(refusal(&disturbed, allowed).is_some());
        let allowed = Allow {
            disturbed: true,
            ..Allow::default()
        };
        assert_eq!(refusal(&disturbed, allowed), None);

        // Both at once: both named, both needed.
        let both = results(true, 40.0);
        let why = refusal(&both, Allow::default()).unwrap();
        assert!(why.contains("--allow-dirty") && why.contains("--allow-disturbed"));
        let all = Allow {
            dirty: true,
            disturbed: true,
        };
        assert_eq!(refusal(&both, all), None);

        // Results from before git was recorded: nothing to refuse on.
        let old = Results::default();
        assert_eq!(refusal(&old, Allow::default()), None);
    }
}
