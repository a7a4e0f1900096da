//! The same crawl two ways, as a user runs each: `crawlrank crawl` (the engine, its frontier
//! in its state) and `crawlrank frontier serve` with one `crawlrank crawl --frontier` worker,
//! both at `--concurrency 1` with no politeness delay, on the same local test web. They fetch
//! the same pages in the same order, exactly, for every policy the service runs.

use crate::common;

use common::serve::Serve;
use common::workers::{ring_web, Worker};
use crawlrank_frontier::PolicyKind;
use crawlrank_testweb::{TestWeb, TestWebConfig};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The test web: a ring with chords (every page reachable from every page, some pages linked
/// far more than others), small enough for every policy's two crawls to take seconds.
const PAGES: u32 = 300;
const CHORDS: &[(u32, u32)] = &[(2, 0), (3, 1), (6, 5)];
/// Two seeds, on different hosts (8 pages a host): the order in which a crawl takes its
/// seeds in is part of what must agree.
const SEEDS: [u32; 2] = [0, 17];

fn start_web() -> TestWeb {
    ring_web(PAGES, CHORDS, TestWebConfig::default()).1
}

/// The seeds file of both crawls, in `dir`.
fn seeds_file(dir: &Path, web: &TestWeb) -> PathBuf {
    let seeds = dir.join("seeds.txt");
    std::fs::write(&seeds, web.seed_urls(&SEEDS).join("\n")).unwrap();
    seeds
}

/// The test web's pages in the order they were requested (robots.txt and sitemaps are not
/// pages: they carry no node).
fn fetched(web: &TestWeb) -> Vec<u32> {
    web.log().iter().filter_map(|e| e.node).collect()
}

/// The options both crawls are given besides their defaults: the policy, and with `expected`
/// the web's size as `--expected-pages` (K = ceil(300/72) = 5, so that the batch policies
/// reorder 60 times in the crawl and FICA's and IECA's `t` ticks as often, where the
/// default of 100,000 expected pages gives K = 1389, more than the web's pages) and a
/// frontier that keeps 8 entries in memory, the rest spilled to disk (`--frontier-hot`,
/// which must not change the order).
fn policy_options(policy: &str, expected: bool) -> Vec<String> {
    let mut options = vec!["--policy".to_string(), policy.to_string()];
    if expected {
        options.extend(["--expected-pages".to_string(), PAGES.to_string()]);
        options.extend(["--frontier-hot".to_string(), "8".to_string()]);
    }
    options
}

/// Runs `crawlrank ARGS` with its output in files of `dir` (no pipe to drain), waiting at
/// most `within`; returns its stdout, panicking with its stderr if it failed.
fn run_bounded(dir: &Path, args: &[String], within: Duration) -> String {
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .arg("--cache")
        .arg(dir.join("cache"))
        .args(args)
        .stdout(Stdio::from(std::fs::File::create(&out).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&err).unwrap()))
        .spawn()
        .expect("cannot start crawlrank");
    let status = common::wait_for(
        &format!("crawlrank {args:?}"),
        within,
        Duration::from_millis(20),
        || child.try_wait().unwrap(),
    );
    let (stdout, stderr) = (
        std::fs::read_to_string(out).unwrap(),
        std::fs::read_to_string(err).unwrap(),
    );
    assert!(status.success(), "crawlrank {args:?}: {stdout}\n{stderr}");
    stdout
}

/// The order in which `crawlrank crawl --policy POLICY` fetches the test web, its state in
/// `dir`.
fn engine_order(policy: &str, expected: bool, dir: &Path) -> Vec<u32> {
    let web = start_web();
    let seeds = seeds_file(dir, &web);
    let mut args = common::words(
        "crawl --seeds {} --state {} --proxy {} --concurrency 1 --delay 0",
        &[&seeds, &dir.join("state"), &web.proxy_url()],
    );
    args.extend(policy_options(policy, expected));
    let out = run_bounded(dir, &args, Duration::from_secs(120));
    common::assert_contains(&out, &[&format!("fetched pages     {PAGES} (html {PAGES}")]);
    let order = fetched(&web);
    web.shutdown_blocking();
    order
}

/// The order in which one worker at `--concurrency 1` fetches the test web through
/// `crawlrank frontier serve --policy POLICY`, their states in `dir`.
fn worker_order(policy: &str, expected: bool, dir: &Path) -> Vec<u32> {
    let web = start_web();
    let seeds = seeds_file(dir, &web);
    let options = policy_options(policy, expected);
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let serve = Serve::start(&dir.join("frontier"), &options);
    let worker = Worker::start_with_concurrency(
        &format!("http://{}", serve.addr),
        &web,
        &seeds,
        &dir.join("worker"),
        1,
        &[],
    );
    let (ok, stdout, stderr) = worker.finish(Duration::from_secs(120));
    assert!(ok, "{policy}: the worker failed: {stdout}\n{stderr}");
    common::assert_contains(&stdout, &["every URL of the crawl is done"]);
    serve.kill9();
    let order = fetched(&web);
    web.shutdown_blocking();
    order
}

/// How two orders of the same pages differ: the first position where they part, how many
/// pages are at another position in one than in the other, and the largest such shift.
#[derive(Debug, PartialEq, Eq)]
struct Displacement {
    first: Option<usize>,
    moved: usize,
    max_shift: usize,
}

fn displacement(a: &[u32], b: &[u32]) -> Displacement {
    let mut at = vec![usize::MAX; PAGES as usize];
    for (i, &v) in b.iter().enumerate() {
        at[v as usize] = i;
    }
    let shifts: Vec<usize> = a
        .iter()
        .enumerate()
        .map(|(i, &v)| i.abs_diff(at[v as usize]))
        .collect();
    Displacement {
        first: shifts.iter().position(|&s| s != 0),
        moved: shifts.iter().filter(|&&s| s != 0).count(),
        max_shift: shifts.into_iter().max().unwrap_or(0),
    }
}

/// The two orders around position `at`, for a failure message.
fn around(engine: &[u32], worker: &[u32], at: usize) -> String {
    let window = |o: &[u32]| format!("{:?}", &o[at.saturating_sub(4)..(at + 6).min(o.len())]);
    format!(
        "positions {}..: engine {} / worker {}",
        at.saturating_sub(4),
        window(engine),
        window(worker)
    )
}

/// The policies `crawlrank COMMAND --help` lists for `--policy`, in its parentheses: those
/// before a `;`, and what follows it (`crawl` names there the policies that need `--impact`).
fn listed_policies(command: &[&str]) -> (Vec<String>, String) {
    let mut args = command.to_vec();
    args.push("--help");
    let help = common::ok(&common::crawlrank(Path::new("/nonexistent-cache"), &args));
    // The option's line and the next: a long help puts the description on a line of its own.
    let lines: Vec<&str> = help.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with("--policy"))
        .unwrap_or_else(|| panic!("no --policy in: {help}"));
    let text = lines[at..(at + 2).min(lines.len())].join(" ");
    let list = text.split('(').nth(1).unwrap().split(')').next().unwrap();
    let (plain, rest) = list.split_once(';').unwrap_or((list, ""));
    let names = plain.split(", ").map(str::to_string).collect();
    (names, rest.to_string())
}

/// Exact for every policy the service runs, with the default expected pages and with the
/// web's size: the test asserts that the two orders, read from the web's request log by
/// arrival (robots.txt and sitemaps left out), are equal, and shows where they part if not.
/// Nothing is bounded, because at `--concurrency 1` nothing legitimately differs: the worker
/// holds one URL leased at a time, so each `GetURLs` comes after the service applied the
/// previous page's report (a worker at `--concurrency 2` leases ahead and parts from the
/// engine within the first pages, for every policy); and the service orders with the
/// engine's policy code from the same K, R and rng seed (both default to 100,000 expected
/// pages and seed 0), so the batch policies reorder after the same pages and `random` draws
/// the same numbers. Each crawl also fetches every page once.
#[test]
fn one_worker_fetches_in_the_engines_order_for_every_policy() {
    // Every policy a crawl can run, less those that need a search log's impacts (rw, rw-eg,
    // learned): a service cannot be given a search log and refuses them (checked here), so
    // there is no crawl through the service to compare with. `crawl --impact` covers them
    // against the simulator (crates/crawler/tests/it/e2e.rs).
    let policies: Vec<&str> = PolicyKind::ALL
        .iter()
        .filter(|k| k.available() && !k.needs_impact())
        .map(|k| k.name())
        .collect();
    let (crawl, with_impact) = listed_policies(&["crawl"]);
    assert_eq!(
        crawl, policies,
        "crawl --help: the policies without --impact"
    );
    let (service, _) = listed_policies(&["frontier", "serve"]);
    assert_eq!(
        service, policies,
        "frontier serve --help: the service's policies"
    );
    let dir = tempfile::tempdir().unwrap();
    for kind in PolicyKind::ALL.iter().filter(|k| k.needs_impact()) {
        let state = dir.path().join(format!("refused-{kind}"));
        let out = common::crawlrank(
            &dir.path().join("cache"),
            &common::words(
                "frontier serve --addr 127.0.0.1:0 --state {} --policy {}",
                &[&state, &kind.name()],
            ),
        );
        common::fails(&out, &["needs a search log's impacts"]);
        common::assert_contains(&with_impact, &[kind.name()]);
    }

    // Each policy with the default expected pages and with the web's size; all the crawls at
    // once, each on a web of its own (at concurrency 1 the order is the policy's whatever
    // the timing: the crawls wait mostly on round trips and commits, so running them side by
    // side costs little).
    let runs: Vec<(&str, bool)> = policies
        .iter()
        .flat_map(|&p| [(p, false), (p, true)])
        .collect();
    let orders: Vec<(Vec<u32>, Vec<u32>)> = std::thread::scope(|s| {
        let crawls: Vec<_> = runs
            .iter()
            .map(|&(policy, expected)| {
                let dir = dir.path().join(format!("{policy}-{expected}"));
                s.spawn(move || {
                    let (e, w) = (dir.join("engine"), dir.join("worker"));
                    std::fs::create_dir_all(&e).unwrap();
                    std::fs::create_dir_all(&w).unwrap();
                    let engine = engine_order(policy, expected, &e);
                    (engine, worker_order(policy, expected, &w))
                })
            })
            .collect();
        crawls.into_iter().map(|c| c.join().unwrap()).collect()
    });

    let every_page: Vec<u32> = (0..PAGES).collect();
    let mut parted = Vec::new();
    for (&(policy, expected), (engine, worker)) in runs.iter().zip(&orders) {
        let run = match expected {
            true => format!("{policy} --expected-pages {PAGES}"),
            false => policy.to_string(),
        };
        for (who, order) in [("the engine", engine), ("the worker", worker)] {
            let mut pages = order.clone();
            pages.sort_unstable();
            assert_eq!(pages, every_page, "{run}: {who} fetches every page once");
        }
        let d = displacement(engine, worker);
        if let Some(at) = d.first {
            parted.push(format!("{run}: {d:?}, {}", around(engine, worker, at)));
        }
    }
    assert!(
        parted.is_empty(),
        "the worker's order parts from the engine's:\n{}",
        parted.join("\n")
    );
}
