//! Connections kept open between requests: each host's one connection, idle ones pooled
//! with an idle timeout and a global cap ([`Connections`]).
//!
//! The rule (docs/crawler.md, Connections): a host's connection is checked out for each
//! request (one at a time per host: politeness) and checked in when the result is handled;
//! it is then kept only while the host may be fetched again soon — until the host's
//! politeness delay plus [`IDLE_GRACE`] has passed if the host has pages waiting, else for
//! [`IDLE_GRACE`] — and at most `cap` are kept (over the cap, hosts with no page waiting go
//! first, then the ones expiring first). Dropping a
//! connection closes it; its socket is counted by the [`crate::http::Connector`] until it is
//! closed, so open sockets stay at most the requests in flight plus `cap` however fast
//! connections come and go ([`crate::fds::FdBudget`]).

use crate::http::Connection;
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// An origin's number (scheme, host and port, see [`crate::links::origin_key`]), dense from 0
/// in the order a crawl's URL table discovered the origins: what kept connections are keyed by,
/// and the crawler's per-origin state too.
pub type OriginId = u32;

/// How long an idle connection outlives the host's politeness delay: the time the crawl has
/// to come back to the host before its connection is closed.
pub const IDLE_GRACE: Duration = Duration::from_secs(1);

struct Idle<C> {
    conn: C,
    until: Instant,
    /// The host had pages waiting when its connection was checked in.
    wanted: bool,
}

/// Hosts' idle connections, by host and by expiry (`C` is a [`Connection`] but for the unit
/// tests).
pub struct Connections<C = Connection> {
    idle: HashMap<OriginId, Idle<C>>,
    by_expiry: BTreeSet<(Instant, OriginId)>,
    /// Which to close first when over the cap: hosts without pages waiting, then the ones
    /// expiring first.
    by_eviction: BTreeSet<(bool, Instant, OriginId)>,
    cap: usize,
    /// Checkouts that found no connection to reuse.
    misses: u64,
}

impl<C> Connections<C> {
    /// A pool keeping at most `cap` idle connections.
    pub fn new(cap: usize) -> Self {
        Self {
            idle: HashMap::new(),
            by_expiry: BTreeSet::new(),
            by_eviction: BTreeSet::new(),
            cap,
            misses: 0,
        }
    }

    /// `host`'s open connection, if it has one.
    pub fn checkout(&mut self, host: OriginId) -> Option<C> {
        match self.idle.remove(&host) {
            Some(idle) => {
                self.by_expiry.remove(&(idle.until, host));
                self.by_eviction.remove(&(idle.wanted, idle.until, host));
                Some(idle.conn)
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Takes `host`'s connection back and keeps it open until `until`, unless that is not
    /// after `now`; `wanted` says that the host has pages waiting. Then the idle pool is cut
    /// to its cap: connections of hosts with no page waiting are closed first, the ones
    /// expiring first first.
    pub fn checkin(
        &mut self,
        host: OriginId,
        conn: Option<C>,
        until: Instant,
        wanted: bool,
        now: Instant,
    ) {
        let Some(conn) = conn else { return };
        if until <= now || self.cap == 0 {
            return;
        }
        let idle = Idle {
            conn,
            until,
            wanted,
        };
        if let Some(old) = self.idle.insert(host, idle) {
            self.by_expiry.remove(&(old.until, host));
            self.by_eviction.remove(&(old.wanted, old.until, host));
        }
        self.by_expiry.insert((until, host));
        self.by_eviction.insert((wanted, until, host));
        while self.idle.len() > self.cap {
            let Some(&(_, _, host)) = self.by_eviction.first() else {
                break;
            };
            self.close(host);
        }
    }

    /// Closes `host`'s idle connection.
    fn close(&mut self, host: OriginId) {
        if let Some(idle) = self.idle.remove(&host) {
            self.by_expiry.remove(&(idle.until, host));
            self.by_eviction.remove(&(idle.wanted, idle.until, host));
        }
    }

    /// Closes the connections whose time is up.
    pub fn expire(&mut self, now: Instant) {
        while let Some(&(t, host)) = self.by_expiry.first() {
            if t > now {
                break;
            }
            self.close(host);
        }
    }

    /// Closes every idle connection (to free file descriptors when none are left).
    pub fn close_idle(&mut self) {
        self.idle.clear();
        self.by_expiry.clear();
        self.by_eviction.clear();
    }

    /// Idle connections kept.
    pub fn idle(&self) -> usize {
        self.idle.len()
    }

    /// Checkouts that found no connection to reuse so far (the tests' view of reuse).
    #[cfg(test)]
    pub fn misses(&self) -> u64 {
        self.misses
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_connections_expire_and_are_capped_earliest_expiry_first() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut c = Connections::new(2);
        for host in 0..3 {
            assert_eq!(c.checkout(host), None);
            c.checkin(host, Some(host), t0 + (host + 1) * s, true, t0);
        }
        assert_eq!((c.idle(), c.misses()), (2, 3));
        // Host 0, expiring first, was closed; 1 and 2 are kept.
        assert_eq!(c.checkout(1), Some(1));
        assert_eq!(c.checkout(0), None);
        assert_eq!(c.misses(), 4);
        c.checkin(1, Some(1), t0 + 10 * s, true, t0);
        c.checkin(0, Some(0), t0, true, t0); // not kept: its time is up
        c.checkin(3, None, t0 + s, true, t0); // nothing to keep
        assert_eq!(c.idle(), 2);
        c.expire(t0 + 3 * s);
        assert_eq!(c.idle(), 1, "host 2's time is up, host 1's is not");
        assert_eq!(c.checkout(1), Some(1));
        c.checkin(1, Some(1), t0 + 10 * s, true, t0);
        // Over the cap, a host with no page waiting goes before one expiring earlier.
        c.checkin(4, Some(4), t0 + 20 * s, false, t0);
        c.checkin(5, Some(5), t0 + 5 * s, true, t0);
        assert_eq!(
            (c.checkout(4), c.checkout(1), c.checkout(5)),
            (None, Some(1), Some(5))
        );
        c.checkin(1, Some(1), t0 + 10 * s, true, t0);
        c.close_idle();
        assert_eq!((c.idle(), c.checkout(1)), (0, None));
        let mut none = Connections::new(0);
        none.checkin(5, Some(5), t0 + s, true, t0);
        assert_eq!(none.idle(), 0);
    }
}
