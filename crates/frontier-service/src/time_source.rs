//! The service's time, in whole seconds since the Unix epoch (the unit of every date and
//! delay in the URLFrontier API).
//!
//! Why a time source of its own: every time-dependent rule (leases, delays, blocks, refetch dates)
//! reads the time through it once per call, and the time is logged with the call, so a
//! replay sees the same time; tests use a manual clock to step over delays without sleeping.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Where the service reads the time.
#[derive(Debug, Clone, Default)]
pub enum TimeSource {
    /// The system's clock.
    #[default]
    System,
    /// A time set by hand (tests), shared by every clone.
    Manual(Arc<AtomicU64>),
}

impl TimeSource {
    /// A manual clock reading `now`.
    pub fn manual(now: u64) -> Self {
        TimeSource::Manual(Arc::new(AtomicU64::new(now)))
    }

    /// Seconds since the Unix epoch.
    pub fn now(&self) -> u64 {
        match self {
            TimeSource::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            TimeSource::Manual(t) => t.load(Ordering::SeqCst),
        }
    }

    /// Moves a manual clock forward by `secs` (no effect on the system clock).
    pub fn advance(&self, secs: u64) {
        if let TimeSource::Manual(t) = self {
            t.fetch_add(secs, Ordering::SeqCst);
        }
    }
}
