//! A seeded, deterministic simulation of a controller group and its broker
//! replicas over the controller's sans-IO core (STYLE.md item 25).
//!
//! One `u64` seed fixes everything: the group (3 or 5 nodes), the broker
//! sets, every timeout, every fault, every message delay. Time is simulated
//! (a discrete-event queue), there are no threads and no real clock, so a
//! failing seed fails the same way every time it is run.
//!
//! The nodes replicate with a small Raft model ([`raft`]); the leader
//! decides every broker request with the real `rmq_controller::request::decide`
//! against its applied `Replicas` and its own `LiveTable`, commits the
//! events, applies them and only then answers ([`controller`]). Brokers
//! follow the real broker's flow ([`broker`]). Faults come from
//! [`faults`]; [`invariants`] holds one safety property per file, each
//! checked after every happening, and the liveness judged at the end.
//!
//! * `cargo test -p rmq-controller --test simulation` runs 64 seeds (the
//!   test `seeds`), plus the checks of the model itself;
//! * `WAYMARK_SIM_SEEDS=N` (and `WAYMARK_SIM_FIRST=F`) runs seeds F..F+N;
//! * `WAYMARK_SIM_SEED=K` runs exactly seed K
//!   (`… --test simulation seeds -- --exact --nocapture`);
//! * `WAYMARK_SIM_TRACE=1` prints every traced line as it happens;
//! * the leader answers SYSTEM_ERROR after 5 s without a commit and keeps
//!   its turn until the entry resolves, as `node.rs` does;
//!   `WAYMARK_SIM_COMMIT_WAIT=forever` makes it wait for every commit
//!   instead ([`regressions`] holds the seeds that broke under the first
//!   rule, which moved on at once);
//! * `scripts/simulate.sh` runs thousands of seeds in release mode.

mod broker;
mod clock_jumps;
mod controller;
mod ctx;
mod faults;
mod invariants;
mod msg;
mod net;
mod observe;
mod params;
mod queue;
mod raft;
mod regressions;
mod trace;
mod world;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use params::{CommitWait, Flaw, Params};
use trace::Failure;
use world::{Outcome, World};

/// `node.rs`'s `COMMIT_TIMEOUT`.
const NODE_COMMIT_TIMEOUT: u64 = 5_000;

/// Runs `seed`, with `adjust` applied to the parameters it draws. A panic
/// of the model is a failure of the seed too.
fn run_seed(seed: u64, adjust: impl FnOnce(&mut Params)) -> Result<Outcome, Failure> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut params = Params::draw(seed, &mut rng);
    adjust(&mut params);
    let env = match params.commit_wait {
        CommitWait::Forever => "WAYMARK_SIM_COMMIT_WAIT=forever ".to_owned(),
        CommitWait::Timeout(_) => String::new(),
    };
    let verbose = env_u64("WAYMARK_SIM_TRACE").unwrap_or(0) != 0;
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut world = World::new(params, rng);
        world.ctx.trace.verbose = verbose;
        world.run(&env)
    }));
    result.unwrap_or_else(|panic| {
        let problem = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic".into());
        Err(Failure {
            seed,
            at: 0,
            invariant: "the model panicked",
            problem,
            trace: String::new(),
            env,
        })
    })
}

fn env_u64(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value:?} is not a number")),
    )
}

/// The commit model: node.rs's 5 s timeout, or with
/// `WAYMARK_SIM_COMMIT_WAIT=forever` a leader that waits for every commit.
fn commit_wait() -> CommitWait {
    match std::env::var("WAYMARK_SIM_COMMIT_WAIT").as_deref() {
        Ok("forever") => CommitWait::Forever,
        _ => CommitWait::Timeout(NODE_COMMIT_TIMEOUT),
    }
}

/// The seeds of the normal run, or those the environment names.
#[test]
fn seeds() {
    let seeds: Vec<u64> = match env_u64("WAYMARK_SIM_SEED") {
        Some(seed) => vec![seed],
        None => {
            let first = env_u64("WAYMARK_SIM_FIRST").unwrap_or(0);
            let count = env_u64("WAYMARK_SIM_SEEDS").unwrap_or(64);
            (first..first + count).collect()
        }
    };
    let wait = commit_wait();
    let started = Instant::now();
    let mut total = Outcome::default();
    let mut failures = Vec::new();
    for seed in &seeds {
        match run_seed(*seed, |p| p.commit_wait = wait) {
            Ok(outcome) => {
                total.events += outcome.events;
                total.entries += outcome.entries;
                total.leaders += outcome.leaders;
                total.masters += outcome.masters;
            }
            Err(failure) => {
                eprintln!("\n{failure}\n");
                failures.push(failure.seed);
            }
        }
    }
    eprintln!(
        "simulated {} seeds in {:.1} s: {} events, {} leader elections, {} committed entries, {} master elections; {} failed{}",
        seeds.len(),
        started.elapsed().as_secs_f64(),
        total.events,
        total.leaders,
        total.entries,
        total.masters,
        failures.len(),
        if failures.is_empty() {
            String::new()
        } else {
            format!(": FAILED SEEDS {failures:?}")
        }
    );
    assert!(failures.is_empty(), "failing seeds: {failures:?}");
}

/// Two runs of a seed are the same run, event for event; other seeds are
/// other runs.
#[test]
fn a_seed_replays_exactly() {
    let digest = |seed| run_seed(seed, |_| {}).expect("the seed passes").digest;
    assert_eq!(digest(7), digest(7));
    assert_ne!(digest(7), digest(8));
}

/// The invariants are not vacuous: each deliberate defect of the model is
/// caught within a few seeds, by the invariant it offends. (The rarer
/// `Flaw::DecideAfterCommitTimeout` is checked on its seeds in
/// [`regressions`].)
#[test]
fn deliberate_flaws_are_caught() {
    for flaw in [
        Flaw::VoteWithoutLogCheck,
        Flaw::AnswerBeforeCommit,
        Flaw::DecideWhileCommitting,
    ] {
        let caught = (0..200).find_map(|seed| run_seed(seed, |p| p.flaw = Some(flaw)).err());
        let failure = caught.unwrap_or_else(|| panic!("{flaw:?} went unnoticed in 200 seeds"));
        eprintln!(
            "{flaw:?}: seed {} broke `{}`: {}",
            failure.seed, failure.invariant, failure.problem
        );
    }
}
