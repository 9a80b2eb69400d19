//! The server's memory budgets: bytes of partially received frames (one
//! budget for the whole server) and bytes of responses queued for writing
//! (per connection and for the whole server).
//!
//! Both exist so that the server's memory does not grow with what peers
//! choose to do: announce large frames and send them slowly, or pipeline
//! requests and never read the answers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use rmq_wire::RemotingCommand;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use crate::session::Activity;

/// Budget is counted in units of this many bytes, so that a frame of the
/// largest size (16 MiB) fits a semaphore's `u32` permit count.
const UNIT: usize = 1024;

/// The server-wide budget for frames being received.
#[derive(Debug, Clone)]
pub(crate) struct FrameBudget {
    units: Arc<Semaphore>,
    total_bytes: usize,
}

impl FrameBudget {
    /// A budget of `bytes` (at least one frame of the largest size).
    pub(crate) fn new(bytes: usize) -> FrameBudget {
        let units = bytes.div_ceil(UNIT).clamp(1, Semaphore::MAX_PERMITS);
        FrameBudget {
            units: Arc::new(Semaphore::new(units)),
            total_bytes: units * UNIT,
        }
    }

    /// Budget for a frame of `bytes`, when it is free.
    pub(crate) async fn acquire(&self, bytes: usize) -> OwnedSemaphorePermit {
        let units = self.units_for(bytes);
        match self.units.clone().acquire_many_owned(units).await {
            Ok(permit) => permit,
            // The semaphore is never closed.
            Err(_) => unreachable!("the frame budget's semaphore is never closed"),
        }
    }

    /// Budget for a frame of `bytes`, if it is free now.
    pub(crate) fn try_acquire(&self, bytes: usize) -> Option<OwnedSemaphorePermit> {
        self.units
            .clone()
            .try_acquire_many_owned(self.units_for(bytes))
            .ok()
    }

    fn units_for(&self, bytes: usize) -> u32 {
        // A frame larger than the whole budget waits for all of it rather
        // than forever.
        let units = bytes.div_ceil(UNIT).min(self.total_bytes / UNIT);
        u32::try_from(units).unwrap_or(u32::MAX)
    }
}

/// Bytes of responses queued on one connection and on the whole server;
/// and the rest of what the connection's reader, writer and handle share,
/// so that a connection's small shared parts are one allocation.
#[derive(Debug)]
pub(crate) struct ResponseQueue {
    /// The connection's last read or write.
    pub(crate) activity: Activity,
    /// What stopped the connection's writer, if it failed.
    pub(crate) write_error: OnceLock<String>,
    own: AtomicUsize,
    server: Arc<AtomicUsize>,
    own_limit: usize,
    server_limit: usize,
    /// Woken whenever queued responses of this connection are written or dropped.
    drained: Notify,
}

impl ResponseQueue {
    /// The queue of one connection, counting into `server`.
    pub(crate) fn new(
        server: Arc<AtomicUsize>,
        own_limit: usize,
        server_limit: usize,
    ) -> ResponseQueue {
        ResponseQueue {
            activity: Activity::new(),
            write_error: OnceLock::new(),
            own: AtomicUsize::new(0),
            server,
            own_limit,
            server_limit,
            drained: Notify::new(),
        }
    }

    /// Counts `command` as queued until the returned charge is dropped
    /// (written, or discarded with the connection).
    pub(crate) fn charge(self: &Arc<Self>, command: &RemotingCommand) -> Charge {
        let bytes = approximate_frame_len(command);
        self.own.fetch_add(bytes, Ordering::Relaxed);
        self.server.fetch_add(bytes, Ordering::Relaxed);
        Charge {
            queue: self.clone(),
            bytes,
        }
    }

    /// Whether the connection should not be read until its queue drains:
    /// its own queue is over its limit, or the server's is over the server's
    /// limit and this connection has answers waiting (the connections that
    /// do not read their answers are the ones that stop being read).
    pub(crate) fn is_full(&self) -> bool {
        let own = self.own.load(Ordering::Relaxed);
        own > self.own_limit || (own > 0 && self.server.load(Ordering::Relaxed) > self.server_limit)
    }

    /// Bytes queued on this connection.
    pub(crate) fn queued(&self) -> usize {
        self.own.load(Ordering::Relaxed)
    }

    /// Resolves after queued responses of this connection were written or
    /// dropped since the last call (a wake-up stored while nobody waited
    /// counts, so none is lost between checking [`is_full`](Self::is_full)
    /// and waiting).
    pub(crate) async fn drained(&self) {
        self.drained.notified().await;
    }
}

/// One queued response's share of its [`ResponseQueue`].
#[derive(Debug)]
pub(crate) struct Charge {
    queue: Arc<ResponseQueue>,
    bytes: usize,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.queue.own.fetch_sub(self.bytes, Ordering::Relaxed);
        self.queue.server.fetch_sub(self.bytes, Ordering::Relaxed);
        self.queue.drained.notify_one();
    }
}

/// What `command` takes on the wire, near enough for accounting: the body,
/// the remark and the header fields, plus the fixed part of a header.
pub(crate) fn approximate_frame_len(command: &RemotingCommand) -> usize {
    const FIXED: usize = 128;
    let body = command.body.as_ref().map_or(0, |b| b.len());
    let remark = command.remark.as_ref().map_or(0, |r| r.len());
    let ext: usize = command.ext_fields.as_ref().map_or(0, |ext| {
        ext.iter().map(|(k, v)| k.len() + v.len() + 6).sum()
    });
    FIXED + body + remark + ext
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frame_budget_is_shared_and_returned() {
        let budget = FrameBudget::new(64 * 1024);
        let first = budget.try_acquire(40 * 1024).expect("free");
        assert!(budget.try_acquire(40 * 1024).is_none(), "over budget");
        drop(first);
        assert!(budget.try_acquire(40 * 1024).is_some(), "returned");
    }

    #[tokio::test]
    async fn a_frame_larger_than_the_budget_takes_all_of_it() {
        let budget = FrameBudget::new(8 * 1024);
        let all = budget.try_acquire(16 << 20).expect("the whole budget");
        assert!(budget.try_acquire(1).is_none());
        drop(all);
        assert!(budget.try_acquire(8 * 1024).is_some(), "all of it returned");
    }

    #[tokio::test]
    async fn queued_responses_count_until_dropped() {
        let server = Arc::new(AtomicUsize::new(0));
        let queue = Arc::new(ResponseQueue::new(server.clone(), 1000, 1_000_000));
        let big = RemotingCommand::request(0, 1).with_body(vec![0u8; 2000]);
        let charge = queue.charge(&big);
        assert!(queue.is_full());
        assert!(server.load(Ordering::Relaxed) >= 2000);
        drop(charge);
        assert!(!queue.is_full());
        assert_eq!(server.load(Ordering::Relaxed), 0);
        // The wake-up of the drop is kept for the next waiter.
        tokio::time::timeout(std::time::Duration::from_secs(1), queue.drained())
            .await
            .expect("stored wake-up");
    }

    #[tokio::test]
    async fn the_server_limit_stops_only_connections_with_answers_waiting() {
        let server = Arc::new(AtomicUsize::new(0));
        let busy = Arc::new(ResponseQueue::new(server.clone(), 1 << 20, 1000));
        let idle = Arc::new(ResponseQueue::new(server.clone(), 1 << 20, 1000));
        let _held = busy.charge(&RemotingCommand::request(0, 1).with_body(vec![0u8; 5000]));
        assert!(busy.is_full());
        assert!(!idle.is_full(), "nothing queued on it");
    }
}
