//! A worker on a hostile web, as a user runs it: `crawlrank frontier serve` with its default
//! options (or the one bound a test is about) and one `crawlrank crawl --frontier` worker on
//! the test web's traps, checked on the web's request log as `crawlrank crawl`'s hostile-web
//! tests are (crates/crawler/tests/it/hostile.rs, crates/crawler/tests/it/direct.rs,
//! crates/cli/tests/it/cli.rs):
//! - a redirect chain across a thousand hosts is cut where `crawlrank crawl` cuts it, at
//!   `--max-redirects` (20 by default), and a state keeps the bounds it was created with;
//! - a host that refuses (429, 503) gets no request before its `Retry-After` or back-off is
//!   over, and after a success still waits the halved back-off;
//! - robots.txt is obeyed by RFC 9309's cases (redirects followed, 4xx allow all, 5xx disallow
//!   all), and a host whose answers are broken is asked again only after the back-off;
//! - never two requests at once to one host, in every crawl of the test web here;
//! - `frontier serve --max-pages-per-host` bounds a spider trap's host, `--max-hops` a
//!   calendar no URL rule sees;
//! - links to loopback hosts other than the seeds' are never followed;
//! - sitemaps are read as `crawl` reads them (the same files, each once);
//! - pages that say `noindex` or name another canonical URL are reported with those marks,
//!   which `crawl` records (crates/crawler/tests/it/direct.rs has its side).
//!
//! Each worker runs with the tests' usual speed-ups (`--delay 0 --concurrency 2 --timeout 5`,
//! [`Worker::start`]) and `--idle-exit 5`; every other option is its default.

use crate::common;

use common::serve::Serve;
use common::workers::Worker;
use crawlrank_graph::Csr;
use crawlrank_testweb::{max_in_flight_per_host, LogEntry, TestWeb, TestWebConfig};
use crawlrank_urlfrontier::proto::{url_item, UrlStatusRequest};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn hop_host(i: u32) -> String {
    format!("hop{i}.traps.crawlrank.test")
}

#[test]
fn a_worker_through_the_service_stops_a_cross_host_redirect_chain_at_the_default_limit() {
    let web = TestWeb::start_blocking(
        Arc::new(Csr::from_arcs(2, &[(0, 1)])),
        None,
        "127.0.0.1:0".parse().unwrap(),
        TestWebConfig {
            traps: true,
            ..TestWebConfig::default()
        },
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(&dir.path().join("frontier"), &[]);
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(
        &seeds,
        format!(
            "http://{}/\nhttp://traps.crawlrank.test/chain/100000\n",
            hop_host(0)
        ),
    )
    .unwrap();
    let worker = Worker::start(
        &format!("http://{}", serve.addr),
        &web,
        &seeds,
        &dir.path().join("worker"),
        &["--idle-exit", "5"],
    );
    let (ok, stdout, stderr) = worker.finish(Duration::from_secs(180));
    assert!(ok, "the worker failed: {stdout}\n{stderr}");
    let log = web.log();
    let pages = |f: &dyn Fn(&crawlrank_testweb::LogEntry) -> bool| {
        log.iter().filter(|e| !side_request(e) && f(e)).count()
    };
    // The seed and its 20 redirects, across hosts and on one host, as `crawl` follows them.
    assert_eq!(pages(&|e| e.host.starts_with("hop")), 21, "{stdout}");
    assert!(
        !log.iter().any(|e| e.host == hop_host(21)),
        "hop21 contacted"
    );
    assert_eq!(pages(&|e| e.path.starts_with("/chain/")), 21, "{stdout}");
    assert_one_request_at_a_time(&log);
    // The two redirects past the limit are counted, and `crawlrank status` shows them.
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .args(["status", "--frontier", &format!("http://{}", serve.addr)])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{shown}");
    assert!(shown.contains("redirect_chain_too_long 2"), "{shown}");
    drop(serve);

    // The state keeps the bounds it was created with: other ones are refused, named.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .args(["frontier", "serve", "--addr", "127.0.0.1:0", "--state"])
        .arg(dir.path().join("frontier"))
        .args(["--max-redirects", "5"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("--max-redirects 20") && stderr.contains("--max-redirects 5"),
        "{stderr}"
    );
    web.shutdown_blocking();
}

/// A test web of two graph pages with the trap catalogue and its hosts on (`Retry-After`
/// 2 s).
fn trap_web() -> TestWeb {
    TestWeb::start_blocking(
        Arc::new(Csr::from_arcs(2, &[(0, 1)])),
        None,
        "127.0.0.1:0".parse().unwrap(),
        TestWebConfig {
            traps: true,
            ..TestWebConfig::default()
        },
    )
    .unwrap()
}

fn host(name: &str) -> String {
    format!("{name}.traps.crawlrank.test")
}

fn url(name: &str, path: &str) -> String {
    format!("http://{}{path}", host(name))
}

/// `frontier serve` with `serve_options` on a state in `dir`, and one worker crawling `web`
/// from `seeds` through it until the crawl is done (or nothing was served for 5 s): the
/// service, still running (for `crawlrank status`), and what the worker printed.
fn crawl_through_a_worker(
    dir: &Path,
    web: &TestWeb,
    seeds: &[String],
    serve_options: &[&str],
) -> (Serve, String) {
    crawl_through_a_worker_with(dir, web, seeds, serve_options, &[])
}

/// [`crawl_through_a_worker`] with `worker_options` too; the worker's state is `dir/worker`.
fn crawl_through_a_worker_with(
    dir: &Path,
    web: &TestWeb,
    seeds: &[String],
    serve_options: &[&str],
    worker_options: &[&str],
) -> (Serve, String) {
    let serve = Serve::start(&dir.join("frontier"), serve_options);
    let seeds_file = dir.join("seeds.txt");
    std::fs::write(&seeds_file, seeds.join("\n") + "\n").unwrap();
    let mut options = vec!["--idle-exit", "5"];
    options.extend_from_slice(worker_options);
    let worker = Worker::start(
        &format!("http://{}", serve.addr),
        web,
        &seeds_file,
        &dir.join("worker"),
        &options,
    );
    let (ok, stdout, stderr) = worker.finish(Duration::from_secs(120));
    assert!(ok, "the worker failed: {stdout}\n{stderr}");
    (serve, stdout)
}

/// `crawlrank crawl` (no worker) of `web` from the seeds of `dir/seeds.txt`, its state
/// `dir/crawl`, with the tests' speed-ups (`--delay 0 --no-warc`) and `options`: its stdout,
/// once it succeeded.
fn crawl_directly(dir: &Path, web: &TestWeb, options: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .args(["crawl", "--seeds"])
        .arg(dir.join("seeds.txt"))
        .arg("--state")
        .arg(dir.join("crawl"))
        .args(["--proxy", &web.proxy_url(), "--delay", "0", "--no-warc"])
        .args(options)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A request that is not a page's: robots.txt, or a seed host's `/sitemap.xml` (read by a
/// worker as by `crawl`; the trap hosts have none).
fn side_request(e: &LogEntry) -> bool {
    e.path == "/robots.txt" || e.path == "/sitemap.xml"
}

/// `crawlrank status --frontier` of `serve`'s crawl.
fn status(serve: &Serve) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .args(["status", "--frontier", &format!("http://{}", serve.addr)])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{shown}");
    shown
}

/// The requests to `host` (robots.txt included), in arrival order.
fn requests_to<'a>(log: &'a [LogEntry], host: &str) -> Vec<&'a LogEntry> {
    let mut v: Vec<&LogEntry> = log.iter().filter(|e| e.host == host).collect();
    v.sort_by_key(|e| e.arrival);
    v
}

/// Whether the log shows `path` of the trap host `name` answered 200.
fn fetched(log: &[LogEntry], name: &str, path: &str) -> bool {
    let host = host(name);
    log.iter()
        .any(|e| e.host == host && e.path == path && e.status == 200)
}

/// For each refusal (429/503) to `host`: how long until the next request to it arrived.
fn waits_after_refusals(log: &[LogEntry], host: &str) -> Vec<Duration> {
    let reqs = requests_to(log, host);
    reqs.windows(2)
        .filter(|w| w[0].status == 429 || w[0].status == 503)
        .map(|w| w[1].arrival.saturating_duration_since(w[0].finish))
        .collect()
}

/// Never two requests at once to one host: each arrived after the previous answer to its
/// host was written (or its connection closed).
fn assert_one_request_at_a_time(log: &[LogEntry]) {
    let overlapping: Vec<(String, usize)> = max_in_flight_per_host(log)
        .into_iter()
        .filter(|&(_, n)| n > 1)
        .collect();
    assert!(
        overlapping.is_empty(),
        "two requests at once: {overlapping:?}"
    );
}

/// `crawl`'s test of rate limits (crates/crawler/tests/it/hostile.rs,
/// `retry_after_and_back_off_hold_the_host_then_recover`), through a worker, for the hosts
/// that say how long to wait: each refusal holds the whole host, not just the URL, until its
/// `Retry-After`, in seconds or as a date; a bad value is ignored (the host backs off as
/// without one); a `Retry-After` beyond `--max-retry-after` gives the URL up at once.
#[test]
fn a_worker_holds_a_refusing_host_until_its_retry_after() {
    let web = trap_web();
    let dir = tempfile::tempdir().unwrap();
    let seeds: Vec<String> = ["retry-after", "retry-date", "retry-bad", "retry-long"]
        .iter()
        .map(|h| url(h, "/"))
        .collect();
    let (_serve, out) = crawl_through_a_worker(dir.path(), &web, &seeds, &[]);
    assert!(out.contains("every URL of the crawl is done"), "{out}");
    let log = web.log();
    // Retry-After in seconds (2) and as a date (2 s + 1 ahead, to the second); bad values:
    // exponential back-off, 1 s then 2 s.
    for (name, mins, what) in [
        ("retry-after", [2.0, 2.0], "seconds"),
        ("retry-date", [2.0, 2.0], "date"),
        ("retry-bad", [1.0, 2.0], "bad values"),
    ] {
        let waits = waits_after_refusals(&log, &host(name));
        assert_eq!(waits.len(), mins.len(), "{what}: {waits:?}");
        for (w, m) in waits.iter().zip(mins) {
            assert!(w.as_secs_f64() >= m, "{what}: waited {w:?}, asked {m} s");
        }
    }
    // Every page of those hosts was fetched in the end.
    for (name, pages) in [("retry-after", 4), ("retry-date", 4), ("retry-bad", 2)] {
        for p in std::iter::once("/".to_string()).chain((1..=pages).map(|i| format!("/p{i}"))) {
            assert!(fetched(&log, name, &p), "{name}{p} never fetched");
        }
    }
    // A Retry-After of a year is beyond --max-retry-after (1 h): the URL is given up at once.
    let long = log
        .iter()
        .filter(|e| e.host == host("retry-long") && e.path == "/p1");
    assert_eq!(long.count(), 1);
    // 2 + 2 + 2 refusals, and the year; every wait within the lease (60 s).
    assert!(
        out.contains("7 rate limited (0 given back until the hold's end, 1 retry after too long)"),
        "{out}"
    );
    assert_one_request_at_a_time(&log);
    web.shutdown_blocking();
}

/// A host that refuses without `Retry-After` backs off and comes back down: the first success
/// halves the back-off, and the host's next request still waits it (1 s); the last pages
/// follow at once — as `crawl` does. The worker starts from the back-off a run before kept in
/// its state (1 s, in `STATE/backoffs/`), so the host's first refusal doubles it (2 s, where
/// a fresh worker waits 1 s), and the second stays at `--max-retry-after` (2 s); once the
/// back-off is gone, so is its file. Alone in its crawl: another host's hold would keep the
/// service from serving the next page early, and hide a worker that did not wait.
#[test]
fn a_worker_backs_a_refusing_host_off_and_comes_back_down() {
    let web = trap_web();
    let dir = tempfile::tempdir().unwrap();
    let key = host("backoff");
    let kept = dir
        .path()
        .join("worker/backoffs")
        .join(key.replace('.', "_"));
    std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
    let pause = crawlrank_fetch::HostPause {
        until: std::time::SystemTime::now(),
        backoff: Duration::from_secs(1),
    };
    std::fs::write(
        &kept,
        [format!("{key}\n").as_bytes(), &pause.encode()].concat(),
    )
    .unwrap();
    let (_serve, out) = crawl_through_a_worker_with(
        dir.path(),
        &web,
        &[url("backoff", "/")],
        &[],
        &["--max-retry-after", "2"],
    );
    assert!(!kept.exists(), "the back-off is gone, its file is kept");
    assert!(out.contains("every URL of the crawl is done"), "{out}");
    let log = web.log();
    let waits = waits_after_refusals(&log, &host("backoff"));
    assert_eq!(waits.len(), 2, "{waits:?}");
    for (w, m) in waits.iter().zip([2.0, 2.0]) {
        assert!(w.as_secs_f64() >= m, "waited {w:?}, backing off {m} s");
    }
    // The host refuses its first two requests, which are its /sitemap.xml's (a seed host's
    // sitemaps come before its pages, as in `crawl`); then the sitemap's 404 and the 7 pages.
    let backoff: Vec<&LogEntry> = requests_to(&log, &host("backoff"))
        .into_iter()
        .filter(|e| e.path != "/robots.txt")
        .collect();
    assert_eq!(
        backoff.len(),
        10,
        "2 refusals, the sitemap's 404 and 7 pages"
    );
    assert!(
        backoff[..3].iter().all(|e| e.path == "/sitemap.xml"),
        "{backoff:?}"
    );
    assert!(backoff[2..].iter().all(|e| e.status == 200), "{backoff:?}");
    let gap = |i: usize| {
        backoff[i + 1]
            .arrival
            .saturating_duration_since(backoff[i].finish)
    };
    assert!(gap(2) >= Duration::from_millis(950), "{:?}", gap(2));
    assert!(
        gap(8) < Duration::from_millis(900),
        "not recovered: {:?}",
        gap(8)
    );
    assert!(out.contains("2 rate limited"), "{out}");
    assert_one_request_at_a_time(&log);
    web.shutdown_blocking();
}

#[test]
fn a_worker_obeys_robots_txt_by_rfc_9309() {
    let web = trap_web();
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "robots-redirect",
        "robots-404",
        "robots-500",
        "robots-html",
        "robots-binary",
    ];
    let mut seeds: Vec<String> = names.iter().map(|h| url(h, "/")).collect();
    // A seed the traps host's robots.txt disallows.
    seeds.push("http://traps.crawlrank.test/disallowed/page.html".into());
    let (_serve, out) = crawl_through_a_worker(dir.path(), &web, &seeds, &[]);
    assert!(out.contains("every URL of the crawl is done"), "{out}");
    let log = web.log();
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
    assert!(
        !log.iter().any(|e| e.path.starts_with("/disallowed/")),
        "a disallowed seed fetched"
    );
    // /private/x, the seed and robots-500's page disallowed (a robots.txt that stays
    // unreachable disallows everything, as in `crawl`).
    assert!(
        out.contains("3 given up (3 disallowed by robots.txt)"),
        "{out}"
    );
    assert_one_request_at_a_time(&log);
    web.shutdown_blocking();
}

/// `crawl`'s test of the broken-answer hosts (crates/cli/tests/it/cli.rs,
/// `broken_answers_are_retried_after_the_hosts_delay_never_at_once`), through a worker: a
/// host never has two requests at once, and an answer that came broken is asked again only
/// after the back-off (1 s, then 2 s), `--max-retries` (2) times.
#[test]
fn a_worker_asks_hosts_that_answer_broken_again_only_after_the_back_off() {
    use crawlrank_testweb::trap_hosts::BROKEN_HOSTS;
    let web = trap_web();
    let dir = tempfile::tempdir().unwrap();
    let seeds: Vec<String> = BROKEN_HOSTS.iter().map(|h| url(h, "/")).collect();
    let (_serve, out) = crawl_through_a_worker(dir.path(), &web, &seeds, &[]);
    assert!(out.contains("every URL of the crawl is done"), "{out}");
    // A body broken after its status line is a fetch error, not a page fetched: the worker's
    // count is `crawl`'s.
    let (fetched, answered) = pages_fetched(&out);
    assert_eq!(fetched, answered, "{out}");
    let log = web.log();
    assert_one_request_at_a_time(&log);
    for name in BROKEN_HOSTS {
        let host = host(name);
        let reqs = requests_to(&log, &host);
        assert!(reqs.len() >= 2, "{host}: {} requests", reqs.len());
        assert_eq!(reqs[0].path, "/robots.txt", "{host}");
        let pages: Vec<&&LogEntry> = reqs.iter().filter(|e| e.path == "/").collect();
        let after = |i: usize| {
            pages[i + 1]
                .arrival
                .saturating_duration_since(pages[i].arrival)
        };
        match name {
            // Cut at --max-body and parsed: not retried.
            "endless-body" => assert_eq!(pages.len(), 1, "{host}"),
            // The request its kept connection closed unread was sent again on a new one: each
            // page fetched once.
            "close-idle" => {
                for p in ["/", "/p1", "/p2"] {
                    let got: Vec<u16> = reqs
                        .iter()
                        .filter(|e| e.path == p)
                        .map(|e| e.status)
                        .collect();
                    assert_eq!(got, vec![200], "{host}{p}");
                }
            }
            // A broken answer: asked 1 + --max-retries times, after the back-off each time.
            _ => {
                assert_eq!(pages.len(), 3, "{host}");
                assert!(after(0) >= Duration::from_secs(1), "{host}: {:?}", after(0));
                assert!(after(1) >= Duration::from_secs(2), "{host}: {:?}", after(1));
            }
        }
    }
    web.shutdown_blocking();
}

/// A host's robots.txt `Crawl-delay` (1 s) spaces every request a worker makes to it, from
/// one's end to the next's start, as `crawl` spaces them: its robots.txt and sitemap and its
/// pages, within a lease and across leases, on the seed's host and on a host a link led to.
#[test]
fn a_worker_waits_a_hosts_crawl_delay_between_all_its_requests() {
    let web = TestWeb::start_blocking(
        Arc::new(Csr::from_arcs(6, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)])),
        None,
        "127.0.0.1:0".parse().unwrap(),
        TestWebConfig {
            robots: Some("Crawl-delay: 1".into()),
            pages_per_host: 3,
            ..TestWebConfig::default()
        },
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (_serve, out) = crawl_through_a_worker(dir.path(), &web, &web.seed_urls(&[0]), &[]);
    assert!(out.contains("every URL of the crawl is done"), "{out}");
    let log = web.log();
    let mut hosts: Vec<&str> = log.iter().map(|e| e.host.as_str()).collect();
    hosts.sort();
    hosts.dedup();
    assert_eq!(hosts.len(), 2, "{log:?}");
    for host in hosts {
        let reqs = requests_to(&log, host);
        assert_eq!(reqs[0].path, "/robots.txt", "{host}");
        for w in reqs.windows(2) {
            let gap = w[1].arrival.saturating_duration_since(w[0].finish);
            assert!(
                gap >= Duration::from_millis(990),
                "{host}: {} {gap:?} after {}",
                w[1].path,
                w[0].path
            );
        }
    }
    web.shutdown_blocking();
}

/// A spider trap (`/trap/…/`: every page links `a/` and `b/` below itself, forever) is bounded
/// by `frontier serve --max-pages-per-host`: its host gets that many URLs, each fetched once,
/// and the links past the cap are counted.
#[test]
fn the_services_per_host_cap_bounds_a_spider_trap_through_a_worker() {
    let web = trap_web();
    let dir = tempfile::tempdir().unwrap();
    let seeds = ["http://traps.crawlrank.test/trap/".to_string()];
    let (serve, out) =
        crawl_through_a_worker(dir.path(), &web, &seeds, &["--max-pages-per-host", "20"]);
    assert!(out.contains("every URL of the crawl is done"), "{out}");
    let log = web.log();
    let pages: Vec<&LogEntry> = log.iter().filter(|e| !side_request(e)).collect();
    assert!(
        pages.iter().all(|e| e.path.starts_with("/trap/")),
        "{pages:?}"
    );
    let distinct: std::collections::HashSet<&str> = pages.iter().map(|e| e.path.as_str()).collect();
    assert_eq!((pages.len(), distinct.len()), (20, 20), "{out}");
    let shown = status(&serve);
    let capped = shown
        .lines()
        .find_map(|l| l.strip_prefix("links skipped by the bounds: "))
        .unwrap_or_else(|| panic!("no skipped links in {shown}"));
    assert!(
        capped
            .split(", ")
            .any(|c| c.strip_prefix("host_cap_links ").is_some_and(|n| n != "0")),
        "{shown}"
    );
    assert_one_request_at_a_time(&log);
    web.shutdown_blocking();
}

/// A counter of the worker's summary, printed as `crawl` prints its own (`  NAME  VALUE`).
/// The pages a worker fetched, as its first line says, and as `crawl`'s summary of the run
/// says (`fetched pages`).
fn pages_fetched(out: &str) -> (u64, u64) {
    let first = out.lines().next().unwrap_or_default();
    let before = &first[..first.find(" pages fetched").expect(first)];
    let fetched = before.rsplit(' ').next().unwrap().parse().unwrap();
    let summary = out
        .lines()
        .find_map(|l| l.strip_prefix("fetched pages"))
        .unwrap_or_else(|| panic!("no summary in {out}"));
    let answered = summary.split_whitespace().next().unwrap().parse().unwrap();
    (fetched, answered)
}

fn counter(out: &str, name: &str) -> u64 {
    out.lines()
        .find_map(|l| l.trim().strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no counter {name} in {out}"))
}

/// The hop limit bounds what no URL rule sees: a calendar linking to the next day, forever.
/// `frontier serve --max-hops 3` from `?day=0`: days 0 to 3, and one link skipped (as
/// `crawl --max-hops 3` in crates/crawler/tests/it/hostile.rs). And a path that repeats
/// (`/lin/a/` links `/lin/a/a/`, which links `/lin/a/a/a/`) is cut by the worker's own URL
/// rules, counted as `crawl` counts it.
#[test]
fn the_services_hop_limit_bounds_a_calendar_through_a_worker() {
    let web = trap_web();
    let dir = tempfile::tempdir().unwrap();
    let seeds = [
        "http://traps.crawlrank.test/calendar?day=0".to_string(),
        "http://traps.crawlrank.test/lin/a/".to_string(),
    ];
    let (serve, out) = crawl_through_a_worker(dir.path(), &web, &seeds, &["--max-hops", "3"]);
    assert!(out.contains("every URL of the crawl is done"), "{out}");
    let log = web.log();
    let mut lin: Vec<&str> = log
        .iter()
        .filter(|e| e.path.starts_with("/lin/"))
        .map(|e| e.path.as_str())
        .collect();
    lin.sort();
    assert_eq!(lin, ["/lin/a/", "/lin/a/a/"]);
    assert_eq!(counter(&out, "pathological links"), 1, "{out}");
    // Its pages as `crawl` counts them: six HTML pages, each one request.
    assert_eq!(counter(&out, "pages html"), 6, "{out}");
    let mut days: Vec<&str> = log
        .iter()
        .filter(|e| !side_request(e) && !e.path.starts_with("/lin/"))
        .map(|e| e.path.as_str())
        .collect();
    days.sort();
    assert_eq!(
        days,
        [
            "/calendar?day=0",
            "/calendar?day=1",
            "/calendar?day=2",
            "/calendar?day=3"
        ]
    );
    let shown = status(&serve);
    assert!(shown.contains("hop_limit_links 1"), "{shown}");
    assert_one_request_at_a_time(&log);
    web.shutdown_blocking();
}

/// A blocking HTTP/1.1 server for the test below, reached without a proxy: on each of its
/// listeners, one thread per connection, `Connection: close`; `pages` maps a path to its
/// status, extra head lines and body (any other path is a 404). It logs the paths asked and
/// counts the connections accepted.
struct Site {
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
    accepts: Arc<AtomicUsize>,
}

type Pages = HashMap<String, (u16, String, String)>;

impl Site {
    fn start(listeners: Vec<TcpListener>, pages: Pages) -> Site {
        let port = listeners[0].local_addr().unwrap().port();
        let pages = Arc::new(pages);
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
                    std::thread::spawn(move || answer(conn, &pages, &log));
                }
            });
        }
        Site { port, log, accepts }
    }

    fn log(&self) -> Vec<String> {
        let mut log = self.log.lock().unwrap().clone();
        log.sort();
        log
    }
}

/// Reads one request head from `conn` and answers it from `pages`.
fn answer(conn: TcpStream, pages: &Pages, log: &Mutex<Vec<String>>) {
    let mut lines = BufReader::new(&conn).lines().map_while(Result::ok);
    let request = lines.next().unwrap_or_default();
    // The rest of the head is read to its blank line, so that closing the connection does
    // not reset it under the answer.
    lines.take_while(|l| !l.is_empty()).for_each(drop);
    let path = request.split(' ').nth(1).unwrap_or("").to_string();
    log.lock().unwrap().push(path.clone());
    let (status, head, body) =
        pages
            .get(&path)
            .cloned()
            .unwrap_or((404, String::new(), String::new()));
    let _ = (&conn).write_all(
        format!(
            "HTTP/1.1 {status} X\r\nContent-Type: text/html\r\nContent-Length: {}\r\n{head}\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
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

/// `crawl`'s address guard (crates/crawler/tests/it/direct.rs,
/// `loopback_and_private_addresses_are_refused_unless_named_or_allowed`) in a worker: the
/// seed's host (127.0.0.1, named by the user) is crawled; a link to 127.0.0.2, one to
/// `localhost` (a name that resolves to loopback) and a redirect to 127.0.0.3 are not — no
/// connection reaches them, robots.txt included — unless `--allow-private-networks` is given.
#[test]
fn a_worker_follows_no_link_into_a_private_network_but_its_seeds_host() {
    let others = Site::start(
        other_loopback_listeners(),
        ["/a", "/b", "/c"]
            .iter()
            .map(|p| (p.to_string(), (200, String::new(), format!("<p>{p}</p>"))))
            .collect(),
    );
    let q = others.port;
    let home = Site::start(
        vec![TcpListener::bind("127.0.0.1:0").unwrap()],
        HashMap::from([
            (
                "/".to_string(),
                (
                    200,
                    String::new(),
                    format!(
                        "<a href=\"http://127.0.0.2:{q}/a\">a</a> \
                         <a href=\"http://localhost:{q}/b\">b</a> <a href=\"/redirect\">c</a>"
                    ),
                ),
            ),
            (
                "/redirect".to_string(),
                (
                    302,
                    format!("Location: http://127.0.0.3:{q}/c\r\n"),
                    String::new(),
                ),
            ),
        ]),
    );
    let crawl = |allow: bool| {
        let dir = tempfile::tempdir().unwrap();
        let serve = Serve::start(&dir.path().join("frontier"), &[]);
        let seeds = dir.path().join("seeds.txt");
        std::fs::write(&seeds, format!("http://127.0.0.1:{}/\n", home.port)).unwrap();
        let mut options = vec!["--idle-exit", "5"];
        if allow {
            options.push("--allow-private-networks");
        }
        let worker = Worker::direct(
            &format!("http://{}", serve.addr),
            &seeds,
            &dir.path().join("worker"),
            &options,
        );
        let (ok, stdout, stderr) = worker.finish(Duration::from_secs(60));
        assert!(ok, "the worker failed: {stdout}\n{stderr}");
        assert!(
            stdout.contains("every URL of the crawl is done"),
            "{stdout}"
        );
        stdout
    };
    let out = crawl(false);
    assert_eq!(
        others.accepts.load(Ordering::SeqCst),
        0,
        "{:?}",
        others.log()
    );
    assert_eq!(
        home.log(),
        ["/", "/redirect", "/robots.txt", "/sitemap.xml"]
    );
    assert!(out.contains("2 pages fetched"), "{out}");
    assert!(out.contains("3 given up"), "{out}");
    assert!(out.contains(" 0 retries"), "refused at once: {out}");
    // Counted by their kind, as `crawl` counts them.
    assert_eq!(counter(&out, "private address refused"), 3, "{out}");

    // With the allow flag, all three are fetched.
    let out = crawl(true);
    assert!(out.contains("5 pages fetched"), "{out}");
    let log = others.log();
    let pages: Vec<&str> = log
        .iter()
        .map(String::as_str)
        .filter(|p| *p != "/robots.txt")
        .collect();
    assert_eq!(pages, ["/a", "/b", "/c"]);
}

/// A worker reports a page's `noindex` (meta robots or `X-Robots-Tag`) and its canonical URL
/// when it names another, as `crawl` records them (the pages of
/// `noindex_and_canonical_are_stored_and_exported`, crates/crawler/tests/it/direct.rs): in the
/// page's metadata in the service, counted in the worker's summary, and not acted upon — a
/// noindex page's links are followed, a canonical URL is not fetched. Then a second crawl of
/// the site, by a worker given the same state directory: the host's robots.txt answer kept
/// by the first run is used (fresh for a day, as `crawl` uses its stored answers), not asked
/// for again.
#[test]
fn a_worker_reports_noindex_and_canonical_and_keeps_robots_txt_for_its_next_run() {
    let page = |head: &str, body: &str| (200, head.to_string(), body.to_string());
    let site = Site::start(
        vec![TcpListener::bind("127.0.0.1:0").unwrap()],
        HashMap::from([
            (
                "/".to_string(),
                page(
                    "",
                    "<a href=\"/noindex.html\">a</a><a href=\"/header-noindex.html\">b</a>\
                     <a href=\"/canonical.html?session=1\">c</a><a href=\"/self.html\">d</a>",
                ),
            ),
            (
                "/noindex.html".to_string(),
                page(
                    "",
                    "<meta name=\"robots\" content=\"noindex\">\
                     <a href=\"/after-noindex.html\">still followed</a>",
                ),
            ),
            (
                "/header-noindex.html".to_string(),
                page("X-Robots-Tag: noindex\r\n", ""),
            ),
            (
                "/canonical.html?session=1".to_string(),
                page("", "<link rel=\"canonical\" href=\"/canonical.html\">"),
            ),
            (
                "/self.html".to_string(),
                page("", "<link rel=\"canonical\" href=\"/self.html\">"),
            ),
            ("/after-noindex.html".to_string(), page("", "")),
        ]),
    );
    let base = format!("http://127.0.0.1:{}", site.port);
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{base}/\n")).unwrap();
    // A crawl of the site by a new service (state `frontier`) and a worker whose state is
    // always the same: every page fetched.
    let crawl = |frontier: &str| {
        let serve = Serve::start(&dir.path().join(frontier), &[]);
        let worker = Worker::direct(
            &format!("http://{}", serve.addr),
            &seeds,
            &dir.path().join("worker"),
            &["--idle-exit", "5"],
        );
        let (ok, out, stderr) = worker.finish(Duration::from_secs(60));
        assert!(ok, "the worker failed: {out}\n{stderr}");
        assert!(out.contains("6 pages fetched"), "{out}");
        (serve, out)
    };
    let (serve, out) = crawl("frontier");
    assert!(out.contains("2 noindex pages, 1 canonical pages"), "{out}");
    let log = site.log();
    assert!(!log.iter().any(|p| p == "/canonical.html"), "{log:?}");
    assert!(log.iter().any(|p| p == "/after-noindex.html"), "{log:?}");

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let marks = rt.block_on(async {
        let mut c = serve.client().await;
        let mut marks = Vec::new();
        for path in [
            "/noindex.html",
            "/header-noindex.html",
            "/canonical.html?session=1",
            "/self.html",
            "/",
        ] {
            let item = c
                .get_url_status(UrlStatusRequest {
                    url: format!("{base}{path}"),
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner();
            let Some(url_item::Item::Known(known)) = item.item else {
                panic!("{path} is not known: {item:?}");
            };
            let meta = known.info.unwrap().metadata;
            let value = |key: &str| meta.get(key).map(|v| v.values.join(","));
            marks.push((
                path,
                value("crawlrank.noindex"),
                value("crawlrank.canonical"),
            ));
        }
        marks
    });
    assert_eq!(
        marks,
        [
            ("/noindex.html", Some("1".to_string()), None),
            ("/header-noindex.html", Some("1".to_string()), None),
            (
                "/canonical.html?session=1",
                None,
                Some(format!("{base}/canonical.html"))
            ),
            ("/self.html", None, None),
            ("/", None, None),
        ]
    );
    assert!(out.contains(" 1 robots.txt requests"), "{out}");

    assert_eq!(counter(&out, "robots cached"), 0, "{out}");

    let (_again, out) = crawl("frontier-again");
    assert!(out.contains(" 0 robots.txt requests"), "{out}");
    assert_eq!(counter(&out, "robots cached"), 1, "{out}");
    let log = site.log();
    let asked = log.iter().filter(|p| *p == "/robots.txt").count();
    assert_eq!(asked, 1, "{log:?}");
}

/// A worker reads its seed host's sitemaps as `crawl` does: the same sitemap files, each
/// once, and every page they list fetched, where links alone reach two of eight; none with
/// `--no-sitemaps`; and the entries are admitted within the service's cap on hosts, as
/// `crawl` admits them within its own.
#[test]
fn a_worker_reads_sitemaps_as_crawl_does() {
    let web = TestWeb::start_blocking(
        Arc::new(Csr::from_arcs(8, &[(0, 1)])),
        None,
        "127.0.0.1:0".parse().unwrap(),
        TestWebConfig {
            sitemaps: true,
            ..TestWebConfig::default()
        },
    )
    .unwrap();
    let pages = |log: &[LogEntry]| {
        let mut v: Vec<u32> = log.iter().filter_map(|e| e.node).collect();
        v.sort();
        v
    };
    let sitemaps = |log: &[LogEntry]| {
        let mut v: Vec<String> = log
            .iter()
            .filter(|e| e.path.contains("sitemap"))
            .map(|e| e.path.clone())
            .collect();
        v.sort();
        v
    };
    let dir = tempfile::tempdir().unwrap();
    let (serve, out) = crawl_through_a_worker(dir.path(), &web, &web.seed_urls(&[0]), &[]);
    assert!(out.contains("every URL of the crawl is done"), "{out}");
    assert!(out.contains("sitemap entries put into the crawl"), "{out}");
    let log = web.log();
    assert_eq!(pages(&log), (0..8).collect::<Vec<u32>>(), "{out}");
    let read = sitemaps(&log);
    assert!(read.iter().any(|p| p == "/sitemap.xml"), "{read:?}");
    assert!(read.len() >= 2, "an index and the list it names: {read:?}");
    let mut once = read.clone();
    once.dedup();
    assert_eq!(once, read, "each sitemap file once");
    assert_one_request_at_a_time(&log);
    drop(serve);

    // `crawl` on the same web: the same sitemap files, every page fetched.
    web.clear_log();
    crawl_directly(dir.path(), &web, &[]);
    let seeds = dir.path().join("seeds.txt");
    let log = web.log();
    assert_eq!(pages(&log), (0..8).collect::<Vec<u32>>());
    assert_eq!(sitemaps(&log), read);

    // --no-sitemaps: the linked pages only, no sitemap asked for.
    web.clear_log();
    let other = dir.path().join("no-sitemaps");
    let serve = Serve::start(&other.join("frontier"), &[]);
    let worker = Worker::start(
        &format!("http://{}", serve.addr),
        &web,
        &seeds,
        &other.join("worker"),
        &["--idle-exit", "5", "--no-sitemaps"],
    );
    let (ok, stdout, stderr) = worker.finish(Duration::from_secs(120));
    assert!(ok, "the worker failed: {stdout}\n{stderr}");
    let log = web.log();
    assert_eq!(pages(&log), [0, 1]);
    assert!(sitemaps(&log).is_empty(), "{:?}", sitemaps(&log));
    drop(serve);

    // The service's cap on the host holds for the entries: 4 pages, the others counted.
    web.clear_log();
    let capped = dir.path().join("capped");
    let (serve, out) = crawl_through_a_worker(
        &capped,
        &web,
        &web.seed_urls(&[0]),
        &["--max-pages-per-host", "4"],
    );
    assert!(out.contains("every URL of the crawl is done"), "{out}");
    assert_eq!(pages(&web.log()).len(), 4, "{out}");
    let shown = status(&serve);
    let skipped = shown
        .lines()
        .find_map(|l| l.strip_prefix("links skipped by the bounds: "))
        .unwrap_or_else(|| panic!("no skipped links in {shown}"));
    assert!(
        skipped
            .split(", ")
            .any(|c| c.strip_prefix("host_cap_links ").is_some_and(|n| n != "0")),
        "{shown}"
    );
    web.shutdown_blocking();

    // An index naming two sitemaps and itself, one redirected, and one robots.txt disallows
    // (the host of `crawl`'s test in crates/crawler/tests/it/e2e.rs): the same files read,
    // the same counts, every entry fetched.
    use crawlrank_testweb::sitemap_hosts::SITEMAP_HOST_SUFFIX;
    let web = TestWeb::start_blocking(
        Arc::new(Csr::from_arcs(1, &[])),
        None,
        "127.0.0.1:0".parse().unwrap(),
        TestWebConfig {
            sitemap_hosts: true,
            ..TestWebConfig::default()
        },
    )
    .unwrap();
    let index = dir.path().join("index");
    let (_serve, out) = crawl_through_a_worker(
        &index,
        &web,
        &[format!("http://index{SITEMAP_HOST_SUFFIX}/")],
        &[],
    );
    assert!(out.contains("every URL of the crawl is done"), "{out}");
    assert_eq!(counter(&out, "sitemaps fetched"), 4, "{out}");
    assert_eq!(counter(&out, "sitemaps read"), 3, "{out}");
    assert_eq!(counter(&out, "sitemaps disallowed"), 1, "{out}");
    assert_eq!(counter(&out, "sitemap links"), 3, "{out}");
    let mut fetched: Vec<String> = web
        .log()
        .iter()
        .map(|e| e.path.clone())
        .filter(|p| !p.ends_with(".xml") && p != "/robots.txt")
        .collect();
    fetched.sort();
    assert_eq!(fetched, ["/", "/u1", "/u2", "/u3"], "{out}");

    // A 503 every time: asked again like a page (--max-retries 2), then given up and counted
    // not found, as `crawl` counts it.
    let (_serve, out) = crawl_through_a_worker(
        &dir.path().join("unavailable"),
        &web,
        &[format!("http://unavailable{SITEMAP_HOST_SUFFIX}/")],
        &[],
    );
    assert!(out.contains("every URL of the crawl is done"), "{out}");
    assert_eq!(counter(&out, "sitemaps fetched"), 3, "{out}");
    assert_eq!(counter(&out, "sitemaps not found"), 1, "{out}");
    assert_eq!(counter(&out, "retries"), 2, "{out}");

    // The other hosts of `crawl`'s test, with its counts: no /sitemap.xml; an HTML page in its
    // place; entries and a robots.txt `Sitemap:` file on other hosts, dropped; broken XML.
    for (name, counts) in [
        (
            "missing",
            &[("sitemaps fetched", 1), ("sitemaps not found", 1)][..],
        ),
        ("html", &[("sitemaps not sitemap", 1), ("sitemap links", 0)]),
        ("foreign", &[("sitemap links", 2), ("sitemap dropped", 4)]),
        ("broken", &[("sitemap links", 2), ("sitemap errors", 1)]),
    ] {
        let (_serve, out) = crawl_through_a_worker(
            &dir.path().join(name),
            &web,
            &[format!("http://{name}{SITEMAP_HOST_SUFFIX}/")],
            &[],
        );
        assert!(
            out.contains("every URL of the crawl is done"),
            "{name}: {out}"
        );
        for &(c, n) in counts {
            assert_eq!(counter(&out, c), n, "{name}, {c}: {out}");
        }
    }

    // A link to a sitemap (`linked`): a page that is a sitemap, with no out-links, its
    // entries put into the crawl as found without a link; one the scope keeps out is counted
    // as `crawl` counts it. `crawl` on the same host with the same options: the same pages,
    // the same counts.
    let seeds = [format!("http://linked{SITEMAP_HOST_SUFFIX}/")];
    let exclude = ["--exclude", "/l2$"];
    let linked = dir.path().join("linked");
    web.clear_log();
    let (_serve, out) = crawl_through_a_worker_with(&linked, &web, &seeds, &[], &exclude);
    assert!(out.contains("every URL of the crawl is done"), "{out}");
    let paths = |web: &TestWeb| {
        let mut v: Vec<String> = web.log().iter().map(|e| e.path.clone()).collect();
        v.sort();
        v
    };
    let fetched = paths(&web);
    assert_eq!(
        fetched,
        ["/", "/l1", "/list.xml", "/robots.txt", "/sitemap.xml"],
        "{out}"
    );
    web.clear_log();
    let crawl_out = crawl_directly(&linked, &web, &exclude);
    assert_eq!(paths(&web), fetched, "{crawl_out}");
    for (c, n) in [
        ("sitemap pages", 1),
        ("sitemap links", 2),
        ("filtered links", 1),
        ("out of scope links", 0),
    ] {
        assert_eq!(counter(&crawl_out, c), n, "crawl, {c}: {crawl_out}");
        assert_eq!(counter(&out, c), n, "a worker, {c}: {out}");
    }
    web.shutdown_blocking();
}

/// A worker short of file descriptors (`prlimit --nofile=40` at `--concurrency 32`, every
/// page on a host of its own, all linked from the seed) makes again, soon, the requests that
/// found none, as `crawl` does: no failed attempt, no retry, no fetch error, every page
/// fetched once, the shortages counted.
#[cfg(target_os = "linux")]
#[test]
fn a_worker_short_of_file_descriptors_loses_no_page() {
    use std::process::Command;
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("skipped: no prlimit (util-linux) to lower the open-file limit with");
        return;
    }
    let pages = 300u32;
    let arcs: Vec<(u32, u32)> = (1..pages).map(|v| (0, v)).collect();
    let web = TestWeb::start_blocking(
        Arc::new(Csr::from_arcs(pages as usize, &arcs)),
        None,
        "127.0.0.1:0".parse().unwrap(),
        TestWebConfig {
            pages_per_host: 1,
            latency: Duration::from_millis(20),
            ..TestWebConfig::default()
        },
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(&dir.path().join("frontier"), &[]);
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, web.seed_urls(&[0]).join("\n")).unwrap();
    let out = Command::new("prlimit")
        .arg("--nofile=40:40")
        .arg(env!("CARGO_BIN_EXE_crawlrank"))
        .args(["crawl", "--frontier", &format!("http://{}", serve.addr)])
        .arg("--seeds")
        .arg(&seeds)
        .arg("--state")
        .arg(dir.path().join("worker"))
        .args([
            "--proxy",
            &web.proxy_url(),
            "--delay",
            "0",
            "--timeout",
            "5",
        ])
        .args(["--concurrency", "32", "--idle-exit", "5", "--no-warc"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("every URL of the crawl is done"), "{text}");
    assert_eq!(pages_fetched(&text), (300, 300), "{text}");
    assert_eq!(counter(&text, "fetch errors"), 0, "{text}");
    assert_eq!(counter(&text, "retries"), 0, "{text}");
    assert!(counter(&text, "fd shortages") > 0, "{text}");
    let mut counts: Vec<u32> = web
        .log()
        .iter()
        .filter(|e| !side_request(e))
        .filter_map(|e| e.node)
        .collect();
    counts.sort_unstable();
    assert_eq!(counts, (0..pages).collect::<Vec<u32>>(), "each page once");
    web.shutdown_blocking();
}
