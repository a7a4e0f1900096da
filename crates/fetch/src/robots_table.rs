//! Each origin's robots.txt state during a crawl ([`RobotsTable`]), by origin id: the one
//! table `crawlrank crawl`'s engine and a `crawl --frontier` worker both keep.
//!
//! Why a table apart from the fetching: what an origin's robots.txt state is — rules and
//! their age, whether the answer an earlier run stored was looked up, failed attempts, a
//! failure that gives the origin up — is decided here, in plain methods with the time passed
//! in; the engine and the worker only act on the answers (fetch the file, wait, count, apply
//! the Crawl-delay). What a file means and how long an answer stays fresh is
//! [`crate::robots`]'s.

use crate::page::TransportFailure;
use crate::robots::{fresh, robots_rules, RobotsAnswer, RobotsRules, StoredRobots};

/// An origin's id in a crawl (the crawl's own numbering of its origins, dense from 0).
pub type OriginId = u32;

/// Where a host stands with its robots.txt ([`RobotsTable::lookup`]).
#[derive(Debug, Clone)]
pub enum HostRobots {
    /// These rules are in force.
    Rules(RobotsRules),
    /// These rules, just taken from the answer an earlier run stored (once per host and
    /// run): now in force too.
    StoredRules(RobotsRules),
    /// The host's robots.txt got no answer for a reason a retry would not change (its name
    /// does not resolve, its TLS fails): its pages are given up without a request each.
    GiveUp(TransportFailure),
    /// No rules yet, or too old: robots.txt must be fetched first.
    Unknown,
}

/// What to do after a robots.txt fetch ([`RobotsTable::fetched`]).
#[derive(Debug, Clone)]
pub enum AfterFetch {
    /// Try again later. The host's pages keep waiting meanwhile.
    Retry {
        /// Earlier tries that failed before this one (the backoff's exponent).
        attempt: u32,
    },
    /// These rules are in force now.
    Settled {
        /// The rules.
        rules: RobotsRules,
        /// The answer to store for later runs (a failure is never stored: it says nothing
        /// about the file, the next run asks again).
        keep: Option<StoredRobots>,
    },
}

#[derive(Debug, Default)]
struct HostState {
    rules: Option<RobotsRules>,
    /// When the answer behind `rules` was fetched (seconds since the Unix epoch).
    fetched_at: u64,
    /// Failed fetches of the current rules' predecessor (retries so far).
    attempts: u32,
    /// Set with `rules` (then `Unreachable`) when the failure gives the host up.
    failed: Option<TransportFailure>,
    /// Whether the answer an earlier run stored was looked for (once per host and run, and
    /// again after the rules expire or are forgotten).
    consulted: bool,
    /// Whether the rules were let go while the host was idle ([`RobotsTable::forget`]): the
    /// store's answer, read again at the next lookup, is then this run's, not an earlier
    /// run's.
    forgotten: bool,
    /// Whether the rules come from an answer the store keeps (so they may be forgotten).
    stored: bool,
}

/// Every host's robots.txt state during a crawl, by host id.
#[derive(Debug)]
pub struct RobotsTable {
    hosts: Vec<HostState>,
    /// The product token groups are matched against.
    agent: String,
    /// Further tries of a robots.txt that got no answer worth keeping.
    max_retries: u32,
}

impl RobotsTable {
    /// A table for `agent` (see `FetchConfig::robots_agent`),
    /// retrying a robots.txt that got no answer worth keeping `max_retries` times.
    pub fn new(agent: &str, max_retries: u32) -> Self {
        Self {
            hosts: Vec::new(),
            agent: agent.to_string(),
            max_retries,
        }
    }

    fn host(&mut self, host: OriginId) -> &mut HostState {
        let i = host as usize;
        if i >= self.hosts.len() {
            self.hosts.resize_with(i + 1, HostState::default);
        }
        &mut self.hosts[i]
    }

    /// Where `host` (at `origin`) stands at `now` (seconds since the Unix epoch). Rules
    /// older than [`MAX_AGE`](crate::robots::MAX_AGE) are dropped, failures included, so the file is fetched again
    /// (within a run longer than a day too); an answer stored by an earlier run, which
    /// `stored` reads (from the crawl's store, by origin), is used while fresh. `stored` is
    /// called once per host and run (again after its rules expire), so the answers of all
    /// hosts are never in memory at once.
    pub fn lookup(
        &mut self,
        host: OriginId,
        now: u64,
        stored: impl FnOnce() -> Option<StoredRobots>,
    ) -> HostRobots {
        let h = self.host(host);
        if h.rules.is_some() && !fresh(h.fetched_at, now) {
            *h = HostState::default();
        }
        if let Some(rules) = &h.rules {
            return match h.failed {
                Some(failure) => HostRobots::GiveUp(failure),
                None => HostRobots::Rules(rules.clone()),
            };
        }
        if h.consulted {
            return HostRobots::Unknown;
        }
        h.consulted = true;
        let reloaded = std::mem::take(&mut h.forgotten);
        match stored() {
            Some(s) if fresh(s.fetched_at, now) => {
                let rules = robots_rules(&self.agent, &s.answer);
                let h = self.host(host);
                h.rules = Some(rules.clone());
                h.fetched_at = s.fetched_at;
                h.stored = true;
                if reloaded {
                    HostRobots::Rules(rules)
                } else {
                    HostRobots::StoredRules(rules)
                }
            }
            _ => HostRobots::Unknown,
        }
    }

    /// Whether [`lookup`](Self::lookup) of `host` at `now` would read the stored answer (no
    /// fresh rules, and the store not consulted yet): so that a caller whose store is a file
    /// can read it before taking the table's lock, and not on every lookup.
    pub fn consults_store(&self, host: OriginId, now: u64) -> bool {
        self.hosts.get(host as usize).is_none_or(|h| {
            let rules_fresh = h.rules.is_some() && fresh(h.fetched_at, now);
            !rules_fresh && (h.rules.is_some() || !h.consulted)
        })
    }

    /// Lets go of the parsed rules of `host`, idle for now, when the store keeps the answer
    /// they come from: the next [`lookup`](Self::lookup) reads and parses it again (as
    /// [`HostRobots::Rules`]: it is this run's answer). So the rules in memory are those of
    /// the hosts being crawled, not of every host contacted. Rules the store does not keep
    /// (a failure, or an answer not committed yet) stay.
    pub fn forget(&mut self, host: OriginId) {
        if let Some(h) = self.hosts.get_mut(host as usize) {
            if h.rules.is_some() && h.stored && h.failed.is_none() {
                h.rules = None;
                h.consulted = false;
                h.forgotten = true;
            }
        }
    }

    /// Records how a robots.txt fetch of `host` ended at `now`: its `rules`, the `answer`
    /// they come from when there was one, and why no HTTP answer came when none did.
    pub fn fetched(
        &mut self,
        host: OriginId,
        rules: RobotsRules,
        answer: Option<RobotsAnswer>,
        failure: Option<TransportFailure>,
        now: u64,
    ) -> AfterFetch {
        let max_retries = self.max_retries;
        let h = self.host(host);
        let retryable = failure.is_none_or(TransportFailure::retryable);
        if matches!(rules, RobotsRules::Unreachable) && retryable && h.attempts < max_retries {
            h.attempts += 1;
            return AfterFetch::Retry {
                attempt: h.attempts - 1,
            };
        }
        h.failed = failure.filter(|f| !f.retryable());
        h.rules = Some(rules.clone());
        h.fetched_at = now;
        h.stored = answer.is_some();
        AfterFetch::Settled {
            rules,
            keep: answer.map(|answer| StoredRobots {
                fetched_at: now,
                answer,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robots::MAX_AGE;

    fn body(text: &str) -> RobotsAnswer {
        RobotsAnswer::Body(text.as_bytes().to_vec())
    }

    #[test]
    fn the_table_fetches_once_retries_and_expires() {
        let now = 1_700_000_000;
        let mut t = RobotsTable::new("crawlrank", 1);
        assert!(matches!(t.lookup(0, now, || None), HostRobots::Unknown));
        // A 5xx: retried once, then everything is disallowed (and nothing kept).
        let after = t.fetched(0, RobotsRules::Unreachable, None, None, now);
        assert!(matches!(after, AfterFetch::Retry { attempt: 0 }));
        let after = t.fetched(0, RobotsRules::Unreachable, None, None, now);
        assert!(matches!(after, AfterFetch::Settled { keep: None, .. }));
        let HostRobots::Rules(r) = t.lookup(0, now, || None) else {
            panic!("settled")
        };
        assert!(!r.allowed("http://a.test/"));
        // A day later the file is asked again.
        let later = now + MAX_AGE;
        assert!(matches!(t.lookup(0, later, || None), HostRobots::Unknown));
        let rules = robots_rules("crawlrank", &body("User-agent: *\nDisallow: /x\n"));
        let after = t.fetched(
            0,
            rules,
            Some(body("User-agent: *\nDisallow: /x\n")),
            None,
            later,
        );
        let AfterFetch::Settled {
            keep: Some(kept), ..
        } = after
        else {
            panic!("an answer is kept")
        };
        assert_eq!(kept.fetched_at, later);
        let HostRobots::Rules(r) = t.lookup(0, later + 1, || None) else {
            panic!("fresh")
        };
        assert!(!r.allowed("http://a.test/x") && r.allowed("http://a.test/y"));
    }

    #[test]
    fn a_host_that_cannot_be_reached_is_given_up_without_retries() {
        let mut t = RobotsTable::new("crawlrank", 3);
        let dns = Some(TransportFailure::Dns);
        let after = t.fetched(2, RobotsRules::Unreachable, None, dns, 10);
        assert!(matches!(after, AfterFetch::Settled { keep: None, .. }));
        assert!(matches!(
            t.lookup(2, 11, || None),
            HostRobots::GiveUp(TransportFailure::Dns)
        ));
        // Another failure is retried, and does not give the host up once retries run out.
        let other = Some(TransportFailure::Other);
        for attempt in 0..3 {
            let after = t.fetched(1, RobotsRules::Unreachable, None, other, 10);
            assert!(matches!(after, AfterFetch::Retry { attempt: a } if a == attempt));
        }
        t.fetched(1, RobotsRules::Unreachable, None, other, 10);
        assert!(matches!(t.lookup(1, 11, || None), HostRobots::Rules(_)));
    }

    #[test]
    fn stored_answers_are_used_once_while_fresh() {
        let now = 1_700_000_000;
        let stored = |fetched_at| StoredRobots {
            fetched_at,
            answer: body("User-agent: *\nDisallow: /\n"),
        };
        let answers: std::collections::HashMap<&str, StoredRobots> = [
            ("http://a.test", stored(now - 60)),
            ("http://b.test", stored(now - MAX_AGE)),
        ]
        .into();
        let answers = &answers;
        let from = |origin: &'static str| move || answers.get(origin).cloned();
        let mut t = RobotsTable::new("crawlrank", 0);
        // `consults_store` says, before each lookup, whether that lookup reads the store.
        assert!(t.consults_store(0, now));
        let HostRobots::StoredRules(r) = t.lookup(0, now, from("http://a.test")) else {
            panic!("fresh")
        };
        assert!(!r.allowed("http://a.test/p"));
        assert!(!t.consults_store(0, now));
        assert!(matches!(
            t.lookup(0, now, from("http://a.test")),
            HostRobots::Rules(_)
        ));
        assert!(t.consults_store(1, now));
        assert!(matches!(
            t.lookup(1, now, from("http://b.test")),
            HostRobots::Unknown
        ));
        assert!(!t.consults_store(1, now), "consulted once");
        // Taken once: once the stored answer has expired in use, the file is fetched.
        assert!(t.consults_store(0, now - 60 + MAX_AGE));
        assert!(matches!(
            t.lookup(0, now - 60 + MAX_AGE, from("http://a.test")),
            HostRobots::Unknown
        ));
        assert!(!t.consults_store(0, now - 60 + MAX_AGE));
        // Rules let go while idle are read from the store again.
        t.lookup(2, now, from("http://a.test"));
        t.forget(2);
        assert!(t.consults_store(2, now));
    }

    #[test]
    fn forgotten_rules_are_read_again_from_the_store_as_this_runs() {
        let now = 1_700_000_000;
        let text = "User-agent: *\nDisallow: /x\n";
        let kept = StoredRobots {
            fetched_at: now,
            answer: body(text),
        };
        let mut t = RobotsTable::new("crawlrank", 0);
        let rules = robots_rules("crawlrank", &body(text));
        t.fetched(0, rules, Some(body(text)), None, now);
        t.fetched(1, RobotsRules::Unreachable, None, None, now);
        t.forget(0);
        t.forget(1);
        t.forget(9);
        // Host 0 reads the store again, as rules in force (not an earlier run's answer).
        let HostRobots::Rules(r) = t.lookup(0, now + 1, || Some(kept.clone())) else {
            panic!("reloaded")
        };
        assert!(!r.allowed("http://a.test/x/1") && r.allowed("http://a.test/y"));
        assert!(matches!(
            t.lookup(0, now + 2, || panic!("in memory again")),
            HostRobots::Rules(_)
        ));
        // A failure is never stored, so never forgotten.
        assert!(matches!(
            t.lookup(1, now + 1, || panic!("kept in memory")),
            HostRobots::Rules(_)
        ));
        // Forgotten, and the store lost it: fetched again.
        t.forget(0);
        assert!(matches!(t.lookup(0, now + 3, || None), HostRobots::Unknown));
    }
}
