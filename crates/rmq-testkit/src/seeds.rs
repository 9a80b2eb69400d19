//! Seeded simulations: which seeds a run takes from the environment, and
//! running them on every core. The controller's and the NameServer
//! cluster's simulations share it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The number in environment variable `name`, if set.
///
/// # Panics
/// When it is set to something that is not a number: a mistyped seed must
/// not quietly run the default ones.
pub fn env_u64(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value:?} is not a number")),
    )
}

/// The seeds to run: exactly `{prefix}_SEED` when set, else
/// `{prefix}_SEEDS` (default `count`) from `{prefix}_FIRST` (default 0).
pub fn chosen(prefix: &str, count: u64) -> Vec<u64> {
    if let Some(seed) = env_u64(&format!("{prefix}_SEED")) {
        return vec![seed];
    }
    let first = env_u64(&format!("{prefix}_FIRST")).unwrap_or(0);
    let count = env_u64(&format!("{prefix}_SEEDS")).unwrap_or(count);
    (first..first + count).collect()
}

/// Runs `run` on every seed over `threads` threads (at least one, at most
/// one per seed), each seed one thread's from start to end; the results
/// come back in seed order.
pub fn run_all<R: Send>(
    seeds: &[u64],
    threads: usize,
    run: impl Fn(u64) -> R + Sync,
) -> Vec<(u64, R)> {
    let threads = threads.clamp(1, seeds.len().max(1));
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::with_capacity(seeds.len()));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(&seed) = seeds.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let result = run(seed);
                    results
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((seed, result));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(seed, _)| *seed);
    results
}

/// The outcomes of the seeds that passed and, in order, the seeds that
/// failed, each failure printed as it is found (a simulation's report).
pub fn passed_and_failed<T, E: std::fmt::Display>(
    results: Vec<(u64, Result<T, E>)>,
) -> (Vec<T>, Vec<u64>) {
    let mut passed = Vec::new();
    let mut failed = Vec::new();
    for (seed, result) in results {
        match result {
            Ok(outcome) => passed.push(outcome),
            Err(failure) => {
                eprintln!("\n{failure}\n");
                failed.push(seed);
            }
        }
    }
    (passed, failed)
}

/// The cores this machine offers.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_named_by_seed_and_passes_kept_in_order() {
        let results = vec![(3, Ok(30)), (4, Err("boom")), (5, Ok(50)), (9, Err("bang"))];
        let (passed, failed) = passed_and_failed(results);
        assert_eq!(passed, vec![30, 50]);
        assert_eq!(failed, vec![4, 9]);
    }

    #[test]
    fn every_seed_runs_once_and_comes_back_in_order() {
        let seeds: Vec<u64> = (10..60).rev().collect();
        let results = run_all(&seeds, 3, |seed| seed * 2);
        let expected: Vec<(u64, u64)> = (10..60).map(|seed| (seed, seed * 2)).collect();
        assert_eq!(results, expected);
        assert!(run_all(&[], 4, |seed| seed).is_empty());
    }
}
