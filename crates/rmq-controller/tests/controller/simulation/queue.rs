//! Simulated time: a priority queue of pending happenings ordered by
//! `(time, sequence number)`. The sequence number breaks ties in the order
//! things were scheduled, so two runs of one seed pop the same events in the
//! same order; nothing here looks at a real clock.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Milliseconds of simulated time since the run started.
pub type Time = u64;

struct Scheduled<E> {
    at: Time,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl<E> Eq for Scheduled<E> {}

impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Scheduled<E> {
    // Reversed: `BinaryHeap` is a max-heap and the earliest must come first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// The discrete-event queue and the current simulated time.
pub struct Queue<E> {
    heap: BinaryHeap<Scheduled<E>>,
    seq: u64,
    now: Time,
}

impl<E> Queue<E> {
    /// An empty queue at time 0.
    pub fn new() -> Queue<E> {
        Queue {
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0,
        }
    }

    /// The time of the event being handled.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedules `event` `after` ms from now.
    pub fn after(&mut self, after: Time, event: E) {
        self.seq += 1;
        self.heap.push(Scheduled {
            at: self.now.saturating_add(after),
            seq: self.seq,
            event,
        });
    }

    /// The next event, if it is due no later than `until`; time moves to it.
    pub fn pop_until(&mut self, until: Time) -> Option<E> {
        if self.heap.peek()?.at > until {
            return None;
        }
        let next = self.heap.pop()?;
        debug_assert!(next.at >= self.now, "time never runs backwards");
        self.now = next.at;
        Some(next.event)
    }

    /// Moves time to `at` without handling anything (the end of a phase).
    pub fn advance_to(&mut self, at: Time) {
        self.now = self.now.max(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_in_scheduling_order() {
        let mut queue = Queue::new();
        queue.after(5, "late");
        queue.after(1, "first");
        queue.after(1, "second");
        assert_eq!(queue.pop_until(10), Some("first"));
        assert_eq!(queue.pop_until(10), Some("second"));
        assert_eq!(queue.now(), 1);
        assert_eq!(queue.pop_until(4), None, "not due yet");
        assert_eq!(queue.pop_until(10), Some("late"));
        assert_eq!(queue.now(), 5);
    }
}
