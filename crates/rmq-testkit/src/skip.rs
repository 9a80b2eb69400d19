//! Tests that cannot run on this machine (no root for a network namespace,
//! a tool not installed): skipped with a line no one can miss, or failed
//! where the suite must run whole.
//!
//! A skipped test passes as far as the test harness is concerned, so a
//! machine that silently lacks what a test needs would make its check
//! vacuous. Under `CI=true` (what `.ci/run` sets) such a test fails
//! instead, naming what is missing, as the Java and Go interop harnesses do.
//!
//! Owns only that decision and its message; what a test needs and how it
//! finds out is the test's (or [`crate::netns`]'s).

use std::io::Write;

/// The environment variable that makes an unrunnable test fail: `true` (in
/// any case) in CI.
pub const CI_ENV: &str = "CI";

/// Whether a test that cannot run here must fail rather than skip: the
/// environment says this is CI (`CI=true`).
pub fn required() -> bool {
    required_by(std::env::var(CI_ENV).ok().as_deref())
}

/// [`required`] for a given value of `CI`.
fn required_by(ci: Option<&str>) -> bool {
    ci.is_some_and(|value| value.eq_ignore_ascii_case("true"))
}

/// Reports that `test` cannot run on this machine because of `why` (what is
/// missing, and how to provide it). Outside CI it writes a line
/// `*** SKIPPED <test>: <why> ***` straight to stderr, past the test
/// harness's capture, and returns: the caller then returns without checking
/// anything. Under `CI=true` it panics with the same text instead, so the
/// test fails.
///
/// # Panics
/// Under `CI=true`, always.
#[track_caller]
pub fn skip_or_fail(test: &str, why: &str) {
    if required() {
        panic!("{test} cannot run on this machine and CI=true requires it to: {why}");
    }
    // Straight to stderr: the test harness captures `eprintln!` of a
    // passing test, and a skip must not pass unseen.
    let _ = writeln!(std::io::stderr(), "\n*** SKIPPED {test}: {why} ***\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ci_true_requires_every_test_to_run() {
        assert!(required_by(Some("true")));
        assert!(required_by(Some("TRUE")));
        for value in [None, Some(""), Some("false"), Some("1"), Some("yes")] {
            assert!(!required_by(value), "{value:?}");
        }
    }
}
