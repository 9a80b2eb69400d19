//! The last things that happened, for a failure report: a ring of short
//! lines, routine traffic (empty AppendEntries, heartbeats, HA pulls) left
//! out so that the lines kept are the ones that explain a failure.

use std::collections::VecDeque;
use std::fmt;

use crate::simulation::queue::Time;

/// Lines kept.
const KEEP: usize = 60;

/// The recent past of a run.
#[derive(Debug, Default)]
pub struct Trace {
    lines: VecDeque<(Time, String)>,
    /// Also print every line as it happens (`WAYMARK_SIM_TRACE=1`).
    pub verbose: bool,
    /// A hash (FNV-1a) of every line ever pushed, with its time: two runs
    /// with equal digests told the same story.
    pub digest: u64,
}

impl Trace {
    /// Records `line` at `at`.
    pub fn push(&mut self, at: Time, line: String) {
        if self.verbose {
            eprintln!("  {:>7}.{:03}s  {line}", at / 1_000, at % 1_000);
        }
        const FNV_PRIME: u64 = 0x0100_0000_01b3;
        if self.digest == 0 {
            self.digest = 0xcbf2_9ce4_8422_2325;
        }
        for byte in at.to_le_bytes().iter().chain(line.as_bytes()) {
            self.digest = (self.digest ^ u64::from(*byte)).wrapping_mul(FNV_PRIME);
        }
        if self.lines.len() == KEEP {
            self.lines.pop_front();
        }
        self.lines.push_back((at, line));
    }
}

impl fmt::Display for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (at, line) in &self.lines {
            writeln!(f, "  {:>7}.{:03}s  {line}", at / 1_000, at % 1_000)?;
        }
        Ok(())
    }
}

/// Why a seed failed.
#[derive(Debug)]
pub struct Failure {
    /// The seed.
    pub seed: u64,
    /// The simulated time of the failure.
    pub at: Time,
    /// The invariant (or `liveness`).
    pub invariant: &'static str,
    /// What is wrong.
    pub problem: String,
    /// The trace up to the failure.
    pub trace: String,
    /// The deliberate defect the run had, if any.
    pub flaw: Option<crate::simulation::params::Flaw>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "seed {} broke `{}` at {}.{:03}s: {}",
            self.seed,
            self.invariant,
            self.at / 1_000,
            self.at % 1_000,
            self.problem
        )?;
        writeln!(f, "last events:")?;
        write!(f, "{}", self.trace)?;
        let flaw = self
            .flaw
            .map_or(String::new(), |flaw| format!("WAYMARK_SIM_FLAW={flaw:?} "));
        write!(
            f,
            "reproduce: {flaw}WAYMARK_SIM_SEED={} cargo test -p rmq-controller --test controller simulation::seeds -- --exact --nocapture",
            self.seed
        )
    }
}
