//! The frontier service against large and hostile clients: the time a restart takes at
//! URLS URLs (the log replayed, or its checkpoint read), and what one `CountURLs` with
//! `ignoreCase` and a long filter costs the other clients — how long a concurrent `GetStats`
//! (a reader) and `SetDelay` (a writer) wait while it runs.
//!
//!   cargo run --release -p crawlrank-frontier-service --features benchmarks --example hostile_clients -- [URLS] [HOSTS]
//!
//! URLS (default 1,000,000) are `http://hH.test/pI` on HOSTS hosts (default 1,000), put with
//! no parent by one client over loopback into a fresh state (policy fica). Then `CountURLs`
//! runs with filters of 8 KiB and of 1 MiB (`ignoreCase`), while two other tasks call
//! `GetStats` and `SetDelay`, each in a loop of its own, recording their longest wait. Then the service is
//! stopped and the state opened twice more, each time in a child process of its own (this
//! example with `--open DIR`), which reports the time `FrontierService::open` took and the
//! process's peak memory; then once more after `FrontierService::compact` put the whole state
//! in the checkpoint. docs/performance.md records the results.
//!
//! With `--open DIR` it only opens the state in DIR (printing the seconds and the peak MiB);
//! with `--compact DIR` it opens the state and compacts it (printing both times and the peak
//! memory once open and at the end): how a node's state of `scripts/bench-puturls.sh` restarts.

mod common;

use anyhow::{bail, Context, Result};
use common::{discovered, runtime, serve};
use crawlrank_frontier_service::{FrontierService, ServiceConfig};
use crawlrank_urlfrontier::proto::{
    url_frontier_client::UrlFrontierClient, CountUrlParams, QueueDelayParams,
    QueueWithinCrawlParams, UrlItem,
};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tonic::transport::Channel;

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

/// Spawns a task that makes `call` on a clone of `client` every 5 ms until `stop`; its answer
/// is the longest call, in seconds.
fn probe<F, Fut>(
    stop: &Arc<AtomicBool>,
    client: &UrlFrontierClient<Channel>,
    call: F,
) -> JoinHandle<Result<f64>>
where
    F: Fn(UrlFrontierClient<Channel>) -> Fut + Send + 'static,
    Fut: Future<Output = Result<()>> + Send,
{
    let (stop, client) = (stop.clone(), client.clone());
    tokio::spawn(async move {
        let mut longest = 0f64;
        while !stop.load(Ordering::SeqCst) {
            let t = Instant::now();
            call(client.clone()).await?;
            longest = longest.max(t.elapsed().as_secs_f64());
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        Ok(longest)
    })
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
    let reader = probe(&stop, other, |mut other| async move {
        other.get_stats(QueueWithinCrawlParams::default()).await?;
        Ok(())
    });
    let writer = probe(&stop, other, |mut other| async move {
        let delay = QueueDelayParams {
            key: "h0.test".into(),
            delay_requestable: 1,
            ..Default::default()
        };
        other.set_delay(delay).await?;
        Ok(())
    });
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

/// Opens the state in `dir`, then compacts it; prints the seconds each took, the process's
/// peak memory once open (MiB) and at the end.
fn compact_only(dir: &str) -> Result<()> {
    let t = Instant::now();
    let service = FrontierService::open(ServiceConfig::new(dir))?;
    let open = t.elapsed().as_secs_f64();
    let opened = peak_rss_mib();
    let t = Instant::now();
    service.compact()?;
    let compact = t.elapsed().as_secs_f64();
    drop(service);
    println!(
        "open {open:.2} s (peak {opened} MiB); compact {compact:.2} s; peak {} MiB",
        peak_rss_mib()
    );
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--open") {
        return open_only(args.get(1).context("--open DIR")?);
    }
    if args.first().map(String::as_str) == Some("--compact") {
        return compact_only(args.get(1).context("--compact DIR")?);
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
        let (server_rt, client_rt) = (runtime()?, runtime()?);
        let service = FrontierService::open(ServiceConfig::new(dir.path()))?;
        let server = serve(&server_rt, service)?;
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
