//! The pools that run heavy requests off the runtime's workers, with Java's
//! bounded queue: a request that would wait beyond
//! `defaultThreadPoolQueueCapacity` is answered at once with SYSTEM_BUSY, as
//! Java's `ThreadPoolExecutor` rejects it (NettyRemotingAbstract's
//! `RejectedExecutionException` branch).
//!
//! Separate pools, so a registration storm never delays an fsync'd KV or config
//! write, nor the other way round: Java runs them all on one
//! `defaultExecutor`, where a burst of one starves the other.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};

/// Java's remark for a request its thread pool rejected.
pub const OVERLOAD_REMARK: &str = "[OVERLOAD]system busy, start flow control for a while";

/// A pool: at most `workers` requests run at once, at most `capacity` wait.
#[derive(Debug)]
pub struct HeavyPool {
    name: &'static str,
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    capacity: usize,
    rejected: AtomicU64,
}

/// A request's place in a pool.
#[derive(Debug)]
pub enum Admission {
    /// A slot was free: run now.
    Run(OwnedSemaphorePermit),
    /// Every slot is taken: wait for one (counted against the capacity
    /// until [`Waiting::slot`] returns or the ticket is dropped).
    Wait(Waiting),
    /// Every slot is taken and the queue is full.
    Busy,
}

/// A request queued for a slot.
#[derive(Debug)]
pub struct Waiting {
    pool: Arc<HeavyPool>,
}

impl HeavyPool {
    /// A pool named `name` (for logs) of `workers` (at least one) slots and
    /// `capacity` queue places.
    pub fn new(name: &'static str, workers: usize, capacity: usize) -> Arc<HeavyPool> {
        Arc::new(HeavyPool {
            name,
            slots: Arc::new(Semaphore::new(workers.max(1))),
            waiting: AtomicUsize::new(0),
            capacity,
            rejected: AtomicU64::new(0),
        })
    }

    /// The pool's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Requests waiting for a slot now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// Admits a request: a free slot, a queue place, or neither. Decided
    /// synchronously, in arrival order (tokio's semaphore hands released
    /// slots to waiters first, so a newcomer never overtakes the queue).
    pub fn admit(self: &Arc<Self>) -> Admission {
        match self.slots.clone().try_acquire_owned() {
            Ok(permit) => return Admission::Run(permit),
            Err(TryAcquireError::Closed) => return Admission::Busy,
            Err(TryAcquireError::NoPermits) => {}
        }
        let queued = self
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.capacity).then_some(n + 1)
            });
        match queued {
            Ok(_) => Admission::Wait(Waiting { pool: self.clone() }),
            Err(_) => {
                self.rejected.fetch_add(1, Ordering::Relaxed);
                Admission::Busy
            }
        }
    }

    /// Requests refused so far (for logs: a flood is logged, not each request).
    pub fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }
}

impl Waiting {
    /// Waits for a slot; `None` if the pool was closed.
    pub async fn slot(self) -> Option<OwnedSemaphorePermit> {
        self.pool.slots.clone().acquire_owned().await.ok()
        // `self` drops here: the request leaves the queue.
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.pool.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn beyond_the_capacity_requests_are_refused_until_the_queue_drains() {
        let pool = HeavyPool::new("test", 1, 2);
        let Admission::Run(running) = pool.admit() else {
            panic!("a free slot runs at once")
        };
        let Admission::Wait(first) = pool.admit() else {
            panic!("queued")
        };
        let Admission::Wait(second) = pool.admit() else {
            panic!("queued")
        };
        assert_eq!(pool.waiting(), 2);
        assert!(matches!(pool.admit(), Admission::Busy));

        // The first waiter gets the slot when it is released and leaves the
        // queue, which makes room for one more.
        let first = tokio::spawn(first.slot());
        drop(running);
        let slot = first.await.unwrap().expect("a slot");
        assert_eq!(pool.waiting(), 1);
        assert!(matches!(pool.admit(), Admission::Wait(_)));

        // A waiter that gives up (its future dropped) leaves the queue too.
        drop(second);
        assert_eq!(pool.waiting(), 0);
        drop(slot);
        assert!(matches!(pool.admit(), Admission::Run(_)));
    }

    #[test]
    fn a_zero_capacity_refuses_whenever_every_slot_is_taken() {
        let pool = HeavyPool::new("test", 1, 0);
        let _running = pool.admit();
        assert!(matches!(pool.admit(), Admission::Busy));
    }
}
