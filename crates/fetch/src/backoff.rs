//! A host that refuses (`429 Too Many Requests`, `503 Service Unavailable`) is slowed down:
//! its `Retry-After` is honoured for the URL and for the whole host, and without one the
//! host backs off exponentially; successes bring the delay back down (as Googlebot does).
//!
//! Why a module of its own: the rule is politeness, not fetching — it outlives a request
//! (a host that asked for ten minutes still gets them after a `kill -9`: the engine stores
//! each host's state, [`HostPause`], in the crawl's store) and it is pure arithmetic on
//! times passed in, so the unit tests drive a virtual clock.
//!
//! The rules (docs/crawler.md, Rate limits):
//! - `Retry-After` is read in both forms (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date
//!   (a date in the past means now). A negative number, garbage or an empty value is
//!   ignored (counted), and the refusal backs off as if there were none.
//! - each refusal doubles the host's back-off, from [`BACKOFF_START`] up to
//!   [`BACKOFF_MAX`] (never above `--max-retry-after`); each answer that is not a refusal
//!   halves it, and below [`BACKOFF_START`] it is gone. While a host has a back-off, the
//!   time between two of its requests is at least that long.
//! - after a refusal the host is held until `max(Retry-After, back-off)` has passed; the
//!   refused URL goes back to its host's queue, not before then.
//! - a `Retry-After` beyond `--max-retry-after` gives the URL up (counted); the host is
//!   held for `--max-retry-after`.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, SystemTime};

/// The first back-off of a host that refuses.
pub const BACKOFF_START: Duration = Duration::from_secs(1);
/// The longest back-off refusals alone build up.
pub const BACKOFF_MAX: Duration = Duration::from_secs(600);
/// `--max-retry-after`'s default: a longer `Retry-After` gives the URL up.
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);

/// What a response's `Retry-After` header said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    /// Wait this long (a past date: zero).
    Wait(Duration),
    /// A value that is neither delay-seconds nor an HTTP-date.
    Invalid,
}

/// Reads a `Retry-After` value received at `now`.
pub fn parse_retry_after(value: &[u8], now: SystemTime) -> RetryAfter {
    let Ok(text) = std::str::from_utf8(value) else {
        return RetryAfter::Invalid;
    };
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        // Too many digits for a u64 is years ahead: the longest wait there is.
        let secs = text.parse::<u64>().unwrap_or(u64::MAX);
        return RetryAfter::Wait(Duration::from_secs(secs));
    }
    match httpdate::parse_http_date(text) {
        Ok(t) => RetryAfter::Wait(t.duration_since(now).unwrap_or(Duration::ZERO)),
        Err(_) => RetryAfter::Invalid,
    }
}

/// A host's pause: held until `until` (a wall-clock time, so that it survives a restart),
/// and its current back-off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostPause {
    /// No request before this time.
    pub until: SystemTime,
    /// The least time between two of its requests, until successes bring it down.
    pub backoff: Duration,
}

/// `d` in whole milliseconds, rounded up.
fn ceil_millis(d: Duration) -> u64 {
    (d.as_millis() + u128::from(!d.subsec_nanos().is_multiple_of(1_000_000))) as u64
}

impl HostPause {
    /// Stored form: `until` in milliseconds since the epoch, then `backoff` in milliseconds,
    /// both rounded *up*: a pause read back never ends before the host asked (truncating made a
    /// resumed crawl ask again up to a millisecond early).
    pub fn encode(&self) -> [u8; 16] {
        let until = self
            .until
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, ceil_millis);
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&until.to_le_bytes());
        b[8..].copy_from_slice(&ceil_millis(self.backoff).to_le_bytes());
        b
    }

    /// Reads [`encode`](Self::encode)'s output; `None` if it is not that.
    pub fn decode(b: &[u8]) -> Option<Self> {
        let until = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
        let backoff = u64::from_le_bytes(b.get(8..16)?.try_into().ok()?);
        Some(Self {
            until: SystemTime::UNIX_EPOCH + Duration::from_millis(until),
            backoff: Duration::from_millis(backoff),
        })
    }
}

/// What a refusal means for the URL refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// The host (and the URL, if it is tried again) waits this long.
    pub wait: Duration,
    /// `Retry-After` asked for more than `--max-retry-after`: give the URL up.
    pub give_up: bool,
}

/// What an answer means for its host's back-off ([`Backoffs::answer`]): the rule in one place,
/// which the engine applies to its host queues and a worker to the service's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AfterAnswer {
    /// A refusal (429, 503): how long the URL and its host wait, and whether the URL is
    /// given up.
    pub refusal: Option<Refusal>,
    /// No request to the host before this time: a refusal's wait, or after another answer
    /// while the host still backs off, its back-off from now (or the hold left, if longer).
    pub hold_until: Option<SystemTime>,
    /// The host's pause changed: the new one (`None`: it has none now), for the store.
    pub changed: Option<Option<HostPause>>,
    /// A refusal's `Retry-After` was neither form (ignored; counted by the caller).
    pub invalid_retry_after: bool,
}

/// How a crawl tries a request again after a failure a retry may mend (a 5xx other than 503,
/// a timeout, a connection failure) or a refusal: at most `max_retries` times
/// (`--max-retries`), a failure after `retry_backoff` doubled at each attempt
/// (`--retry-backoff`), a refusal after its host's wait ([`Refusal`]). One rule for the
/// engine, which puts the page back in its host's queue, and a worker, which waits under the
/// page's lease or gives it back to the frontier with its date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retries {
    /// Attempts after the first, at most.
    pub max_retries: u32,
    /// The pause before the first retry of a failure, doubled at each one after.
    pub retry_backoff: Duration,
}

/// What becomes of a page after one attempt of its fetch ([`Retries::after_page`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageNext {
    /// Fetch it again, not before `wait` from now: its host refused (`refused`) or the
    /// failure may mend.
    Retry {
        /// How long the page waits.
        wait: Duration,
        /// The wait is the host's after a refusal (429, 503), not a failure's back-off.
        refused: bool,
    },
    /// Done with it, as this attempt ended.
    Finish {
        /// Given up because `Retry-After` asked for more than `--max-retry-after`.
        retry_after_too_long: bool,
    },
}

impl Retries {
    /// The pause before retry number `attempt + 1` of a failure (`attempt` failed tries
    /// before): `retry_backoff`, doubled at each.
    pub fn backoff(&self, attempt: u32) -> Duration {
        self.retry_backoff
            .saturating_mul(2u32.saturating_pow(attempt))
    }

    /// What becomes of a page after an attempt that came after `attempts` failed ones: the
    /// answer's `refusal` ([`Backoffs::answer`]), or a failure a retry may mend
    /// (`retryable`), is tried again while retries are left; a `Retry-After` beyond
    /// `--max-retry-after` gives the page up at once.
    pub fn after_page(&self, refusal: Option<Refusal>, retryable: bool, attempts: u32) -> PageNext {
        let retry = match refusal {
            Some(r) if r.give_up => {
                return PageNext::Finish {
                    retry_after_too_long: true,
                }
            }
            Some(r) => PageNext::Retry {
                wait: r.wait,
                refused: true,
            },
            None if retryable => PageNext::Retry {
                wait: self.backoff(attempts),
                refused: false,
            },
            None => {
                return PageNext::Finish {
                    retry_after_too_long: false,
                }
            }
        };
        if attempts < self.max_retries {
            retry
        } else {
            PageNext::Finish {
                retry_after_too_long: false,
            }
        }
    }
}

/// The hosts with a pause, by host key `H`. Only hosts that refused recently are kept.
#[derive(Debug)]
pub struct Backoffs<H> {
    hosts: HashMap<H, HostPause>,
    max_retry_after: Duration,
}

impl<H: Copy + Eq + Hash> Backoffs<H> {
    /// No host paused; `max_retry_after` is `--max-retry-after`.
    pub fn new(max_retry_after: Duration) -> Self {
        Self {
            hosts: HashMap::new(),
            max_retry_after,
        }
    }

    /// Restores a stored pause.
    pub fn restore(&mut self, host: H, pause: HostPause) {
        self.hosts.insert(host, pause);
    }

    /// `host`'s pause, if it has one.
    pub fn get(&self, host: H) -> Option<HostPause> {
        self.hosts.get(&host).copied()
    }

    /// Hosts paused now.
    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    /// No host is paused.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// `host` refused at `now`, saying `retry_after` (if it said anything valid): doubles its
    /// back-off and holds it; returns how long, and whether the URL is given up.
    pub fn refused(
        &mut self,
        host: H,
        retry_after: Option<Duration>,
        now: SystemTime,
    ) -> (Refusal, HostPause) {
        let cap = BACKOFF_MAX.min(self.max_retry_after).max(BACKOFF_START);
        let backoff = self
            .hosts
            .get(&host)
            .map_or(BACKOFF_START, |p| (p.backoff * 2).max(BACKOFF_START))
            .min(cap);
        let asked = retry_after.unwrap_or(Duration::ZERO);
        let give_up = asked > self.max_retry_after;
        let wait = asked.min(self.max_retry_after).max(backoff);
        let pause = HostPause {
            until: now + wait,
            backoff,
        };
        self.hosts.insert(host, pause);
        (Refusal { wait, give_up }, pause)
    }

    /// `host` answered `status` at `now` (0: no HTTP answer, which changes nothing), with
    /// `retry_after` if it sent one: a `429` or `503` is a refusal ([`refused`](Self::refused));
    /// any other status lets the back-off come down ([`answered`](Self::answered)), and while
    /// some is left the host is held that long, so a backed-off host's requests stay spaced.
    pub fn answer(
        &mut self,
        host: H,
        status: u16,
        retry_after: Option<RetryAfter>,
        now: SystemTime,
    ) -> AfterAnswer {
        if status == 429 || status == 503 {
            let asked = match retry_after {
                Some(RetryAfter::Wait(d)) => Some(d),
                _ => None,
            };
            let (refusal, pause) = self.refused(host, asked, now);
            return AfterAnswer {
                refusal: Some(refusal),
                hold_until: Some(pause.until),
                changed: Some(Some(pause)),
                invalid_retry_after: retry_after == Some(RetryAfter::Invalid),
            };
        }
        if status == 0 {
            return AfterAnswer::default();
        }
        let changed = self.answered(host, now);
        AfterAnswer {
            hold_until: changed.flatten().map(|p| p.until.max(now + p.backoff)),
            changed,
            ..AfterAnswer::default()
        }
    }

    /// `host` answered at `now` with something other than a refusal: its back-off halves
    /// (gone below [`BACKOFF_START`]). Returns its pause (`None`: it has none now) when it
    /// changed, for the store.
    pub fn answered(&mut self, host: H, now: SystemTime) -> Option<Option<HostPause>> {
        let p = self.hosts.get_mut(&host)?;
        p.backoff /= 2;
        if p.backoff < BACKOFF_START && p.until <= now {
            self.hosts.remove(&host);
            return Some(None);
        }
        Some(Some(*p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t0() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    #[test]
    fn retry_after_in_both_forms_and_bad_values() {
        let now = t0();
        let secs = |s| RetryAfter::Wait(Duration::from_secs(s));
        assert_eq!(parse_retry_after(b"60", now), secs(60));
        assert_eq!(parse_retry_after(b" 2 ", now), secs(2));
        assert_eq!(parse_retry_after(b"0", now), secs(0));
        let ahead = httpdate::fmt_http_date(now + Duration::from_secs(120));
        assert_eq!(parse_retry_after(ahead.as_bytes(), now), secs(120));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(3600));
        assert_eq!(parse_retry_after(past.as_bytes(), now), secs(0));
        let years = httpdate::fmt_http_date(now + Duration::from_secs(5 * 365 * 86_400));
        assert_eq!(
            parse_retry_after(years.as_bytes(), now),
            secs(5 * 365 * 86_400)
        );
        assert_eq!(
            parse_retry_after(b"99999999999999999999999", now),
            secs(u64::MAX)
        );
        for bad in [&b"-5"[..], b"", b"soon", b"1.5", b"\xff\xfe", b"60 seconds"] {
            assert_eq!(parse_retry_after(bad, now), RetryAfter::Invalid, "{bad:?}");
        }
    }

    #[test]
    fn refusals_back_off_exponentially_and_successes_bring_it_down() {
        let mut b = Backoffs::new(DEFAULT_MAX_RETRY_AFTER);
        let now = t0();
        let waits: Vec<u64> = (0..12)
            .map(|_| b.refused(7u32, None, now).0.wait.as_secs())
            .collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600]);
        // Retry-After longer than the back-off wins; shorter does not shorten it.
        let (r, _) = b.refused(7, Some(Duration::from_secs(900)), now);
        assert_eq!(r.wait, Duration::from_secs(900));
        assert!(!r.give_up);
        let (r, _) = b.refused(7, Some(Duration::from_secs(2)), now);
        assert_eq!(r.wait, Duration::from_secs(600));
        // Successes halve it; once the hold is over and it is below a second, it is gone.
        let later = now + Duration::from_secs(1000);
        let mut n = 0;
        while let Some(Some(_)) = b.answered(7, later) {
            n += 1;
        }
        assert_eq!(n, 9, "600 s halves 9 times before it is below 1 s");
        assert!(b.get(7).is_none());
        assert_eq!(b.answered(7, later), None, "nothing to change");
    }

    #[test]
    fn a_page_is_tried_again_while_retries_are_left_and_never_past_a_long_retry_after() {
        let r = Retries {
            max_retries: 2,
            retry_backoff: Duration::from_secs(3),
        };
        let refused = |wait, give_up| Some(Refusal { wait, give_up });
        let finish = |too_long| PageNext::Finish {
            retry_after_too_long: too_long,
        };
        let s = Duration::from_secs;
        // A failure waits the doubling back-off; a refusal its host's wait.
        assert_eq!(
            r.after_page(None, true, 0),
            PageNext::Retry {
                wait: s(3),
                refused: false
            }
        );
        assert_eq!(
            r.after_page(None, true, 1),
            PageNext::Retry {
                wait: s(6),
                refused: false
            }
        );
        assert_eq!(
            r.after_page(refused(s(40), false), true, 1),
            PageNext::Retry {
                wait: s(40),
                refused: true
            }
        );
        // No retry left, an answer that is final, a Retry-After too long.
        assert_eq!(r.after_page(None, true, 2), finish(false));
        assert_eq!(r.after_page(refused(s(1), false), false, 2), finish(false));
        assert_eq!(r.after_page(None, false, 0), finish(false));
        assert_eq!(r.after_page(refused(s(7200), true), true, 0), finish(true));
        // A back-off past what a Duration holds saturates, never panics.
        assert_eq!(
            r.backoff(200),
            Duration::MAX.min(s(3).saturating_mul(u32::MAX))
        );
    }

    #[test]
    fn an_answer_says_what_to_hold_and_store() {
        let mut b = Backoffs::new(DEFAULT_MAX_RETRY_AFTER);
        let now = t0();
        // No HTTP answer, or an answer of a host without a back-off: nothing.
        assert_eq!(b.answer(1u32, 0, None, now), AfterAnswer::default());
        assert_eq!(b.answer(1, 200, None, now), AfterAnswer::default());
        // A refusal with a bad Retry-After backs off 1 s, then 2 s.
        let a = b.answer(1, 429, Some(RetryAfter::Invalid), now);
        assert!(a.invalid_retry_after);
        assert_eq!(a.hold_until, Some(now + Duration::from_secs(1)));
        let a = b.answer(1, 503, None, now);
        let wait = Duration::from_secs(2);
        assert_eq!(
            a.refusal,
            Some(Refusal {
                wait,
                give_up: false
            })
        );
        let pause = HostPause {
            until: now + wait,
            backoff: wait,
        };
        assert_eq!(a.changed, Some(Some(pause)));
        assert!(!a.invalid_retry_after);
        // An answer within the hold: held to its end; after it, the halved back-off from now.
        let a = b.answer(1, 200, None, now);
        assert_eq!(a.hold_until, Some(now + wait));
        let later = now + Duration::from_secs(10);
        let a = b.answer(1, 404, None, later);
        assert_eq!(a.hold_until, None);
        assert_eq!(a.changed, Some(None), "below a second: gone");
    }

    #[test]
    fn a_retry_after_beyond_the_cap_gives_the_url_up_and_holds_the_host_for_the_cap() {
        let mut b = Backoffs::new(Duration::from_secs(60));
        let (r, pause) = b.refused(1u32, Some(Duration::from_secs(120)), t0());
        assert!(r.give_up);
        assert_eq!(r.wait, Duration::from_secs(60));
        assert_eq!(pause.until, t0() + Duration::from_secs(60));
        // The back-off itself never passes the cap either.
        for _ in 0..20 {
            b.refused(1, None, t0());
        }
        assert_eq!(b.get(1).unwrap().backoff, Duration::from_secs(60));
    }

    #[test]
    fn pauses_round_trip_through_the_store() {
        let p = HostPause {
            until: t0() + Duration::from_millis(1234),
            backoff: Duration::from_secs(8),
        };
        assert_eq!(HostPause::decode(&p.encode()), Some(p));
        assert_eq!(HostPause::decode(b"short"), None);
        // A pause that ends between two milliseconds is stored as ending at the later one.
        let p = HostPause {
            until: t0() + Duration::from_micros(4_000_170),
            backoff: Duration::from_micros(1_500),
        };
        let back = HostPause::decode(&p.encode()).unwrap();
        assert_eq!(back.until, t0() + Duration::from_millis(4_001));
        assert_eq!(back.backoff, Duration::from_millis(2));
    }
}
