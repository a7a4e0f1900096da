//! Traps that need a host of their own: rate limits (a refusal slows its whole host, so it
//! must not slow the other traps) and a redirect chain that hops across hosts.
//!
//! Served when [`crate::TestWebConfig::traps`] is on, on hosts `NAME.traps.crawlrank.test`
//! (the trap index links each one). Each host counts its requests (robots.txt left out), and
//! the request number `k` (0 for the first) decides the answer, so the log a test reads is
//! deterministic for a crawler with one request per host at a time:
//!
//! | host | answers | a correct crawler |
//! |---|---|---|
//! | `retry-after` | `k` = 0 and 2: 429 with `Retry-After: S` (seconds); else the page (`/` links `/p1`…`/p4`) | sends nothing to the host for S seconds after each 429, then fetches every page |
//! | `retry-date` | `k` = 0 and 2: 503 with `Retry-After:` an HTTP-date S + 1 seconds ahead; else the page | the same, reading the date |
//! | `backoff` | `k` = 0 and 1: 429 without `Retry-After`; else the page (`/` links `/p1`…`/p6`) | backs the host off (1 s, then 2 s), then comes back down |
//! | `retry-bad` | `k` = 0: 429 `Retry-After: soon`; `k` = 1: 429 `Retry-After: -5`; else the page | ignores the values, backs off as without one |
//! | `retry-long` | `/p1`: always 429 with `Retry-After: 31536000` (a year); `/`: links `/p1` | gives `/p1` up at once (past `--max-retry-after`) |
//! | `hop{i}` | `i` < [`HOP_HOSTS`]: 302 to `http://hop{i+1}.traps.crawlrank.test/`; then a page | follows at most `--max-redirects` of them |
//! | `flaky` | `/p1`: always 500; else the page (`/` links `/p1`…`/p4`); not linked from the trap index | asks `/p1` 1 + `--max-retries` times, each after the back-off, fetching the host's other pages meanwhile |
//!
//! And one host per RFC 9309 case of robots.txt; each serves `/` linking `/private/x` and
//! `/public` (leaf pages):
//!
//! | host | robots.txt | a correct crawler |
//! |---|---|---|
//! | `robots-redirect` | 301 to `/robots-hop/1`, … to `/robots-hop/5`, which says `Disallow: /private/` | follows the five redirects, never fetches `/private/x` |
//! | `robots-404` | 404 | allows all |
//! | `robots-500` | 500 | disallows all, asks again later |
//! | `robots-html` | 200 `text/html`, a page whose text says `Disallow: /private/` inside tags | finds no rules: allows all |
//! | `robots-binary` | 200 `application/octet-stream`, bytes | finds no rules: allows all |
//!
//! `S` is [`crate::TestWebConfig::retry_after_secs`] (default 2).
//!
//! And the hosts of [`BROKEN_HOSTS`], whose answers are broken at the HTTP level (an endless
//! head, a bad status line, bad chunking, a body shorter than its length, a cut head, an
//! endless body, a kept-alive connection closed unanswered): see [`crate::broken`].
//!
//! And a wildcard-DNS site, the host farm: every name `x{n}.farm.test` ([`FARM_SUFFIX`], a
//! registrable domain of its own, `farm.test`) answers, `/` linking [`FARM_FANOUT`] new hosts
//! `x{n·F+1}` … `x{n·F+F}` and [`FARM_PAGES`] pages `/p1` … of its own host (leaves), robots.txt
//! a 404. Without a bound per registrable domain a crawler gives it hosts, robots.txt requests
//! and per-host quotas without end. Not linked from the trap index (a test seeds
//! [`FARM_SEED`]), so that the catalogue's other tests do not crawl it.

use crate::config::TestWebConfig;
use crate::pages::{link, page};
use crate::reply::Reply;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// The suffix of the trap hosts' names.
pub const TRAP_HOST_SUFFIX: &str = ".traps.crawlrank.test";

/// Hosts in the cross-host redirect chain (`hop0` … `hop{HOP_HOSTS}`).
pub const HOP_HOSTS: u32 = 1000;

/// The host farm's names end so: `x{n}.farm.test`.
pub const FARM_SUFFIX: &str = ".farm.test";
/// The host farm's first page.
pub const FARM_SEED: &str = "http://x0.farm.test/";
/// New hosts each farm host's `/` links.
pub const FARM_FANOUT: u64 = 10;
/// Pages of its own host each farm host's `/` links.
pub const FARM_PAGES: u32 = 3;

/// The host farm's answer for `path` on `host`, if `host` is one of its names.
pub(crate) fn farm_reply(host: &str, path: &str) -> Option<Reply> {
    let n: u64 = host
        .strip_suffix(FARM_SUFFIX)?
        .strip_prefix('x')?
        .parse()
        .ok()?;
    Some(match path {
        "/robots.txt" => Reply::status_page(404),
        "/" => {
            let hosts = (1..=FARM_FANOUT)
                .filter_map(|i| n.checked_mul(FARM_FANOUT)?.checked_add(i))
                .map(|m| link(&format!("http://x{m}{FARM_SUFFIX}/")));
            let own = (1..=FARM_PAGES).map(|i| link(&format!("/p{i}")));
            page("farm host", &hosts.chain(own).collect::<String>())
        }
        _ => page("farm page", ""),
    })
}

/// The hosts whose answers are broken at the HTTP level, answered by hand
/// ([`crate::broken`]; their names before [`TRAP_HOST_SUFFIX`]).
pub const BROKEN_HOSTS: [&str; 8] = [
    "oversize-header",
    "bad-status",
    "bad-chunk",
    "short-body",
    "reset-body",
    "cut-head",
    "endless-body",
    "close-idle",
];

/// The trap hosts the index links, as URLs of their first page.
pub(crate) fn index_urls() -> Vec<String> {
    [
        "retry-after",
        "retry-date",
        "backoff",
        "retry-bad",
        "retry-long",
        "hop0",
        "robots-redirect",
        "robots-404",
        "robots-500",
        "robots-html",
        "robots-binary",
    ]
    .iter()
    .chain(BROKEN_HOSTS.iter())
    .map(|h| format!("http://{h}{TRAP_HOST_SUFFIX}/"))
    .collect()
}

/// Requests per trap host so far.
pub(crate) struct State {
    requests: Mutex<HashMap<String, u32>>,
    retry_after: Duration,
}

impl State {
    pub fn new(cfg: &TestWebConfig) -> Self {
        Self {
            requests: Mutex::new(HashMap::new()),
            retry_after: Duration::from_secs(cfg.retry_after_secs),
        }
    }

    /// The number of this request to `host` (0 for the first).
    fn count(&self, host: &str) -> u32 {
        let mut m = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        let k = m.entry(host.to_string()).or_insert(0);
        *k += 1;
        *k - 1
    }
}

fn refusal(status: u16, retry_after: Option<String>) -> Reply {
    let mut r = Reply::status_page(status);
    r.retry_after = retry_after;
    r
}

/// A page linking `/p1` … `/p{n}` at `/`, and a leaf elsewhere.
fn pages(path: &str, n: u32) -> Reply {
    if path == "/" {
        let body: String = (1..=n).map(|i| link(&format!("/p{i}"))).collect();
        page("trap host", &body)
    } else {
        page("trap host page", "")
    }
}

/// The reply for `path` on the RFC 9309 host `robots-{name}`.
fn robots_case(name: &str, path: &str) -> Option<Reply> {
    let rules = "User-agent: *\nDisallow: /private/\n";
    let robots = match (name, path) {
        (_, "/") => {
            return Some(page(
                "robots.txt case",
                &(link("/private/x") + &link("/public")),
            ))
        }
        (_, "/private/x" | "/public") => return Some(page("robots.txt case page", "")),
        ("redirect", "/robots.txt") => Reply::redirect(301, "/robots-hop/1".into()),
        ("redirect", p) => {
            let i: u32 = p.strip_prefix("/robots-hop/")?.parse().ok()?;
            if i < 5 {
                Reply::redirect(301, format!("/robots-hop/{}", i + 1))
            } else {
                Reply::with_body(200, "text/plain", rules)
            }
        }
        ("404", "/robots.txt") => Reply::status_page(404),
        ("500", "/robots.txt") => Reply::status_page(500),
        // A soft 404: an HTML page whose text names a rule, but inside tags on one line.
        ("html", "/robots.txt") => Reply::html(
            "<!DOCTYPE html>\n<html><head><title>Not found</title></head>\n\
             <body><p>No robots.txt here. User-agent: * Disallow: /private/</p></body></html>\n",
        ),
        ("binary", "/robots.txt") => Reply::with_body(
            200,
            "application/octet-stream",
            (0..4096u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect::<Vec<u8>>(),
        ),
        _ => return None,
    };
    Some(robots)
}

/// The reply for `path` on trap host `name` (the host without [`TRAP_HOST_SUFFIX`]), or
/// `None` when there is no such trap host.
pub(crate) fn reply(state: &State, name: &str, path: &str) -> Option<Reply> {
    if let Some(name) = name.strip_prefix("robots-") {
        return robots_case(name, path);
    }
    if path == "/robots.txt" {
        return Some(Reply::status_page(404));
    }
    let secs = state.retry_after.as_secs();
    let reply = match name {
        "retry-after" => match state.count(name) {
            0 | 2 => refusal(429, Some(secs.to_string())),
            _ => pages(path, 4),
        },
        "retry-date" => match state.count(name) {
            0 | 2 => {
                // The date has whole seconds: one more keeps the wait at least S.
                let at = SystemTime::now() + state.retry_after + Duration::from_secs(1);
                refusal(503, Some(httpdate::fmt_http_date(at)))
            }
            _ => pages(path, 4),
        },
        "backoff" => match state.count(name) {
            0 | 1 => refusal(429, None),
            _ => pages(path, 6),
        },
        "retry-bad" => match state.count(name) {
            0 => refusal(429, Some("soon".into())),
            1 => refusal(429, Some("-5".into())),
            _ => pages(path, 2),
        },
        "flaky" => {
            state.count(name);
            if path == "/p1" {
                Reply::status_page(500)
            } else {
                pages(path, 4)
            }
        }
        "retry-long" => {
            state.count(name);
            if path == "/p1" {
                refusal(429, Some("31536000".into()))
            } else {
                pages(path, 1)
            }
        }
        _ => {
            let i: u32 = name.strip_prefix("hop")?.parse().ok()?;
            state.count(name);
            if i < HOP_HOSTS {
                Reply::redirect(302, format!("http://hop{}{TRAP_HOST_SUFFIX}/", i + 1))
            } else {
                page("end of the cross-host redirect chain", "")
            }
        }
    };
    Some(reply)
}
