//! The politeness scheduler: which popped page may be fetched now.
//!
//! The policy decides the order; politeness decides when. A page popped from the frontier
//! whose host is busy (a request in flight), not yet ready (its delay since the last request
//! has not passed) or has no robots.txt yet, waits in that host's queue. Design:
//!
//! - every popped page gets a *pop sequence number*; a host's queue is ordered by it, so
//!   within a host the policy's order is kept, and across hosts the page popped earliest among
//!   the hosts that are ready goes first ([`Scheduler::next_ready`]). With one request slot
//!   this is exactly the policy's order (the simulator's), whatever the delay: the engine
//!   pops no page while another waits only for its host's delay
//!   ([`Scheduler::waits_only_for_delay`]).
//! - at most one request per host is in flight, and the next one starts `delay` after the
//!   previous one *ended* (`delay = max(--delay, robots Crawl-delay)`, capped).
//! - a page whose fetch failed transiently goes back to its host's queue under its original
//!   sequence number with a not-before time (exponential backoff): it keeps its place in the
//!   policy order but never blocks the host; the host serves its other pages meanwhile.
//! - a host can be held back until a time ([`Scheduler::hold`]: a robots.txt retry's
//!   backoff); hosts start with the crawl's `--delay` ([`Scheduler::new`]).
//! - the engine stops popping once [`Scheduler::waiting`] reaches a bound, so a single slow
//!   host cannot drain the frontier into its queue and freeze the policy's order.
//! - a host with nothing queued and nothing in flight is forgotten once its delay since the
//!   last request has passed (only a delay of its own, a robots.txt `Crawl-delay`, is kept,
//!   in a small map): the scheduler's memory follows the hosts being crawled, not every
//!   host ever contacted.
//!
//! Time is passed in (`now`), never read here, so the unit tests drive a virtual clock.

use crawlrank_crawl_state::{Listing, OriginId, ReadyQueues};
use crawlrank_frontier::PageId;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// A page waiting for its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    /// The popped page.
    pub page: PageId,
    /// Failed attempts so far.
    pub attempts: u32,
    /// Not to be fetched before this time (retries' backoff).
    pub not_before: Option<Instant>,
}

#[derive(Debug, Default)]
struct Host {
    busy: bool,
    next_ready: Option<Instant>,
    delay: Duration,
    /// Pages by pop sequence.
    queue: BTreeMap<u64, Waiting>,
    /// Where the host is listed among the scheduler's `listed`: ready (by sequence) or on a
    /// timer.
    listed: Option<Listing<Instant>>,
    /// When it is forgotten if it stays idle (its entry in `retiring`).
    retires: Option<Instant>,
}

/// Per-host queues and timers.
#[derive(Debug, Default)]
pub struct Scheduler {
    /// The delay of a host until [`set_delay`](Self::set_delay) gives it its own.
    default_delay: Duration,
    hosts: HashMap<OriginId, Host>,
    /// Idle hosts whose first eligible page may be fetched now, by that page's sequence, and
    /// idle hosts with pages that become fetchable at a later time, by that time (the rule
    /// the frontier service's queues follow too).
    listed: ReadyQueues<OriginId, Instant>,
    /// Idle hosts with nothing queued, by when their entry is dropped.
    retiring: BTreeSet<(Instant, OriginId)>,
    /// The delays of dropped hosts that had one of their own.
    own_delays: HashMap<OriginId, Duration>,
    /// Hosts dropped since the last [`take_retired`](Scheduler::take_retired).
    retired: Vec<OriginId>,
    waiting: usize,
}

impl Scheduler {
    /// A scheduler whose hosts wait `delay` between two requests until
    /// [`set_delay`](Self::set_delay) says otherwise.
    pub fn new(delay: Duration) -> Self {
        Self {
            default_delay: delay,
            ..Self::default()
        }
    }

    fn host(&mut self, host: OriginId) -> &mut Host {
        let (default, own) = (self.default_delay, &mut self.own_delays);
        self.hosts.entry(host).or_insert_with(|| Host {
            delay: own.remove(&host).unwrap_or(default),
            ..Host::default()
        })
    }

    /// The hosts forgotten since the last call (idle, their delay passed), so that their other
    /// state can be let go too (the engine's robots.txt rules).
    pub fn take_retired(&mut self) -> Vec<OriginId> {
        std::mem::take(&mut self.retired)
    }

    /// Hosts the scheduler holds an entry for: those with pages queued, a request in flight
    /// or a delay still running.
    pub fn hosts_tracked(&self) -> usize {
        self.hosts.len()
    }

    /// Pages waiting in host queues.
    pub fn waiting(&self) -> usize {
        self.waiting
    }

    /// The delay between two requests to `host`.
    pub fn delay(&self, host: OriginId) -> Duration {
        match self.hosts.get(&host) {
            Some(h) => h.delay,
            None => self
                .own_delays
                .get(&host)
                .copied()
                .unwrap_or(self.default_delay),
        }
    }

    /// Whether pages of `host` wait in its queue.
    pub fn has_waiting(&self, host: OriginId) -> bool {
        self.hosts.get(&host).is_some_and(|h| !h.queue.is_empty())
    }

    /// Sets the delay between two requests to `host` (from the next request on), at `now`.
    pub fn set_delay(&mut self, host: OriginId, delay: Duration, now: Instant) {
        self.host(host).delay = delay;
        self.relist(host, now);
    }

    /// Queues a page popped with sequence number `seq`.
    pub fn push(&mut self, host: OriginId, seq: u64, w: Waiting, now: Instant) {
        self.host(host).queue.insert(seq, w);
        self.waiting += 1;
        self.relist(host, now);
    }

    /// Marks `host` busy (a request, page or robots.txt, is in flight).
    pub fn start(&mut self, host: OriginId, now: Instant) {
        self.host(host).busy = true;
        self.relist(host, now);
    }

    /// The request to `host` ended at `now`: the next may start after the host's delay.
    pub fn finish(&mut self, host: OriginId, now: Instant) {
        let h = self.host(host);
        h.busy = false;
        h.next_ready = Some(now + h.delay);
        self.relist(host, now);
    }

    /// Keeps `host` from starting a request before `until` (robots.txt retry backoff).
    pub fn hold(&mut self, host: OriginId, until: Instant, now: Instant) {
        let h = self.host(host);
        h.next_ready = Some(h.next_ready.map_or(until, |t| t.max(until)));
        self.relist(host, now);
    }

    /// Moves hosts whose time has come from the timers to the ready set.
    pub fn advance(&mut self, now: Instant) {
        while let Some((t, host)) = self.listed.first_timer() {
            if t > now {
                break;
            }
            self.relist(host, now);
        }
        while let Some(&(t, host)) = self.retiring.first() {
            if t > now {
                break;
            }
            self.retiring.remove(&(t, host));
            if let Some(h) = self.hosts.remove(&host) {
                debug_assert!(!h.busy && h.queue.is_empty() && h.listed.is_none());
                if h.delay != self.default_delay {
                    self.own_delays.insert(host, h.delay);
                }
                self.retired.push(host);
            }
        }
    }

    /// Whether a waiting page's host becomes ready within that host's own delay from `now`:
    /// the page waits for politeness alone, not for a retry's back-off or a host held back
    /// longer (Retry-After, a robots.txt retry). A crawl of one request slot waits for such a
    /// page rather than pop another ahead of it (`Engine::dispatch`).
    pub fn waits_only_for_delay(&self, now: Instant) -> bool {
        self.listed.any_ready()
            || self
                .listed
                .timers()
                .any(|(t, host)| t <= now + self.delay(host))
    }

    /// When the next timer fires, if any.
    pub fn next_timer(&self) -> Option<Instant> {
        self.listed.first_timer().map(|(t, _)| t)
    }

    /// The earliest-popped page among hosts that may be fetched now, removed from its queue
    /// (the host is not marked busy: the caller does, or decides not to fetch).
    pub fn next_ready(&mut self, now: Instant) -> Option<(OriginId, u64, Waiting)> {
        self.advance(now);
        // A listing made earlier may be stale: a retry may have come due since. Relist the
        // first host at `now` until the first entry is stable.
        let (seq, host) = loop {
            let first = self.listed.first_ready()?;
            self.relist(first.1, now);
            if self.listed.first_ready() == Some(first) {
                break first;
            }
        };
        let h = self.hosts.get_mut(&host)?;
        let w = h.queue.remove(&seq)?;
        self.waiting -= 1;
        self.relist(host, now);
        Some((host, seq, w))
    }

    /// Recomputes where `host` is listed.
    fn relist(&mut self, host: OriginId, now: Instant) {
        let Some(h) = self.hosts.get_mut(&host) else {
            return;
        };
        if let Some(t) = h.retires.take() {
            self.retiring.remove(&(t, host));
        }
        if !h.busy && h.queue.is_empty() {
            // Nothing to do: forgotten once its delay since the last request has passed.
            let t = h.next_ready.map_or(now, |t| t.max(now));
            h.retires = Some(t);
            self.retiring.insert((t, host));
        }
        let from = h.listed.take();
        if h.busy || h.queue.is_empty() {
            self.listed.relist(host, from, None);
            return;
        }
        let host_time = h.next_ready.unwrap_or(now);
        // The first page, in sequence order, that is eligible at the host's time; else the
        // page that becomes eligible first.
        let eligible = h
            .queue
            .iter()
            .find(|(_, w)| w.not_before.is_none_or(|t| t <= host_time.max(now)));
        let listed = match eligible {
            Some((&seq, _)) if host_time <= now => Listing::Ready(seq),
            Some(_) => Listing::Timer(host_time),
            None => {
                let t = h
                    .queue
                    .values()
                    .filter_map(|w| w.not_before)
                    .min()
                    .unwrap_or(now);
                Listing::Timer(t.max(host_time))
            }
        };
        h.listed = self.listed.relist(host, from, Some(listed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(page: PageId) -> Waiting {
        Waiting {
            page,
            attempts: 0,
            not_before: None,
        }
    }

    #[test]
    fn earliest_popped_among_ready_hosts_goes_first() {
        let t0 = Instant::now();
        let mut s = Scheduler::default();
        s.push(1, 0, w(10), t0);
        s.push(2, 1, w(20), t0);
        s.push(1, 2, w(11), t0);
        let (h, seq, p) = s.next_ready(t0).unwrap();
        assert_eq!((h, seq, p.page), (1, 0, 10));
        s.start(1, t0);
        // Host 1 is busy: host 2's page goes, though 11 was popped... later than 20 anyway.
        assert_eq!(s.next_ready(t0).unwrap().2.page, 20);
        s.start(2, t0);
        assert!(s.next_ready(t0).is_none());
        s.finish(1, t0);
        assert_eq!(s.next_ready(t0).unwrap().2.page, 11);
        assert_eq!(s.waiting(), 0);
    }

    #[test]
    fn a_page_waiting_for_its_hosts_delay_is_told_from_one_held_back_longer() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(Duration::from_secs(1));
        assert!(!s.waits_only_for_delay(t0), "nothing waits");
        s.push(1, 0, w(10), t0);
        s.start(1, t0);
        s.finish(1, t0);
        // Host 1 is ready again one delay after its last request ended.
        assert!(s.waits_only_for_delay(t0));
        assert!(s.waits_only_for_delay(t0 + Duration::from_millis(500)));
        // Held back for a minute (Retry-After): no longer a wait for politeness.
        s.hold(1, t0 + Duration::from_secs(60), t0);
        assert!(!s.waits_only_for_delay(t0));
        assert!(s.waits_only_for_delay(t0 + Duration::from_secs(59)));
    }

    #[test]
    fn delay_is_counted_from_the_end_of_the_last_request() {
        let t0 = Instant::now();
        let d = Duration::from_millis(100);
        let mut s = Scheduler::default();
        s.set_delay(1, d, t0);
        s.start(1, t0);
        s.push(1, 0, w(5), t0);
        assert!(s.next_ready(t0).is_none());
        s.finish(1, t0 + d);
        assert!(s.next_ready(t0 + d).is_none());
        assert_eq!(s.next_timer(), Some(t0 + 2 * d));
        assert!(s
            .next_ready(t0 + 2 * d - Duration::from_millis(1))
            .is_none());
        assert_eq!(s.next_ready(t0 + 2 * d).unwrap().2.page, 5);
    }

    #[test]
    fn a_retry_keeps_its_place_but_never_blocks_the_host() {
        let t0 = Instant::now();
        let mut s = Scheduler::default();
        let later = t0 + Duration::from_secs(5);
        s.push(
            1,
            0,
            Waiting {
                page: 1,
                attempts: 1,
                not_before: Some(later),
            },
            t0,
        );
        s.push(1, 3, w(2), t0);
        // The retry is not due: page 2 goes first.
        assert_eq!(s.next_ready(t0).unwrap().2.page, 2);
        assert!(s.next_ready(t0).is_none());
        assert_eq!(s.next_timer(), Some(later));
        // Once due, it goes before anything popped after it.
        s.push(1, 4, w(3), t0);
        let got = s.next_ready(later).unwrap();
        assert_eq!((got.1, got.2.page), (0, 1));
        assert_eq!(s.next_ready(later).unwrap().2.page, 3);
    }

    #[test]
    fn hosts_wait_the_default_delay_until_given_their_own() {
        let t0 = Instant::now();
        let d = Duration::from_millis(100);
        let mut s = Scheduler::new(d);
        s.start(1, t0);
        s.finish(1, t0);
        s.push(1, 0, w(5), t0);
        assert_eq!(s.next_timer(), Some(t0 + d));
        s.set_delay(2, 3 * d, t0);
        s.start(2, t0);
        s.finish(2, t0);
        s.push(2, 1, w(6), t0);
        assert_eq!(s.next_ready(t0 + d).unwrap().2.page, 5);
        assert!(s.next_ready(t0 + 2 * d).is_none());
        assert_eq!(s.next_ready(t0 + 3 * d).unwrap().2.page, 6);
    }

    #[test]
    fn idle_hosts_are_forgotten_once_their_delay_passed_keeping_their_own_delay() {
        let t0 = Instant::now();
        let d = Duration::from_millis(100);
        let mut s = Scheduler::new(d);
        for host in 0..100 {
            s.start(host, t0);
            s.finish(host, t0);
        }
        s.set_delay(7, 5 * d, t0);
        assert_eq!(s.hosts_tracked(), 100);
        // Their delay still runs: kept, and a new page of host 3 waits for it.
        s.advance(t0 + d / 2);
        assert_eq!(s.hosts_tracked(), 100);
        s.push(3, 0, w(30), t0 + d / 2);
        assert!(s.next_ready(t0 + d / 2).is_none());
        // Delay passed: all idle hosts forgotten but host 3, which has a page queued.
        s.advance(t0 + d);
        assert_eq!(s.hosts_tracked(), 1);
        let retired = s.take_retired();
        assert_eq!(retired.len(), 99);
        assert!(!retired.contains(&3));
        assert!(s.take_retired().is_empty());
        assert_eq!(s.next_ready(t0 + d).unwrap().2.page, 30);
        assert_eq!(s.delay(7), 5 * d, "a host's own delay outlives its entry");
        assert_eq!(s.delay(8), d);
        // Host 7 comes back with its own delay.
        s.start(7, t0 + d);
        s.finish(7, t0 + d);
        s.push(7, 1, w(70), t0 + d);
        assert!(s.next_ready(t0 + 5 * d).is_none());
        assert_eq!(s.next_ready(t0 + 6 * d).unwrap().2.page, 70);
    }
}
