//! Queue choice for one send attempt (Java `MQFaultStrategy.selectOneMessageQueue`,
//! and the recording of its outcome (`DefaultMQProducerImpl.sendDefaultImpl`
//! calling `updateFaultItem`).
//!
//! Owns the `sendLatencyFaultEnable` switch and the fault table behind one
//! lock. The send loop itself (retries, timeouts) belongs to a producer,
//! which calls [`FaultStrategy::select`] per attempt and
//! [`FaultStrategy::record`] after it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

use super::fault::LatencyFaultTolerance;
use crate::view::PublishInfo;
use crate::MessageQueue;

/// How a send attempt ended, as Java's send loop (`sendDefaultImpl`)
/// classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOutcome {
    /// The broker answered (any send status), or the client failed before
    /// sending (`MQClientException`), or the call was interrupted.
    Answered,
    /// Connect, write or timeout failure (`RemotingException`).
    Transport,
    /// The broker answered with an error code (`MQBrokerException`).
    BrokerError,
}

impl SendOutcome {
    /// `(isolation, reachable)` passed to `updateFaultItem`, with the
    /// detector off (Java's default; with it on a transport failure is
    /// `(true, false)` as well).
    pub fn fault_flags(self) -> (bool, bool) {
        match self {
            SendOutcome::Answered => (false, true),
            SendOutcome::Transport => (true, true),
            SendOutcome::BrokerError => (true, false),
        }
    }
}

/// Java `MQFaultStrategy`: optional latency-aware avoidance of brokers.
#[derive(Debug, Default)]
pub struct FaultStrategy {
    enabled: AtomicBool,
    table: Mutex<LatencyFaultTolerance>,
}

impl FaultStrategy {
    /// A strategy with `sendLatencyFaultEnable = enabled`.
    pub fn new(enabled: bool) -> FaultStrategy {
        FaultStrategy {
            enabled: AtomicBool::new(enabled),
            table: Mutex::default(),
        }
    }

    /// Java `sendLatencyFaultEnable`.
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// Switches latency fault tolerance on or off.
    pub fn set_enabled(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::Relaxed);
    }

    /// Picks the queue of one attempt. `last_broker` is the broker of the
    /// previous attempt of the same send; `reset_index` is true for every
    /// attempt after the first.
    ///
    /// Enabled: first a queue whose broker is *available* and not the last
    /// one, then one that is *reachable* and not the last, then any.
    /// Disabled: one not on the last broker, then any. `None` only if the
    /// view has no queues.
    pub fn select(
        &self,
        info: &PublishInfo,
        last_broker: Option<&str>,
        reset_index: bool,
        now: Instant,
    ) -> Option<MessageQueue> {
        let not_last = |mq: &MessageQueue| last_broker.is_none_or(|last| mq.broker_name != last);
        if !self.enabled() {
            return info
                .select_filtered(not_last)
                .or_else(|| info.select_plain())
                .cloned();
        }
        if reset_index {
            info.index.reset();
        }
        let table = self.table.lock();
        info.select_filtered(|mq| table.is_available(&mq.broker_name, now) && not_last(mq))
            .or_else(|| {
                info.select_filtered(|mq| table.is_reachable(&mq.broker_name) && not_last(mq))
            })
            .or_else(|| info.select_plain())
            .cloned()
    }

    /// Java `updateFaultItem`: records an attempt on `broker` that took
    /// `latency_ms`. No-op while disabled.
    pub fn update_fault_item(
        &self,
        broker: &str,
        latency_ms: u64,
        isolation: bool,
        reachable: bool,
        now: Instant,
    ) {
        if self.enabled() {
            self.table
                .lock()
                .update(broker, latency_ms, isolation, reachable, now);
        }
    }

    /// [`update_fault_item`](Self::update_fault_item) with the flags of `outcome`.
    pub fn record(&self, broker: &str, latency_ms: u64, outcome: SendOutcome, now: Instant) {
        let (isolation, reachable) = outcome.fault_flags();
        self.update_fault_item(broker, latency_ms, isolation, reachable, now);
    }

    /// A copy of the fault table, for inspection.
    pub fn snapshot(&self) -> LatencyFaultTolerance {
        self.table.lock().clone()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::select::SendIndex;

    fn info(queues: &[(&str, i32)]) -> PublishInfo {
        PublishInfo {
            queues: queues
                .iter()
                .map(|(b, i)| MessageQueue::new("T", *b, *i))
                .collect(),
            order_topic: false,
            index: SendIndex::seeded(1),
        }
    }

    fn name(mq: &MessageQueue) -> String {
        format!("{}:{}", mq.broker_name, mq.queue_id)
    }

    #[test]
    fn a_timed_out_broker_is_avoided_for_ten_seconds() {
        let t0 = Instant::now();
        let view = info(&[("a", 0), ("a", 1), ("b", 0), ("b", 1)]);
        let strategy = FaultStrategy::new(true);
        view.index.set(7);
        // 1. 8 % 4 = 0 → a:0; it times out after 3 s (transport, detector off).
        let first = strategy.select(&view, None, false, t0).unwrap();
        assert_eq!(name(&first), "a:0");
        strategy.record("a", 3_000, SendOutcome::Transport, t0);
        // 2. Retry: index reset, last = a → some b queue.
        let second = strategy.select(&view, Some("a"), true, t0).unwrap();
        assert_eq!(second.broker_name, "b");
        // 3. For the next 10 s only b is used, alternating in counter order.
        let later: Vec<_> = (0..4)
            .map(|_| {
                name(
                    &strategy
                        .select(&view, None, false, t0 + Duration::from_secs(5))
                        .unwrap(),
                )
            })
            .collect();
        assert!(later.iter().all(|n| n.starts_with("b:")), "{later:?}");
        assert_ne!(later[0], later[1]);
        assert_eq!(later[0], later[2]);
        // After the window a is back.
        let after: Vec<_> = (0..4)
            .map(|_| {
                strategy
                    .select(&view, None, false, t0 + Duration::from_secs(10))
                    .unwrap()
                    .broker_name
            })
            .collect();
        assert!(after.iter().any(|b| b == "a"));
    }

    #[test]
    fn table_of_selection_fallbacks() {
        let t0 = Instant::now();
        // (enabled, faults: (broker, isolation, reachable), last, counter, expected)
        type Fault = (&'static str, bool, bool);
        type Case<'a> = (bool, &'a [Fault], Option<&'a str>, i32, &'a str);
        let cases: &[Case<'_>] = &[
            // Disabled: avoid last broker only; faults ignored.
            (false, &[("a", true, false)], None, 7, "a:0"),
            (false, &[], Some("a"), 7, "b:0"),
            // Enabled: unavailable a skipped.
            (true, &[("a", true, true)], None, 7, "b:0"),
            // Enabled: everything unavailable, a reachable, b not → a.
            (
                true,
                &[("a", true, true), ("b", true, false)],
                None,
                9,
                "a:0",
            ),
            // Enabled: nothing available nor reachable → plain after 8 tries.
            (
                true,
                &[("a", true, false), ("b", true, false)],
                None,
                7,
                "a:0",
            ),
            // Enabled: last broker excluded even when available.
            (true, &[], Some("b"), 9, "a:0"),
        ];
        for (i, (enabled, faults, last, counter, want)) in cases.iter().enumerate() {
            let view = info(&[("a", 0), ("a", 1), ("b", 0), ("b", 1)]);
            let strategy = FaultStrategy::new(*enabled);
            strategy.set_enabled(true);
            for (broker, isolation, reachable) in *faults {
                strategy.update_fault_item(broker, 0, *isolation, *reachable, t0);
            }
            strategy.set_enabled(*enabled);
            view.index.set(*counter);
            let got = strategy.select(&view, *last, false, t0).unwrap();
            assert_eq!(name(&got), *want, "case {i}");
        }
        let single = info(&[("a", 0), ("a", 1)]);
        single.index.set(7);
        let got = FaultStrategy::new(false)
            .select(&single, Some("a"), false, t0)
            .unwrap();
        // Two filtered tries (8, 9) fail; plain takes 10 % 2 = 0.
        assert_eq!(name(&got), "a:0");
        assert!(FaultStrategy::new(true)
            .select(&info(&[]), None, true, t0)
            .is_none());
    }

    #[test]
    fn disabled_strategy_records_nothing() {
        let strategy = FaultStrategy::new(false);
        strategy.record("a", 20_000, SendOutcome::BrokerError, Instant::now());
        assert!(strategy.snapshot().item("a").is_none());
        assert_eq!(SendOutcome::BrokerError.fault_flags(), (true, false));
        assert_eq!(SendOutcome::Answered.fault_flags(), (false, true));
    }
}
