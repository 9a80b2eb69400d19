//! A seeded, deterministic simulation of a controller group and its broker
//! replicas, over the controller's own sans-IO code.
//!
//! One `u64` seed fixes everything: the group (3 or 5 nodes), the broker
//! sets, the settings, every timeout, every fault, every message delay.
//! Time is simulated (a discrete-event queue), there is no real clock and a
//! run is one thread, so a failing seed fails the same way every time it is
//! run.
//!
//! The nodes replicate with a small Raft model ([`raft`]) standing in for
//! openraft. Everything a node decides is the product's code: its request
//! driver (`rmq_controller::core::driver`: turns, commit timeouts, the read
//! barrier, the not-leader answer, expiry, dead-master elections, notices),
//! which calls the real `decide` functions on its applied `Replicas` and its
//! own `LiveTable`; the simulation only carries out the driver's actions
//! over the model, as `node/drive.rs` does over openraft and tokio
//! ([`controller`]). Brokers follow the real broker's flow ([`broker`]).
//! Faults come from [`faults`]; [`invariants`] holds one safety property
//! per file, each checked after every happening, and the liveness judged at
//! the end.
//!
//! * `cargo test -p rmq-controller --test controller -- simulation::` runs
//!   1 000 seeds (the test `simulation::seeds`, on every core), the checks
//!   of the model itself, and the seeds that once failed ([`regressions`]);
//! * `WAYMARK_SIM_SEEDS=N` (and `WAYMARK_SIM_FIRST=F`) runs seeds F..F+N;
//! * `WAYMARK_SIM_SEED=K` runs exactly seed K
//!   (`… --test controller simulation::seeds -- --exact --nocapture`);
//! * `WAYMARK_SIM_THREADS=T` runs the seeds on T threads (default: every
//!   core);
//! * `WAYMARK_SIM_TRACE=1` prints every traced line as it happens;
//! * `WAYMARK_SIM_FLAW=DecideAfterCommitTimeout` (or another [`Flaw`]) runs
//!   the seeds with a deliberate defect, to find seeds that show it;
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

use params::{Flaw, Params};
use rmq_testkit::seeds::{self, env_u64};
use trace::Failure;
use world::{Outcome, World};

/// Seeds of a plain `cargo test` run.
const DEFAULT_SEEDS: u64 = 1_000;

/// Runs `seed`, with `adjust` applied to the parameters it draws. A panic
/// of the model is a failure of the seed too.
fn run_seed(seed: u64, adjust: impl FnOnce(&mut Params)) -> Result<Outcome, Failure> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut params = Params::draw(seed, &mut rng);
    adjust(&mut params);
    let flaw = params.flaw;
    let verbose = env_u64("WAYMARK_SIM_TRACE").unwrap_or(0) != 0;
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut world = World::new(params, rng);
        world.ctx.trace.verbose = verbose;
        world.run()
    }));
    result.unwrap_or_else(|panic| {
        let problem = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic".into());
        Err(Failure {
            seed,
            flaw,
            at: 0,
            invariant: "the model panicked",
            problem,
            trace: String::new(),
        })
    })
}

/// The deliberate defect `WAYMARK_SIM_FLAW` names, if any.
fn flaw_from_env() -> Option<Flaw> {
    let name = std::env::var("WAYMARK_SIM_FLAW").ok()?;
    let flaw = Flaw::ALL
        .into_iter()
        .find(|flaw| format!("{flaw:?}") == name.trim());
    Some(flaw.unwrap_or_else(|| panic!("WAYMARK_SIM_FLAW={name:?} is none of {:?}", Flaw::ALL)))
}

/// The seeds of the normal run, or those the environment names, spread
/// over the cores (each seed is one thread's, start to end).
#[test]
fn seeds() {
    let seeds = seeds::chosen("WAYMARK_SIM", DEFAULT_SEEDS);
    let flaw = flaw_from_env();
    let threads = env_u64("WAYMARK_SIM_THREADS")
        .map_or(seeds::cores(), |t| usize::try_from(t).unwrap_or(1))
        .clamp(1, seeds.len().max(1));
    let started = Instant::now();
    let results = seeds::run_all(&seeds, threads, |seed| run_seed(seed, |p| p.flaw = flaw));
    let (passed, failures) = seeds::passed_and_failed(results);
    let mut total = Outcome::default();
    for outcome in passed {
        total.events += outcome.events;
        total.entries += outcome.entries;
        total.leaders += outcome.leaders;
        total.masters += outcome.masters;
    }
    eprintln!(
        "simulated {} seeds on {threads} threads in {:.1} s: {} events, {} leader elections, {} committed entries, {} master elections; {} failed{}",
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
/// caught within a few hundred seeds, by the invariant it offends. (The
/// rarer `Flaw::DecideAfterCommitTimeout` is checked on its seeds in
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
