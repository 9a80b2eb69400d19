//! Latency fault tolerance: which broker groups a producer should avoid for
//! a while after a slow or failed send (Java `LatencyFaultToleranceImpl`
//! and `MQFaultStrategy`'s duration tables).
//!
//! Owns the fault table keyed by broker name and the exact latency →
//! not-available-duration bands. Plain data with synchronous methods; time
//! is an argument. It does not choose queues (`strategy`) and runs no
//! detector (`startDetectorEnable`, default off, is not implemented).

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Java `MQFaultStrategy.latencyMax`, milliseconds.
pub const LATENCY_MAX: [u64; 7] = [50, 100, 550, 1_800, 3_000, 5_000, 15_000];
/// Java `MQFaultStrategy.notAvailableDuration`, milliseconds.
pub const NOT_AVAILABLE_DURATION: [u64; 7] = [0, 0, 2_000, 5_000, 6_000, 10_000, 30_000];
/// The latency an isolation counts as (Java passes 10 000 for `isolation`).
pub const ISOLATION_LATENCY: u64 = 10_000;

/// Java `computeNotAvailableDuration`: the duration of the highest band
/// whose lower bound `latency_ms` reaches.
pub fn not_available_duration(latency_ms: u64) -> Duration {
    LATENCY_MAX
        .iter()
        .zip(NOT_AVAILABLE_DURATION)
        .rev()
        .find(|(max, _)| latency_ms >= **max)
        .map_or(Duration::ZERO, |(_, d)| Duration::from_millis(d))
}

/// One broker's record (Java `FaultItem`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultItem {
    /// Latency of the last recorded attempt, milliseconds.
    pub current_latency: u64,
    /// The broker is avoided until then; `None` (Java 0) = never was.
    pub available_at: Option<Instant>,
    /// False after a transport failure (until a later attempt succeeds).
    pub reachable: bool,
}

impl FaultItem {
    /// Java `isAvailable`: `now >= startTimestamp`.
    pub fn is_available(&self, now: Instant) -> bool {
        self.available_at.is_none_or(|at| now >= at)
    }
}

/// The fault table (Java `LatencyFaultToleranceImpl.faultItemTable`).
#[derive(Debug, Default, Clone)]
pub struct LatencyFaultTolerance {
    items: HashMap<String, FaultItem>,
}

impl LatencyFaultTolerance {
    /// Java `MQFaultStrategy.updateFaultItem` + `LatencyFaultToleranceImpl.updateFaultItem`:
    /// records an attempt on `broker`. The avoidance window is
    /// `not_available_duration(isolation ? 10 000 : latency)` from `now` and
    /// only ever extends: a later fast success never shortens it.
    pub fn update(
        &mut self,
        broker: &str,
        latency_ms: u64,
        isolation: bool,
        reachable: bool,
        now: Instant,
    ) {
        let duration = not_available_duration(if isolation {
            ISOLATION_LATENCY
        } else {
            latency_ms
        });
        let item = self
            .items
            .entry(broker.to_owned())
            .or_insert_with(|| FaultItem {
                current_latency: 0,
                available_at: None,
                reachable: true,
            });
        item.current_latency = latency_ms;
        if !duration.is_zero() {
            let until = now + duration;
            if item.available_at.is_none_or(|at| until > at) {
                item.available_at = Some(until);
            }
        }
        item.reachable = reachable;
    }

    /// No item, or its window has passed.
    pub fn is_available(&self, broker: &str, now: Instant) -> bool {
        self.items.get(broker).is_none_or(|i| i.is_available(now))
    }

    /// No item, or the item is marked reachable.
    pub fn is_reachable(&self, broker: &str) -> bool {
        self.items.get(broker).is_none_or(|i| i.reachable)
    }

    /// Java `remove`: forgets a broker.
    pub fn remove(&mut self, broker: &str) {
        self.items.remove(broker);
    }

    /// The item of `broker`, if any.
    pub fn item(&self, broker: &str) -> Option<&FaultItem> {
        self.items.get(broker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_bands_of_the_java_tables() {
        let table = [
            (0, 0),
            (49, 0),
            (50, 0),
            (100, 0),
            (549, 0),
            (550, 2_000),
            (1_799, 2_000),
            (1_800, 5_000),
            (2_999, 5_000),
            (3_000, 6_000),
            (4_999, 6_000),
            (5_000, 10_000),
            (10_000, 10_000),
            (14_999, 10_000),
            (15_000, 30_000),
            (u64::MAX, 30_000),
        ];
        for (latency, want) in table {
            assert_eq!(
                not_available_duration(latency),
                Duration::from_millis(want),
                "latency {latency}"
            );
        }
    }

    #[test]
    fn windows_only_extend_and_reachability_follows_the_last_attempt() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut table = LatencyFaultTolerance::default();
        assert!(table.is_available("a", t0) && table.is_reachable("a"));

        // Fast success: item exists, no window.
        table.update("a", 20, false, true, t0);
        assert!(table.is_available("a", t0));
        assert_eq!(table.item("a").unwrap().available_at, None);

        // Isolation: 10 s, unreachable.
        table.update("a", 3_000, true, false, t0);
        assert!(!table.is_available("a", t0 + ms(9_999)));
        assert!(table.is_available("a", t0 + ms(10_000)));
        assert!(!table.is_reachable("a"));

        // A later fast success does not shorten it, but marks reachable.
        table.update("a", 10, false, true, t0 + ms(1_000));
        assert!(!table.is_available("a", t0 + ms(9_999)));
        assert!(table.is_reachable("a"));
        assert_eq!(table.item("a").unwrap().current_latency, 10);

        // A shorter window later does not move it back; a longer one extends.
        table.update("a", 600, false, true, t0 + ms(2_000)); // until 4 s < 10 s
        assert_eq!(table.item("a").unwrap().available_at, Some(t0 + ms(10_000)));
        table.update("a", 20_000, false, true, t0 + ms(2_000)); // until 32 s
        assert_eq!(table.item("a").unwrap().available_at, Some(t0 + ms(32_000)));

        // Other brokers are unaffected; remove forgets.
        assert!(table.is_available("b", t0));
        table.remove("a");
        assert!(table.is_available("a", t0) && table.item("a").is_none());
    }
}
