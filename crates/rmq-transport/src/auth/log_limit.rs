//! A limit on how many lines a flood of refused requests may log.
//!
//! Hand-written rather than a rate-limiter crate: the need is one counter
//! per window and a count of what was left out, which a token bucket crate
//! would not report.

use std::time::{Duration, Instant};

use std::sync::{Mutex, PoisonError};

/// At most `lines` log lines per `window`; the lines left out are counted
/// and the count is reported with the next line that is allowed.
#[derive(Debug)]
pub struct LogLimit {
    lines: u32,
    window: Duration,
    state: Mutex<Window>,
}

#[derive(Debug)]
struct Window {
    started: Option<Instant>,
    logged: u32,
    left_out: u64,
}

impl LogLimit {
    /// Allows `lines` lines per `window`.
    pub fn new(lines: u32, window: Duration) -> LogLimit {
        LogLimit {
            lines,
            window,
            state: Mutex::new(Window {
                started: None,
                logged: 0,
                left_out: 0,
            }),
        }
    }

    /// Whether a line may be logged at `now`: `Some(n)` with the number of
    /// lines left out since the last one logged, `None` to leave this one
    /// out.
    pub fn admit(&self, now: Instant) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let expired = state
            .started
            .is_none_or(|started| now.saturating_duration_since(started) >= self.window);
        if expired {
            state.started = Some(now);
            state.logged = 0;
        }
        if state.logged >= self.lines {
            state.left_out += 1;
            return None;
        }
        state.logged += 1;
        Some(std::mem::take(&mut state.left_out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_logs_the_allowance_then_reports_what_it_left_out() {
        let limit = LogLimit::new(2, Duration::from_secs(1));
        let start = Instant::now();
        assert_eq!(limit.admit(start), Some(0));
        assert_eq!(limit.admit(start), Some(0));
        for _ in 0..10 {
            assert_eq!(limit.admit(start + Duration::from_millis(500)), None);
        }
        assert_eq!(limit.admit(start + Duration::from_secs(1)), Some(10));
        assert_eq!(limit.admit(start + Duration::from_secs(1)), Some(0));
        assert_eq!(limit.admit(start + Duration::from_secs(1)), None);
    }
}
