//! End-to-end tests of the crawler on the test web's hostile cases: rate limits
//! with and without `Retry-After` (also across a `kill -9`), redirect chains on one host and
//! across hosts, endless repeating paths and the hop limit. Everything runs on loopback, the
//! checks read the test web's request log (the server's clock).

use crate::common::{self, crawl_config, ring_graph, start_web};
use crawlrank_crawler::CrawlReport;
use crawlrank_crawler::HopLimits;
use crawlrank_crawler::{crawl, CrawlConfig, PolicySettings, Politeness, Resources, StopReason};
use crawlrank_frontier::PolicyKind;
use crawlrank_graph::Csr;
use crawlrank_testweb::{LogEntry, TestWeb, TestWebConfig};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// A test web of two graph pages whose trap catalogue (and trap hosts) is on.
fn trap_web(retry_after_secs: u64) -> TestWeb {
    let g = Csr::from_arcs(2, &[(0, 1)]);
    let cfg = TestWebConfig {
        traps: true,
        retry_after_secs,
        slow_delay: Duration::from_secs(1),
        huge_bytes: 200_000,
        ..TestWebConfig::default()
    };
    start_web(g, cfg)
}

/// The trap web with a Retry-After of 2 s and a fresh folder for a crawl's state: what most
/// tests here crawl.
fn trap_web_and_state() -> (TestWeb, tempfile::TempDir) {
    (trap_web(2), tempfile::tempdir().unwrap())
}

fn config<S: AsRef<str>>(web: &TestWeb, state: &Path, seeds: &[S]) -> CrawlConfig {
    let seeds = seeds.iter().map(|s| s.as_ref().to_string()).collect();
    let mut c = crawl_config(state, seeds, PolicyKind::Fica.into(), 4);
    c.politeness = Politeness {
        max_retries: 3,
        retry_backoff: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(5),
        ..Politeness::default()
    };
    c.fetch.proxy = Some(web.proxy_url());
    c
}

fn run(c: &CrawlConfig) -> CrawlReport {
    crawl(c, &AtomicBool::new(false), &mut |_| {}).unwrap()
}

/// Runs the crawl `c` and checks that it ended because nothing was left to crawl.
fn run_to_the_end(c: &CrawlConfig) -> CrawlReport {
    let report = run(c);
    assert_eq!(report.stop, StopReason::Exhausted, "{}", report.stats);
    report
}

/// The requests to `host` (robots.txt included), in arrival order.
fn requests_to<'a>(log: &'a [LogEntry], host: &str) -> Vec<&'a LogEntry> {
    let mut v: Vec<&LogEntry> = log.iter().filter(|e| e.host == host).collect();
    v.sort_by_key(|e| e.arrival);
    v
}

/// Whether the log shows `path` of the host `name` answered 200.
fn fetched(log: &[LogEntry], name: &str, path: &str) -> bool {
    let host = host(name);
    log.iter()
        .any(|e| e.host == host && e.path == path && e.status == 200)
}

/// How long after the refusal `refused` (to the host `name`) was answered the next request to
/// that host arrived.
fn first_wait_after(log: &[LogEntry], name: &str, refused: &LogEntry) -> Duration {
    let next = requests_to(log, &host(name))
        .into_iter()
        .find(|e| e.arrival > refused.arrival)
        .expect("the resumed crawl went on");
    next.arrival.saturating_duration_since(refused.finish)
}

/// For each refusal (429/503) to `host`: how long until the next request to it arrived.
fn waits_after_refusals(log: &[LogEntry], host: &str) -> Vec<Duration> {
    let reqs = requests_to(log, host);
    reqs.windows(2)
        .filter(|w| w[0].status == 429 || w[0].status == 503)
        .map(|w| w[1].arrival.saturating_duration_since(w[0].finish))
        .collect()
}

/// A URL on the trap catalogue's own host (the redirect chains, repeating paths, calendar and
/// bad `Location` headers).
fn trap_url(path: &str) -> String {
    format!("http://traps.crawlrank.test{path}")
}

fn host(name: &str) -> String {
    format!("{name}.traps.crawlrank.test")
}

fn url(name: &str, path: &str) -> String {
    format!("http://{}{path}", host(name))
}

#[test]
fn retry_after_and_back_off_hold_the_host_then_recover() {
    let (web, dir) = trap_web_and_state();
    let seeds: Vec<String> = [
        "retry-after",
        "retry-date",
        "backoff",
        "retry-bad",
        "retry-long",
    ]
    .iter()
    .map(|h| url(h, "/"))
    .collect();
    let report = run_to_the_end(&config(&web, dir.path(), &seeds));
    let log = web.log();
    // Retry-After in seconds (2) and as a date (2 s + 1 ahead, to the second): each refusal
    // held the whole host, not just the URL. No Retry-After, or a bad one: exponential
    // back-off, 1 s then 2 s.
    for (name, mins, what) in [
        ("retry-after", [2.0, 2.0], "seconds"),
        ("retry-date", [2.0, 2.0], "date"),
        ("backoff", [1.0, 2.0], "back-off"),
        ("retry-bad", [1.0, 2.0], "bad values"),
    ] {
        let waits = waits_after_refusals(&log, &host(name));
        assert_eq!(waits.len(), mins.len(), "{what}: {waits:?}");
        for (w, m) in waits.iter().zip(mins) {
            assert!(w.as_secs_f64() >= m, "{what}: waited {w:?}, asked {m} s");
        }
    }
    // Every page of those hosts was fetched in the end.
    for (name, pages) in [
        ("retry-after", 4),
        ("retry-date", 4),
        ("backoff", 6),
        ("retry-bad", 2),
    ] {
        for p in std::iter::once("/".to_string()).chain((1..=pages).map(|i| format!("/p{i}"))) {
            assert!(fetched(&log, name, &p), "{name}{p} never fetched");
        }
    }
    // The back-off comes back down: after the refusals, the first success still waits the
    // halved back-off (1 s); the last pages follow at once.
    let backoff: Vec<&LogEntry> = requests_to(&log, &host("backoff"))
        .into_iter()
        .filter(|e| e.path != "/robots.txt")
        .collect();
    assert_eq!(backoff.len(), 9, "2 refusals and 7 pages");
    let gap = |i: usize| {
        backoff[i + 1]
            .arrival
            .saturating_duration_since(backoff[i].finish)
    };
    assert!(gap(2) >= Duration::from_millis(950), "{:?}", gap(2));
    assert!(
        gap(7) < Duration::from_millis(900),
        "not recovered: {:?}",
        gap(7)
    );
    // A Retry-After of a year is beyond --max-retry-after (5 s): the URL is given up at once.
    let long = log
        .iter()
        .filter(|e| e.host == host("retry-long") && e.path == "/p1");
    assert_eq!(long.count(), 1);
    let s = &report.stats;
    assert_eq!(s.rate_limited, 9, "{s}");
    assert_eq!(s.retry_after_invalid, 2, "{s}");
    assert_eq!(s.retry_after_too_long, 1, "{s}");
    // 2+2 (seconds), 3+3 (date), 1+2 (back-off), 1+2 (bad), 5 (the cap) at least.
    assert!(
        s.backoff_seconds >= 2 + 2 + 2 + 2 + 1 + 2 + 1 + 2 + 5,
        "{s}"
    );
    web.shutdown_blocking();
}

/// With sitemaps read (`crawl`'s default), a seed host's first request is its sitemap's: a
/// refused `/sitemap.xml` holds the host as a refused page does — `Retry-After` (2 s) or the
/// back-off (1 s, then 2 s) — before the host is asked again, and every page is fetched.
#[test]
fn a_refused_sitemap_holds_its_host_as_a_page_does() {
    let (web, dir) = trap_web_and_state();
    let seeds: Vec<String> = ["retry-after", "backoff"]
        .iter()
        .map(|h| url(h, "/"))
        .collect();
    let mut c = config(&web, dir.path(), &seeds);
    c.fetch.sitemaps = true;
    let report = run_to_the_end(&c);
    let log = web.log();
    for (name, mins) in [("retry-after", [2.0, 2.0]), ("backoff", [1.0, 2.0])] {
        let refused: Vec<&str> = requests_to(&log, &host(name))
            .into_iter()
            .filter(|e| e.status == 429 || e.status == 503)
            .map(|e| e.path.as_str())
            .collect();
        // The host's first request is its sitemap's, refused (`backoff` refuses its first
        // two requests, `retry-after` the first of each URL).
        assert_eq!(refused.len(), 2, "{name}: {refused:?}");
        assert_eq!(refused[0], "/sitemap.xml", "{name}: {refused:?}");
        let waits = waits_after_refusals(&log, &host(name));
        assert_eq!(waits.len(), 2, "{name}: {waits:?}");
        for (w, m) in waits.iter().zip(mins) {
            assert!(w.as_secs_f64() >= m, "{name}: waited {w:?}, asked {m} s");
        }
    }
    for (name, pages) in [("retry-after", 4), ("backoff", 6)] {
        for p in std::iter::once("/".to_string()).chain((1..=pages).map(|i| format!("/p{i}"))) {
            assert!(fetched(&log, name, &p), "{name}{p} never fetched");
        }
    }
    assert_eq!(report.stats.rate_limited, 4, "{}", report.stats);
    web.shutdown_blocking();
}

/// The crawl of [`retry_after_and_back_off_survive_kill_9`] in a child process (it is
/// SIGKILLed).
#[test]
fn child_rate_limited_crawl() {
    let Ok(args) = std::env::var("CRAWLRANK_TEST_RATE_CHILD") else {
        return;
    };
    let (state, proxy) = args.split_once('\t').unwrap();
    let seeds = vec![url("retry-after", "/"), url("backoff", "/")];
    let mut c = crawl_config(Path::new(state), seeds, PolicyKind::Fica.into(), 2);
    c.politeness.max_retry_after = Duration::from_secs(60);
    c.fetch.proxy = Some(proxy.into());
    run(&c);
}

#[test]
fn retry_after_and_back_off_survive_kill_9() {
    let secs = 4;
    let web = trap_web(secs);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let mut child = common::spawn_test(
        "hostile::child_rate_limited_crawl",
        "CRAWLRANK_TEST_RATE_CHILD",
        format!("{}\t{}", state.display(), web.proxy_url()),
        std::process::Stdio::null(),
    );
    // Wait for the first refusal of `retry-after` (4 s asked) and the second of `backoff` (a
    // back-off of 2 s), give the crawler a moment to commit them, then SIGKILL.
    let refusals = |name: &str| {
        let log = web.log();
        let v: Vec<LogEntry> = requests_to(&log, &host(name))
            .into_iter()
            .filter(|e| e.status == 429)
            .cloned()
            .collect();
        v
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while refusals("retry-after").is_empty() || refusals("backoff").len() < 2 {
        assert!(Instant::now() < deadline, "no 429 answered");
        assert!(child.try_wait().unwrap().is_none(), "the child ended early");
        std::thread::sleep(Duration::from_millis(5));
    }
    // A second, not less: under a loaded CI the child may take hundreds of milliseconds to
    // handle and commit the refusals, and a kill before the commit leaves nothing to restore
    // (the pauses, 4 s and 2 s, keep the child from asking either host again meanwhile).
    std::thread::sleep(Duration::from_millis(1000));
    child.kill().unwrap();
    child.wait().unwrap();
    let refused = refusals("retry-after")[0].clone();
    let backed_off = refusals("backoff")[1].clone();
    // Resume at once, in this process: the host still waits its Retry-After.
    let mut c = config::<&str>(&web, &state, &[]);
    c.politeness.max_retry_after = Duration::from_secs(60);
    run_to_the_end(&c);
    let log = web.log();
    let waited = first_wait_after(&log, "retry-after", &refused);
    assert!(
        waited >= Duration::from_secs(secs),
        "the host asked for {secs} s and was asked again after {waited:?}"
    );
    let waited = first_wait_after(&log, "backoff", &backed_off);
    assert!(
        waited >= Duration::from_millis(1950),
        "the host was backing off 2 s and was asked again after {waited:?}"
    );
    for p in ["/", "/p1", "/p2", "/p3", "/p4"] {
        assert!(fetched(&log, "retry-after", p), "{p} never fetched");
    }
    web.shutdown_blocking();
}

#[test]
fn redirect_chains_and_repeating_paths_are_cut() {
    let (web, dir) = trap_web_and_state();
    let seeds = [
        trap_url("/chain/100000"),
        url("hop0", "/"),
        trap_url("/lin/a/"),
        trap_url("/d/a/"),
    ];
    let mut c = config(&web, dir.path(), &seeds);
    c.limits.hops = HopLimits {
        max_hops: None,
        max_redirects: 5,
    };
    let report = run_to_the_end(&c);
    let log = web.log();
    let pages = |f: &dyn Fn(&LogEntry) -> bool| {
        log.iter()
            .filter(|e| e.path != "/robots.txt" && f(e))
            .count()
    };
    // The seed and its 5 redirects, on one host and across hosts.
    assert_eq!(pages(&|e| e.path.starts_with("/chain/")), 6);
    assert_eq!(pages(&|e| e.host.starts_with("hop")), 6);
    assert!(
        !log.iter().any(|e| e.host == host("hop6")),
        "hop6 contacted"
    );
    // /lin/a/ and /lin/a/a/; /d/a/ … /d/a/b/a/b/a/: never a segment or a run three times.
    assert_eq!(pages(&|e| e.path.starts_with("/lin/")), 2);
    assert_eq!(pages(&|e| e.path.starts_with("/d/")), 5);
    for e in &log {
        let segs: Vec<&str> = e.path.split('/').filter(|s| !s.is_empty()).collect();
        assert!(
            !crawlrank_fetch::links::pathological(&segs),
            "requested {}",
            e.path
        );
    }
    let s = &report.stats;
    assert_eq!(s.redirect_chain_too_long, 2, "{s}");
    assert_eq!(s.pathological_links, 2, "{s}");

    // The hop limit bounds what no URL rule sees: a calendar linking to the next day.
    let dir = tempfile::tempdir().unwrap();
    let seed = trap_url("/calendar?day=0");
    let mut c = config(&web, dir.path(), &[seed]);
    c.limits.hops.max_hops = Some(3);
    web.clear_log();
    let report = run(&c);
    let log = web.log();
    assert_eq!(
        log.iter()
            .filter(|e| e.path.starts_with("/calendar"))
            .count(),
        4,
        "days 0 to 3"
    );
    assert_eq!(report.stats.hop_limit_links, 1, "{}", report.stats);
    web.shutdown_blocking();
}

#[test]
fn robots_txt_by_rfc_9309() {
    let (web, dir) = trap_web_and_state();
    let names = [
        "robots-redirect",
        "robots-404",
        "robots-500",
        "robots-html",
        "robots-binary",
    ];
    let seeds: Vec<String> = names.iter().map(|h| url(h, "/")).collect();
    let mut c = config(&web, dir.path(), &seeds);
    c.politeness.delay = Duration::from_millis(100);
    run_to_the_end(&c);
    let log = web.log();
    // robots.txt's redirects are requests to the host like any: never two at once, and two
    // starts at least the delay apart (the server's clock).
    for name in names {
        for w in requests_to(&log, &host(name)).windows(2) {
            assert!(
                w[1].arrival >= w[0].finish,
                "{name}: {} overlaps",
                w[1].path
            );
            let gap = w[1].arrival.saturating_duration_since(w[0].arrival);
            assert!(
                gap >= c.politeness.delay,
                "{name}: {} {gap:?} after {}",
                w[1].path,
                w[0].path
            );
        }
    }
    let fetched = |name: &str, path: &str| fetched(&log, name, path);
    // Five redirects are followed to the rules, which are obeyed.
    assert!(fetched("robots-redirect", "/robots-hop/5"));
    assert!(fetched("robots-redirect", "/public") && !fetched("robots-redirect", "/private/x"));
    // 4xx: allow all; HTML or binary: no rules, so allow all.
    for name in ["robots-404", "robots-html", "robots-binary"] {
        assert!(
            fetched(name, "/") && fetched(name, "/public") && fetched(name, "/private/x"),
            "{name}"
        );
    }
    // 5xx: disallow all, asked again before giving up.
    assert!(!log
        .iter()
        .any(|e| e.host == host("robots-500") && e.path != "/robots.txt"));
    let asked = log
        .iter()
        .filter(|e| e.host == host("robots-500") && e.path == "/robots.txt")
        .count();
    assert!(asked >= 2, "robots.txt of robots-500 asked {asked} times");
    web.shutdown_blocking();
}

#[test]
fn bad_location_headers_are_dropped_and_counted() {
    let (web, dir) = trap_web_and_state();
    let seeds: Vec<String> = ["empty", "missing", "ftp", "long", "relative/x"]
        .iter()
        .map(|p| trap_url(&format!("/loc/{p}")))
        .collect();
    let report = run_to_the_end(&config(&web, dir.path(), &seeds));
    let log = web.log();
    // Each redirect fetched once (the empty Location is the page itself: a loop, cut), the
    // relative one followed, nothing else requested.
    for p in [
        "/loc/empty",
        "/loc/missing",
        "/loc/ftp",
        "/loc/long",
        "/loc/relative/x",
    ] {
        assert_eq!(log.iter().filter(|e| e.path == p).count(), 1, "{p}");
    }
    assert!(log.iter().any(|e| e.path == "/found/loc-relative"));
    assert!(!log.iter().any(|e| e.path.starts_with("/canary/")));
    let s = &report.stats;
    assert_eq!(s.redirects, 5, "{s}");
    assert_eq!(s.invalid_links, 2, "missing and ftp: {s}");
    assert_eq!(s.trap_links, 1, "100 KB: {s}");
    web.shutdown_blocking();
}

/// A kept-alive connection that the server closes unread as the next request arrives (the
/// test web's `close-idle` host: a keep-alive timeout running out just then): the request is
/// sent once more at once on a new connection — no retry, no failure, no page lost or fetched
/// twice. Every other broken answer is a retry after the host's delay and back-off: see the
/// `crawlrank` binary's test of the broken-answer hosts (crates/cli/tests/it/cli.rs).
#[test]
fn a_kept_connection_closed_unanswered_is_resent_at_once() {
    let (web, dir) = trap_web_and_state();
    let seed = url("close-idle", "/");
    let report = run_to_the_end(&config(&web, dir.path(), &[seed]));
    let log = web.log();
    let reqs = requests_to(&log, &host("close-idle"));
    let mut paths: Vec<(&str, u16)> = reqs.iter().map(|e| (e.path.as_str(), e.status)).collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [("/", 200), ("/p1", 200), ("/p2", 200), ("/robots.txt", 404)]
    );
    let s = &report.stats;
    assert_eq!((s.retries, s.fetch_errors, s.pages_html), (0, 0, 3), "{s}");
    // A page whose kept connection was closed under it went out again on a new one within
    // the same attempt: robots.txt and three pages, each counted once.
    assert_eq!(s.requests, 4, "{s}");
    web.shutdown_blocking();
}

/// Crash safety: a crawl's WARC output and state after a `kill -9` at any moment, and after
/// a disk that lost the tail of a WARC file the state had committed.
mod durable {
    use super::*;
    use crawlrank_crawler::{crawl_log, LoggedCall};
    use std::collections::{BTreeMap, HashMap};
    use std::io::{BufRead, Read};

    /// `n` pages in a ring (all reachable from 0) plus two pseudo-random links each; returns the
    /// test web with its proxy URL and the URL of page 0, the seed.
    fn ring_web(n: u32) -> (TestWeb, String, String) {
        let cfg = TestWebConfig {
            latency: Duration::from_millis(1),
            ..TestWebConfig::default()
        };
        let web = start_web(ring_graph(n, 2, 0xd0ab1e), cfg);
        let (proxy, seed) = (web.proxy_url(), web.url(0).to_string());
        (web, proxy, seed)
    }

    /// A crawl at one request slot (so in the policy's order), with a ranking snapshot every
    /// 16 pages, a frontier of 8 entries in memory (the rest spilled) and WARC files of
    /// 16 KB: commits, snapshots, spills and rotations all happen within a few hundred pages.
    fn durable_config(state: &Path, proxy: &str, seed: &str) -> CrawlConfig {
        let policy = PolicySettings {
            kind: PolicyKind::Fica,
            batch: Some(16),
            ..PolicySettings::default()
        };
        let mut c = crawl_config(state, vec![seed.to_string()], policy, 1);
        c.resources = Resources {
            seen_cache: 16,
            frontier_hot: 8,
            warc_max_size: 16 << 10,
            stop_grace: Duration::ZERO,
            ..c.resources
        };
        c.fetch.proxy = Some(proxy.to_string());
        c
    }

    /// Every `response` record of the state's WARC files: target URI → how many.
    fn responses(state: &Path) -> HashMap<String, usize> {
        let mut out = HashMap::new();
        let mut files: Vec<_> = std::fs::read_dir(state.join("warc"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let mut r = std::io::BufReader::new(std::fs::File::open(&f).unwrap());
            while !r.fill_buf().unwrap().is_empty() {
                let mut rec = Vec::new();
                flate2::bufread::GzDecoder::new(&mut r)
                    .read_to_end(&mut rec)
                    .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                let head = String::from_utf8_lossy(&rec[..rec.len().min(4096)]).into_owned();
                if head.contains("\r\nWARC-Type: response\r\n") {
                    let uri = head
                        .lines()
                        .find_map(|l| l.strip_prefix("WARC-Target-URI: "))
                        .unwrap();
                    *out.entry(uri.to_string()).or_insert(0) += 1;
                }
            }
        }
        out
    }

    /// `warcio check` on every WARC file of the state, when warcio is installed (CI installs
    /// it); `false` when it is not.
    fn warcio_checks(state: &Path) -> bool {
        let installed = std::process::Command::new("warcio")
            .arg("--help")
            .output()
            .is_ok_and(|o| o.status.success());
        if !installed {
            assert!(
                std::env::var_os("CI").is_none(),
                "warcio is not installed (pip install warcio); .ci/run installs it"
            );
            eprintln!("skipped warcio check: warcio is not installed");
            return false;
        }
        for e in std::fs::read_dir(state.join("warc")).unwrap() {
            let path = e.unwrap().path();
            let out = std::process::Command::new("warcio")
                .arg("check")
                .arg(&path)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "warcio check {}: {}{}",
                path.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        true
    }

    /// What a state says was crawled: the pop order, and each crawled page's links, by URL.
    fn crawl_of(state: &Path) -> (Vec<String>, BTreeMap<String, Vec<String>>) {
        let (mut order, mut links) = (Vec::new(), BTreeMap::new());
        for call in crawl_log(state).unwrap() {
            match call {
                LoggedCall::Popped(url) => order.push(url),
                LoggedCall::Crawled { url, links: l } => {
                    assert!(
                        links.insert(url.clone(), l).is_none(),
                        "{url} crawled twice"
                    );
                }
                LoggedCall::Seed(_) => {}
            }
        }
        (order, links)
    }

    /// Runs a crawl in this process when spawned by
    /// [`a_crawl_killed_at_ten_random_moments_is_the_uninterrupted_crawl`]:
    /// `CRAWLRANK_TEST_DURABLE_CHILD` = state, proxy, seed (tab-separated).
    #[test]
    fn durable_child_entry() {
        let Ok(args) = std::env::var("CRAWLRANK_TEST_DURABLE_CHILD") else {
            return;
        };
        let v: Vec<&str> = args.split('\t').collect();
        run(&durable_config(Path::new(v[0]), v[1], v[2]));
    }

    #[test]
    fn a_crawl_killed_at_ten_random_moments_is_the_uninterrupted_crawl() {
        let n = 300;
        let (web, proxy, seed) = ring_web(n);
        // The uninterrupted crawl.
        let whole = tempfile::tempdir().unwrap();
        let report = run_to_the_end(&durable_config(whole.path(), &proxy, &seed));
        assert_eq!(report.crawled, u64::from(n));
        let fetched_before = web.log().len();
        // The same crawl, killed with SIGKILL at ten moments of a seeded schedule: after a
        // number of page requests, then a few hundred microseconds more (inside a commit, a
        // snapshot, a spill or a rotation as it falls).
        let killed = tempfile::tempdir().unwrap();
        let args = format!("{}\t{proxy}\t{seed}", killed.path().display());
        let mut rng = crawlrank_rng::XorShift64::new(0x6b1119);
        let mut targets: Vec<usize> = (0..10)
            .map(|_| 5 + (rng.next_u64() % u64::from(n - 20)) as usize)
            .collect();
        targets.sort_unstable();
        let mut kills = 0;
        let mut pages_at_kill = Vec::new();
        for target in targets {
            let mut child = common::spawn_test(
                "hostile::durable::durable_child_entry",
                "CRAWLRANK_TEST_DURABLE_CHILD",
                &args,
                std::process::Stdio::null(),
            );
            let deadline = Instant::now() + Duration::from_secs(30);
            let pages = || {
                web.log()[fetched_before..]
                    .iter()
                    .filter(|e| e.node.is_some())
                    .count()
            };
            // Each run fetches at least one page (the one in flight at the last kill, if
            // any) before it is killed.
            let at_least = target.max(pages() + 1);
            while pages() < at_least
                && child.try_wait().unwrap().is_none()
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_micros(rng.next_u64() % 3000));
            if child.try_wait().unwrap().is_none() {
                child.kill().unwrap(); // SIGKILL
                kills += 1;
                pages_at_kill.push(pages());
            }
            child.wait().unwrap();
        }
        assert_eq!(
            kills, 10,
            "the crawl ended before the kills: {pages_at_kill:?}"
        );
        eprintln!("killed after {pages_at_kill:?} page requests");
        // Resumed to the end, in this process.
        let report = run_to_the_end(&durable_config(killed.path(), &proxy, &seed));
        assert!(
            report.warc_recovery.damage.is_none(),
            "{:?}",
            report.warc_recovery
        );
        // The same pages, the same links, in the same order.
        let (order, links) = crawl_of(killed.path());
        let (whole_order, whole_links) = crawl_of(whole.path());
        assert_eq!(links.len(), n as usize);
        assert_eq!(links, whole_links, "the link graphs differ");
        assert_eq!(order, whole_order, "the crawl orders differ");
        // Each page archived exactly once (at one request slot a fetch in flight at a kill
        // is cut from the WARC with its uncommitted step), in WARC files that warcio reads.
        let archived = responses(killed.path());
        for v in 0..n {
            let url = web.url(v);
            assert_eq!(archived.get(url), Some(&1), "{url}: {archived:?}");
        }
        let files = std::fs::read_dir(killed.path().join("warc"))
            .unwrap()
            .count();
        assert!(files > 10, "{files} WARC files: too few rotations");
        warcio_checks(killed.path());
        // A page was fetched again only when it was in flight at a kill.
        let refetched = web.log()[fetched_before..]
            .iter()
            .filter(|e| e.node.is_some())
            .count()
            - n as usize;
        assert!(
            refetched <= kills,
            "{refetched} pages fetched again after {kills} kills"
        );
        web.shutdown_blocking();
    }

    #[test]
    fn a_warc_whose_tail_the_disk_lost_is_repaired_not_padded() {
        let n = 120;
        let (web, proxy, seed) = ring_web(n);
        let dir = tempfile::tempdir().unwrap();
        let mut c = durable_config(dir.path(), &proxy, &seed);
        c.resources.warc_max_size = 1 << 20;
        c.max_pages = Some(80);
        let first = run(&c);
        assert_eq!(first.stop, StopReason::MaxPages);
        // A power cut that the disk did not survive whole: the committed file lost its last
        // 6,000 bytes (the records of a few pages, the last one cut inside).
        let file = dir.path().join("warc/crawl-00000.warc.gz");
        let len = std::fs::metadata(&file).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(len - 6000)
            .unwrap();
        c.max_pages = None;
        let second = run_to_the_end(&c);
        let damage = second.warc_recovery.damage.expect("the damage is reported");
        assert_eq!((damage.committed, damage.found), (len, len - 6000));
        assert!(damage.kept < len - 6000, "{damage:?}");
        assert!(damage.lost_pages >= 2, "{damage:?}");
        let st = &second.stats;
        assert_eq!(st.warc_damaged_pages, damage.lost_pages, "{st}");
        assert_eq!(st.warc_refetched, damage.lost_pages, "{st}");
        // Every page crawled is archived once, the lost ones again, in a file warcio reads.
        let archived = responses(dir.path());
        for v in 0..n {
            let url = web.url(v);
            assert_eq!(archived.get(url), Some(&1), "{url}: {archived:?}");
        }
        warcio_checks(dir.path());
        // The crawl itself did not change: each page crawled once.
        let (_, links) = crawl_of(dir.path());
        assert_eq!(links.len(), n as usize);
        web.shutdown_blocking();
    }
}

/// The test web's wildcard-DNS host farm (`x{n}.farm.test`: every host's `/` links ten new
/// hosts and three pages of its own): `--max-hosts-per-domain` bounds the hosts that get a
/// request, robots.txt included, and `--max-urls-per-domain` the URLs of the domain; the
/// links past them are counted and the crawl ends, well within its page budget.
#[test]
fn a_wildcard_dns_host_farm_is_bounded_per_registrable_domain() {
    use crawlrank_testweb::trap_hosts::{FARM_PAGES, FARM_SEED, FARM_SUFFIX};
    let farm_requests = |log: &[LogEntry]| -> (usize, usize, usize) {
        let farm: Vec<&LogEntry> = log
            .iter()
            .filter(|e| e.host.ends_with(FARM_SUFFIX))
            .collect();
        let hosts: std::collections::HashSet<&str> = farm.iter().map(|e| e.host.as_str()).collect();
        let robots = farm.iter().filter(|e| e.path == "/robots.txt").count();
        (hosts.len(), robots, farm.len() - robots)
    };
    let (web, dir) = trap_web_and_state();
    let mut c = config(&web, dir.path(), &[FARM_SEED]);
    c.max_pages = Some(400);
    c.limits.urls.max_hosts_per_domain = 40;
    let report = run_to_the_end(&c);
    let pages = 40 * (1 + FARM_PAGES as usize);
    assert_eq!(farm_requests(&web.log()), (40, 40, pages));
    assert_eq!((report.hosts, report.discovered), (40, pages));
    assert!(report.stats.domain_host_cap_links > 0, "{}", report.stats);

    web.clear_log();
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(&web, dir.path(), &[FARM_SEED]);
    c.max_pages = Some(400);
    c.limits.urls.max_per_domain = 25;
    let report = run_to_the_end(&c);
    assert_eq!(report.discovered, 25);
    let (hosts, robots, pages) = farm_requests(&web.log());
    assert_eq!((robots, pages), (hosts, 25));
    assert!(report.stats.domain_cap_links > 0, "{}", report.stats);
    web.shutdown_blocking();
}
