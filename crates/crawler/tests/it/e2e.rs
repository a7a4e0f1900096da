//! End-to-end crawls of the local test web (`crawlrank-testweb`, loopback only): the crawl
//! order equals the simulator's, kills and stops lose nothing, politeness and robots.txt
//! hold, faults and traps never stop the crawl, and the outputs (WARC, BVGraph, ranking) are
//! what was crawled. Over HTTPS too: the test web then serves its pages through TLS tunnels
//! with certificates from a CA it makes at start-up, which the crawler must be told to trust.

use crate::common;
use crawlrank_crawler::{crawl, CrawlConfig, PolicySettings, Resources, StopReason};
use crawlrank_frontier::PolicyKind;
use crawlrank_graph::Csr;
use crawlrank_sim::{simulate, Reference, SimConfig, SimPolicy};
use crawlrank_testkit::open_sockets;
use crawlrank_testweb::{
    max_in_flight_per_host, min_gap_per_host, LogEntry, TestWeb, TestWebConfig,
};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// A deterministic web: `n` pages, skewed outdegrees (0 to 11), distinct successors, some
/// self-loops, preferential towards low ids (so some pages matter much more).
fn graph(n: u32, seed: u64) -> Csr {
    let mut rng = crawlrank_rng::XorShift64::new(
        seed.wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407),
    );
    let mut next = move || rng.next_u64();
    let mut arcs = Vec::new();
    for v in 0..n {
        let d = (next() % 12) as u32;
        let mut seen = HashSet::new();
        for _ in 0..d {
            let r = next();
            let w = if r % 3 == 0 {
                (r >> 8) as u32 % (n / 10).max(1)
            } else {
                (r >> 8) as u32 % n
            };
            if seen.insert(w) {
                arcs.push((v, w));
            }
        }
    }
    Csr::from_arcs(n as usize, &arcs)
}

/// How many pages a crawl from `seeds` can reach.
fn reachable(g: &Csr, seeds: &[u32]) -> usize {
    let reach = crawlrank_graph::visit::reachable_from(g, seeds);
    reach.iter().filter(|&&r| r).count()
}

fn start_web(g: &Csr, cfg: TestWebConfig) -> TestWeb {
    common::start_web(g.clone(), cfg)
}

/// Serves `g` on a fresh test web configured by `cfg`, runs `test` against it and shuts the
/// web down after, so that each test says only what its web is and what it crawls.
fn with_web(g: &Csr, cfg: TestWebConfig, test: impl FnOnce(&TestWeb)) {
    let web = start_web(g, cfg);
    test(&web);
    web.shutdown_blocking();
}

/// A crawl of `web` from the pages `seeds` with `policy` into a fresh temporary state
/// directory (removed when the returned guard is dropped), set up as [`base_config`].
fn fresh_crawl(web: &TestWeb, seeds: &[u32], policy: &str) -> (tempfile::TempDir, CrawlConfig) {
    let dir = tempfile::tempdir().unwrap();
    let c = base_config(web, dir.path(), web.seed_urls(seeds), policy);
    (dir, c)
}

/// A crawl through the test web's proxy at `proxy`, one fetch at a time, with a seen-set
/// cache of 16 URLs (the test webs' links are looked up in the state on disk, as a crawl of
/// 10^8 URLs does: crate::seen) and a frontier of 8 entries in memory, the rest spilled to
/// disk (the order is the same: crawl_order_is_the_simulators_for_every_policy).
fn proxied_config(state: &Path, proxy: &str, seeds: Vec<String>, policy: &str) -> CrawlConfig {
    let mut c = CrawlConfig {
        state_dir: state.to_path_buf(),
        seeds,
        policy: PolicyKind::parse(policy).unwrap().into(),
        resources: Resources {
            concurrency: 1,
            seen_cache: 16,
            frontier_hot: 8,
            ..Resources::default()
        },
        ..CrawlConfig::default()
    };
    c.fetch.proxy = Some(proxy.into());
    c
}

/// The crawl most tests run: [`proxied_config`] through `web`, retrying after 20 ms and
/// giving up on a fetch after 5 s.
fn base_config(web: &TestWeb, state: &Path, seeds: Vec<String>, policy: &str) -> CrawlConfig {
    let mut c = proxied_config(state, &web.proxy_url(), seeds, policy);
    c.politeness.retry_backoff = Duration::from_millis(20);
    c.fetch.timeout = Duration::from_secs(5);
    c
}

fn run(c: &CrawlConfig) -> crawlrank_crawler::CrawlReport {
    crawl(c, &AtomicBool::new(false), &mut |_| {}).unwrap()
}

/// The order in which the simulator crawls `g` from `seeds` with `policy` and batch size
/// `batch` (its `R`, the pages reachable from the seeds, is IECA's expected page count).
fn simulator_order(g: &Csr, seeds: &[u32], policy: &str, batch: u64) -> Vec<u32> {
    simulator_order_with(g, seeds, policy, batch, None)
}

/// [`simulator_order`] with a search log, by node.
fn simulator_order_with(
    g: &Csr,
    seeds: &[u32],
    policy: &str,
    batch: u64,
    impact: Option<Vec<f64>>,
) -> Vec<u32> {
    let pagerank = Arc::new(
        crawlrank_rank::pagerank(g, &Default::default())
            .unwrap()
            .scores,
    );
    let reference = Reference::new(g, pagerank, seeds).unwrap();
    let config = SimConfig {
        batch: Some(batch),
        impact: impact.map(crawlrank_frontier::Impacts::new),
        ..SimConfig::default()
    };
    let policy = SimPolicy::Crawl(PolicyKind::parse(policy).unwrap());
    simulate(g, seeds, policy, &reference, &config, &mut |_| {})
        .unwrap()
        .order
}

/// Every WARC record of a crawl, decompressed and concatenated (binary bodies lossily).
fn warc_text(state: &Path) -> String {
    let mut bytes = Vec::new();
    for e in std::fs::read_dir(state.join("warc")).unwrap() {
        let gz = std::fs::read(e.unwrap().path()).unwrap();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut bytes)
            .unwrap();
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Requests for graph pages, per node.
fn page_fetches(log: &[LogEntry]) -> HashMap<u32, usize> {
    let mut m = HashMap::new();
    for e in log {
        if let Some(v) = e.node {
            *m.entry(v).or_insert(0) += 1;
        }
    }
    m
}

/// Serves the web the crawl-order tests compare with the simulator (400 pages, seeds 0 and
/// 5) and runs `test` with the graph, the seeds, the number of pages they reach and the web.
fn with_order_web(test: impl FnOnce(&Csr, &[u32], u64, &TestWeb)) {
    let g = graph(400, 7);
    let seeds = [0u32, 5];
    let r = reachable(&g, &seeds) as u64;
    with_web(&g, TestWebConfig::default(), |web| test(&g, &seeds, r, web));
}

#[test]
fn crawl_order_is_the_simulators_for_every_policy() {
    with_order_web(|g, seeds, r, web| {
        let mut runs = vec![
            ("fica", r.div_ceil(72)),
            ("fica", 10),
            ("ieca", 7),
            ("batch-pagerank", 25),
        ];
        // rw, rw-eg and learned need a search log: impact_aware_crawls_are_the_simulators.
        runs.extend(
            PolicyKind::ALL
                .iter()
                .filter(|k| !k.needs_impact())
                .map(|k| (k.name(), 1 + r / 40)),
        );
        for (policy, batch) in runs {
            let expected = simulator_order(g, seeds, policy, batch);
            assert_eq!(expected.len() as u64, r);

            let dir = tempfile::tempdir().unwrap();
            let mut c = base_config(web, dir.path(), web.seed_urls(seeds), policy);
            c.policy.batch = Some(batch);
            c.policy.expected_pages = Some(r);
            c.policy.total_pages = Some(g.num_nodes() as u64);
            web.clear_log();
            let report = run(&c);
            assert_eq!(report.stop, StopReason::Exhausted);
            assert!(report.seen.disk_reads > 0, "{policy}: {:?}", report.seen);
            let order: Vec<u32> = crawlrank_crawler::crawl_order(dir.path())
                .unwrap()
                .iter()
                .map(|u| web.node_of(u).unwrap())
                .collect();
            assert_eq!(order, expected, "{policy} K={batch}");
            // And the fetches happened in that order, each once.
            let fetched: Vec<u32> = web.log().iter().filter_map(|e| e.node).collect();
            assert_eq!(fetched, expected, "{policy}: server-side order");
        }
    });
}

/// A crawl stopped early holds most of its frontier on disk, in `STATE/spill`, and leaves
/// nothing there when it ends; what a killed run left there is cleared by the next.
#[test]
fn the_frontier_spills_to_the_state_and_cleans_up() {
    let g = graph(1500, 3);
    with_web(&g, TestWebConfig::default(), |web| {
        let dir = tempfile::tempdir().unwrap();
        let spill = dir.path().join("spill");
        std::fs::create_dir_all(spill.join("crawlrank-frontier-spill.left")).unwrap();
        std::fs::write(spill.join("crawlrank-frontier-spill.left/run-1"), b"stale").unwrap();
        let mut c = base_config(web, dir.path(), web.seed_urls(&[0]), "fica");
        c.max_pages = Some(200);
        let report = run(&c);
        assert_eq!(report.stop, StopReason::MaxPages);
        let sp = report.spill.expect("fica keeps a priority queue");
        assert!(sp.hot <= 8 && sp.cold > 0 && sp.runs > 0, "{sp:?}");
        assert_eq!(sp.write_failures, 0, "{sp:?}");
        assert!(
            !spill.join("crawlrank-frontier-spill.left").exists(),
            "a dead run's scratch is cleared"
        );
        let left: Vec<_> = std::fs::read_dir(&spill)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "the frontier's runs are removed: {left:?}");
        // In memory (--frontier-hot 0) nothing spills.
        let dir2 = tempfile::tempdir().unwrap();
        let mut c = base_config(web, dir2.path(), web.seed_urls(&[0]), "fica");
        c.max_pages = Some(200);
        c.resources.frontier_hot = 0;
        assert_eq!(run(&c).spill, None);
    });
}

/// Whether the crawler was built with the policy `learned` (its feature `learned`; the
/// workspace's tests have it, as the `crawlrank` binary enables it).
const LEARNED: bool = cfg!(feature = "learned");

/// A search log of the test web: every fourth page has an impact. By node, and written as an
/// impact table keyed by URL in `dir`.
fn search_log(web: &TestWeb, n: u32, dir: &Path, name: &str) -> (Vec<f64>, std::path::PathBuf) {
    let impact: Vec<f64> = (0..n)
        .map(|v| {
            if v % 4 == 1 {
                f64::from(v % 9 + 1)
            } else {
                0.0
            }
        })
        .collect();
    let mut text = String::from("url\tclicks\n");
    for (v, i) in impact.iter().enumerate() {
        text.push_str(&format!("{}\t{i}\n", web.url(v as u32)));
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    (impact, path)
}

#[test]
fn impact_aware_crawls_are_the_simulators_and_resume() {
    with_order_web(|g, seeds, r, web| {
        let logs = tempfile::tempdir().unwrap();
        let (impact, path) = search_log(web, g.num_nodes() as u32, logs.path(), "log.tsv");
        let log = Arc::new(crawlrank_crawler::SearchLog::read(&path, None).unwrap());
        let batch = 1 + r / 40;
        let config = |dir: &Path, policy: &str| {
            let mut c = base_config(web, dir, web.seed_urls(seeds), policy);
            c.policy.batch = Some(batch);
            c.policy.expected_pages = Some(r);
            c.policy.total_pages = Some(g.num_nodes() as u64);
            c.policy.impacts = Some(log.clone());
            c
        };
        let order_of = |dir: &Path| -> Vec<u32> {
            crawlrank_crawler::crawl_order(dir)
                .unwrap()
                .iter()
                .map(|u| web.node_of(u).unwrap())
                .collect()
        };
        // The crawler's feature `learned` is the frontier's.
        assert_eq!(PolicyKind::Learned.available(), LEARNED);
        for policy in ["rw", "rw-eg", "learned"] {
            if policy == "learned" && !LEARNED {
                // A build without the feature `learned` refuses it by name.
                let e = PolicyKind::parse(policy).unwrap_err().to_string();
                assert!(e.contains("build with feature `learned`"), "{e}");
                continue;
            }
            let expected = simulator_order_with(g, seeds, policy, batch, Some(impact.clone()));
            assert_eq!(expected.len() as u64, r);
            let dir = tempfile::tempdir().unwrap();
            let report = run(&config(dir.path(), policy));
            assert_eq!(report.stop, StopReason::Exhausted);
            assert_eq!(order_of(dir.path()), expected, "{policy}");
            // learned's refits ran on the frontier's thread; the walks of rw and rw-eg inline.
            let background = report.reorders.background;
            assert_eq!(
                background > 0,
                policy == "learned",
                "{policy}: {:?}",
                report.reorders
            );
        }
        // Stopped and resumed twice: the resumed frontier knows the impacts of the pages it had
        // discovered (the state keeps them), and the order is still the simulator's.
        let expected = simulator_order_with(g, seeds, "rw-eg", batch, Some(impact.clone()));
        let dir = tempfile::tempdir().unwrap();
        for max in [Some(60), Some(150), None] {
            let mut c = config(dir.path(), "rw-eg");
            c.max_pages = max;
            run(&c);
        }
        assert_eq!(order_of(dir.path()), expected, "rw-eg, resumed");
        let ranked =
            crawlrank_crawler::export_ranking(dir.path(), &logs.path().join("ranking.tsv"))
                .unwrap();
        assert!(ranked.scored > 0);
        // Resuming without the log, or with another one, is refused; so is a log for a policy
        // that reads none, and an impact-aware policy without a log.
        let mut c = config(dir.path(), "rw-eg");
        c.policy.impacts = None;
        let e = crawl(&c, &AtomicBool::new(false), &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(e.contains("same --impact FILE"), "{e}");
        let mut other = impact.clone();
        other[1] += 1.0;
        let mut text = String::new();
        for (v, i) in other.iter().enumerate() {
            text.push_str(&format!("{}\t{i}\n", web.url(v as u32)));
        }
        let other_path = logs.path().join("other.tsv");
        std::fs::write(&other_path, text).unwrap();
        c.policy.impacts = Some(Arc::new(
            crawlrank_crawler::SearchLog::read(&other_path, None).unwrap(),
        ));
        let e = crawl(&c, &AtomicBool::new(false), &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(e.contains("not the search log"), "{e}");
        let fresh = tempfile::tempdir().unwrap();
        let e = crawl(
            &config(fresh.path(), "fica"),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("--impact is read by"), "{e}");
        let mut c = config(fresh.path(), if LEARNED { "learned" } else { "rw" });
        c.policy.impacts = None;
        let e = crawl(&c, &AtomicBool::new(false), &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(e.contains("--impact FILE"), "{e}");
    });
}

#[test]
fn scope_and_filters_keep_the_crawl_where_it_was_told() {
    let g = graph(300, 17);
    with_web(&g, hosts_of(100), |web| {
        // A seed with several links on its own host (hosts hold 100 pages each).
        let seed = (0..300u32)
            .find(|&v| {
                g.successors(v as usize)
                    .iter()
                    .filter(|&&w| w / 100 == v / 100)
                    .count()
                    >= 3
            })
            .unwrap();
        let host0 = web.url(seed).split('/').nth(2).unwrap().to_owned();
        // --scope host: every request, robots.txt included, goes to the seed's host.
        let dir = tempfile::tempdir().unwrap();
        let mut c = base_config(web, dir.path(), web.seed_urls(&[seed]), "bfs");
        c.scope.kind = crawlrank_crawler::ScopeKind::Host;
        let report = run(&c);
        assert_eq!(report.stop, StopReason::Exhausted);
        let log = web.log();
        assert!(log.len() > 3, "{}", report.stats);
        let other: Vec<&LogEntry> = log.iter().filter(|e| e.host != host0).collect();
        assert!(
            other.is_empty(),
            "requests outside {host0}: {:?}",
            &other[..other.len().min(3)]
        );
        assert!(report.stats.out_of_scope_links > 0, "{}", report.stats);
        // --scope domain: the test web's hosts share one registrable domain.
        web.clear_log();
        let (_dir, mut c) = fresh_crawl(web, &[0], "bfs");
        c.scope.kind = crawlrank_crawler::ScopeKind::Domain;
        let report = run(&c);
        assert_eq!(report.stats.out_of_scope_links, 0);
        assert_eq!(page_fetches(&web.log()).len(), reachable(&g, &[0]));
        // Filters: nothing under /p1 is requested; the rest is.
        web.clear_log();
        let (_dir, mut c) = fresh_crawl(web, &[0], "bfs");
        c.scope.exclude = vec!["/p1".into()];
        let report = run(&c);
        let log = web.log();
        assert!(log.iter().all(|e| !e.path.starts_with("/p1")));
        assert!(
            report.stats.filtered_links > 0 && log.len() > 10,
            "{}",
            report.stats
        );
        // A malformed regex is refused before any state is written.
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let mut c = base_config(web, &state, web.seed_urls(&[0]), "bfs");
        c.scope.include = vec!["[".into()];
        let e = format!(
            "{:#}",
            crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap_err()
        );
        assert!(e.contains("--include '['"), "{e}");
        assert!(!state.exists());
    });
}

#[test]
fn sitemaps_find_pages_no_link_reaches() {
    let g = graph(200, 23);
    with_web(
        &g,
        TestWebConfig {
            sitemaps: true,
            ..hosts_of(50)
        },
        |web| {
            let host_of = |v: u32| web.url(v).split('/').nth(2).unwrap().to_owned();
            let h0: Vec<u32> = (0..50).collect();
            let reach = crawlrank_graph::visit::reachable_from(&g, &[0]);
            assert!(
                h0.iter().any(|&v| !reach[v as usize]),
                "the test needs a page of h0 no link from page 0 reaches"
            );
            let crawl_h0 = |sitemaps: bool, max_pages: Option<u64>| {
                let (dir, mut c) = fresh_crawl(web, &[0], "bfs");
                c.scope.kind = crawlrank_crawler::ScopeKind::Host;
                c.fetch.sitemaps = sitemaps;
                c.max_pages = max_pages;
                web.clear_log();
                let report = run(&c);
                let order = crawlrank_crawler::crawl_order(dir.path()).unwrap();
                let arcs = dir.path().join("links.tsv");
                let outputs = crawlrank_crawler::LinkOutputs {
                    graph: None,
                    arcs: Some(arcs.clone()),
                    arc_urls: true,
                };
                let exported = crawlrank_crawler::export_links(dir.path(), &outputs).unwrap();
                let arcs = std::fs::read_to_string(&arcs).unwrap();
                (report, page_fetches(&web.log()), order, exported, arcs)
            };
            let (without, fetched, ..) = crawl_h0(false, None);
            assert_eq!(without.stop, StopReason::Exhausted);
            assert!(h0.iter().any(|v| !fetched.contains_key(v)));
            assert_eq!(without.stats.sitemaps_fetched, 0);
            let (with, fetched, order, exported, arcs) = crawl_h0(true, None);
            assert_eq!(with.stop, StopReason::Exhausted);
            for &v in &h0 {
                assert!(
                    fetched.contains_key(&v),
                    "page {v} of {} not fetched",
                    host_of(0)
                );
            }
            // /sitemap.xml (an index), robots.txt's Sitemap: and the gzipped sitemap the index
            // names: three side requests, not pages.
            let st = &with.stats;
            assert_eq!((st.sitemaps_fetched, st.sitemaps_read), (3, 3), "{st}");
            assert_eq!(st.sitemap_links, 2 * 50, "{st}");
            assert_eq!((st.sitemap_dropped, st.sitemap_errors), (0, 0));
            assert_eq!(
                st.pages_answered(),
                50,
                "only the host's pages are pages: {st}"
            );
            assert!(fetched.values().all(|&n| n == 1), "a page fetched twice");
            // The sitemaps are no page of the crawl, no node and no arc of its graph.
            assert_eq!(order.len(), 50);
            assert!(order.iter().all(|u| !u.contains("sitemap")), "{order:?}");
            assert_eq!(exported.nodes, 50, "{exported:?}");
            assert!(!arcs.contains("sitemap"), "a sitemap in the link graph");
            // --max-pages N fetches N pages: the three sitemap requests are not among them (without
            // a sitemap: a_default_crawl_follows_the_simulators_order in crates/cli/tests/it/cli.rs, and
            // the `missing` host of bad_sitemaps_are_counted_and_add_no_wrong_page).
            let (r, fetched, order, ..) = crawl_h0(true, Some(7));
            assert_eq!(r.stop, StopReason::MaxPages);
            assert_eq!(r.stats.pages_answered(), 7, "{}", r.stats);
            assert_eq!(fetched.values().sum::<usize>(), 7);
            assert_eq!(order.len(), 7);
            let sitemap_requests = web
                .log()
                .iter()
                .filter(|e| e.path.contains("sitemap"))
                .count();
            assert_eq!(sitemap_requests, 3);
        },
    );
}

/// Bad and unusual sitemaps (the test web's `sitemap_hosts`): each is a counted outcome that
/// adds exactly the pages it should, and never a request to a host the crawl should not
/// contact; a resumed crawl fetches no sitemap again and loses no entry.
#[test]
fn bad_sitemaps_are_counted_and_add_no_wrong_page() {
    use crawlrank_testweb::sitemap_hosts::SITEMAP_HOST_SUFFIX;
    let g = graph(8, 1);
    with_web(
        &g,
        TestWebConfig {
            sitemap_hosts: true,
            ..TestWebConfig::default()
        },
        |web| {
            // A delay between two requests to a host, which sitemap requests keep like pages.
            let delay = Duration::from_millis(30);
            let crawl_host = |name: &str, state: &Path, max_pages: Option<u64>| {
                let seed = format!("http://{name}{SITEMAP_HOST_SUFFIX}/");
                let mut c = base_config(web, state, vec![seed], "bfs");
                c.fetch.sitemaps = true;
                c.max_pages = max_pages;
                c.politeness.delay = delay;
                web.clear_log();
                let report = run(&c);
                let log = web.log();
                assert!(
                    max_in_flight_per_host(&log).values().all(|&n| n <= 1),
                    "{name}: two requests at once to a host"
                );
                for (host, gap) in min_gap_per_host(&log) {
                    assert!(gap >= delay, "{host}: two requests {gap:?} apart");
                }
                let paths: Vec<String> = log
                    .iter()
                    .map(|e| format!("{}{}", e.host, e.path))
                    .collect();
                let order: Vec<String> = crawlrank_crawler::crawl_order(state)
                    .unwrap()
                    .iter()
                    .map(|u| u.split(SITEMAP_HOST_SUFFIX).nth(1).unwrap().to_string())
                    .collect();
                (report, paths, order)
            };
            let host = |name: &str| format!("{name}{SITEMAP_HOST_SUFFIX}");

            // No /sitemap.xml: one 404, counted, and no page more than the seed.
            let dir = tempfile::tempdir().unwrap();
            let (r, _, order) = crawl_host("missing", dir.path(), None);
            let st = &r.stats;
            assert_eq!(order, ["/"]);
            assert_eq!(st.pages_answered(), 1, "{st}");
            assert_eq!((st.sitemaps_fetched, st.sitemaps_not_found), (1, 1), "{st}");
            assert!(r
                .stats
                .pages_summary()
                .contains("sitemaps          1 requests"));

            // A 503 every time: tried again like a page (--max-retries 2), then given up, counted.
            let dir = tempfile::tempdir().unwrap();
            let (r, paths, order) = crawl_host("unavailable", dir.path(), None);
            let st = &r.stats;
            assert_eq!(order, ["/"]);
            assert_eq!(
                paths.iter().filter(|p| p.ends_with("/sitemap.xml")).count(),
                3
            );
            assert_eq!((st.sitemaps_fetched, st.retries), (3, 2), "{st}");
            assert_eq!((st.sitemaps_not_found, st.pages_answered()), (1, 1), "{st}");

            // An HTML page where the sitemap should be: not a sitemap, its link not followed.
            let dir = tempfile::tempdir().unwrap();
            let (r, paths, order) = crawl_host("html", dir.path(), None);
            assert_eq!(order, ["/"]);
            assert_eq!(r.stats.sitemaps_not_sitemap, 1, "{}", r.stats);
            assert_eq!(r.stats.sitemap_links, 0);
            assert!(!paths.iter().any(|p| p.ends_with("/hidden")));

            // 100,000 entries: the first 50,000 are kept, the rest dropped and counted.
            let dir = tempfile::tempdir().unwrap();
            let (r, _, order) = crawl_host("huge", dir.path(), Some(3));
            let st = &r.stats;
            assert_eq!(r.stop, StopReason::MaxPages);
            assert_eq!(order, ["/", "/e0", "/e1"]);
            assert_eq!(
                st.sitemap_links,
                crawlrank_fetch::sitemap::MAX_ENTRIES as u64
            );
            let over = crawlrank_testweb::sitemap_hosts::HUGE_ENTRIES
                - crawlrank_fetch::sitemap::MAX_ENTRIES;
            assert_eq!(st.sitemap_dropped, over as u64, "{st}");
            assert_eq!(r.discovered, 1 + crawlrank_fetch::sitemap::MAX_ENTRIES);

            // Entries and a robots.txt Sitemap: file of other hosts: dropped and counted, never
            // requested.
            let dir = tempfile::tempdir().unwrap();
            let (r, paths, order) = crawl_host("foreign", dir.path(), None);
            assert_eq!(order, ["/", "/f1", "/f2"]);
            assert_eq!(
                (r.stats.sitemap_links, r.stats.sitemap_dropped),
                (2, 4),
                "{}",
                r.stats
            );
            assert!(
                paths.iter().all(|p| p.starts_with(&host("foreign"))),
                "{paths:?}"
            );

            // Broken XML: the entries before the fault, and an error.
            let dir = tempfile::tempdir().unwrap();
            let (r, _, order) = crawl_host("broken", dir.path(), None);
            assert_eq!(order, ["/", "/b1", "/b2"]);
            assert_eq!((r.stats.sitemap_links, r.stats.sitemap_errors), (2, 1));

            // An index naming two sitemaps and itself, one of them redirected, and a sitemap
            // robots.txt disallows: four files read, one not fetched, each page once. Stopped after
            // its first page, then resumed: no sitemap is fetched again, no entry lost.
            let dir = tempfile::tempdir().unwrap();
            let (r, paths, order) = crawl_host("index", dir.path(), Some(1));
            let st = &r.stats;
            assert_eq!(order, ["/"]);
            let files: Vec<&str> = paths
                .iter()
                .filter(|p| p.ends_with(".xml"))
                .map(|p| p.split(SITEMAP_HOST_SUFFIX).nth(1).unwrap())
                .collect();
            assert_eq!(files, ["/sitemap.xml", "/s1.xml", "/s2.xml", "/s3.xml"]);
            assert_eq!((st.sitemaps_fetched, st.sitemaps_read), (4, 3), "{st}");
            assert_eq!((st.sitemaps_disallowed, st.sitemap_links), (1, 3), "{st}");
            let (r, paths, order) = crawl_host("index", dir.path(), None);
            assert_eq!(r.stop, StopReason::Exhausted);
            assert_eq!(order, ["/", "/u1", "/u2", "/u3"]);
            assert!(
                paths.iter().all(|p| !p.ends_with(".xml")),
                "a sitemap fetched again: {paths:?}"
            );
            assert_eq!(r.stats.sitemaps_fetched, 4);
        },
    );
}

/// `warcio` (the Python WARC library web archivists use), when installed; `.ci/run` installs
/// it, so in CI its absence is a failure, elsewhere a skip with a message.
fn warcio() -> Option<std::path::PathBuf> {
    let found = std::process::Command::new("warcio")
        .arg("--help")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some("warcio".into());
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "warcio is not installed (pip install warcio); .ci/run installs it"
    );
    eprintln!("skipped: warcio is not installed (pip install warcio)");
    None
}

#[test]
fn the_warc_of_a_mixed_crawl_passes_warcio() {
    let g = graph(60, 29);
    with_web(
        &g,
        TestWebConfig {
            traps: true,
            trap_link_nodes: vec![0],
            huge_bytes: 400_000,
            slow_delay: Duration::from_millis(100),
            ..TestWebConfig::default()
        },
        |web| {
            let (dir, mut c) = fresh_crawl(web, &[0], "bfs");
            c.resources.concurrency = 4;
            c.politeness.max_retries = 1;
            c.fetch.max_body = 256 << 10;
            c.limits.urls.max_per_host = 60;
            c.fetch.url_rules.max_path_depth = 5;
            let report = run(&c);
            let st = &report.stats;
            // Cut at the cap and archived so: /big.bin, and the HTML pages /huge.html and the
            // endless body of the `endless-body` trap host (parsed too).
            assert!(
                st.pages_not_html >= 2 && st.archived_truncated == 3 && st.truncated_pages == 2,
                "{st}"
            );
            let text = warc_text(dir.path());
            for (what, needle) in [
                (
                    "the PDF",
                    "WARC-Target-URI: http://traps.crawlrank.test/doc.pdf",
                ),
                (
                    "the binary",
                    "WARC-Target-URI: http://traps.crawlrank.test/big.bin",
                ),
                ("the cut", "WARC-Truncated: length"),
                ("a redirect", "HTTP/1.1 302"),
                ("an error page", "HTTP/1.1 404"),
            ] {
                assert!(text.contains(needle), "{what} is not archived");
            }
            // With --archive html, the binary bodies are not archived.
            let html_only = tempfile::tempdir().unwrap();
            let mut c2 = c.clone();
            c2.state_dir = html_only.path().to_path_buf();
            c2.fetch.archive_all = false;
            run(&c2);
            let text2 = warc_text(html_only.path());
            // … but an HTML page cut at the cap is, marked so.
            assert!(!text2.contains("/big.bin\r\n"));
            assert_eq!(text2.matches("WARC-Truncated").count(), 2);
            let Some(warcio) = warcio() else {
                return;
            };
            for e in std::fs::read_dir(dir.path().join("warc")).unwrap() {
                let path = e.unwrap().path();
                let out = std::process::Command::new(&warcio)
                    .arg("check")
                    .arg("-v")
                    .arg(&path)
                    .output()
                    .unwrap();
                let said = String::from_utf8_lossy(&out.stdout).to_string()
                    + &String::from_utf8_lossy(&out.stderr);
                assert!(
                    out.status.success(),
                    "warcio check {}: {said}",
                    path.display()
                );
                let index = std::process::Command::new(&warcio)
                    .arg("index")
                    .arg(&path)
                    .output()
                    .unwrap();
                assert!(index.status.success());
                let records = String::from_utf8_lossy(&index.stdout).lines().count();
                assert!(records as u64 > 2 * st.pages_html, "{records} records");
            }
        },
    );
}

#[test]
fn the_page_budget_counts_fetched_pages_only() {
    // robots.txt disallows every page whose path starts with /p1 (/p1, /p10…/p19, /p100…):
    // those are given up without a request; 500s and 503s are answers, so they count.
    let g = graph(400, 5);
    with_web(
        &g,
        TestWebConfig {
            error_rate: 0.1,
            seed: 3,
            ..robots("Disallow: /p1")
        },
        |web| {
            let (dir, mut c) = fresh_crawl(web, &[0], "bfs");
            c.resources.concurrency = 8;
            c.politeness.max_retries = 0;
            for budget in [100, 160] {
                c.max_pages = Some(budget);
                let report = run(&c);
                assert_eq!(report.stop, StopReason::MaxPages);
                let st = &report.stats;
                assert_eq!(st.pages_answered(), budget, "{st}");
                let requests = web.log().iter().filter(|e| e.node.is_some()).count();
                assert_eq!(requests as u64, budget, "page requests the server saw");
                assert!(st.robots_disallowed > 0 && st.http_errors > 0, "{st}");
                assert_eq!(report.pending, 0);
            }
            let status = crawlrank_crawler::status(dir.path()).unwrap().to_string();
            assert!(status.contains("fetched pages     160"), "{status}");
            assert!(status.contains("given up"), "{status}");
        },
    );
}

/// Crawls `web`, whose robots.txt disallows `/p1`, from `seeds` with `policy`, `concurrency`
/// fetches at a time, to its end, and checks that no disallowed page was requested; the
/// crawl's report and the web's log.
fn crawl_where_p1_is_disallowed(
    web: &TestWeb,
    seeds: &[u32],
    policy: &str,
    concurrency: usize,
) -> (crawlrank_crawler::CrawlReport, Vec<LogEntry>) {
    let (_dir, mut c) = fresh_crawl(web, seeds, policy);
    c.resources.concurrency = concurrency;
    let report = run(&c);
    assert_eq!(report.stop, StopReason::Exhausted);
    let log = web.log();
    assert!(
        log.iter().all(|e| !e.path.starts_with("/p1")),
        "a disallowed page was fetched"
    );
    (report, log)
}

#[test]
fn an_oversize_robots_txt_is_read_up_to_its_cap_not_dropped() {
    // 10 MB: the rule first, then comment lines (RFC 9309 §2.5: parse at least 500 KiB).
    let mut rules = String::from("Disallow: /p1\n");
    while rules.len() < 10_000_000 {
        rules.push_str("# a long file, for a very long time\n");
    }
    let g = graph(120, 3);
    with_web(&g, robots(rules), |web| {
        let (report, _) = crawl_where_p1_is_disallowed(web, &[0], "bfs", 4);
        assert!(report.stats.robots_disallowed > 0, "{}", report.stats);
        assert!(report.stats.pages_html > 10);
    });
}

#[test]
fn robots_and_politeness_are_honoured() {
    let g = graph(160, 3);
    let cfg = TestWebConfig {
        latency: Duration::from_millis(2),
        ..robots("Disallow: /p1\nCrawl-delay: 0.05")
    };
    with_web(&g, cfg, |web| {
        let (report, log) = crawl_where_p1_is_disallowed(web, &[0, 2, 3], "fica", 16);
        assert!(report.stats.robots_disallowed > 0);
        for (host, n) in max_in_flight_per_host(&log) {
            assert_eq!(n, 1, "{host} had {n} requests at once");
        }
        for (host, gap) in min_gap_per_host(&log) {
            assert!(
                gap >= Duration::from_millis(49),
                "{host}: only {gap:?} between two requests"
            );
        }
        // Several hosts were crawled in parallel: the run took far less than the sum of delays.
        assert!(web.num_hosts() > 5);
    });

    // --delay above the Crawl-delay wins.
    with_web(&g, robots("Crawl-delay: 0.01"), |web2| {
        let (_dir, mut c) = fresh_crawl(web2, &[0], "bfs");
        c.resources.concurrency = 8;
        c.politeness.delay = Duration::from_millis(40);
        c.max_pages = Some(40);
        run(&c);
        for (host, gap) in min_gap_per_host(&web2.log()) {
            assert!(gap >= Duration::from_millis(39), "{host}: only {gap:?}");
        }
    });
}

#[test]
fn faults_and_traps_do_not_stop_the_crawl() {
    let g = graph(120, 11);
    let cfg = TestWebConfig {
        traps: true,
        trap_link_nodes: vec![0],
        error_rate: 0.15,
        seed: 4,
        huge_bytes: 3_000_000,
        slow_delay: Duration::from_secs(4),
        ..TestWebConfig::default()
    };
    with_web(&g, cfg, |web| {
        let (_dir, mut c) = fresh_crawl(web, &[0], "opic");
        c.resources.concurrency = 8;
        c.politeness.max_retries = 6;
        c.fetch.timeout = Duration::from_millis(1500);
        c.fetch.max_body = 1 << 20;
        c.limits.urls.max_per_host = 150;
        c.fetch.url_rules.max_path_depth = 8;
        let report = run(&c);
        assert_eq!(report.stop, StopReason::Exhausted);
        let log = web.log();
        let requested: HashSet<String> = log
            .iter()
            .map(|e| format!("http://{}{}", e.host, e.path))
            .collect();
        let exp = web.trap_expectations();
        for u in &exp.must_fetch {
            assert!(requested.contains(u), "never fetched {u}");
        }
        for u in &exp.must_not_fetch {
            assert!(!requested.contains(u), "fetched {u}");
        }
        for p in &exp.bounded_prefixes {
            let n = log
                .iter()
                .filter(|e| format!("http://{}{}", e.host, e.path).starts_with(p.as_str()))
                .count();
            assert!(n <= 160, "{n} requests under {p}");
        }
        // Every reachable graph page was eventually fetched with success.
        let ok: HashSet<u32> = log
            .iter()
            .filter(|e| e.status == 200)
            .filter_map(|e| e.node)
            .collect();
        assert_eq!(ok.len(), reachable(&g, &[0]));
        let s = &report.stats;
        assert!(
            s.retries > 0 && s.truncated_pages >= 1 && s.timeouts >= 1 && s.redirects >= 4,
            "{s}"
        );
        assert!(
            s.pages_not_html >= 1
                && s.http_errors >= 2
                && s.robots_disallowed >= 1
                && s.host_cap_links > 0,
            "{s}"
        );
    });
}

/// The pages under `/oversize/` the test web saw requested, by block number.
fn oversize_requests(web: &TestWeb) -> Vec<usize> {
    let mut ks: Vec<usize> = web
        .log()
        .iter()
        .filter_map(|e| e.path.strip_prefix("/oversize/")?.parse().ok())
        .collect();
    ks.sort_unstable();
    ks
}

#[test]
fn an_html_page_over_the_body_cap_is_parsed_up_to_the_cap() {
    let seed = format!("http://{}/oversize.html", crawlrank_testweb::TRAPS_HOST);
    let traps = || TestWebConfig {
        traps: true,
        ..TestWebConfig::default()
    };
    with_web(&graph(4, 1), traps(), |web| {
        let dir = tempfile::tempdir().unwrap();
        let mut c = base_config(web, dir.path(), vec![seed.clone()], "bfs");
        // Between the links of blocks 9 and 10: links 0..=9 are within the first bytes.
        c.fetch.max_body = 95_000;
        let within = crawlrank_testweb::oversize_links_within(c.fetch.max_body);
        assert_eq!(within, 0..10);
        let report = run(&c);
        assert_eq!(report.stop, StopReason::Exhausted);
        assert_eq!(oversize_requests(web), within.clone().collect::<Vec<_>>());
        let st = &report.stats;
        // An html page (so a fetched page for --max-pages), counted as truncated, not too large.
        assert_eq!(
            (
                st.pages_html,
                st.truncated_pages,
                st.archived_truncated,
                st.too_large
            ),
            (1 + within.len() as u64, 1, 1, 0),
            "{st}"
        );
        assert_eq!(st.pages_answered(), 1 + within.len() as u64);
        let warc = warc_text(dir.path());
        let record = warc
            .split("WARC/1.1\r\n")
            .find(|r| {
                r.contains(&format!("WARC-Target-URI: {seed}\r\n"))
                    && r.contains("WARC-Type: response")
            })
            .expect("the page is archived");
        assert!(record.contains("WARC-Truncated: length"), "{record:.400}");
        assert!(!record.contains("/oversize/10\""), "archived past the cap");
    });

    // The link cap: the first 4 links of the page are kept, the other 6 counted.
    with_web(&graph(4, 1), traps(), |web| {
        let dir = tempfile::tempdir().unwrap();
        let mut c = base_config(web, dir.path(), vec![seed], "bfs");
        c.fetch.max_body = 95_000;
        c.fetch.url_rules.max_links_per_page = 4;
        let report = run(&c);
        assert_eq!(oversize_requests(web), [0, 1, 2, 3]);
        assert_eq!(report.stats.links_over_cap, 6, "{}", report.stats);
    });
}

#[test]
fn outputs_warc_graph_and_ranking() {
    let g = graph(200, 5);
    with_web(&g, TestWebConfig::default(), |web| {
        let (dir, mut c) = fresh_crawl(web, &[0], "fica");
        c.resources.concurrency = 4;
        let report = run(&c);
        let r = reachable(&g, &[0]);
        assert_eq!(report.stats.pages_html as usize, r);

        // WARC: one response and one request record per page, plus warcinfo.
        let text = warc_text(dir.path());
        assert_eq!(text.matches("WARC-Type: response").count(), r);
        assert_eq!(text.matches("WARC-Type: request").count(), r);
        assert_eq!(text.matches("WARC-Type: warcinfo").count(), 1);

        // The exported graph is the crawled part of the web, arc for arc.
        let out = dir.path().join("export/crawl");
        let e = crawlrank_crawler::export_graph(dir.path(), &out).unwrap();
        assert_eq!(e.nodes, r);
        let urls = crawlrank_graph::urls::read_urls(&out.with_extension("urls")).unwrap();
        let cache = crawlrank_graph::Cache::new(dir.path().join("cache"));
        let bv = crawlrank_graph::BvWebGraph::open(&out, &cache).unwrap();
        let csr = bv.to_csr().unwrap();
        let mut got: Vec<(u32, u32)> = csr
            .arcs()
            .map(|(s, d)| {
                (
                    web.node_of(&urls[s as usize]).unwrap(),
                    web.node_of(&urls[d as usize]).unwrap(),
                )
            })
            .collect();
        let mut want: Vec<(u32, u32)> = g
            .arcs()
            .filter(|&(s, _)| urls.iter().any(|u| web.node_of(u) == Some(s)))
            .collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);

        // The ranking: every scored URL once, scores non-increasing.
        let rank = dir.path().join("rank.tsv");
        let scored = crawlrank_crawler::export_ranking(dir.path(), &rank)
            .unwrap()
            .scored;
        let lines = std::fs::read_to_string(&rank).unwrap();
        let scores: Vec<f64> = lines
            .lines()
            .map(|l| l.split('\t').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(scores.len(), scored);
        assert!(scored > 0 && scores.windows(2).all(|w| w[0] >= w[1]));
        let st = crawlrank_crawler::status(dir.path()).unwrap();
        assert_eq!((st.crawled as usize, st.pending, st.frontier), (r, 0, 0));
        assert!(st.to_string().contains("policy fica"));
    });
}

#[test]
fn stop_and_resume_fetch_every_page_once() {
    let g = graph(300, 9);
    with_web(&g, latency_ms(3), |web| {
        let (_dir, mut c) = fresh_crawl(web, &[0], "ieca");
        c.resources.concurrency = 4;
        c.resources.stop_grace = Duration::from_millis(0);
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            s2.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        let first = crawl(&c, &stop, &mut |_| {}).unwrap();
        t.join().unwrap();
        assert_eq!(first.stop, StopReason::Interrupted);
        assert!(first.pages_this_run > 0);
        let second = run(&c);
        assert_eq!(second.stop, StopReason::Exhausted);
        let fetches = page_fetches(&web.log());
        let r = reachable(&g, &[0]);
        assert_eq!(fetches.len(), r);
        let dups: usize = fetches.values().map(|&n| n - 1).sum();
        assert!(
            dups <= c.resources.concurrency,
            "{dups} pages fetched twice"
        );
        // A different policy on the same state is refused.
        c.policy.kind = PolicyKind::Bfs;
        let err = crawl(&c, &AtomicBool::new(false), &mut |_| {})
            .err()
            .unwrap();
        assert!(err.to_string().contains("policy 'ieca'"), "{err}");
    });
}

#[test]
fn robots_txt_is_fetched_once_across_runs() {
    let g = graph(240, 21);
    with_web(&g, robots("Disallow: /p1"), |web| {
        let (_dir, mut c) = fresh_crawl(web, &[0], "bfs");
        c.resources.concurrency = 4;
        c.max_pages = Some(40);
        let first = run(&c);
        assert_eq!(first.stop, StopReason::MaxPages);
        assert_eq!(first.stats.robots_cached, 0);
        let hosts_first: HashSet<String> = web
            .log()
            .iter()
            .filter(|e| e.path == "/robots.txt")
            .map(|e| e.host.clone())
            .collect();
        assert!(hosts_first.len() >= 2, "{hosts_first:?}");
        c.max_pages = None;
        let second = run(&c);
        assert_eq!(second.stop, StopReason::Exhausted);
        let log = web.log();
        let mut robots: HashMap<&str, usize> = HashMap::new();
        for e in log.iter().filter(|e| e.path == "/robots.txt") {
            *robots.entry(e.host.as_str()).or_insert(0) += 1;
        }
        for (host, n) in &robots {
            assert_eq!(*n, 1, "{host}'s robots.txt was requested {n} times");
        }
        // The second run did crawl hosts whose rules came from the state, and obeyed them.
        let stats = &second.stats;
        assert!(stats.robots_cached > 0, "{stats}");
        assert_eq!(stats.robots_fetched, robots.len() as u64, "{stats}");
        assert!(log.iter().all(|e| !e.path.starts_with("/p1")));
        assert!(stats.robots_disallowed > 0, "{stats}");
    });
}

/// Runs a crawl in this process when spawned as a child by [`kill_9_and_resume`].
#[test]
fn child_crawl_entry() {
    let Ok(args) = std::env::var("CRAWLRANK_TEST_CHILD") else {
        return;
    };
    let mut it = args.split('\t');
    let (state, proxy, seed) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
    run(&kill_9_config(
        state.as_ref(),
        proxy,
        vec![seed.to_string()],
    ));
}

/// What a child crawl is told: its state directory, the proxy of `web` and the seed (page 0),
/// tab-separated.
fn child_args(state: &Path, web: &TestWeb) -> String {
    format!("{}\t{}\t{}", state.display(), web.proxy_url(), web.url(0))
}

/// The crawl [`kill_9_and_resume`] kills and resumes: FICA, 4 at a time, with a seen-set cache
/// of 16 URLs and 8 frontier entries in memory, so that a resume reads most from the state.
fn kill_9_config(state: &Path, proxy: &str, seeds: Vec<String>) -> CrawlConfig {
    let mut c = proxied_config(state, proxy, seeds, "fica");
    c.resources.concurrency = 4;
    c
}

#[test]
fn kill_9_and_resume() {
    // Big enough that each run commits many steps: the URLs discovered before a kill are in
    // the store only (the URL table keeps no strings and, with a cache of 16, hardly any of
    // the seen-set), and the resumed runs read every page's URL and most of the seen-set
    // back from there.
    let g = graph(2000, 13);
    with_web(&g, latency_ms(2), |web| {
        let dir = tempfile::tempdir().unwrap();
        let args = child_args(dir.path(), web);
        let r = reachable(&g, &[0]);
        let mut kills = 0;
        for target in [30, 400, 1000, 1600] {
            let mut child = common::spawn_test(
                "e2e::child_crawl_entry",
                "CRAWLRANK_TEST_CHILD",
                &args,
                std::process::Stdio::null(),
            );
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            loop {
                let done = web.log().iter().filter(|e| e.node.is_some()).count();
                if done >= target
                    || child.try_wait().unwrap().is_some()
                    || std::time::Instant::now() > deadline
                {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            if child.try_wait().unwrap().is_none() {
                child.kill().unwrap(); // SIGKILL
                kills += 1;
            }
            child.wait().unwrap();
        }
        // Finish in this process.
        let report = run(&kill_9_config(dir.path(), &web.proxy_url(), Vec::new()));
        assert_eq!(report.stop, StopReason::Exhausted);
        assert!(report.seen.disk_reads > 0, "{:?}", report.seen);
        let fetches = page_fetches(&web.log());
        assert_eq!(fetches.len(), r, "every reachable page fetched");
        let dups: usize = fetches.values().map(|&n| n - 1).sum();
        assert!(kills >= 2, "the crawl finished before the kills");
        assert!(
            dups <= kills * 4,
            "{dups} duplicate fetches after {kills} kills at concurrency 4"
        );
        let st = crawlrank_crawler::status(dir.path()).unwrap();
        assert_eq!(st.crawled as usize, r);
        assert!(st.discovered >= r, "{} URLs for {r} pages", st.discovered);
        let order = crawlrank_crawler::crawl_order(dir.path()).unwrap();
        assert_eq!(
            order.len() as u64,
            st.popped,
            "every popped page has its URL"
        );
    });
}

/// A web of `n` pages that all hang together: a ring plus three pseudo-random links per page.
fn ring_web(n: u32) -> Csr {
    common::ring_graph(n, 3, 0x5eed_f00d)
}

/// Runs a crawl in this process, under an open-file limit set low with `setrlimit` (soft and
/// hard, so the crawl cannot raise it), when spawned by [`crawl_with_a_low_open_file_limit`].
/// `CRAWLRANK_TEST_LOW_FD` = mode, state, proxy, seed, limit, concurrency (tab-separated);
/// mode `hog` also takes every free descriptor for about a second early in the crawl. Prints
/// `RESULT ok MAX_SOCKETS MAX_CONNECTIONS SAMPLES` or `RESULT err MESSAGE`.
#[test]
fn child_low_limit_entry() {
    let Ok(args) = std::env::var("CRAWLRANK_TEST_LOW_FD") else {
        return;
    };
    let v: Vec<&str> = args.split('\t').collect();
    let (mode, state, proxy, seed) = (v[0], v[1], v[2], v[3]);
    let limit: u64 = v[4].parse().unwrap();
    rlimit::setrlimit(rlimit::Resource::NOFILE, limit, limit).unwrap();
    let c = CrawlConfig {
        state_dir: state.into(),
        seeds: vec![seed.to_string()],
        fetch: crawlrank_crawler::FetchConfig {
            proxy: Some(proxy.into()),
            ..Default::default()
        },
        policy: PolicySettings {
            kind: PolicyKind::Fica,
            // A ranking snapshot every 100 pages: some fall in the hog's second.
            batch: Some(100),
            ..PolicySettings::default()
        },
        resources: Resources {
            concurrency: v[5].parse().unwrap(),
            ..Resources::default()
        },
        ..CrawlConfig::default()
    };
    let port: u16 = proxy.rsplit(':').next().unwrap().parse().unwrap();
    let (mut max, mut samples, mut calls) = ((0, 0), 0, 0);
    let mut hog = Vec::new();
    let result = crawl(&c, &AtomicBool::new(false), &mut |_| {
        calls += 1;
        if let Some((sockets, connections)) = open_sockets("/proc/self", port) {
            max = (max.0.max(sockets), max.1.max(connections));
            samples += 1;
        }
        if mode == "hog" && calls == 2 {
            while let Ok(f) = std::fs::File::open("/dev/null") {
                hog.push(f);
            }
        }
        if calls == 6 {
            hog.clear();
        }
    });
    match result {
        Ok(_) => println!("RESULT ok {} {} {samples}", max.0, max.1),
        Err(e) => println!("RESULT err {e:#}"),
    }
}

/// What a [`child_low_limit_entry`] run printed, and the most sockets and connections to
/// `port` this process saw it hold (sampling its `/proc/PID` every 2 ms).
fn run_low_limit_child(args: &str, port: u16) -> (String, (usize, usize)) {
    let mut child = common::spawn_test(
        "e2e::child_low_limit_entry",
        "CRAWLRANK_TEST_LOW_FD",
        args,
        std::process::Stdio::piped(),
    );
    let proc = format!("/proc/{}", child.id());
    let mut seen = (0, 0);
    let deadline = std::time::Instant::now() + Duration::from_secs(240);
    while child.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
        let (sockets, connections) = open_sockets(&proc, port).unwrap_or_default();
        seen = (seen.0.max(sockets), seen.1.max(connections));
        std::thread::sleep(Duration::from_millis(2));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the child crawl failed: {:?}",
        out.status
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let result = stdout
        .lines()
        .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r))
        .unwrap_or_else(|| panic!("no RESULT line in {stdout}"))
        .to_string();
    (result, seen)
}

/// A crawl of 2,500 hosts — ten times what its open-file limit of 256 would allow if it kept
/// a connection per host, as it once did — completes, its connections never above the
/// documented bound (concurrency + idle connections) and its sockets of any kind never above
/// the open files it was allowed (that plus 64), sampled in the crawl's own progress
/// callback and, every 2 ms, from outside. Then the same crawl again while every free file
/// descriptor is taken for a second: the shortage is counted and slows the crawl down, and
/// the crawl still fetches every page once, with no failed fetch.
#[cfg(target_os = "linux")]
#[test]
fn crawl_with_a_low_open_file_limit() {
    let g = ring_web(5_000);
    with_web(
        &g,
        TestWebConfig {
            record_log: false,
            ..hosts_of(2)
        },
        |web| {
            assert_eq!(web.num_hosts(), 2_500);
            let concurrency = 32;
            let budget = Resources {
                concurrency,
                ..Resources::default()
            }
            .fd_budget(256);
            let (bound, files) = (budget.sockets() as usize, budget.total() as usize);
            assert_eq!(
                (bound, files),
                (192, 256),
                "concurrency + idle (default: the room the limit of 256 leaves, 160), + 64"
            );
            let port = web.addr().port();
            for mode in ["crawl", "hog"] {
                let dir = tempfile::tempdir().unwrap();
                let args = format!(
                    "{mode}\t{}\t256\t{concurrency}",
                    child_args(dir.path(), web)
                );
                let before = web.num_requests();
                let (result, seen) = run_low_limit_child(&args, port);
                let requests = web.num_requests() - before;
                let f: Vec<usize> = match result.strip_prefix("ok ") {
                    Some(r) => r.split(' ').map(|x| x.parse().unwrap()).collect(),
                    None => panic!("{mode}: {result}"),
                };
                let (sockets, connections, samples) = (f[0], f[1], f[2]);
                assert!(samples >= 2, "{mode}: {samples} samples");
                for (who, (sockets, connections)) in
                    [("inside", (sockets, connections)), ("outside", seen)]
                {
                    assert!(
                        connections <= bound,
                        "{mode}, {who}: {connections} connections, bound {bound}"
                    );
                    assert!(
                        sockets <= files,
                        "{mode}, {who}: {sockets} sockets, {files} files allowed"
                    );
                    assert!(connections > 0, "{mode}, {who}: never saw a connection");
                }
                let st = crawlrank_crawler::status(dir.path()).unwrap();
                assert_eq!(st.crawled, 5_000, "{mode}: every page crawled");
                assert_eq!(st.stats.pages_html, 5_000, "{mode}: {}", st.stats);
                assert_eq!(st.stats.fetch_errors, 0, "{mode}: {}", st.stats);
                // Each page and each host's robots.txt requested once: a fetch that found no
                // descriptor never reached the server, and was not a failed attempt either.
                assert_eq!(requests, 5_000 + 2_500, "{mode}");
                assert_eq!(st.stats.robots_fetched, 2_500, "{mode}: {}", st.stats);
                assert_eq!(st.stats.retries, 0, "{mode}: {}", st.stats);
                if mode == "hog" {
                    assert!(st.stats.fd_shortages > 0, "{}", st.stats);
                } else {
                    assert_eq!(st.stats.fd_shortages, 0, "{}", st.stats);
                }
                eprintln!(
            "{mode}: at most {connections} connections ({sockets} sockets) in {samples} samples, \
             {seen:?} from outside; {} shortages",
            st.stats.fd_shortages
        );
            }
        },
    );
}

/// An open-file limit too low for the concurrency is a clear error naming both numbers and
/// the fix, before anything is written.
#[cfg(target_os = "linux")]
#[test]
fn an_open_file_limit_too_low_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let args = format!(
        "crawl\t{}\thttp://127.0.0.1:9\thttp://a.test/\t100\t64",
        state.display()
    );
    let (result, _) = run_low_limit_child(&args, 9);
    assert!(result.starts_with("err "), "{result}");
    for needle in [
        "--concurrency 64 needs up to 192 open files",
        "the open-file limit is 100 (hard limit 100)",
        "lower --concurrency to 18",
        "ulimit -n 192",
    ] {
        assert!(result.contains(needle), "'{needle}' not in {result}");
    }
    assert!(!state.exists(), "nothing written");
}

/// A small web of 60 pages on 8 hosts, every page reachable from 0: a ring plus chords.
fn ring_with_chords() -> Csr {
    let n = 60u32;
    let mut arcs = Vec::new();
    for v in 0..n {
        arcs.push((v, (v + 1) % n));
        if v % 3 == 0 {
            arcs.push((v, (v * 7 + 11) % n));
        }
        if v % 4 == 1 {
            arcs.push((v, (v * 13 + 5) % n));
        }
    }
    Csr::from_arcs(n as usize, &arcs)
}

/// The test web with `pages` pages on each host.
fn hosts_of(pages: u32) -> TestWebConfig {
    TestWebConfig {
        pages_per_host: pages,
        ..TestWebConfig::default()
    }
}

/// The test web answering each request after `ms` milliseconds.
fn latency_ms(ms: u64) -> TestWebConfig {
    TestWebConfig {
        latency: Duration::from_millis(ms),
        ..TestWebConfig::default()
    }
}

/// The test web with `rules` as every host's robots.txt.
fn robots(rules: impl Into<String>) -> TestWebConfig {
    TestWebConfig {
        robots: Some(rules.into()),
        ..TestWebConfig::default()
    }
}

/// The test web over HTTPS.
fn https() -> TestWebConfig {
    TestWebConfig {
        tls: true,
        ..TestWebConfig::default()
    }
}

#[test]
fn crawls_https_in_policy_order_when_the_ca_is_trusted() {
    let g = ring_with_chords();
    with_web(&g, https(), |web| {
        assert!(web.url(0).starts_with("https://"));
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("test-ca.pem");
        web.write_ca_pem(&ca).unwrap();

        let n = g.num_nodes() as u64;
        let expected = simulator_order(&g, &[0], "fica", 1);

        let state = dir.path().join("state");
        let mut c = base_config(web, &state, web.seed_urls(&[0]), "fica");
        c.policy.batch = Some(1);
        c.policy.expected_pages = Some(n);
        c.policy.total_pages = Some(n);
        c.fetch.ca_certs = vec![ca];
        let report = crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap();
        assert_eq!(report.stop, StopReason::Exhausted);
        assert_eq!(report.stats.pages_html, n);
        assert_eq!(report.stats.fetch_errors, 0);

        // The simulator's order, every URL https, every request (robots.txt too) over TLS.
        let order = crawlrank_crawler::crawl_order(&state).unwrap();
        assert!(order.iter().all(|u| u.starts_with("https://")));
        let order: Vec<u32> = order.iter().map(|u| web.node_of(u).unwrap()).collect();
        assert_eq!(order, expected);
        let log = web.log();
        assert!(log.iter().all(|e| e.tls), "a request left the tunnels");
        let robots = log.iter().filter(|e| e.path == "/robots.txt").count();
        assert_eq!(robots, web.num_hosts(), "one robots.txt per host");
        let (tunnels, failed) = web.tunnels();
        assert!(tunnels >= web.num_hosts() as u64 && failed == 0);

        // The WARC records name the https URLs.
        assert!(warc_text(&state).contains(&format!("WARC-Target-URI: {}", web.url(0))));
    });
}

#[test]
fn an_untrusted_certificate_fetches_nothing_and_does_not_stop_the_crawl() {
    let g = ring_with_chords();
    with_web(&g, https(), |web| {
        let dir = tempfile::tempdir().unwrap();
        let report = crawl(
            &base_config(web, dir.path(), web.seed_urls(&[0]), "bfs"),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(report.stop, StopReason::Exhausted);
        assert_eq!(report.stats.pages_answered(), 0);
        // The seed's host fails at its robots.txt: its pages are given up as TLS failures, once.
        assert_eq!(report.stats.tls_errors, 1);
        assert_eq!(report.stats.fetch_errors, 1);
        assert_eq!(report.stats.retries, 0);
        assert!(
            web.log().is_empty(),
            "no request got through a failed handshake"
        );
        assert!(web.tunnels().1 >= 1);
    });
}

#[test]
fn a_bad_ca_file_is_a_clear_error() {
    let g = ring_with_chords();
    with_web(&g, https(), |web| {
        let dir = tempfile::tempdir().unwrap();
        let mut c = base_config(web, &dir.path().join("state"), web.seed_urls(&[0]), "bfs");
        let missing = dir.path().join("missing.pem");
        c.fetch.ca_certs = vec![missing.clone()];
        let err = crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("missing.pem"), "{msg}");
        let junk = dir.path().join("junk.pem");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        c.fetch.ca_certs = vec![junk];
        let msg = format!(
            "{:#}",
            crawl(&c, &AtomicBool::new(false), &mut |_| {}).unwrap_err()
        );
        assert!(
            msg.contains("junk.pem") && msg.contains("no certificate"),
            "{msg}"
        );
        assert!(web.log().is_empty());
    });
}

/// A site whose every page is a host of its own (the test web's hosts all share the
/// registrable domain `crawlrank.test`, as a wildcard-DNS site's do): at most
/// `--max-hosts-per-domain` of its hosts get a request, robots.txt included, and at most
/// `--max-urls-per-domain` of its URLs an id; the links past them are counted.
#[test]
fn bounds_hosts_and_urls_are_capped_per_registrable_domain() {
    let g = graph(300, 11);
    with_web(&g, hosts_of(1), |web| {
        let (_dir, mut c) = fresh_crawl(web, &[0], "bfs");
        c.limits.urls.max_hosts_per_domain = 5;
        let report = run(&c);
        assert!(reachable(&g, &[0]) > 50);
        let log = web.log();
        let hosts: HashSet<&str> = log.iter().map(|e| e.host.as_str()).collect();
        assert_eq!(hosts.len(), 5, "hosts asked: {hosts:?}");
        assert_eq!(page_fetches(&log).len(), 5);
        assert_eq!(log.iter().filter(|e| e.path == "/robots.txt").count(), 5);
        assert_eq!((report.hosts, report.discovered), (5, 5));
        assert!(report.stats.domain_host_cap_links > 0, "{}", report.stats);
        assert_eq!(report.stats.domain_cap_links, 0);
    });

    // Eight pages a host: the domain's URLs are capped over all its hosts.
    with_web(&g, TestWebConfig::default(), |web| {
        let (_dir, mut c) = fresh_crawl(web, &[0], "bfs");
        c.limits.urls.max_per_domain = 12;
        let report = run(&c);
        assert_eq!(report.discovered, 12);
        assert_eq!(page_fetches(&web.log()).len(), 12);
        assert!(report.stats.domain_cap_links > 0, "{}", report.stats);
        assert_eq!(report.stats.domain_host_cap_links, 0);
    });
}

/// Page ids end at `--max-urls` (at most 2^32 - 1, their width): new URLs past it are
/// refused and counted, every URL keeps its id (page 0 is still the seed), and a resumed
/// crawl keeps the bound.
#[test]
fn bounds_page_ids_stop_at_max_urls() {
    let g = graph(200, 5);
    with_web(&g, TestWebConfig::default(), |web| {
        let dir = tempfile::tempdir().unwrap();
        let seeds = web.seed_urls(&[0]);
        let mut c = base_config(web, dir.path(), seeds.clone(), "bfs");
        c.limits.urls.max_urls = 20;
        c.max_pages = Some(10);
        let first = run(&c);
        assert_eq!(first.discovered, 20);
        assert!(first.stats.url_limit_links > 0, "{}", first.stats);
        c.max_pages = None;
        let report = run(&c);
        assert_eq!(report.discovered, 20);
        assert!(report.stats.url_limit_links > first.stats.url_limit_links);
        let urls = crawlrank_crawler::discovered_urls(dir.path()).unwrap();
        assert_eq!(urls.len(), 20);
        assert_eq!(urls[0], seeds[0]);
        assert_eq!(urls.iter().collect::<HashSet<_>>().len(), 20, "{urls:?}");
        // Every page fetched is one of them, fetched once.
        let fetched = page_fetches(&web.log());
        assert_eq!(fetched.len(), 20);
        assert!(fetched.values().all(|&n| n == 1), "{fetched:?}");
    });
}
