//! A frontier cluster for the cluster tests: a `nats-server` with JetStream on loopback, the
//! test web the cluster crawls and `crawlrank frontier serve --nats … --nodes …` nodes on
//! free ports, all with their state in one scratch folder; written once so that each test
//! says only what it does to the cluster.

use super::serve::Serve;
use super::workers::{self, Worker};
use crawlrank_graph::Csr;
use crawlrank_testkit::{free_port, NatsServer};
use crawlrank_testweb::{TestWeb, TestWebConfig};
use std::path::PathBuf;
use std::process::Command;

/// The cluster's NATS server, test web and node addresses (the nodes themselves are started
/// by [`Cluster::node`], so that a test can kill and restart them).
pub struct Cluster {
    /// The scratch folder: the NATS store, the nodes' and the workers' states, the seeds.
    pub dir: tempfile::TempDir,
    /// The NATS server the nodes hand items on through.
    pub nats: NatsServer,
    /// The graph the test web serves.
    pub graph: Csr,
    /// The test web the cluster crawls.
    pub web: TestWeb,
    /// Each node's address, `127.0.0.1:PORT`.
    pub addrs: Vec<String>,
    /// The seeds file of the crawl (page 0).
    pub seeds: PathBuf,
    /// The pages of the test web, as `--expected-pages` says it.
    expected: String,
}

impl Cluster {
    /// Starts the NATS server and a test web of `pages` pages (a ring with chords, as
    /// [`workers::ring_web`] makes, configured by `web`), and picks `nodes` free ports; `None`
    /// (after a message) when `nats-server` is not installed.
    pub fn start(nodes: usize, pages: u32, web: TestWebConfig) -> Option<Cluster> {
        let dir = tempfile::tempdir().unwrap();
        let nats = NatsServer::start(&dir.path().join("nats"))?;
        let (graph, web) = workers::ring_web(pages, &[(2, 0), (3, 1), (7, 5)], web);
        let addrs = (0..nodes)
            .map(|_| format!("127.0.0.1:{}", free_port()))
            .collect();
        let seeds = workers::seeds_file(dir.path(), &web);
        Some(Cluster {
            dir,
            nats,
            graph,
            web,
            addrs,
            seeds,
            expected: pages.to_string(),
        })
    }

    /// Starts node `i` (OPIC, its state in `node{i}`) with variables `env` added to its
    /// environment (a crash point: `CRAWLRANK_FAILPOINT`).
    pub fn node(&self, i: usize, env: &[(&str, &str)]) -> Serve {
        let (nats, list) = (self.nats.url(), self.addrs.join(","));
        Serve::start_at_with_env(
            &self.dir.path().join(format!("node{i}")),
            &self.addrs[i],
            &[
                "--nats",
                &nats,
                "--nodes",
                &list,
                "--policy",
                "opic",
                "--expected-pages",
                &self.expected,
            ],
            env,
        )
    }

    /// The URL of node `i`'s frontier service, as workers and commands are given it.
    pub fn url(&self, i: usize) -> String {
        format!("http://{}", self.addrs[i])
    }

    /// Starts a worker crawling through node `i`, its state in `name`, with `options`.
    pub fn worker(&self, i: usize, name: &str, options: &[&str]) -> Worker {
        Worker::start(
            &self.url(i),
            &self.web,
            &self.seeds,
            &self.dir.path().join(name),
            options,
        )
    }
}

/// Waits for every worker of `workers` to end (at most 120 s each), checks that each
/// succeeded, and returns what each printed (stdout, then stderr).
pub fn finish_all(workers: Vec<Worker>) -> Vec<String> {
    workers
        .into_iter()
        .map(|w| {
            let (ok, stdout, stderr) = w.finish(std::time::Duration::from_secs(120));
            let out = format!("{stdout}\n{stderr}");
            assert!(ok, "a worker failed: {out}");
            out
        })
        .collect()
}

/// Runs `crawlrank ARGS`, checks that it succeeded, and returns its standard output.
pub fn stdout_of(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .args(args)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "crawlrank {args:?}: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}
