//! A frontier cluster as a user runs it: a real `nats-server` with JetStream on loopback,
//! three `crawlrank frontier serve --nats … --nodes …` processes and `crawlrank crawl
//! --frontier` workers as processes, crawling the local test web (hundreds of pages on
//! dozens of hosts). One node is killed with SIGKILL mid-crawl and restarted on its state;
//! then the NATS server is killed and restarted on its store directory: the crawl completes,
//! OPIC's cash over the nodes still sums to 1,
//! every page is fetched (nothing discovered is lost), never two requests at once to one
//! host, and a page is fetched twice only if it was in flight at a kill. A node is also
//! stopped at the two instants a signal would hit only by chance (`CRAWLRANK_FAILPOINT`):
//! between a report's commit and the publish of what it hands on, and between JetStream's
//! ack and the outbox's delete, past JetStream's duplicate window. `crawlrank dashboard
//! --frontier` over two nodes shows what `crawlrank status --frontier` counts over them and
//! the top of the frontier merged from both. Skipped with a message without `nats-server` (a
//! failure on CI).

use crate::common;

use common::cluster::{finish_all, stdout_of, Cluster};
use common::serve::Serve;
use common::workers::{self, Worker};
use crawlrank_testkit::free_port;
use crawlrank_testweb::{max_in_flight_per_host, TestWeb, TestWebConfig};
use std::process::Command;
use std::time::{Duration, Instant};

/// A worker of the cluster's crawl through node `i`, its state in `w{i}`.
fn worker(cluster: &Cluster, i: usize) -> Worker {
    let options = ["--lease", "3", "--idle-exit", "30"];
    cluster.worker(i, &format!("w{i}"), &options)
}

/// Waits (at most 90 s) until `n` distinct pages of `web` were fetched.
fn wait_fetched(web: &TestWeb, n: usize) {
    workers::wait_fetched(web, n, Duration::from_secs(90));
}

#[test]
fn a_cluster_crawl_survives_a_killed_node_and_a_killed_nats_server() {
    let pages = 600;
    let web = TestWebConfig {
        latency: Duration::from_millis(10),
        pages_per_host: 20,
        ..TestWebConfig::default()
    };
    let Some(mut cluster) = Cluster::start(3, pages, web) else {
        return;
    };
    let mut nodes: Vec<Option<Serve>> = (0..3).map(|i| Some(cluster.node(i, &[]))).collect();
    let workers: Vec<Worker> = (0..3).map(|i| worker(&cluster, i)).collect();

    // A node dies mid-crawl and comes back on its state; the workers (each leasing from
    // every node) wait for it (--frontier-retry) and go on.
    wait_fetched(&cluster.web, pages as usize / 4);
    let killed_at = Instant::now();
    nodes[1].take().unwrap().kill9();
    std::thread::sleep(Duration::from_secs(1));
    nodes[1] = Some(cluster.node(1, &[]));

    // The NATS server dies and comes back on its store.
    wait_fetched(&cluster.web, pages as usize / 2);
    cluster.nats.restart();

    let outs = finish_all(workers);
    assert!(
        outs.iter()
            .any(|o| o.contains("every URL of the crawl is done")),
        "{outs:?}"
    );
    let log = cluster.web.log();
    let fetches = workers::fetch_counts(&log);
    assert_eq!(
        fetches.len(),
        cluster.graph.num_nodes(),
        "every page was fetched"
    );
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
    let said = stdout_of(&["status", "--frontier", &cluster.url(0)]);
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
    cluster.web.shutdown_blocking();
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

/// OPIC's total cash over the nodes and the part in flight, as `crawlrank status --frontier`
/// prints them (asking `node`).
fn status_cash(node: &str) -> (f64, f64, String) {
    let said = stdout_of(&["status", "--frontier", &format!("http://{node}")]);
    let line = said
        .lines()
        .find_map(|l| l.strip_prefix("opic cash: "))
        .unwrap_or_else(|| panic!("no OPIC cash in {said}"));
    let numbers: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 2, "{said}");
    (numbers[0], numbers[1], said)
}

/// Sets the duplicate window of the cluster's stream of handed-on items to `window`, so that
/// a test need not wait out JetStream's default (2 minutes) to send a copy past it.
fn set_duplicate_window(nats: &str, window: Duration) {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        tokio::time::timeout(Duration::from_secs(10), async {
            let js = async_nats::jetstream::new(async_nats::connect(nats).await.unwrap());
            let mut stream = js.get_stream("CRAWLRANK_FRONTIER").await.unwrap();
            let mut config = stream.info().await.unwrap().config.clone();
            config.duplicate_window = window;
            js.update_stream(config).await.unwrap();
        })
        .await
        .expect("updating the stream took more than 10 s")
    });
}

#[test]
fn a_node_crashing_between_commit_and_publish_or_ack_and_delete_hands_on_exactly_once() {
    use std::os::unix::process::ExitStatusExt;
    let web = TestWebConfig {
        latency: Duration::from_millis(5),
        pages_per_host: 10,
        ..TestWebConfig::default()
    };
    let Some(cluster) = Cluster::start(2, 200, web) else {
        return;
    };
    let crash_at = |point| [("CRAWLRANK_FAILPOINT", point)];
    // Node 0 stops at its first commit that hands an out-link on to node 1.
    let crashing = cluster.node(0, &crash_at("after-outbox-commit"));
    let other = cluster.node(1, &[]);
    let workers: Vec<Worker> = (0..2).map(|i| worker(&cluster, i)).collect();
    let status = crashing.wait_exit(Duration::from_secs(60));
    assert_eq!(status.signal(), Some(6), "not the crash point: {status:?}");

    // Back on its state, it publishes the committed item first; JetStream acknowledges it and
    // the node stops before it deletes the item from its outbox.
    let crashing = cluster.node(0, &crash_at("after-outbox-ack"));
    let status = crashing.wait_exit(Duration::from_secs(60));
    assert_eq!(status.signal(), Some(6), "not the crash point: {status:?}");
    // Back once the copy it will send again is past JetStream's duplicate window: only the
    // receiving node can tell it is a copy.
    set_duplicate_window(&cluster.nats.url(), Duration::from_millis(500));
    std::thread::sleep(Duration::from_millis(1500));
    let back = cluster.node(0, &[]);

    finish_all(workers);
    let fetches = workers::fetch_counts(&cluster.web.log());
    let pages = cluster.graph.num_nodes();
    assert_eq!(fetches.len(), pages, "every page was fetched");
    // What the crawl handed on arrives once: the total is 1, and the cash in flight (sent
    // less received) comes down to 0, never below (a copy applied twice is cash received
    // twice).
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let (total, in_flight, said) = status_cash(&cluster.addrs[1]);
        assert!(
            (total - 1.0).abs() < 1e-9,
            "OPIC's cash sums to {total}: {said}"
        );
        assert!(
            in_flight > -1e-12,
            "more cash was received than sent (a copy applied twice): {said}"
        );
        if in_flight.abs() < 1e-12 {
            assert!(said.contains("(2 nodes)"), "{said}");
            break;
        }
        assert!(
            Instant::now() < until,
            "{in_flight} of cash stays in flight: {said}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    back.kill9();
    other.kill9();
    cluster.web.shutdown_blocking();
}

/// The `total` row of `crawlrank status --frontier` (asking `node`): its six numbers.
fn status_total(node: &str) -> Vec<u64> {
    let (_, _, said) = status_cash(node);
    said.lines()
        .find_map(|l| l.strip_prefix("total\t"))
        .unwrap_or_else(|| panic!("no total in {said}"))
        .split('\t')
        .map(|v| v.parse().unwrap())
        .collect()
}

#[test]
fn the_dashboard_of_a_cluster_counts_every_node_and_merges_their_rankings() {
    use crate::dashboard::{api_status, start};
    let web = TestWebConfig {
        pages_per_host: 10,
        ..TestWebConfig::default()
    };
    let Some(cluster) = Cluster::start(2, 200, web) else {
        return;
    };
    let addrs = &cluster.addrs;
    let nodes: Vec<Serve> = (0..2).map(|i| cluster.node(i, &[])).collect();
    // Part of the crawl, so that both nodes hold queued pages.
    let w = cluster.worker(0, "w", &["--max-pages", "60", "--idle-exit", "10"]);
    let (ok, stdout, stderr) = w.finish(Duration::from_secs(60));
    assert!(ok, "the worker failed: {stdout}{stderr}");
    // Settled: what the pages handed on has reached its nodes.
    let until = Instant::now() + Duration::from_secs(20);
    while status_cash(&addrs[0]).1.abs() > 1e-12 {
        assert!(Instant::now() < until, "cash stays in flight");
        std::thread::sleep(Duration::from_millis(100));
    }

    let env = common::Env::new();
    let frontier = cluster.url(1);
    let args = [
        "dashboard",
        "--frontier",
        &frontier,
        "--addr",
        "127.0.0.1:0",
        "--refresh",
        "1",
    ];
    let (_dashboard, at) = start(&env, &args, "dashboard: ", false);
    let doc = api_status(&at);
    let total = status_total(&addrs[0]);
    let latest = &doc["latest"];
    let [left, in_process, fetched, ..] = total[..] else {
        panic!("{total:?}")
    };
    assert!(left > 0 && fetched >= 60, "{total:?}");
    assert_eq!(latest["frontier"], left, "{doc}");
    assert_eq!(latest["in_flight"], in_process, "{doc}");
    assert_eq!(latest["pages_total"], fetched, "{doc}");
    let counters: Vec<(String, u64)> = doc["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["value"].as_u64().unwrap(),
            )
        })
        .collect();
    let names = [
        "urls_left",
        "in_process",
        "fetched",
        "completed",
        "queues",
        "dead_letters",
    ];
    let want: Vec<(String, u64)> = names
        .iter()
        .map(|n| n.to_string())
        .zip(total.iter().copied())
        .collect();
    assert_eq!(counters, want, "{doc}");
    assert!(
        doc["note"].as_str().unwrap().starts_with("2 nodes"),
        "{doc}"
    );
    // The top of the frontier is `crawlrank frontier ranking`'s, merged over both nodes: the
    // same URLs, best first, from both.
    let ranking: Vec<String> =
        stdout_of(&["frontier", "ranking", "--addr", &frontier, "--limit", "20"])
            .lines()
            .skip(1)
            .map(|l| l.split('\t').nth(1).unwrap().to_string())
            .collect();
    let top: Vec<String> = doc["frontier_top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["url"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(top, ranking, "{doc}");
    let owner = crawlrank_frontier_service::Nodes::new(addrs, &addrs[0]).unwrap();
    let owners: std::collections::BTreeSet<usize> = top
        .iter()
        .map(|u| owner.owner_of_url("", "", u).unwrap())
        .collect();
    assert_eq!(owners.len(), 2, "the top comes from one node only: {top:?}");
    for n in nodes {
        n.kill9();
    }
    cluster.web.shutdown_blocking();
}
