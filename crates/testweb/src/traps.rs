//! The trap catalogue: pages on [`TRAPS_HOST`] that a robust crawler must survive.
//!
//! Real webs contain redirects, loops, infinite URL spaces, huge and slow responses, non-HTML
//! and broken documents; a crawler that is only tested on clean pages breaks on the first of
//! them. Each trap here is deterministic, and its expected outcome is either a page a correct
//! crawler **must fetch** (under `/found/…`, or a graph page reached by a redirect), a URL it
//! must **never fetch** (mostly `/canary/…`: only a mistake reveals them), or a URL family it
//! must fetch only **finitely often**.
//! [`TestWeb::trap_expectations`](crate::TestWeb::trap_expectations) lists them as absolute
//! URLs.
//!
//! Served when [`crate::TestWebConfig::traps`] is on, at `http://traps.crawlrank.test/…`
//! (graph pages listed in `trap_link_nodes` link to the index `/` after their successors):
//!
//! | path | response | a correct crawler |
//! |---|---|---|
//! | `/` | index linking to every entry below | fetches it |
//! | `/r301/{v}`, `/r302/{v}` | 301 / 302 to the URL of graph node `v` (index: `v = n-1`, `n/2`) | fetches the graph page (a redirect target is a discovered URL) |
//! | `/loc/…` | 302 with a bad `Location`: empty, missing, `ftp:`, 100 KB long, `../../found/loc-relative` | drops each (counted), follows the relative one |
//! | `/r-relative` | 302 with the *relative* `Location: /found/relative-redirect` | resolves it and fetches it |
//! | `/chain/{k}` | 302 to `/chain/{k-1}`; `/chain/0` is a page (index: `/chain/3` and `/chain/100000`) | reaches `/chain/0` from 3; follows at most `--max-redirects` hops of the long one |
//! | `/lin/a/a/…/` | every page links `a/` below itself, forever | stops at the pathological-path rule (a segment three times in a row) |
//! | `/d/a/b/a/b/…/` | pages alternate links `a/` and `b/`, forever | stops at the pathological-path rule (a run of segments three times in a row) |
//! | `NAME.traps.crawlrank.test` | rate limits, a cross-host redirect chain, RFC 9309's robots.txt cases and answers broken at the HTTP level, one host each ([`crate::trap_hosts`], [`crate::broken`]) | see there |
//! | `/redirect-loop/a` ↔ `/redirect-loop/b` | 302 to each other forever | stops (bounded) |
//! | `/trap/…/` | spider trap: every page links to `a/` and `b/` below itself, forever | bounded |
//! | `/calendar?day=N` | links to `?day=N+1` (query-only relative link), forever | bounded |
//! | `/grow?s=x…` | links to itself with one more `x` in the query, forever | bounded |
//! | `/huge.html` | 200 `text/html`, `huge_bytes` (default 50 MB) streamed, a link to `/found/huge-head` in its first bytes and one to `/canary/huge-tail` at the very end | parses its first `--max-body` bytes: fetches the head link, never the tail one |
//! | `/oversize.html` | 200 `text/html`, [`OVERSIZE_HTML_BYTES`] bytes in blocks of [`OVERSIZE_BLOCK_BYTES`], block `k` starting with a link to `/oversize/k` (not linked from the index: a test seeds it) | with `--max-body` `m`, fetches `/oversize/k` for the blocks whose link lies within the first `m` bytes ([`oversize_links_within`]), never the others |
//! | `/slow.html` | head only after `slow_delay` (default 30 s), links to `/canary/slow` | times out, never fetches it |
//! | `/doc.pdf` | 200 `application/pdf` whose bytes contain `<a href="/canary/pdf">` | does not parse it as HTML |
//! | `/big.bin` | 200 `application/octet-stream`, [`BIG_BIN_BYTES`] bytes | archives its first `--max-body` bytes, marked truncated when the cap cuts it |
//! | `/bad-utf8.html` | `text/html; charset=utf-8` with invalid UTF-8 around a link to `/found/bad-utf8` | decodes lossily, fetches it |
//! | `/malformed.html` | unclosed tags, unquoted / upper-case / multi-line attributes, `&amp;` in a query; links in a comment and in a `<script>` | fetches `/found/malformed-{unquoted,upper,newline}`, `/found/malformed?a=1&b=2`; never `/canary/comment`, `/canary/script` |
//! | `/base/page.html` | `<base href="http://traps.crawlrank.test/found/">` and `<a href="based">` | fetches `/found/based`, never `/base/based` |
//! | `/nofollow.html` | `<a rel="nofollow" href="/canary/nofollow">` and a plain link to `/found/nofollow-sibling` | honours nofollow, fetches the sibling |
//! | `/meta-nofollow.html` | `<meta name="robots" content="nofollow">`, a link to `/canary/meta-nofollow` | never fetches it |
//! | `/canonical.html?sessionid=42` | `<link rel="canonical" href="http://traps.crawlrank.test/canonical.html">` and a link to `/found/canonical-body` | neither list: policy is the crawler's |
//! | `/disallowed/page.html` | a page; this host's robots.txt disallows `/disallowed/` | never fetches it |
//! | `/flaky.html` | 503 on its first request, then a page linking `/found/flaky` | retries, fetches `/found/flaky` |
//! | `/status/{code}` | that status (index: 404, 410) | records the failure |
//! | `/found/…`, `/canary/…`, `/oversize/k` | a page without links | — |
//!
//! The traps host's `robots.txt` is `User-agent: *` / `Disallow: /disallowed/` followed by
//! the configured rules (in the same group when they name no agent). Trap pages never get injected errors.

use crate::config::TestWebConfig;
use crate::pages::{link, page};
use crate::reply::{BodySpec, Reply, HTML};
use crate::site::Site;
use bytes::Bytes;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The host serving the traps.
pub const TRAPS_HOST: &str = "traps.crawlrank.test";
/// The trap index, linked from the pages of `trap_link_nodes`.
pub const INDEX_URL: &str = "http://traps.crawlrank.test/";
/// Disallowed by the traps host's robots.txt.
pub(crate) const DISALLOWED_PREFIX: &str = "/disallowed/";

/// What a correct crawler does when started at the trap index, as absolute URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrapExpectations {
    /// URLs it must fetch.
    pub must_fetch: Vec<String>,
    /// URLs it must never request.
    pub must_not_fetch: Vec<String>,
    /// URL prefixes it may fetch, but only finitely often (a test asserts a small count).
    pub bounded_prefixes: Vec<String>,
}

/// Size of the trap `/big.bin` (a binary body for archiving and its size cap).
pub const BIG_BIN_BYTES: usize = 300_000;

/// Size of the trap `/oversize.html` (an HTML page to cut at the body cap).
pub const OVERSIZE_HTML_BYTES: usize = 300_000;

/// `/oversize.html` is made of blocks of this many bytes, block `k` starting at byte
/// `k × OVERSIZE_BLOCK_BYTES` with its link to `/oversize/k`.
pub const OVERSIZE_BLOCK_BYTES: usize = 10_000;

/// The longest a block's link (its whole `<a>` element, the document's head before it in
/// block 0) runs from the block's start, in bytes.
const OVERSIZE_LINK_SPAN: usize = 200;

/// The `k` whose link to `/oversize/k` lies whole within the first `max_body` bytes of
/// `/oversize.html`: what a crawler that parses the page cut at `max_body` finds. A link cut
/// in the middle (`max_body` within the first 200 bytes of a block) may or may not be read:
/// tests pick a `max_body` between two links.
pub fn oversize_links_within(max_body: usize) -> std::ops::Range<usize> {
    let blocks = OVERSIZE_HTML_BYTES / OVERSIZE_BLOCK_BYTES;
    if max_body < OVERSIZE_LINK_SPAN {
        return 0..0;
    }
    0..((max_body - OVERSIZE_LINK_SPAN) / OVERSIZE_BLOCK_BYTES + 1).min(blocks)
}

/// The body of `/oversize.html` (see [`OVERSIZE_BLOCK_BYTES`]).
fn oversize_body() -> Bytes {
    let blocks = OVERSIZE_HTML_BYTES / OVERSIZE_BLOCK_BYTES;
    let filler = "<p>filler filler filler filler filler filler filler filler filler filler.</p>\n";
    let end = "</body></html>\n";
    let mut body = String::with_capacity(OVERSIZE_HTML_BYTES);
    for k in 0..blocks {
        let start = body.len();
        if k == 0 {
            body.push_str("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>oversize</title></head><body>\n");
        }
        body.push_str(&format!("<p><a href=\"/oversize/{k}\">link {k}</a></p>\n"));
        debug_assert!(body.len() - start <= OVERSIZE_LINK_SPAN);
        let room = if k + 1 == blocks {
            OVERSIZE_BLOCK_BYTES - end.len()
        } else {
            OVERSIZE_BLOCK_BYTES
        };
        while body.len() - start + filler.len() <= room {
            body.push_str(filler);
        }
        while body.len() - start < room {
            body.push(' ');
        }
    }
    body.push_str(end);
    debug_assert_eq!(body.len(), OVERSIZE_HTML_BYTES);
    Bytes::from(body)
}

/// The expectations for the catalogue served over `site` (see the module documentation).
pub(crate) fn expectations(site: &Site) -> TrapExpectations {
    let abs = |p: &str| format!("http://{TRAPS_HOST}{p}");
    let mut must_fetch: Vec<String> = [
        "/",
        "/chain/0",
        "/found/relative-redirect",
        "/found/loc-relative",
        "/found/bad-utf8",
        "/found/malformed-unquoted",
        "/found/malformed-upper",
        "/found/malformed-newline",
        "/found/malformed?a=1&b=2",
        "/found/based",
        "/found/nofollow-sibling",
        "/found/flaky",
        "/found/huge-head",
    ]
    .iter()
    .map(|p| abs(p))
    .collect();
    for v in redirect_targets(site) {
        must_fetch.push(site.url(v).to_owned());
    }
    let must_not_fetch = [
        "/canary/huge-tail",
        "/canary/slow",
        "/canary/pdf",
        "/canary/comment",
        "/canary/script",
        "/base/based",
        "/canary/nofollow",
        "/canary/meta-nofollow",
        "/disallowed/page.html",
    ]
    .iter()
    .map(|p| abs(p))
    .collect();
    let mut bounded_prefixes: Vec<String> = [
        "/redirect-loop/",
        "/trap/",
        "/calendar",
        "/grow",
        "/chain/",
        "/lin/",
        "/d/",
    ]
    .iter()
    .map(|p| abs(p))
    .collect();
    bounded_prefixes.push("http://hop".to_string());
    TrapExpectations {
        must_fetch,
        must_not_fetch,
        bounded_prefixes,
    }
}

/// The graph nodes the index's `/r301/` and `/r302/` redirect to (none for an empty graph).
fn redirect_targets(site: &Site) -> Vec<u32> {
    let n = site.num_nodes() as u32;
    if n == 0 {
        Vec::new()
    } else {
        vec![n - 1, n / 2]
    }
}

/// Mutable trap state, prebuilt bodies, and the configuration the traps read.
pub(crate) struct State {
    flaky_attempts: AtomicU32,
    /// How long `/slow.html` waits ([`TestWebConfig::slow_delay`]).
    slow_delay: Duration,
    huge_head: Bytes,
    huge_chunk: Bytes,
    huge_count: u64,
    huge_tail: Bytes,
    oversize: Bytes,
}

impl State {
    pub fn new(cfg: &TestWebConfig) -> State {
        let head = Bytes::from_static(b"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>huge</title></head><body>\n<p><a href=\"/found/huge-head\">head</a></p>\n");
        let tail =
            Bytes::from_static(b"<p><a href=\"/canary/huge-tail\">tail</a></p></body></html>\n");
        let line = b"<p>filler filler filler filler filler filler filler filler filler filler filler.</p>\n";
        let mut chunk = Vec::with_capacity(64 * 1024);
        while chunk.len() + line.len() <= 64 * 1024 {
            chunk.extend_from_slice(line);
        }
        let fixed = (head.len() + tail.len()) as u64;
        let huge_count = cfg
            .huge_bytes
            .saturating_sub(fixed)
            .div_ceil(chunk.len() as u64);
        State {
            flaky_attempts: AtomicU32::new(0),
            slow_delay: cfg.slow_delay,
            huge_head: head,
            huge_chunk: Bytes::from(chunk),
            huge_count,
            huge_tail: tail,
            oversize: oversize_body(),
        }
    }
}

/// The reply for `path` (with query) on the traps host of `site`.
pub(crate) fn reply(site: &Site, state: &State, path: &str) -> Reply {
    let (p, query) = path.split_once('?').unwrap_or((path, ""));
    match p {
        "/" => {
            let mut body = String::from("<ul>\n");
            let mut entries: Vec<String> = Vec::new();
            if let [a, b] = redirect_targets(site)[..] {
                entries.push(format!("/r301/{a}"));
                entries.push(format!("/r302/{b}"));
            }
            for e in [
                "/r-relative",
                "/chain/3",
                "/redirect-loop/a",
                "/trap/",
                "/calendar?day=0",
                "/grow?s=x",
                "/huge.html",
                "/slow.html",
                "/doc.pdf",
                "/big.bin",
                "/bad-utf8.html",
                "/malformed.html",
                "/base/page.html",
                "/nofollow.html",
                "/meta-nofollow.html",
                "/canonical.html?sessionid=42",
                "/disallowed/page.html",
                "/flaky.html",
                "/status/404",
                "/status/410",
                "/chain/100000",
                "/loc/empty",
                "/loc/missing",
                "/loc/ftp",
                "/loc/long",
                "/loc/relative/x",
                "/lin/a/",
                "/d/a/",
            ] {
                entries.push(e.to_owned());
            }
            entries.extend(crate::trap_hosts::index_urls());
            for e in &entries {
                body.push_str("<li>");
                body.push_str(&link(e));
                body.push_str("</li>\n");
            }
            body.push_str("</ul>");
            page("crawlrank trap index", &body)
        }
        "/r-relative" => Reply::redirect(302, "/found/relative-redirect".into()),
        // Bad Location headers: empty (resolves to the page itself), none at all, another
        // scheme, 100 KB long, relative with dot segments.
        "/loc/empty" => Reply::redirect(302, String::new()),
        "/loc/missing" => Reply::status_page(302),
        "/loc/ftp" => Reply::redirect(302, "ftp://traps.crawlrank.test/canary/ftp".into()),
        "/loc/long" => Reply::redirect(302, format!("/canary/{}", "x".repeat(100_000))),
        "/loc/relative/x" => Reply::redirect(302, "../../found/loc-relative".into()),
        "/redirect-loop/a" => Reply::redirect(302, "/redirect-loop/b".into()),
        "/redirect-loop/b" => Reply::redirect(302, "/redirect-loop/a".into()),
        "/huge.html" => Reply {
            status: 200,
            content_type: Some(HTML),
            location: None,
            body: BodySpec::Repeat {
                head: state.huge_head.clone(),
                chunk: state.huge_chunk.clone(),
                count: state.huge_count,
                tail: state.huge_tail.clone(),
            },
            delay: Duration::ZERO,
            retry_after: None,
        },
        "/oversize.html" => Reply::html(state.oversize.clone()),
        "/slow.html" => {
            let mut r = page("slow", &link("/canary/slow"));
            r.delay = state.slow_delay;
            r
        }
        "/big.bin" => Reply::with_body(
            200,
            "application/octet-stream",
            Bytes::from((0..BIG_BIN_BYTES).map(|i| (i % 251) as u8).collect::<Vec<u8>>()),
        ),
        "/doc.pdf" => Reply::with_body(
            200,
            "application/pdf",
            Bytes::from_static(
                b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n\
                  <html><body><a href=\"/canary/pdf\">http://traps.crawlrank.test/canary/pdf</a></body></html>\n\
                  trailer\n<< /Root 1 0 R >>\n%%EOF\n",
            ),
        ),
        "/bad-utf8.html" => Reply::html(Bytes::from_static(
            b"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>bad \xff\xfe utf-8</title></head>\n\
              <body><p>invalid: \xc3\x28 \xa0\xa1 \xed\xa0\x80 \xf0\x28\x8c\xbc</p>\n\
              <p><a href=\"/found/bad-utf8\">caf\xe9 link</a></p>\n<p>truncated: \xe2\x82</p></body></html>\n",
        )),
        "/malformed.html" => Reply::html(Bytes::from_static(
            b"<html><HEAD><title>malformed</title>\n<body><div><p>unclosed <b>bold <i>italic\n\
              <a href=/found/malformed-unquoted>unquoted</a>\n\
              <A HREF='/found/malformed-upper'>upper</A></b></i></span>\n\
              <a\nclass=x\nhref=\"/found/malformed-newline\"\n>newline</a>\n\
              <a href=\"/found/malformed?a=1&amp;b=2\">entity</a>\n\
              <!-- <a href=\"/canary/comment\">commented out</a> -->\n\
              <script>var s = '<a href=\"/canary/script\">in script</a>';</script>\n\
              <table><tr><td>cell<td>cell</table></div>\n<p>no closing tags",
        )),
        "/base/page.html" => page(
            "base",
            "<base href=\"http://traps.crawlrank.test/found/\">\n<p><a href=\"based\">relative to the base</a></p>",
        ),
        "/nofollow.html" => page(
            "nofollow",
            "<p><a rel=\"nofollow\" href=\"/canary/nofollow\">nofollow</a></p>\n\
             <p><a href=\"/found/nofollow-sibling\">followed</a></p>",
        ),
        "/meta-nofollow.html" => Reply::html(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><meta name=\"robots\" content=\"nofollow\">\
             <title>meta nofollow</title></head>\n<body><p><a href=\"/canary/meta-nofollow\">not followed</a></p></body></html>\n",
        ),
        "/canonical.html" => page(
            "canonical",
            "<link rel=\"canonical\" href=\"http://traps.crawlrank.test/canonical.html\">\n\
             <p><a href=\"/found/canonical-body\">body link</a></p>",
        ),
        "/disallowed/page.html" => page("disallowed by robots.txt", &link("/found/behind-robots")),
        "/flaky.html" => {
            if state.flaky_attempts.fetch_add(1, Ordering::Relaxed) == 0 {
                Reply::status_page(503)
            } else {
                page("flaky", &link("/found/flaky"))
            }
        }
        "/calendar" => {
            let day: u64 = query.strip_prefix("day=").and_then(|d| d.parse().ok()).unwrap_or(0);
            page(&format!("calendar day {day}"), &link(&format!("?day={}", day + 1)))
        }
        "/grow" => page("ever-growing query", &link(&format!("/grow?{query}x"))),
        _ => {
            if let Some(rest) = p.strip_prefix("/r301/").or_else(|| p.strip_prefix("/r302/")) {
                let code = if p.starts_with("/r301/") { 301 } else { 302 };
                return match rest.parse::<u32>() {
                    Ok(v) if (v as usize) < site.num_nodes() => Reply::redirect(code, site.url(v).to_owned()),
                    _ => Reply::status_page(404),
                };
            }
            if let Some(k) = p.strip_prefix("/chain/") {
                return match k.parse::<u32>() {
                    Ok(0) => page("end of the redirect chain", ""),
                    Ok(k) => Reply::redirect(302, format!("/chain/{}", k - 1)),
                    Err(_) => Reply::status_page(404),
                };
            }
            if let Some(code) = p.strip_prefix("/status/") {
                return match code.parse::<u16>() {
                    Ok(c) if (200..=599).contains(&c) => Reply::status_page(c),
                    _ => Reply::status_page(404),
                };
            }
            if p.starts_with("/trap/") {
                if !p.ends_with('/') {
                    return Reply::status_page(404);
                }
                let depth = p.matches('/').count() - 2;
                return page(&format!("spider trap depth {depth}"), &format!("{}{}", link("a/"), link("b/")));
            }
            // Endless paths that repeat: /lin/a/a/a/… and /d/a/b/a/b/….
            if let Some(rest) = p.strip_prefix("/lin/") {
                if !rest.ends_with('/') {
                    return Reply::status_page(404);
                }
                return page("repeating path", &link("a/"));
            }
            if let Some(rest) = p.strip_prefix("/d/") {
                if !rest.ends_with('/') {
                    return Reply::status_page(404);
                }
                let next = if rest.ends_with("a/") { "b/" } else { "a/" };
                return page("alternating path", &link(next));
            }
            if p.starts_with("/found/") || p.starts_with("/oversize/") {
                return page("found", "<p>A page a correct crawler reaches.</p>");
            }
            if p.starts_with("/canary/") {
                return page("canary", "<p>A correct crawler never requests this page.</p>");
            }
            Reply::status_page(404)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversize_links_lie_at_the_start_of_their_blocks() {
        let body = oversize_body();
        assert_eq!(body.len(), OVERSIZE_HTML_BYTES);
        let blocks = OVERSIZE_HTML_BYTES / OVERSIZE_BLOCK_BYTES;
        for k in 0..blocks {
            let link = format!("<a href=\"/oversize/{k}\">link {k}</a>");
            let at = body
                .windows(link.len())
                .position(|w| w == link.as_bytes())
                .unwrap();
            let start = k * OVERSIZE_BLOCK_BYTES;
            assert!(
                at >= start && at + link.len() <= start + OVERSIZE_LINK_SPAN,
                "{k}: {at}"
            );
            // oversize_links_within counts a link once its block's link span is in.
            assert_eq!(oversize_links_within(start + OVERSIZE_LINK_SPAN).end, k + 1);
            assert_eq!(oversize_links_within(start + OVERSIZE_LINK_SPAN - 1).end, k);
        }
        assert_eq!(oversize_links_within(95_000), 0..10);
        assert_eq!(oversize_links_within(10), 0..0);
        assert_eq!(oversize_links_within(usize::MAX), 0..blocks);
        assert!(body.ends_with(b"</body></html>\n"));
    }
}
