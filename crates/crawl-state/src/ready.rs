//! Which queue serves next, for `crawlrank crawl`'s host queues and the frontier service's
//! queues alike ([`ReadyQueues`]).
//!
//! Both serve popped pages in the policy's order across their queues: among the queues that
//! may serve now, the one whose first waiting page was popped earliest goes first; a queue
//! that may serve only later waits on a timer. This index is that rule, kept once: a queue
//! that may serve now is listed by the pop number of its first page, one that may serve later
//! by that time. What makes a queue ready — a request in flight, the host's delay, a hold, a
//! lease, a limit — is each caller's to decide; the caller records where it listed each queue
//! (a [`Listing`]) and says so when it lists it anew.

use std::collections::BTreeSet;
use std::ops::Bound::{Excluded, Unbounded};

/// Where a queue is listed in [`ReadyQueues`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing<T> {
    /// It may serve now; its first waiting page was popped with this number.
    Ready(u64),
    /// It may serve from this time.
    Timer(T),
}

/// The queues with pages waiting, by when they may serve: `Q` names a queue, `T` is a time.
#[derive(Debug, Clone)]
pub struct ReadyQueues<Q, T> {
    ready: BTreeSet<(u64, Q)>,
    timers: BTreeSet<(T, Q)>,
}

impl<Q, T> Default for ReadyQueues<Q, T> {
    fn default() -> Self {
        Self {
            ready: BTreeSet::new(),
            timers: BTreeSet::new(),
        }
    }
}

impl<Q: Ord + Copy, T: Ord + Copy> ReadyQueues<Q, T> {
    /// Lists `queue` as `to` (`None`: not at all), off where it was (`from`, as the caller
    /// recorded it); returns `to`, for the caller to record.
    pub fn relist(
        &mut self,
        queue: Q,
        from: Option<Listing<T>>,
        to: Option<Listing<T>>,
    ) -> Option<Listing<T>> {
        match from {
            Some(Listing::Ready(seq)) => {
                self.ready.remove(&(seq, queue));
            }
            Some(Listing::Timer(t)) => {
                self.timers.remove(&(t, queue));
            }
            None => {}
        }
        match to {
            Some(Listing::Ready(seq)) => {
                self.ready.insert((seq, queue));
            }
            Some(Listing::Timer(t)) => {
                self.timers.insert((t, queue));
            }
            None => {}
        }
        to
    }

    /// The queue that may serve now whose first page was popped earliest, with that page's
    /// pop number.
    pub fn first_ready(&self) -> Option<(u64, Q)> {
        self.ready.first().copied()
    }

    /// The queues that may serve now, in the order of their first pages, from after `after`
    /// (from the start when `None`).
    pub fn ready_after(&self, after: Option<(u64, Q)>) -> impl Iterator<Item = (u64, Q)> + '_ {
        let range = match after {
            None => self.ready.range(..),
            Some(a) => self.ready.range((Excluded(a), Unbounded)),
        };
        range.copied()
    }

    /// Whether some queue may serve now.
    pub fn any_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// The queue whose timer comes first, with its time.
    pub fn first_timer(&self) -> Option<(T, Q)> {
        self.timers.first().copied()
    }

    /// The queues on a timer, by time.
    pub fn timers(&self) -> impl Iterator<Item = (T, Q)> + '_ {
        self.timers.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_are_ready_in_pop_order_and_wait_in_time_order() {
        let mut q: ReadyQueues<u32, u64> = ReadyQueues::default();
        assert_eq!((q.first_ready(), q.first_timer()), (None, None));
        let a = q.relist(1, None, Some(Listing::Ready(7)));
        let b = q.relist(2, None, Some(Listing::Ready(3)));
        let c = q.relist(3, None, Some(Listing::Timer(50)));
        q.relist(4, None, Some(Listing::Timer(20)));
        assert_eq!(q.first_ready(), Some((3, 2)));
        assert_eq!(q.ready_after(None).collect::<Vec<_>>(), [(3, 2), (7, 1)]);
        assert_eq!(q.ready_after(Some((3, 2))).collect::<Vec<_>>(), [(7, 1)]);
        assert_eq!(q.timers().collect::<Vec<_>>(), [(20, 4), (50, 3)]);
        // Relisted: off its old place, on its new one; unlisted: gone.
        q.relist(2, b, Some(Listing::Timer(10)));
        q.relist(3, c, Some(Listing::Ready(1)));
        q.relist(1, a, None);
        assert_eq!(q.ready_after(None).collect::<Vec<_>>(), [(1, 3)]);
        assert_eq!(q.first_timer(), Some((10, 2)));
        assert!(q.any_ready());
        q.relist(3, Some(Listing::Ready(1)), None);
        assert!(!q.any_ready());
    }
}
