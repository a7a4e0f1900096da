//! `crawlrank frontier serve` as a process: killed with SIGKILL and restarted on the same
//! state, it has lost nothing it answered — URLs, delay, block, crawl limit, active flag and
//! leases — and the leases still run on the wall clock (a leased URL is not served again
//! before its `delay_requestable` ends, and is after); with a group-commit window, every
//! `PutURLs` item acknowledged before a SIGKILL is there after the restart. SIGTERM stops
//! it cleanly (exit status 0) and a restart has what it held. Also `crawlrank frontier
//! ranking` against the process. Loopback only; every wait is bounded.

use crawlrank_urlfrontier::proto::{
    get_params, url_item, Active, CountUrlParams, CrawlLimitParams, DiscoveredUrlItem, GetParams,
    Local, Pagination, UrlInfo, UrlItem, UrlStatusRequest,
};
use crawlrank_urlfrontier::FrontierClient;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::common;

use common::serve::{Client, Serve};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn discovered(url: &str) -> UrlItem {
    UrlItem {
        item: Some(url_item::Item::Discovered(DiscoveredUrlItem {
            info: Some(UrlInfo {
                url: url.to_string(),
                ..Default::default()
            }),
        })),
        ..Default::default()
    }
}

async fn put(client: &mut Client, urls: &[&str]) {
    let items: Vec<UrlItem> = urls.iter().map(|u| discovered(u)).collect();
    let mut acks = client
        .put_ur_ls(tokio_stream::iter(items))
        .await
        .unwrap()
        .into_inner();
    let mut n = 0;
    while let Some(ack) = acks.message().await.unwrap() {
        assert_eq!(ack.status, 0, "{ack:?}");
        n += 1;
    }
    assert_eq!(n, urls.len());
}

/// A `bfs` service on a fresh state folder, `DIR/state`, holding the discovered URLs `A1` and
/// `B1`; returns it with `DIR` and the runtime its clients run on.
fn serve_a1_b1() -> (tempfile::TempDir, tokio::runtime::Runtime, Serve) {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let serve = Serve::start(&dir.path().join("state"), &["--policy", "bfs"]);
    rt.block_on(async {
        let mut c = serve.client().await;
        put(&mut c, &[A1, B1]).await;
    });
    (dir, rt, serve)
}

fn params(key: &str, max_per_queue: u32, lease: u32) -> GetParams {
    GetParams {
        key: key.to_string(),
        max_urls_per_queue: max_per_queue,
        delay_requestable: lease,
        item: Some(get_params::Item::CrawlId(String::new())),
        ..Default::default()
    }
}

async fn get(client: &mut Client, params: GetParams) -> Vec<String> {
    let mut stream = client.get_ur_ls(params).await.unwrap().into_inner();
    let mut out = Vec::new();
    while let Some(info) = stream.message().await.unwrap() {
        out.push(info.url);
    }
    out
}

/// The URLs the service knows, in every crawl.
async fn count(client: &mut Client) -> u64 {
    client
        .count_ur_ls(CountUrlParams::default())
        .await
        .unwrap()
        .into_inner()
        .value
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

const A1: &str = "http://a.example/1";
const A2: &str = "http://a.example/2";
const A3: &str = "http://a.example/3";
const B1: &str = "http://b.example/1";
const C1: &str = "http://c.example/1";
const D1: &str = "http://d.example/1";
/// The lease of the first GetURLs, in seconds.
const LEASE: u32 = 8;

/// SIGTERM (what a service manager or `kill` sends) stops the service as Ctrl-C does: the
/// process ends with success, its store closed, and a new one serves what it held.
#[test]
fn sigterm_stops_the_service_cleanly_and_a_restart_has_its_urls() {
    let (dir, rt, serve) = serve_a1_b1();
    common::kill("-TERM", serve.child.id());
    let status = serve.wait_exit(Duration::from_secs(10));
    assert!(
        status.success(),
        "SIGTERM did not stop the service cleanly: {status:?}"
    );
    let serve = Serve::start(&dir.path().join("state"), &["--policy", "bfs"]);
    rt.block_on(async {
        let mut c = serve.client().await;
        assert_eq!(count(&mut c).await, 2);
    });
}

#[test]
fn a_killed_service_restarts_with_everything_it_answered() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let rt = runtime();
    let serve = Serve::start(&state, &["--policy", "bfs"]);
    let leased_at = rt.block_on(async {
        let mut c = serve.client().await;
        put(&mut c, &[A1, A2, A3, B1, C1]).await;
        let leased_at = SystemTime::now();
        // BFS: discovery order, one per queue, leased for LEASE s.
        assert_eq!(get(&mut c, params("", 1, LEASE)).await, vec![A1, B1, C1]);
        // A delay and a block set as the workers set them.
        let mut worker = FrontierClient::connect(&serve.addr, "", false)
            .await
            .unwrap();
        worker.set_delay("b.example", 3600).await.unwrap();
        let until = now_secs() + 3600;
        worker.block_queue_until("c.example", until).await.unwrap();
        c.set_crawl_limit(CrawlLimitParams {
            key: "a.example".into(),
            limit: 2,
            ..Default::default()
        })
        .await
        .unwrap();
        put(&mut c, &[D1]).await;
        c.set_active(Active {
            state: false,
            local: false,
        })
        .await
        .unwrap();
        leased_at
    });
    serve.kill9();

    let serve = Serve::start(&state, &[]);
    rt.block_on(async {
        let mut c = serve.client().await;
        let count = count(&mut c).await;
        assert_eq!(count, 6, "every discovered URL survives the kill");
        let active = c.get_active(Local::default()).await.unwrap().into_inner();
        assert!(!active.state, "the active flag survives the kill");
        assert!(get(&mut c, params("", 0, 60)).await.is_empty(), "inactive");
        c.set_active(Active {
            state: true,
            local: false,
        })
        .await
        .unwrap();
        let queues = c
            .list_queues(Pagination::default())
            .await
            .unwrap()
            .into_inner()
            .values;
        assert!(
            !queues.contains(&"c.example".to_string()),
            "c is blocked: {queues:?}"
        );

        // Within the lease: a's URL is leased (one per queue), b waits for its delay, c is
        // blocked; only d serves.
        let got = get(&mut c, params("", 1, 3600)).await;
        let elapsed = leased_at.elapsed().unwrap();
        assert!(
            elapsed < Duration::from_secs(u64::from(LEASE) - 1),
            "the restart took {elapsed:?}, too long to test a {LEASE} s lease"
        );
        assert_eq!(got, vec![D1]);

        // Poll (bounded) a's queue, one URL in flight at a time: nothing until A1's lease
        // ends, then A1 again (it keeps its rank).
        let deadline = Instant::now() + Duration::from_secs(u64::from(LEASE) + 20);
        let got = loop {
            let got = get(&mut c, params("a.example", 1, 60)).await;
            if !got.is_empty() {
                break got;
            }
            assert!(Instant::now() < deadline, "a never served again");
            tokio::time::sleep(Duration::from_millis(250)).await;
        };
        let elapsed = leased_at.elapsed().unwrap();
        assert!(
            elapsed >= Duration::from_secs(u64::from(LEASE) - 1),
            "a leased URL came back after {elapsed:?}, before its {LEASE} s lease ended"
        );
        assert_eq!(got, vec![A1], "the lease ended: the same URL again");
        // After a's delay (1 s): A2, the second of the limit of 2; then nothing — not A3 (the
        // limit), not b (its delay), not c (blocked), not D1 (leased).
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert_eq!(get(&mut c, params("", 0, 60)).await, vec![A2]);
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert!(get(&mut c, params("", 0, 60)).await.is_empty());
    });
    serve.kill9();
}

/// Clients streaming `PutURLs` at once into a service with a group-commit window, SIGKILLed
/// while they stream: after a restart on its state, every item it acknowledged `OK` is
/// there (an ack is given only after its group's commit).
#[test]
fn every_acknowledged_put_survives_a_kill_between_group_commits() {
    const CLIENTS: usize = 4;
    const ACKED_BEFORE_KILL: usize = 3000;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let rt = runtime();
    let serve = Serve::start(&state, &["--policy", "bfs", "--commit-interval", "20"]);
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let acked = acked.clone();
        let addr = format!("http://{}", serve.addr);
        tasks.push(rt.spawn(async move {
            let mut c =
                crawlrank_urlfrontier::proto::url_frontier_client::UrlFrontierClient::connect(addr)
                    .await
                    .unwrap();
            // Batches of 100 until the service is gone (at most 10^6 URLs: bounded).
            for batch in 0..10_000usize {
                let items: Vec<UrlItem> = (0..100)
                    .map(|i| {
                        discovered(&format!("http://h{}.example/{client}/{batch}/{i}", i % 37))
                    })
                    .collect();
                let Ok(answer) = c.put_ur_ls(tokio_stream::iter(items)).await else {
                    return;
                };
                let mut acks = answer.into_inner();
                while let Ok(Some(ack)) = acks.message().await {
                    assert_eq!(ack.status, 0, "{ack:?}");
                    acked.lock().unwrap().push(ack.id);
                }
            }
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while acked.lock().unwrap().len() < ACKED_BEFORE_KILL {
        assert!(
            Instant::now() < deadline,
            "{ACKED_BEFORE_KILL} puts not acknowledged within 60 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // Killed while the clients stream (some of their items are in an open group).
    serve.kill9();
    rt.block_on(async {
        for t in tasks {
            tokio::time::timeout(Duration::from_secs(30), t)
                .await
                .expect("a client did not end within 30 s of the kill")
                .unwrap();
        }
    });
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= ACKED_BEFORE_KILL);

    let serve = Serve::start(&state, &[]);
    rt.block_on(async {
        let mut c = serve.client().await;
        let count = count(&mut c).await;
        assert!(
            count >= acked.len() as u64,
            "{count} URLs after the restart, {} were acknowledged",
            acked.len()
        );
        for url in &acked {
            let status = c
                .get_url_status(UrlStatusRequest {
                    url: url.clone(),
                    ..Default::default()
                })
                .await;
            assert!(
                status.is_ok(),
                "{url} was acknowledged before the kill and is missing after the restart: {status:?}"
            );
        }
    });
    serve.kill9();
}

/// Runs `crawlrank frontier ranking` against the service at `addr`, with the options `extra`.
fn ranking(addr: &str, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_crawlrank"))
        .args(["frontier", "ranking", "--addr", addr])
        .args(extra)
        .output()
        .unwrap()
}

/// `crawlrank frontier ranking` against the process: TSV to stdout, and to a file.
#[test]
fn the_ranking_command_exports_tsv() {
    let (dir, _rt, serve) = serve_a1_b1();
    let text = common::ok(&ranking(&serve.addr, &["--limit", "1"]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[1].starts_with(&format!("1\t{A1}\ta.example\t")),
        "{text}"
    );
    let file = dir.path().join("ranking.tsv");
    common::ok(&ranking(&serve.addr, &["--out", file.to_str().unwrap()]));
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    // An unknown crawl: an error, and no file.
    let bad = dir.path().join("bad.tsv");
    let out = ranking(
        &serve.addr,
        &["--crawl", "NOPE", "--out", bad.to_str().unwrap()],
    );
    common::fails(&out, &["NOPE"]);
    assert!(!bad.exists());
    serve.kill9();
}
