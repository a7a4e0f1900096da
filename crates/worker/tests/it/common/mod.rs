//! Helpers shared by the worker's tests: a frontier service on a fresh state directory on
//! 127.0.0.1:0 (on a runtime of its own, since the worker runs its own), the local test web,
//! a worker's configuration against both, and two workers run at once.

#![allow(dead_code)]

use crawlrank_frontier_service::{
    policy_spec, spawn, FrontierService, RunningServer, ServiceConfig,
};
use crawlrank_graph::Csr;
use crawlrank_testweb::{TestWeb, TestWebConfig};
use crawlrank_worker::{WorkerConfig, WorkerReport};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

pub fn start_web(g: &Csr) -> TestWeb {
    start_web_with(g, TestWebConfig::default())
}

pub fn start_web_with(g: &Csr, cfg: TestWebConfig) -> TestWeb {
    TestWeb::start_blocking(
        Arc::new(g.clone()),
        None,
        "127.0.0.1:0".parse().unwrap(),
        cfg,
    )
    .unwrap()
}

/// A running frontier service, its state directory and the runtime serving it.
pub struct Service {
    pub server: RunningServer,
    rt: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
}

/// A frontier service for a new state, ordered by `policy` for a crawl expected to reach
/// `expected` pages.
pub fn start_service(policy: &str, expected: u64) -> Service {
    start_service_with(policy, expected, None)
}

/// [`start_service`] with a group-commit window other than the service's default (a longer
/// one makes every changing call, `GetURLs` included, a slow round trip).
pub fn start_service_with(policy: &str, expected: u64, commit: Option<Duration>) -> Service {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(async {
        let mut config = ServiceConfig {
            policy: Some(policy_spec(policy, Some(expected), None, 0).unwrap()),
            ..ServiceConfig::new(dir.path())
        };
        if let Some(commit) = commit {
            config.commit_interval = commit;
        }
        let service = FrontierService::open(config).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        spawn(service, listener).unwrap()
    });
    Service {
        server,
        rt,
        _dir: dir,
    }
}

impl Service {
    /// Stops the service, failing the test if it does not stop cleanly.
    pub fn shutdown(self) {
        self.rt.block_on(self.server.shutdown()).unwrap();
    }
}

/// Runs two workers at once on the same stop flag; returns their reports.
pub fn run_two(first: &WorkerConfig, second: &WorkerConfig) -> (WorkerReport, WorkerReport) {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let a = s.spawn(|| crawlrank_worker::run(first, &stop, &mut |_| {}).unwrap());
        let b = s.spawn(|| crawlrank_worker::run(second, &stop, &mut |_| {}).unwrap());
        (a.join().unwrap(), b.join().unwrap())
    })
}

/// A worker against `server`, through `web`'s proxy: one fetch at a time, no delay, no WARC.
pub fn worker_config(web: &TestWeb, server: &RunningServer, seeds: Vec<String>) -> WorkerConfig {
    let mut c = WorkerConfig {
        frontier: format!("http://{}", server.addr()),
        seeds,
        concurrency: 1,
        delay_secs: Some(0),
        idle_exit: Duration::from_secs(10),
        retry_backoff: Duration::from_millis(20),
        ..WorkerConfig::default()
    };
    c.fetch.proxy = Some(web.proxy_url());
    c.fetch.timeout = Duration::from_secs(5);
    c.fetch.warc = false;
    c
}
