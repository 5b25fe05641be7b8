//! The server's clock: the only place the hub reads the time.

use weiqi_game::Ms;

/// Milliseconds since the Unix epoch, advanced by tokio's clock (so tests can pause it).
#[derive(Clone, Copy)]
pub struct TimeSource {
    base_ms: u64,
    base: tokio::time::Instant,
}

impl TimeSource {
    pub fn new() -> TimeSource {
        let base_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        TimeSource {
            base_ms,
            base: tokio::time::Instant::now(),
        }
    }

    pub fn now_ms(&self) -> Ms {
        self.base_ms + self.base.elapsed().as_millis() as u64
    }

    /// The tokio instant of a server time (for sleeping until it).
    pub(super) fn instant(&self, ms: Ms) -> tokio::time::Instant {
        self.base + std::time::Duration::from_millis(ms.saturating_sub(self.base_ms))
    }
}

impl Default for TimeSource {
    fn default() -> TimeSource {
        TimeSource::new()
    }
}
