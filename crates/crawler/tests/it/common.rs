//! Helpers shared by the crawler's test modules: the test web on loopback, the ring graphs
//! the long crawls run on, the configuration their crawls start from, and a test of this
//! binary run in a child process (to be killed).

use crawlrank_crawler::{CrawlConfig, PolicySettings, Resources};
use crawlrank_graph::Csr;
use crawlrank_testweb::{TestWeb, TestWebConfig};
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

/// The test web serving `g` on 127.0.0.1 (a free port), configured by `cfg`.
pub fn start_web(g: Csr, cfg: TestWebConfig) -> TestWeb {
    let loopback = "127.0.0.1:0".parse().unwrap();
    TestWeb::start_blocking(Arc::new(g), None, loopback, cfg).unwrap()
}

/// A crawl of `seeds` into `state` with `policy`, `concurrency` requests at a time and a 5 s
/// fetch timeout (a stalled answer fails the test instead of hanging it); each test sets the
/// rest (the proxy, the politeness) for what it checks.
pub fn crawl_config(
    state: &Path,
    seeds: Vec<String>,
    policy: PolicySettings,
    concurrency: usize,
) -> CrawlConfig {
    let mut c = CrawlConfig {
        state_dir: state.to_path_buf(),
        seeds,
        policy,
        resources: Resources {
            concurrency,
            ..Resources::default()
        },
        ..CrawlConfig::default()
    };
    c.fetch.timeout = std::time::Duration::from_secs(5);
    c
}

/// A web of `n` pages that all hang together: a ring (so every page is reachable from 0)
/// plus `extra` pseudo-random links per page from a generator seeded with `seed`.
pub fn ring_graph(n: u32, extra: usize, seed: u64) -> Csr {
    let mut rng = crawlrank_rng::XorShift64::new(seed);
    let mut arcs = Vec::new();
    for v in 0..n {
        arcs.push((v, (v + 1) % n));
        for _ in 0..extra {
            arcs.push((v, (rng.next_u64() % u64::from(n)) as u32));
        }
    }
    arcs.sort_unstable();
    arcs.dedup();
    Csr::from_arcs(n as usize, &arcs)
}

/// Runs the test `test` of this test binary alone in a child process, which finds its task in
/// the environment variable `var` (`value`); its standard output goes to `stdout`.
pub fn spawn_test(test: &str, var: &str, value: impl AsRef<OsStr>, stdout: Stdio) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(var, value)
        .stdout(stdout)
        .spawn()
        .unwrap()
}
