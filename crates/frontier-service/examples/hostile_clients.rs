//! The frontier service against large and hostile clients: the time a restart takes at
//! URLS URLs (the log replayed, or its checkpoint read), and what one `CountURLs` with
//! `ignoreCase` and a long filter costs the other clients — how long a concurrent `GetStats`
//! (a reader) and `SetDelay` (a writer) wait while it runs.
//!
//!   cargo run --release -p crawlrank-frontier-service --example hostile_clients -- [URLS] [HOSTS]
//!
//! URLS (default 1,000,000) are `http://hH.test/pI` on HOSTS hosts (default 1,000), put with
//! no parent by one client over loopback into a fresh state (policy fica). Then `CountURLs`
//! runs with filters of 8 KiB and of 1 MiB (`ignoreCase`), while two other tasks call
//! `GetStats` and `SetDelay`, each in a loop of its own, recording their longest wait. Then the service is
//! stopped and the state opened twice more, each time in a child process of its own (this
//! example with `--open DIR`), which reports the time `FrontierService::open` took and the
//! process's peak memory; then once more after `FrontierService::compact` put the whole state
//! in the checkpoint. docs/performance.md records the results.

use anyhow::{bail, Context, Result};
use crawlrank_frontier_service::{spawn, FrontierService, ServiceConfig};
use crawlrank_urlfrontier::proto::{
    url_frontier_client::UrlFrontierClient, url_item, CountUrlParams, DiscoveredUrlItem,
    QueueDelayParams, QueueWithinCrawlParams, UrlInfo, UrlItem,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::transport::Channel;

fn discovered(url: String) -> UrlItem {
    UrlItem {
        item: Some(url_item::Item::Discovered(DiscoveredUrlItem {
            info: Some(UrlInfo {
                url,
                ..Default::default()
            }),
        })),
        ..Default::default()
    }
}

/// The process's peak resident memory, in MiB (Linux; 0 elsewhere).
fn peak_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib / 1024)
}

/// Runs `CountURLs` with a `len`-byte filter (ignoring case) while `other` calls `GetStats`
/// and `SetDelay`, each in a loop of its own; returns the count's answer, its time, and the
/// longest wait of each of the other calls.
async fn hostile_count(
    client: &mut UrlFrontierClient<Channel>,
    other: &mut UrlFrontierClient<Channel>,
    len: usize,
) -> Result<(String, f64, f64, f64)> {
    let stop = Arc::new(AtomicBool::new(false));
    // Two probes, each on its own: a reader and a writer, each recording its longest wait.
    let reader = {
        let (stop, mut other) = (stop.clone(), other.clone());
        tokio::spawn(async move {
            let mut longest = 0f64;
            while !stop.load(Ordering::SeqCst) {
                let t = Instant::now();
                other.get_stats(QueueWithinCrawlParams::default()).await?;
                longest = longest.max(t.elapsed().as_secs_f64());
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            anyhow::Ok(longest)
        })
    };
    let writer = {
        let (stop, mut other) = (stop.clone(), other.clone());
        tokio::spawn(async move {
            let mut longest = 0f64;
            while !stop.load(Ordering::SeqCst) {
                let t = Instant::now();
                other
                    .set_delay(QueueDelayParams {
                        key: "h0.test".into(),
                        delay_requestable: 1,
                        ..Default::default()
                    })
                    .await?;
                longest = longest.max(t.elapsed().as_secs_f64());
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            anyhow::Ok(longest)
        })
    };
    // Let the probes make a few calls first.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let t = Instant::now();
    let answer = client
        .count_ur_ls(CountUrlParams {
            filter: Some("/".repeat(len)),
            ignore_case: Some(true),
            ..Default::default()
        })
        .await;
    let secs = t.elapsed().as_secs_f64();
    stop.store(true, Ordering::SeqCst);
    let (stats_max, delay_max) = (reader.await??, writer.await??);
    let answer = match answer {
        Ok(n) => format!("{} URLs", n.into_inner().value),
        Err(status) => format!("{:?}", status.code()),
    };
    Ok((answer, secs, stats_max, delay_max))
}

/// Opens the state in `dir` once, in this process, and reports how long it took.
fn open_only(dir: &str) -> Result<()> {
    let t = Instant::now();
    let service = FrontierService::open(ServiceConfig::new(dir))?;
    let secs = t.elapsed().as_secs_f64();
    drop(service);
    println!("{secs:.2} {}", peak_rss_mib());
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--open") {
        return open_only(args.get(1).context("--open DIR")?);
    }
    let arg = |i: usize, default: usize| -> Result<usize> {
        args.get(i).map_or(Ok(default), |s| {
            s.parse().context("URLS and HOSTS are numbers")
        })
    };
    let (urls, hosts) = (arg(0, 1_000_000)?, arg(1, 1_000)?);
    let dir = tempfile::tempdir()?;
    println!("{urls} URLs on {hosts} hosts, policy fica");
    {
        let server_rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let client_rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let service = FrontierService::open(ServiceConfig::new(dir.path()))?;
        let server = server_rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            spawn(service, listener)
        })?;
        let addr = format!("http://{}", server.addr());
        client_rt.block_on(async {
            let mut client = UrlFrontierClient::connect(addr.clone()).await?;
            let mut other = UrlFrontierClient::connect(addr.clone()).await?;
            let t = Instant::now();
            for chunk in (0..urls).collect::<Vec<_>>().chunks(100_000) {
                let items: Vec<UrlItem> = chunk
                    .iter()
                    .map(|u| discovered(format!("http://h{}.test/p{u}", u % hosts)))
                    .collect();
                let mut acks = client
                    .put_ur_ls(tokio_stream::iter(items))
                    .await?
                    .into_inner();
                while acks.message().await?.is_some() {}
            }
            println!("put: {:.1} s", t.elapsed().as_secs_f64());
            println!("| filter (ignoreCase) | CountURLs answer | CountURLs time, s | longest GetStats wait meanwhile, s | longest SetDelay wait meanwhile, s |");
            println!("|---|---|---:|---:|---:|");
            for (name, len) in [("8 KiB", 8 << 10), ("1 MiB", 1 << 20)] {
                let (answer, secs, stats, delay) =
                    hostile_count(&mut client, &mut other, len).await?;
                println!("| {name} | {answer} | {secs:.3} | {stats:.3} | {delay:.3} |");
            }
            anyhow::Ok(())
        })?;
        server_rt.block_on(server.shutdown())?;
    }
    println!("| restart | time to open, s | peak memory, MiB |");
    println!("|---|---:|---:|");
    let exe = std::env::current_exe()?;
    for run in ["first", "second", "after compact()"] {
        if run == "after compact()" {
            // The whole state in the checkpoint, no call left to replay.
            FrontierService::open(ServiceConfig::new(dir.path()))?.compact()?;
        }
        let out = std::process::Command::new(&exe)
            .arg("--open")
            .arg(dir.path())
            .output()?;
        if !out.status.success() {
            bail!("{}", String::from_utf8_lossy(&out.stderr));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut words = text.split_whitespace();
        let (secs, mib) = (words.next().unwrap_or("?"), words.next().unwrap_or("?"));
        println!("| {run} | {secs} | {mib} |");
    }
    Ok(())
}
