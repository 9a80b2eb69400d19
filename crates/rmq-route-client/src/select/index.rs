//! `SendIndex`: the round-robin counter of a publish view (Java
//! `ThreadLocalIndex`).
//!
//! Owns the per-thread counter semantics: each OS thread that uses a given
//! index gets its own value, seeded at first use with a random 32-bit int;
//! `next` increments (wrapping) and returns the value masked non-negative;
//! `reset` stores a random value in `[0, 2^31-1)`. Per-thread values of
//! dropped indexes are purged lazily, so long-running threads do not
//! accumulate them.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

/// Java `ThreadLocalIndex.POSITIVE_MASK`.
const POSITIVE_MASK: i32 = 0x7FFF_FFFF;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static SLOTS: RefCell<Slots> = RefCell::new(Slots::default());
}

/// This thread's counters, keyed by index id.
#[derive(Default)]
struct Slots {
    values: HashMap<u64, (Weak<()>, i32)>,
    purge_above: usize,
}

impl Slots {
    fn purge_dead(&mut self) {
        if self.values.len() > self.purge_above {
            self.values.retain(|_, (alive, _)| alive.strong_count() > 0);
            self.purge_above = (self.values.len() * 2).max(16);
        }
    }
}

/// A per-thread round-robin counter. Each view owns one, so a replaced view
/// restarts counting, as in Java.
#[derive(Debug)]
pub struct SendIndex {
    id: u64,
    alive: Arc<()>,
    rng: Mutex<fastrand::Rng>,
}

impl Default for SendIndex {
    fn default() -> Self {
        SendIndex::new()
    }
}

impl SendIndex {
    /// A counter with random seeds, as Java's.
    pub fn new() -> SendIndex {
        SendIndex::with_rng(fastrand::Rng::new())
    }

    /// A counter whose seeds and resets come from a seeded generator, for
    /// reproducible tests and simulations.
    pub fn seeded(seed: u64) -> SendIndex {
        SendIndex::with_rng(fastrand::Rng::with_seed(seed))
    }

    fn with_rng(rng: fastrand::Rng) -> SendIndex {
        SendIndex {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            alive: Arc::new(()),
            rng: Mutex::new(rng),
        }
    }

    /// Java `incrementAndGet`: this thread's value + 1 (wrapping), stored,
    /// returned `& 0x7FFFFFFF`.
    pub fn next(&self) -> i32 {
        let next = self.with_slot(|value| {
            *value = value.wrapping_add(1);
            *value
        });
        next & POSITIVE_MASK
    }

    /// Java `reset`: this thread's value := random in `[0, 2^31-1)`.
    pub fn reset(&self) {
        let fresh = self.rng.lock().i32(0..i32::MAX);
        self.with_slot(|value| *value = fresh);
    }

    /// Sets this thread's value; the next [`next`](Self::next) returns
    /// `value + 1` (masked). For tests and simulations.
    pub fn set(&self, value: i32) {
        self.with_slot(|slot| *slot = value);
    }

    fn with_slot<R>(&self, f: impl FnOnce(&mut i32) -> R) -> R {
        SLOTS.with(|slots| {
            let mut slots = slots.borrow_mut();
            if !slots.values.contains_key(&self.id) {
                slots.purge_dead();
                let seed = self.rng.lock().i32(..);
                slots
                    .values
                    .insert(self.id, (Arc::downgrade(&self.alive), seed));
            }
            let (_, value) = slots.values.get_mut(&self.id).expect("slot inserted above");
            f(value)
        })
    }
}

impl Drop for SendIndex {
    fn drop(&mut self) {
        // Other threads purge their copies lazily.
        let _ = SLOTS.try_with(|slots| {
            if let Ok(mut slots) = slots.try_borrow_mut() {
                slots.values.remove(&self.id);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_increments_and_masks() {
        let index = SendIndex::new();
        index.set(7);
        assert_eq!([index.next(), index.next(), index.next()], [8, 9, 10]);
        index.set(i32::MAX);
        // Wraps to i32::MIN, masked to 0.
        assert_eq!(index.next(), 0);
        assert_eq!(index.next(), 1);
        index.set(-5);
        assert_eq!(index.next(), -4 & POSITIVE_MASK);
    }

    #[test]
    fn first_use_is_seeded_and_reset_is_non_negative() {
        let a = SendIndex::seeded(42);
        let b = SendIndex::seeded(42);
        assert_eq!(a.next(), b.next(), "same seed, same start");
        for _ in 0..1000 {
            a.reset();
            let v = a.next();
            assert!((1..=i32::MAX).contains(&v), "{v}");
        }
    }

    #[test]
    fn each_thread_has_its_own_value() {
        let index = Arc::new(SendIndex::new());
        index.set(100);
        let other = index.clone();
        std::thread::spawn(move || {
            other.set(5);
            assert_eq!(other.next(), 6);
        })
        .join()
        .unwrap();
        assert_eq!(index.next(), 101);
    }

    #[test]
    fn slots_of_indexes_dropped_elsewhere_are_purged() {
        let (to_worker, jobs) = std::sync::mpsc::channel::<Option<Arc<SendIndex>>>();
        let (done, acks) = std::sync::mpsc::channel::<usize>();
        let worker = std::thread::spawn(move || {
            while let Ok(job) = jobs.recv() {
                if let Some(index) = job {
                    index.next();
                }
                done.send(SLOTS.with(|s| s.borrow().values.len())).unwrap();
            }
        });
        for _ in 0..200 {
            let index = Arc::new(SendIndex::new());
            to_worker.send(Some(index.clone())).unwrap();
            acks.recv().unwrap();
            // Dropped here, on this thread: the worker's slot is now dead.
            drop(index);
        }
        to_worker.send(None).unwrap();
        let live = acks.recv().unwrap();
        assert!(live <= 40, "{live} slots kept on the worker");
        drop(to_worker);
        worker.join().unwrap();
    }
}
