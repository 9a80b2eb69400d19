//! What happened in a run, kept for a failure's report: the last lines of
//! the trace, and the failure itself.

use std::collections::VecDeque;
use std::fmt;

use rmq_namesrv::route::Millis;

/// Lines kept for a report.
const KEPT: usize = 80;

/// The last lines of what happened.
#[derive(Debug, Default)]
pub struct Trace {
    lines: VecDeque<String>,
    /// Print every line as it happens (`WAYMARK_CLUSTER_SIM_TRACE=1`).
    pub verbose: bool,
}

impl Trace {
    /// Notes a line at `at`.
    pub fn line(&mut self, at: Millis, text: String) {
        let line = format!("{at:>7} ms  {text}");
        if self.verbose {
            eprintln!("{line}");
        }
        if self.lines.len() == KEPT {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    /// The lines kept.
    pub fn tail(&self) -> String {
        self.lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// A seed that broke an invariant.
#[derive(Debug)]
pub struct Failure {
    /// The seed.
    pub seed: u64,
    /// Simulated time of the break.
    pub at: Millis,
    /// The invariant.
    pub invariant: &'static str,
    /// What it found.
    pub problem: String,
    /// The last lines of the run.
    pub trace: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seed {} broke `{}` at {} ms: {}\n--- last happenings ---\n{}\n--- rerun: WAYMARK_CLUSTER_SIM_SEED={} WAYMARK_CLUSTER_SIM_TRACE=1 cargo test -p rmq-namesrv --test cluster_sim seeds -- --nocapture",
            self.seed, self.invariant, self.at, self.problem, self.trace, self.seed
        )
    }
}
