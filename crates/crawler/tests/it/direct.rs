//! Crawls of a tiny site served on loopback and reached directly, without the test web as a
//! proxy: through a proxy, name resolution and TLS are the proxy's business, so the crawler's
//! own DNS and TLS failures can only be seen this way, and so can the refusal of loopback
//! and private addresses (which is checked on the resolved address). The same site serves
//! pages that say `noindex` or name a canonical URL, which the test web's graph pages never
//! do.

use crate::common::crawl_config;
use crawlrank_crawler::{crawl, CrawlConfig, Politeness, StopReason};
use crawlrank_testkit::{DnsAnswer, DnsServer};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One response: status, extra header lines, HTML body.
struct Page {
    status: u16,
    headers: &'static str,
    body: String,
}

/// A blocking HTTP/1.1 server on 127.0.0.1 (or on the listeners given): one thread per
/// connection, `Connection: close`. A connection that opens with a TLS record (a
/// `ClientHello`, byte 0x16) gets a plain HTTP answer instead — which a TLS client must
/// refuse. Every request is logged: its path (the absolute URL of a proxy request), or
/// `<tls>`; every connection accepted is counted.
struct Site {
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
    accepts: Arc<AtomicUsize>,
}

impl Site {
    fn start(pages: impl FnOnce(u16) -> HashMap<&'static str, Page>) -> Site {
        Site::start_on(vec![TcpListener::bind("127.0.0.1:0").unwrap()], pages)
    }

    /// Serves `pages` (given the first listener's port) on every one of `listeners`.
    fn start_on(
        listeners: Vec<TcpListener>,
        pages: impl FnOnce(u16) -> HashMap<&'static str, Page>,
    ) -> Site {
        let port = listeners[0].local_addr().unwrap().port();
        let pages = Arc::new(pages(port));
        let log = Arc::new(Mutex::new(Vec::new()));
        let accepts = Arc::new(AtomicUsize::new(0));
        for listener in listeners {
            let (pages, log, accepts) = (pages.clone(), log.clone(), accepts.clone());
            // Never joined: the thread dies with the test process.
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    let Ok(conn) = conn else { continue };
                    accepts.fetch_add(1, Ordering::SeqCst);
                    let (pages, log) = (pages.clone(), log.clone());
                    std::thread::spawn(move || serve(conn, &pages, &log));
                }
            });
        }
        Site { port, log, accepts }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

fn serve(mut conn: TcpStream, pages: &HashMap<&'static str, Page>, log: &Mutex<Vec<String>>) {
    conn.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if head[0] == 0x16 {
            log.lock().unwrap().push("<tls>".into());
            let _ = conn.write_all(
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            return;
        }
    }
    let text = String::from_utf8_lossy(&head);
    let path = text.split(' ').nth(1).unwrap_or("").to_string();
    log.lock().unwrap().push(path.clone());
    let reply = match pages.get(path.as_str()) {
        Some(p) => format!(
            "HTTP/1.1 {} X\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n{}",
            p.status,
            p.body.len(),
            p.headers,
            p.body
        ),
        None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into(),
    };
    let _ = conn.write_all(reply.as_bytes());
}

fn html(head: &str, body: &str) -> Page {
    Page {
        status: 200,
        headers: "",
        body: format!("<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"),
    }
}

fn config(state: &std::path::Path, seed: String) -> CrawlConfig {
    let policy = crawlrank_frontier::PolicyKind::Bfs.into();
    let mut c = crawl_config(state, vec![seed], policy, 2);
    c.politeness = Politeness {
        max_retries: 2,
        retry_backoff: Duration::from_millis(20),
        ..Politeness::default()
    };
    c.fetch.connect_timeout = Duration::from_secs(5);
    c
}

/// `.invalid` never resolves (RFC 6761): a resolver answers NXDOMAIN at once, and without
/// network the lookup fails at once too. Only a configured resolver that never answers would
/// make it a connect timeout instead (counted as such, so this test would fail, not hang).
const UNRESOLVABLE: &str = "http://nonexistent.invalid/";

#[test]
fn dns_and_tls_failures_are_counted_apart_and_not_retried() {
    let site = Site::start(|port| {
        HashMap::from([(
            "/",
            html(
                "<title>start</title>",
                &format!(
                    "<a href=\"{UNRESOLVABLE}\">gone</a> <a href=\"https://127.0.0.1:{port}/tls.html\">tls</a> \
                     <a href=\"/ok.html\">ok</a>"
                ),
            ),
        ), ("/ok.html", html("", "fine"))])
    });
    let dir = tempfile::tempdir().unwrap();
    let c = config(dir.path(), site.url("/"));
    let report = crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!(report.stop, StopReason::Exhausted);
    let s = &report.stats;
    assert_eq!((s.dns_errors, s.tls_errors), (1, 1), "{s}");
    // Both are fetch errors, so every page is counted once in the totals.
    assert_eq!((s.fetch_errors, s.pages_html), (2, 2), "{s}");
    assert_eq!(s.pages_done(), report.crawled);
    assert_eq!(report.crawled, 4);
    // Neither is retried: one TLS handshake (the host's robots.txt), none for its page.
    assert_eq!(s.retries, 0, "{s}");
    let log = site.log();
    assert_eq!(log.iter().filter(|p| *p == "<tls>").count(), 1, "{log:?}");
    let st = crawlrank_crawler::status(dir.path()).unwrap();
    assert_eq!(st.outcomes.get("fetch-error"), Some(&2));
    let text = st.to_string();
    assert!(
        text.contains("dns errors              1") && text.contains("tls errors              1"),
        "{text}"
    );
}

#[test]
fn noindex_and_canonical_are_stored_and_exported() {
    let site = Site::start(|_| {
        HashMap::from([
            (
                "/",
                html(
                    "",
                    "<a href=\"/noindex.html\">a</a><a href=\"/header-noindex.html\">b</a>\
                     <a href=\"/canonical.html?session=1\">c</a><a href=\"/self.html\">d</a>",
                ),
            ),
            (
                "/noindex.html",
                html(
                    "<meta name=\"robots\" content=\"noindex\">",
                    "<a href=\"/after-noindex.html\">still followed</a>",
                ),
            ),
            (
                "/header-noindex.html",
                Page {
                    headers: "X-Robots-Tag: noindex\r\n",
                    ..html("", "")
                },
            ),
            (
                "/canonical.html?session=1",
                html("<link rel=\"canonical\" href=\"/canonical.html\">", ""),
            ),
            (
                "/self.html",
                html("<link rel=\"canonical\" href=\"/self.html\">", ""),
            ),
            ("/after-noindex.html", html("", "")),
        ])
    });
    let dir = tempfile::tempdir().unwrap();
    let c = config(dir.path(), site.url("/"));
    let report = crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!(report.stop, StopReason::Exhausted);
    let s = &report.stats;
    assert_eq!(
        (s.pages_html, s.noindex_pages, s.canonical_pages),
        (6, 2, 1),
        "{s}"
    );
    // A canonical URL is recorded, not fetched; noindex does not stop link following.
    let log = site.log();
    assert!(!log.iter().any(|p| p == "/canonical.html"), "{log:?}");
    assert!(log.iter().any(|p| p == "/after-noindex.html"), "{log:?}");

    let rank = dir.path().join("rank.tsv");
    let e = crawlrank_crawler::export_ranking(dir.path(), &rank).unwrap();
    let marks_file = dir.path().join("rank.pages.tsv");
    assert_eq!(e.page_marks, Some((marks_file.clone(), 3)));
    let marks = std::fs::read_to_string(&marks_file).unwrap();
    let want = format!(
        "{}\t1\t\n{}\t1\t\n{}\t0\t{}\n",
        site.url("/noindex.html"),
        site.url("/header-noindex.html"),
        site.url("/canonical.html?session=1"),
        site.url("/canonical.html"),
    );
    assert_eq!(marks, want);
    // The ranking itself keeps its two columns.
    let ranking = std::fs::read_to_string(&rank).unwrap();
    assert!(
        ranking.lines().all(|l| l.split('\t').count() == 2),
        "{ranking}"
    );
    // The crawl's own snapshot has the same companion, and so has the state.
    assert_eq!(
        std::fs::read_to_string(dir.path().join(crawlrank_crawler::PAGE_MARKS_SNAPSHOT)).unwrap(),
        want
    );
    let stored = crawlrank_crawler::page_marks(dir.path()).unwrap();
    assert_eq!(stored.len(), 3);
    assert!(stored[0].1.noindex && stored[2].1.canonical.is_some());
}

/// Listeners on one port at 127.0.0.2, 127.0.0.3 and 127.0.0.1 (and ::1 when the machine has
/// IPv6 loopback, for `localhost`): loopback hosts other than a seed's. On Linux all of
/// 127.0.0.0/8 is the machine itself.
fn other_loopback_listeners() -> Vec<TcpListener> {
    for _ in 0..50 {
        let first = TcpListener::bind("127.0.0.2:0").unwrap();
        let port = first.local_addr().unwrap().port();
        let rest: std::io::Result<Vec<TcpListener>> = ["127.0.0.3", "127.0.0.1"]
            .iter()
            .map(|ip| TcpListener::bind((*ip, port)))
            .collect();
        if let Ok(rest) = rest {
            let mut all = vec![first];
            all.extend(rest);
            all.extend(TcpListener::bind(("::1", port)).ok());
            return all;
        }
    }
    panic!("no port free on 127.0.0.2, 127.0.0.3 and 127.0.0.1 at once");
}

#[test]
fn loopback_and_private_addresses_are_refused_unless_named_or_allowed() {
    let others = Site::start_on(other_loopback_listeners(), |_| {
        HashMap::from([
            ("/a", html("", "a")),
            ("/b", html("", "b")),
            ("/c", html("", "c")),
        ])
    });
    let q = others.port;
    let site = Site::start(move |_| {
        HashMap::from([
            (
                "/",
                html(
                    "",
                    &format!(
                        "<a href=\"http://127.0.0.2:{q}/a\">a</a> <a href=\"http://localhost:{q}/b\">b</a> \
                         <a href=\"/redirect\">c</a>"
                    ),
                ),
            ),
            (
                "/redirect",
                Page {
                    status: 302,
                    headers: Box::leak(format!("Location: http://127.0.0.3:{q}/c\r\n").into_boxed_str()),
                    body: String::new(),
                },
            ),
        ])
    });
    // The seed's host (127.0.0.1) is allowed; 127.0.0.2, localhost (a name that resolves to
    // loopback) and the redirect's 127.0.0.3 are not. A first run stops after the seed; the
    // resume names no seed, and still reaches the seed's host (the state kept it).
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), site.url("/"));
    c.max_pages = Some(1);
    crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap();
    c.max_pages = None;
    c.seeds.clear();
    let report = crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!(report.stop, StopReason::Exhausted);
    let s = &report.stats;
    assert_eq!(
        (
            s.private_address_refused,
            s.fetch_errors,
            s.pages_html,
            s.redirects
        ),
        (3, 3, 1, 1),
        "{s}"
    );
    assert_eq!(s.retries, 0, "{s}");
    assert_eq!(
        others.accepts.load(Ordering::SeqCst),
        0,
        "{:?}",
        others.log()
    );
    let mut log = site.log();
    log.sort();
    assert_eq!(log, ["/", "/redirect", "/robots.txt"]);
    let text = crawlrank_crawler::status(dir.path()).unwrap().to_string();
    assert!(text.contains("private address refused 3"), "{text}");
    assert!(text.contains("private address 3)"), "{text}");

    // With the allow flag, all three are fetched.
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), site.url("/"));
    c.fetch.allow_private_networks = true;
    let report = crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap();
    let s = &report.stats;
    assert_eq!((s.private_address_refused, s.pages_html), (0, 4), "{s}");
    let log = others.log();
    for p in ["/a", "/b", "/c"] {
        assert!(log.iter().any(|l| l == p), "{p} not fetched: {log:?}");
    }
}

#[test]
fn through_a_proxy_only_ip_literals_are_checked() {
    // The "proxy" answers absolute URLs; it resolves nothing, so a name is its business.
    let proxy = Site::start(|_| {
        HashMap::from([
            (
                "http://seed.test/",
                html(
                    "",
                    "<a href=\"http://10.9.8.7/x\">x</a> <a href=\"http://[fd00::1]/y\">y</a> \
                     <a href=\"http://inner.test/z\">z</a>",
                ),
            ),
            ("http://inner.test/z", html("", "z")),
        ])
    });
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), "http://seed.test/".into());
    c.fetch.proxy = Some(proxy.url(""));
    let report = crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap();
    let s = &report.stats;
    assert_eq!((s.private_address_refused, s.pages_html), (2, 2), "{s}");
    let log = proxy.log();
    assert!(log.iter().any(|l| l == "http://inner.test/z"), "{log:?}");
    assert!(
        !log.iter()
            .any(|l| l.contains("10.9.8.7") || l.contains("fd00")),
        "{log:?}"
    );
}

/// A crawl's engine (the calling thread) holds no page marks: 400 pages that each name a
/// canonical URL of about 1,900 bytes cost its thread no more heap at its peak than the same
/// pages naming themselves (no mark). The marks are in the state, and the snapshots read them
/// from there; the engine used to keep them all, and to copy them for every snapshot.
#[test]
fn the_crawl_keeps_no_page_marks_in_memory() {
    const PAGES: usize = 400;
    let pad = "x".repeat(1900);
    let site = |marked: bool| {
        let pad = pad.clone();
        Site::start(move |_| {
            let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
            let index: String = (0..PAGES)
                .map(|i| format!("<a href=\"/m{i}\">m</a>"))
                .collect();
            let mut pages = HashMap::from([("/", html("", &index))]);
            for i in 0..PAGES {
                let canonical = if marked {
                    format!("/c{i}?{pad}")
                } else {
                    format!("/m{i}")
                };
                let head = format!("<link rel=\"canonical\" href=\"{canonical}\">");
                pages.insert(leak(format!("/m{i}")), html(&head, ""));
            }
            pages
        })
    };
    let peak = |marked: bool| {
        let site = site(marked);
        let dir = tempfile::tempdir().unwrap();
        let mut c = config(dir.path(), site.url("/"));
        c.resources.concurrency = 1;
        // A snapshot every 50 pages: the engine copied the marks for each.
        c.policy.batch = Some(50);
        let (report, peak) = crawlrank_testkit::thread_heap::peak_during(|| {
            crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap()
        });
        assert_eq!(report.stats.pages_html, PAGES as u64 + 1);
        let marks = crawlrank_crawler::page_marks(dir.path()).unwrap().len();
        assert_eq!(marks, if marked { PAGES } else { 0 });
        peak
    };
    let (plain, marked) = (peak(false), peak(true));
    // The marks themselves are 400 × 1.9 KB = 760 KB.
    assert!(
        marked < plain + (256 << 10),
        "the engine's heap peaked at {} KiB with marks, {} KiB without",
        marked >> 10,
        plain >> 10
    );
}

/// A DNS server on loopback UDP for the crawl below: `site.test` is 127.0.0.1 (TTL 300 s),
/// `mute.test` is never answered, every other name does not exist (NXDOMAIN, e.g.
/// `gone.test`); AAAA questions get an empty answer. Counts the queries by name.
fn dns_server() -> DnsServer {
    DnsServer::start(
        &[
            ("site.test", DnsAnswer::A(Ipv4Addr::LOCALHOST)),
            ("mute.test", DnsAnswer::Silent),
        ],
        DnsAnswer::NxDomain,
    )
}

/// A direct crawl resolving names through its own resolver: the seed's name is asked once
/// for all its connections (the answer's TTL), a name that does not exist is given up at once,
/// and a name whose server never answers is given up after 3 lookups that time out — the
/// crawl ends, and the mute name gets no further query.
#[test]
fn names_resolve_through_the_crawls_resolver_cached_timed_out_and_given_up() {
    let site = Site::start(|port| {
        HashMap::from([
            (
                "/",
                html(
                    "",
                    &format!(
                        "<a href=\"/a\">a</a> <a href=\"/b\">b</a> \
                         <a href=\"http://gone.test:{port}/x\">x</a> \
                         <a href=\"http://mute.test:{port}/y\">y</a>"
                    ),
                ),
            ),
            ("/a", html("", "a")),
            ("/b", html("", "b")),
        ])
    });
    let dns = dns_server();
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), format!("http://site.test:{}/", site.port));
    c.fetch.dns.servers = vec![dns.addr()];
    c.fetch.dns.timeout = Duration::from_millis(300);
    c.politeness.max_retries = 10;
    let report = crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!(report.stop, StopReason::Exhausted);
    let s = &report.stats;
    assert_eq!(s.pages_html, 3, "{s}");
    assert_eq!(s.dns_errors, 2, "{s}");
    let asked = dns.asked();
    // robots.txt and three pages, each on a new connection (`Connection: close`): one query.
    assert_eq!(asked.get("site.test"), Some(&1), "{asked:?}");
    assert!(asked.get("gone.test").is_some_and(|&n| n >= 1), "{asked:?}");
    // Asked, then given up after 3 lookups (`dns` 2 above: a name that only timed out was
    // never counted there before), although the crawl would have tried robots.txt 11 times.
    assert!(asked.get("mute.test").is_some_and(|&n| n >= 3), "{asked:?}");
    let log = site.log();
    assert_eq!(log.len(), 4, "{log:?}");
}
