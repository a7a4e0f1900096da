//! Crawl workers (`crawlrank crawl --frontier`) as processes against a test web, and what the
//! tests that run them read back from the web's request log: written once for the worker
//! tests and the cluster's.

use crawlrank_graph::Csr;
use crawlrank_testweb::{LogEntry, TestWeb, TestWebConfig};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A worker process, SIGKILLed when dropped (so a failing test leaves none behind).
pub struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Worker {
    /// Starts a worker crawling `web` through the frontier service at `frontier` from the
    /// seeds file `seeds`, its state in `state`: two requests at a time, no delay, a 5 s
    /// timeout, and `options` (its lease, `--idle-exit`, …).
    pub fn start(
        frontier: &str,
        web: &TestWeb,
        seeds: &Path,
        state: &Path,
        options: &[&str],
    ) -> Worker {
        Self::start_with_concurrency(frontier, web, seeds, state, 2, options)
    }

    /// [`Worker::start`] with `concurrency` requests at a time (a worker at 1 leases one URL
    /// at a time and follows the service's order exactly).
    pub fn start_with_concurrency(
        frontier: &str,
        web: &TestWeb,
        seeds: &Path,
        state: &Path,
        concurrency: usize,
        options: &[&str],
    ) -> Worker {
        let proxy = web.proxy_url();
        let mut all = vec!["--proxy", proxy.as_str()];
        all.extend_from_slice(options);
        Self::spawn(frontier, seeds, state, concurrency, &all)
    }

    /// [`Worker::start`] without the test web as a proxy: the worker resolves and connects
    /// to the seeds' hosts itself (servers of a test's own on loopback).
    pub fn direct(frontier: &str, seeds: &Path, state: &Path, options: &[&str]) -> Worker {
        Self::spawn(frontier, seeds, state, 2, options)
    }

    /// A worker process: no delay, `concurrency` requests at a time, a 5 s timeout, and
    /// `options`.
    fn spawn(
        frontier: &str,
        seeds: &Path,
        state: &Path,
        concurrency: usize,
        options: &[&str],
    ) -> Worker {
        let concurrency = concurrency.to_string();
        let child = Command::new(env!("CARGO_BIN_EXE_crawlrank"))
            .args(["crawl", "--frontier", frontier, "--seeds"])
            .arg(seeds)
            .arg("--state")
            .arg(state)
            .args(["--delay", "0", "--timeout", "5"])
            .args(["--concurrency", &concurrency])
            .args(options)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start a worker");
        Worker(child)
    }

    /// Waits (at most `within`) for the worker to end; returns whether it succeeded, its
    /// stdout and its stderr.
    pub fn finish(mut self, within: Duration) -> (bool, String, String) {
        let deadline = Instant::now() + within;
        while self.0.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "the worker did not end within {within:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let child = std::mem::replace(
            &mut self.0,
            Command::new("true").spawn().expect("cannot run true"),
        );
        let out = child.wait_with_output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// A ring of `pages` pages with chords (`crawlrank_testkit::ring_with_chords`) served on
/// loopback with `config`; the graph and its web.
pub fn ring_web(pages: u32, chords: &[(u32, u32)], config: TestWebConfig) -> (Csr, TestWeb) {
    let g = crawlrank_testkit::ring_with_chords(pages, chords).csr();
    let web = TestWeb::start_blocking(
        Arc::new(g.clone()),
        None,
        "127.0.0.1:0".parse().unwrap(),
        config,
    )
    .unwrap();
    (g, web)
}

/// A seeds file in `dir` naming `web`'s first page.
pub fn seeds_file(dir: &Path, web: &TestWeb) -> PathBuf {
    let seeds = dir.join("seeds.txt");
    std::fs::write(&seeds, web.seed_urls(&[0]).join("\n")).unwrap();
    seeds
}

/// How often each page of the test web was fetched, from its request log.
pub fn fetch_counts(log: &[LogEntry]) -> HashMap<u32, usize> {
    let mut fetches: HashMap<u32, usize> = HashMap::new();
    for e in log {
        if let Some(v) = e.node {
            *fetches.entry(v).or_default() += 1;
        }
    }
    fetches
}

/// The pages of `fetches` fetched more than once.
pub fn fetched_twice(fetches: &HashMap<u32, usize>) -> Vec<u32> {
    fetches
        .iter()
        .filter(|(_, &n)| n > 1)
        .map(|(&v, _)| v)
        .collect()
}

/// Waits (at most `within`) until `n` distinct pages of `web` were fetched.
pub fn wait_fetched(web: &TestWeb, n: usize, within: Duration) {
    let deadline = Instant::now() + within;
    while fetch_counts(&web.log()).len() < n {
        assert!(
            Instant::now() < deadline,
            "{n} pages not fetched within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
