//! A frontier cluster as a user runs it: a real `nats-server` with JetStream on loopback,
//! three `crawlrank frontier serve --nats … --nodes …` processes and `crawlrank crawl
//! --frontier` workers as processes, crawling the local test web (hundreds of pages on
//! dozens of hosts). One node is killed with SIGKILL mid-crawl and restarted on its state;
//! then the NATS server is killed and restarted on its store directory: the crawl completes,
//! OPIC's cash over the nodes still sums to 1,
//! every page is fetched (nothing discovered is lost), never two requests at once to one
//! host, and a page is fetched twice only if it was in flight at a kill. Skipped with a
//! message without `nats-server` (a failure on CI).

use crate::common;

use common::serve::Serve;
use common::workers::{self, Worker};
use crawlrank_testkit::{free_port, NatsServer};
use crawlrank_testweb::{max_in_flight_per_host, TestWeb, TestWebConfig};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A worker of the cluster's crawl through the node at `frontier`.
fn worker(frontier: &str, web: &TestWeb, seeds: &Path, state: &Path) -> Worker {
    Worker::start(
        frontier,
        web,
        seeds,
        state,
        &["--lease", "3", "--idle-exit", "30"],
    )
}

/// Waits (at most 90 s) until `n` distinct pages of `web` were fetched.
fn wait_fetched(web: &TestWeb, n: usize) {
    workers::wait_fetched(web, n, Duration::from_secs(90));
}

#[test]
fn a_cluster_crawl_survives_a_killed_node_and_a_killed_nats_server() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut nats) = NatsServer::start(&dir.path().join("nats")) else {
        return;
    };
    let pages = 600;
    let (g, web) = workers::ring_web(
        pages,
        &[(2, 0), (3, 1), (7, 5)],
        TestWebConfig {
            latency: Duration::from_millis(10),
            pages_per_host: 20,
            ..TestWebConfig::default()
        },
    );
    let addrs: Vec<String> = (0..3)
        .map(|_| format!("127.0.0.1:{}", free_port()))
        .collect();
    let list = addrs.join(",");
    let nats_url = nats.url();
    let node = |i: usize| {
        Serve::start_at(
            &dir.path().join(format!("node{i}")),
            &addrs[i],
            &[
                "--nats",
                &nats_url,
                "--nodes",
                &list,
                "--policy",
                "opic",
                "--expected-pages",
                "600",
            ],
        )
    };
    let mut nodes: Vec<Option<Serve>> = (0..3).map(|i| Some(node(i))).collect();
    let seeds = workers::seeds_file(dir.path(), &web);
    let start = |i: usize, name: &str| {
        worker(
            &format!("http://{}", addrs[i]),
            &web,
            &seeds,
            &dir.path().join(name),
        )
    };
    let workers: Vec<Worker> = (0..3).map(|i| start(i, &format!("w{i}"))).collect();

    // A node dies mid-crawl and comes back on its state; the workers (each leasing from
    // every node) wait for it (--frontier-retry) and go on.
    wait_fetched(&web, pages as usize / 4);
    let killed_at = Instant::now();
    nodes[1].take().unwrap().kill9();
    std::thread::sleep(Duration::from_secs(1));
    nodes[1] = Some(node(1));

    // The NATS server dies and comes back on its store.
    wait_fetched(&web, pages as usize / 2);
    nats.restart();

    let mut outs = Vec::new();
    for w in workers {
        let (ok, stdout, stderr) = w.finish(Duration::from_secs(120));
        let out = format!("{stdout}\n{stderr}");
        assert!(ok, "a worker failed: {out}");
        outs.push(out);
    }
    assert!(
        outs.iter()
            .any(|o| o.contains("every URL of the crawl is done")),
        "{outs:?}"
    );
    let log = web.log();
    let fetches = workers::fetch_counts(&log);
    assert_eq!(fetches.len(), g.num_nodes(), "every page was fetched");
    // Only requests in flight when the node was killed, whose reports waited out its restart
    // past their leases, may be repeated.
    let twice = workers::fetched_twice(&fetches);
    assert!(
        twice.len() <= 2,
        "fetched more than once: {twice:?} ({killed_at:?})"
    );
    assert!(
        max_in_flight_per_host(&log).values().all(|&m| m <= 1),
        "one request at a time per host across the workers"
    );
    // The status command counts every node: nothing left, every page fetched once by the
    // cluster (a page fetched twice is reported twice to the same node, counted once).
    let out = Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .args(["status", "--frontier", &format!("http://{}", addrs[0])])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("(3 nodes)"), "{said}");
    let total: Vec<&str> = said
        .lines()
        .find(|l| l.starts_with("total\t"))
        .unwrap_or_default()
        .split('\t')
        .collect();
    assert_eq!(
        total.get(1..4),
        Some(&["0", "0", &pages.to_string()][..]),
        "{said}"
    );
    // OPIC's cash over the nodes is still 1, through the killed node and the killed NATS
    // server (the cash a page hands to another node's links leaves it in the commit that
    // reports it, and arrives there exactly once).
    let cash: f64 = said
        .lines()
        .find_map(|l| l.strip_prefix("opic cash: "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no OPIC cash in {said}"));
    assert!(
        (cash - 1.0).abs() < 1e-9,
        "OPIC's cash sums to {cash}: {said}"
    );
    for n in nodes.into_iter().flatten() {
        n.kill9();
    }
    web.shutdown_blocking();
}

#[test]
fn cluster_serve_refuses_bad_input_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let a = format!("127.0.0.1:{}", free_port());
    let b = format!("127.0.0.1:{}", free_port());
    let state = dir.path().join("s");
    let serve = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_crawlrank"))
            .args(["frontier", "serve", "--state"])
            .arg(&state)
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // --addr not among --nodes.
    let nodes = format!("{b},127.0.0.1:1");
    let err = serve(&[
        "--addr",
        &a,
        "--nats",
        "nats://127.0.0.1:1",
        "--nodes",
        &nodes,
    ]);
    assert!(
        err.contains(&a) && err.contains("not in the node list"),
        "{err}"
    );
    // --nats without --nodes.
    let err = serve(&["--addr", &a, "--nats", "nats://127.0.0.1:1"]);
    assert!(err.contains("--nodes"), "{err}");
    // An unreachable NATS server: a clear error within seconds.
    let started = Instant::now();
    let port = free_port();
    let nodes = format!("{a},{b}");
    let url = format!("nats://127.0.0.1:{port}");
    let err = serve(&["--addr", &a, "--nats", &url, "--nodes", &nodes]);
    assert!(err.contains("cannot reach the NATS server"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
}
