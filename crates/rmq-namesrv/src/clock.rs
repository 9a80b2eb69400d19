//! The server's monotonic clock: milliseconds since start, read through
//! tokio so tests can pause and advance time.

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
