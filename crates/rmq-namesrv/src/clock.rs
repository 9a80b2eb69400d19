//! The server's clocks: the monotonic one (milliseconds since start, read
//! through tokio so tests can pause and advance time) that every duration
//! is measured on, and the wall clock, read only where a date must be told
//! to others, through one type that tests substitute.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

use crate::route::Millis;

/// Milliseconds since the clock was made.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    origin: Instant,
}

impl Clock {
    /// Starts counting now.
    pub fn start() -> Clock {
        Clock {
            origin: Instant::now(),
        }
    }

    /// Milliseconds since start.
    pub fn now(&self) -> Millis {
        self.origin.elapsed().as_millis() as Millis
    }
}

/// The wall clock (milliseconds since the Unix epoch), for what must be
/// told to others as a date: a cluster incarnation, when a registration
/// changed. Never used to measure a duration: the host's clock may be
/// stepped either way at any time (an NTP correction, an operator), and
/// liveness and expiry run on [`Clock`] instead.
///
/// The system clock unless made with [`WallClock::steppable`], whose
/// [`WallStep`] moves it as a correction of the host's clock would.
#[derive(Debug, Clone, Default)]
pub struct WallClock {
    /// Added to the system clock (ms); `None`: the system clock as is.
    offset: Option<Arc<AtomicI64>>,
}

/// Steps a [`WallClock::steppable`] clock.
#[derive(Debug, Clone)]
pub struct WallStep {
    offset: Arc<AtomicI64>,
}

impl WallClock {
    /// The host's clock.
    pub fn system() -> WallClock {
        WallClock::default()
    }

    /// A clock that runs with the host's until stepped through the
    /// returned [`WallStep`].
    pub fn steppable() -> (WallClock, WallStep) {
        let offset = Arc::new(AtomicI64::new(0));
        (
            WallClock {
                offset: Some(offset.clone()),
            },
            WallStep { offset },
        )
    }

    /// Milliseconds since the Unix epoch; 0 for a clock set before it.
    pub fn now_ms(&self) -> u64 {
        let system = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
            });
        let offset = self
            .offset
            .as_ref()
            .map_or(0, |offset| offset.load(Ordering::Relaxed));
        u64::try_from(system.saturating_add(offset)).unwrap_or(0)
    }
}

impl WallStep {
    /// Steps the clock by `ms` (back when negative).
    pub fn by(&self, ms: i64) {
        self.offset.fetch_add(ms, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stepped_wall_clock_moves_both_ways_and_the_monotonic_one_does_not() {
        let (wall, step) = WallClock::steppable();
        let clock = Clock::start();
        let before = wall.now_ms();
        let monotonic = clock.now();
        step.by(3 * 3_600_000);
        assert!(wall.now_ms() >= before + 3 * 3_600_000);
        step.by(-6 * 3_600_000);
        assert!(wall.now_ms() < before - 2 * 3_600_000);
        assert!(clock.now() >= monotonic);
        assert!(clock.now() < monotonic + 60_000);
    }

    #[test]
    fn the_system_wall_clock_is_the_hosts() {
        let host = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let wall = WallClock::system().now_ms();
        assert!(wall.abs_diff(host) < 60_000);
    }
}
