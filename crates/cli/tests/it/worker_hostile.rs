//! A worker on a hostile web, as a user runs it: `crawlrank frontier serve` with its default
//! options and one `crawlrank crawl --frontier` worker on the test web's traps. The service
//! admits the links the worker reports within the crawler's bounds (crawlrank-crawl-state),
//! so a redirect chain across a thousand hosts is cut where `crawlrank crawl` cuts it, at
//! `--max-redirects` (20 by default), and a state keeps the bounds it was created with.

use crate::common;

use common::serve::Serve;
use common::workers::Worker;
use crawlrank_graph::Csr;
use crawlrank_testweb::{TestWeb, TestWebConfig};
use std::sync::Arc;
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
        log.iter()
            .filter(|e| e.path != "/robots.txt" && f(e))
            .count()
    };
    // The seed and its 20 redirects, across hosts and on one host, as `crawl` follows them.
    assert_eq!(pages(&|e| e.host.starts_with("hop")), 21, "{stdout}");
    assert!(
        !log.iter().any(|e| e.host == hop_host(21)),
        "hop21 contacted"
    );
    assert_eq!(pages(&|e| e.path.starts_with("/chain/")), 21, "{stdout}");
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
