//! The service's throughput with 1, 2 and 4 clients: URLs per second
//! through `PutURLs` (discovered), then through a crawler's cycle without the fetching —
//! `GetURLs` (leased), then `PutURLs` (the known updates of those URLs), again until none is
//! left — each client on a gRPC connection of its own over loopback, against a fresh state
//! each time. A queue serves at most `max_urls_per_queue` (100) leased URLs at once (the
//! service's politeness), so the updates are what let a queue serve again.
//!
//!   cargo run --release -p crawlrank-frontier-service --example throughput -- [URLS] [HOSTS] [CLIENTS] [COMMIT_MS] [DELAY_S]
//!
//! URLS (default 200,000) are `http://hH.test/pI` on HOSTS hosts (default 1,000), put with no
//! parent (seeds), split evenly among the clients; CLIENTS is a comma-separated list (default
//! `1,2,4`); COMMIT_MS is the service's group-commit window in milliseconds (default: the
//! service's, `--commit-interval`'s default); DELAY_S is the crawl's delay between two answers of
//! a queue, set with `SetDelay` before the cycle (default: none set, the service's 1 s, with which
//! a queue answers once a second and the cycle measures politeness, about `--max-waiting` URLs a
//! second; 0 measures the service's own work). Every URL must come back from `GetURLs` exactly once (leases of 10 minutes, so
//! none is served twice), which the example checks; the whole run gives up after 10 minutes. The service runs in this process on a
//! runtime of its own (2 threads), the clients on another, so both sides share the machine's
//! cores as a service and its crawlers on one machine would. docs/performance.md records the
//! results.

mod common;

use anyhow::{ensure, Context, Result};
use common::{discovered, info, runtime, serve};
use crawlrank_frontier_service::{FrontierService, ServiceConfig};
use crawlrank_urlfrontier::proto::{
    get_params, url_frontier_client::UrlFrontierClient, url_item, GetParams, KnownUrlItem,
    QueueDelayParams, UrlItem,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::transport::Channel;

fn known(url: String) -> UrlItem {
    UrlItem {
        item: Some(url_item::Item::Known(KnownUrlItem {
            info: Some(info(url)),
            refetchable_from_date: 0,
        })),
        ..Default::default()
    }
}

/// Streams `items` on one PutURLs call; returns the acks received.
async fn put(client: &mut UrlFrontierClient<Channel>, items: Vec<UrlItem>) -> Result<usize> {
    let mut acks = client
        .put_ur_ls(tokio_stream::iter(items))
        .await?
        .into_inner();
    let mut n = 0;
    while acks.message().await?.is_some() {
        n += 1;
    }
    Ok(n)
}

/// The crawler's cycle without fetching: leases URLs and reports them fetched, until every
/// one of the `total` URLs was reported (by this client or the others: `done`); returns the
/// URLs this client leased.
async fn cycle(
    client: &mut UrlFrontierClient<Channel>,
    done: &AtomicUsize,
    total: usize,
) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(600);
    while done.load(Ordering::SeqCst) < total {
        ensure!(Instant::now() < deadline, "the cycle took over 10 minutes");
        let params = GetParams {
            max_urls_per_queue: 100,
            max_queues: 100,
            delay_requestable: 600,
            item: Some(get_params::Item::CrawlId(String::new())),
            ..Default::default()
        };
        let mut stream = client.get_ur_ls(params).await?.into_inner();
        let mut batch = Vec::new();
        while let Some(info) = stream.message().await? {
            batch.push(info.url);
        }
        if batch.is_empty() {
            // The rest is leased by the other clients, until they report it.
            tokio::time::sleep(Duration::from_millis(1)).await;
            continue;
        }
        let n = put(client, batch.iter().cloned().map(known).collect()).await?;
        ensure!(n == batch.len(), "an ack per update");
        done.fetch_add(n, Ordering::SeqCst);
        out.extend(batch);
    }
    Ok(out)
}

/// Runs `phase` on every client at once; returns what each returned and the seconds taken.
async fn timed<T: Send + 'static, F>(
    clients: &[UrlFrontierClient<Channel>],
    phase: impl Fn(usize, UrlFrontierClient<Channel>) -> F,
) -> Result<(Vec<T>, f64)>
where
    F: std::future::Future<Output = Result<T>> + Send + 'static,
{
    let start = Instant::now();
    let tasks: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(i, c)| tokio::spawn(phase(i, c.clone())))
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await??);
    }
    Ok((out, start.elapsed().as_secs_f64()))
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let urls: usize = args.first().map_or(Ok(200_000), |a| a.parse())?;
    let hosts: usize = args.get(1).map_or(Ok(1_000), |a| a.parse())?;
    let counts: Vec<usize> = args
        .get(2)
        .map_or("1,2,4", String::as_str)
        .split(',')
        .map(|c| {
            c.parse()
                .context("CLIENTS is a comma-separated list of numbers")
        })
        .collect::<Result<_>>()?;
    let commit_ms: u64 = args.get(3).map_or(
        Ok(crawlrank_frontier_service::DEFAULT_COMMIT_INTERVAL_MS),
        |a| a.parse().context("COMMIT_MS is a number of milliseconds"),
    )?;
    let delay: Option<u32> = args
        .get(4)
        .map(|a| a.parse().context("DELAY_S is a number of seconds"))
        .transpose()?;
    let delay_note = delay.map_or("the service's default queue delay (1 s)".to_string(), |d| {
        format!("queue delay {d} s")
    });
    println!(
        "{urls} URLs on {hosts} hosts, policy fica, commit window {commit_ms} ms, {delay_note}"
    );
    println!("| clients | PutURLs discovered, URLs/s | GetURLs + known updates, URLs/s |");
    println!("|---:|---:|---:|");
    let (server_rt, client_rt) = (runtime()?, runtime()?);
    for clients in counts {
        ensure!(clients > 0, "a client count is at least 1");
        let dir = tempfile::tempdir()?;
        let service = FrontierService::open(ServiceConfig {
            commit_interval: Duration::from_millis(commit_ms),
            ..ServiceConfig::new(dir.path())
        })?;
        let server = serve(&server_rt, service)?;
        let addr = format!("http://{}", server.addr());
        let row = client_rt.block_on(async {
            let mut conns = Vec::new();
            for _ in 0..clients {
                conns.push(UrlFrontierClient::connect(addr.clone()).await?);
            }
            let share = |i: usize| (i..urls).step_by(clients);
            let (acks, put_s) = timed(&conns, |i, mut c| {
                let items: Vec<UrlItem> = share(i)
                    .map(|u| discovered(format!("http://h{}.test/p{u}", u % hosts)))
                    .collect();
                async move { put(&mut c, items).await }
            })
            .await?;
            ensure!(acks.iter().sum::<usize>() == urls, "an ack per URL");
            if let Some(d) = delay {
                conns[0]
                    .clone()
                    .set_delay(QueueDelayParams {
                        delay_requestable: d,
                        ..Default::default()
                    })
                    .await?;
            }
            let done = Arc::new(AtomicUsize::new(0));
            let (got, cycle_s) = timed(&conns, |_, mut c| {
                let done = done.clone();
                async move { cycle(&mut c, &done, urls).await }
            })
            .await?;
            let mut all: Vec<&String> = got.iter().flatten().collect();
            all.sort();
            all.dedup();
            let leased = got.iter().map(Vec::len).sum::<usize>();
            ensure!(
                all.len() == urls && leased == urls,
                "every URL leased once: {} distinct of {leased} leased, {urls} put",
                all.len()
            );
            anyhow::Ok(format!(
                "| {clients} | {:.0} | {:.0} |",
                urls as f64 / put_s,
                urls as f64 / cycle_s
            ))
        })?;
        println!("{row}");
        server_rt.block_on(server.shutdown())?;
    }
    Ok(())
}
