//! robots.txt (RFC 9309): what an origin's file means for our user agent ([`RobotsRules`]),
//! the answer worth keeping across runs ([`RobotsAnswer`], [`StoredRobots`]) and for how long
//! ([`fresh`]: 24 hours).
//!
//! Why apart from fetching: the rules are read from two sources — a fresh fetch
//! ([`crate::fetch::fetch_robots`]) and an answer an earlier run stored (the crawler's state)
//! — and both must read a file the same way; the state needs the answer's type without
//! needing HTTP, and fetching needs the rules without needing the state. Each origin's
//! robots.txt state during a crawl (retries, expiry, giving up) is the crawler's own table.

use std::sync::Arc;
use std::time::{Duration, SystemTime};
use texting_robots::Robot;

/// What robots.txt says for a host.
#[derive(Debug, Clone)]
pub enum RobotsRules {
    /// No usable robots.txt (4xx, or unparseable): everything allowed (RFC 9309 §2.3.1.3).
    AllowAll,
    /// The host's rules for our agent.
    Rules(Arc<Robot>),
    /// robots.txt unreachable (5xx, network): everything disallowed (RFC 9309 §2.3.1.4).
    Unreachable,
}

impl RobotsRules {
    /// Whether `url` may be fetched.
    pub fn allowed(&self, url: &str) -> bool {
        match self {
            RobotsRules::AllowAll => true,
            RobotsRules::Rules(r) => r.allowed(url),
            RobotsRules::Unreachable => false,
        }
    }

    /// The host's Crawl-delay, if any.
    pub fn crawl_delay(&self) -> Option<Duration> {
        match self {
            RobotsRules::Rules(r) => r
                .delay
                .filter(|d| d.is_finite() && *d > 0.0)
                .map(|d| Duration::from_secs_f32(d.min(86_400.0))),
            _ => None,
        }
    }

    /// The least time between two requests to the host: the crawl's `delay`, or the host's
    /// Crawl-delay capped at `max_crawl_delay` when that is longer — the rule `crawl` spaces
    /// a host's requests by, and a worker sets its queue's delay by.
    pub fn host_delay(&self, delay: Duration, max_crawl_delay: Duration) -> Duration {
        self.crawl_delay()
            .map_or(delay, |d| delay.max(d.min(max_crawl_delay)))
    }
}

/// What a server answered for robots.txt, when that answer decides the rules by itself (a
/// failure — 5xx, network — does not: it says nothing about the file and is asked again).
/// This is what the state keeps, so that a later run need not fetch the file again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RobotsAnswer {
    /// No file (4xx, or redirects that led nowhere): everything allowed.
    Unavailable,
    /// The file's body (at most 512 KiB).
    Body(Vec<u8>),
}

/// The rules an answer means for `agent` (a product token, see
/// [`FetchConfig::robots_agent`](crate::fetch::FetchConfig::robots_agent)). Used both on a fresh fetch and on an answer stored by an
/// earlier run, so both read a file the same way.
pub fn robots_rules(agent: &str, answer: &RobotsAnswer) -> RobotsRules {
    match answer {
        RobotsAnswer::Unavailable => RobotsRules::AllowAll,
        RobotsAnswer::Body(body) => Robot::new(agent, body)
            .ok()
            .map_or(RobotsRules::AllowAll, |r| RobotsRules::Rules(Arc::new(r))),
    }
}

/// A host's robots.txt answer as fetched, and when (seconds since the Unix epoch): what the
/// state keeps per origin, so that a resumed crawl need not fetch the file again while it is
/// fresh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRobots {
    /// When it was fetched, in seconds since the Unix epoch ([`unix_now`]).
    pub fetched_at: u64,
    /// What the host answered.
    pub answer: RobotsAnswer,
}

impl StoredRobots {
    /// The answer as the crawl's store and a worker's state keep it: the fetch time (8 bytes,
    /// little endian), a kind byte (0: no file, 1: a body), the body.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = self.fetched_at.to_le_bytes().to_vec();
        match &self.answer {
            RobotsAnswer::Unavailable => out.push(0),
            RobotsAnswer::Body(b) => {
                out.push(1);
                out.extend_from_slice(b);
            }
        }
        out
    }

    /// The answer [`encode`](Self::encode) wrote; an error for bytes it cannot have written.
    pub fn decode(b: &[u8]) -> anyhow::Result<Self> {
        anyhow::ensure!(b.len() >= 9, "truncated robots.txt record");
        let fetched_at = u64::from_le_bytes(b[0..8].try_into()?);
        let answer = match b[8] {
            0 if b.len() == 9 => RobotsAnswer::Unavailable,
            1 => RobotsAnswer::Body(b[9..].to_vec()),
            k => anyhow::bail!("bad robots.txt record kind {k}"),
        };
        Ok(StoredRobots { fetched_at, answer })
    }
}

/// RFC 9309 §2.4: a crawler SHOULD NOT use a cached robots.txt for longer than 24 hours.
pub const MAX_AGE: u64 = 24 * 3600;

/// Seconds since the Unix epoch, the clock robots.txt answers are dated by.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Whether a robots.txt answer fetched at `at` may still be used at `now`. One from the
/// future (the clock went back) is not trusted: it could otherwise live for any time.
pub fn fresh(at: u64, now: u64) -> bool {
    at <= now && now - at < MAX_AGE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_and_crawl_delay() {
        let r = Robot::new(
            "crawlrank",
            b"User-agent: *\nCrawl-delay: 2.5\nDisallow: /private\n",
        )
        .unwrap();
        let rules = RobotsRules::Rules(Arc::new(r));
        assert_eq!(rules.crawl_delay(), Some(Duration::from_millis(2500)));
        assert!(!rules.allowed("http://a.test/private/x"));
        assert!(rules.allowed("http://a.test/public"));
        assert!(!RobotsRules::Unreachable.allowed("http://a.test/"));
        // The host's delay: the crawl's, or the Crawl-delay capped when longer.
        let s = Duration::from_secs;
        assert_eq!(rules.host_delay(s(1), s(30)), Duration::from_millis(2500));
        assert_eq!(rules.host_delay(s(3), s(30)), s(3));
        assert_eq!(rules.host_delay(s(1), s(2)), s(2));
        assert_eq!(RobotsRules::AllowAll.host_delay(s(1), s(30)), s(1));
    }

    #[test]
    fn robots_answers_become_rules() {
        assert!(matches!(
            robots_rules("crawlrank", &RobotsAnswer::Unavailable),
            RobotsRules::AllowAll
        ));
        let r = robots_rules(
            "crawlrank",
            &RobotsAnswer::Body(b"User-agent: *\nDisallow: /x\n".to_vec()),
        );
        assert!(!r.allowed("http://a.test/x/1") && r.allowed("http://a.test/y"));
    }

    #[test]
    fn robots_answers_expire_after_a_day() {
        let now = 1_700_000_000;
        assert!(fresh(now, now));
        assert!(fresh(now - MAX_AGE + 1, now));
        assert!(!fresh(now - MAX_AGE, now));
        assert!(!fresh(now + 60, now), "fetched in the future");
        assert!(!fresh(0, now));
    }
}
