//! The service's throughput with 1, 2 and 4 clients, on one node or a cluster of nodes: URLs per second
//! through `PutURLs` (discovered), then through a crawler's cycle without the fetching —
//! `GetURLs` (leased), then `PutURLs` (the known updates of those URLs), again until none is
//! left — each client on a gRPC connection of its own over loopback, against a fresh state
//! each time. A queue serves at most `max_urls_per_queue` (100) leased URLs at once (the
//! service's politeness), so the updates are what let a queue serve again.
//!
//!   cargo run --release -p crawlrank-frontier-service --features benchmarks --example throughput -- [URLS] [HOSTS] [CLIENTS] [COMMIT_MS] [DELAY_S] [NODES]
//!
//! URLS (default 200,000) are `http://hH.test/pI` on HOSTS hosts (default 1,000), put with no
//! parent (seeds), split evenly among the clients; CLIENTS is a comma-separated list (default
//! `1,2,4`); COMMIT_MS is the service's group-commit window in milliseconds (default: the
//! service's, `--commit-interval`'s default); DELAY_S is the crawl's delay between two answers of
//! a queue, set with `SetDelay` before the cycle (default: none set, the service's 1 s, with which
//! a queue answers once a second and the cycle measures politeness, about `--max-waiting` URLs a
//! second; 0 measures the service's own work; empty: none set). NODES is a comma-separated list of cluster sizes
//! (default `1`): with N > 1 the example starts `nats-server -js` (Debian's `nats-server`) and N
//! nodes joined into one cluster (docs/scaling.md), client `i` talks to node `i mod N` only — its
//! puts go to that node, which hands the URLs it does not own to their owners through JetStream
//! before acknowledging them, and it leases from and reports to that node — and the rates are
//! the whole cluster's. HOT (environment) is each node's `--frontier-hot` (default: the service's
//! own; a small one puts the frontier's cold part on disk). Every URL must come back from `GetURLs` exactly once (leases of 10 minutes, so
//! none is served twice), which the example checks; the whole run gives up after 10 minutes. The service runs in this process on a
//! runtime of its own (2 threads), the clients on another, so both sides share the machine's
//! cores as a service and its crawlers on one machine would. docs/performance.md records the
//! results.

mod common;

use anyhow::{ensure, Context, Result};
use common::{discovered, info, runtime};
use crawlrank_frontier_service::{
    spawn, ClusterConfig, FrontierService, RunningServer, ServiceConfig,
};
use crawlrank_testkit::NatsServer;
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
/// URLs this client leased. On a cluster, `nodes` holds a connection to each node, and the
/// client leases from each in turn (`GetURLs` serves a node's own queues), reporting to the
/// node it leased from, as a `crawl --frontier` worker does.
async fn cycle(
    mut nodes: Vec<UrlFrontierClient<Channel>>,
    done: &AtomicUsize,
    total: usize,
) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut turn = 0;
    while done.load(Ordering::SeqCst) < total {
        turn += 1;
        let count = nodes.len();
        let client = &mut nodes[turn % count];
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

/// Opens `nodes` fresh services under `root`, joined into one cluster on `nats` when there are
/// several, and serves each on a free loopback port of `rt`.
fn start_nodes(
    rt: &tokio::runtime::Runtime,
    root: &std::path::Path,
    nodes: usize,
    commit: Duration,
    nats: Option<String>,
) -> Result<Vec<RunningServer>> {
    let hot = match std::env::var("HOT") {
        Ok(hot) => hot
            .parse()
            .context("HOT is a number of entries (the frontier's hot part)")?,
        Err(_) => crawlrank_frontier_service::DEFAULT_NODE_FRONTIER_HOT,
    };
    rt.block_on(async {
        let mut listeners = Vec::new();
        for _ in 0..nodes {
            listeners.push(tokio::net::TcpListener::bind("127.0.0.1:0").await?);
        }
        let addrs: Vec<String> = listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.to_string()))
            .collect::<std::io::Result<_>>()?;
        let mut servers = Vec::new();
        for (i, listener) in listeners.into_iter().enumerate() {
            let service = FrontierService::open(ServiceConfig {
                commit_interval: commit,
                frontier_hot: hot,
                ..ServiceConfig::new(root.join(format!("node-{i}")))
            })?;
            if let Some(url) = &nats {
                // The applying task runs until the service is shut down.
                drop(
                    service
                        .join_cluster(&ClusterConfig {
                            nats: url.clone(),
                            nodes: addrs.clone(),
                            me: addrs[i].clone(),
                        })
                        .await?,
                );
            }
            servers.push(spawn(service, listener)?);
        }
        Ok(servers)
    })
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
        .filter(|a| !a.is_empty())
        .map(|a| a.parse().context("DELAY_S is a number of seconds"))
        .transpose()?;
    let node_counts: Vec<usize> = args
        .get(5)
        .map_or("1", String::as_str)
        .split(',')
        .map(|c| {
            c.parse()
                .context("NODES is a comma-separated list of numbers")
        })
        .collect::<Result<_>>()?;
    let delay_note = delay.map_or("the service's default queue delay (1 s)".to_string(), |d| {
        format!("queue delay {d} s")
    });
    println!(
        "{urls} URLs on {hosts} hosts, policy fica, commit window {commit_ms} ms, {delay_note}"
    );
    println!("| nodes | clients | PutURLs discovered, URLs/s | GetURLs + known updates, URLs/s |");
    println!("|---:|---:|---:|---:|");
    let (server_rt, client_rt) = (runtime()?, runtime()?);
    for (nodes, clients) in node_counts
        .iter()
        .flat_map(|&n| counts.iter().map(move |&c| (n, c)))
    {
        ensure!(
            clients > 0 && nodes > 0,
            "client and node counts are at least 1"
        );
        let dir = tempfile::tempdir()?;
        let nats = if nodes > 1 {
            Some(
                NatsServer::start(&dir.path().join("nats"))
                    .context("NODES > 1 needs nats-server (Debian: apt-get install nats-server)")?,
            )
        } else {
            None
        };
        let servers = start_nodes(
            &server_rt,
            dir.path(),
            nodes,
            Duration::from_millis(commit_ms),
            nats.as_ref().map(NatsServer::url),
        )?;
        let addrs: Vec<String> = servers
            .iter()
            .map(|s| format!("http://{}", s.addr()))
            .collect();
        let row = client_rt.block_on(async {
            let mut conns = Vec::new();
            for i in 0..clients {
                conns.push(UrlFrontierClient::connect(addrs[i % nodes].clone()).await?);
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
                // The crawl-wide default: a cluster node passes it on to every node.
                conns[0]
                    .clone()
                    .set_delay(QueueDelayParams {
                        delay_requestable: d,
                        ..Default::default()
                    })
                    .await?;
            }
            let done = Arc::new(AtomicUsize::new(0));
            let mut to_all = Vec::new();
            for i in 0..clients {
                // Client `i`'s connections, its own node first.
                let mut mine = Vec::new();
                for k in 0..nodes {
                    mine.push(UrlFrontierClient::connect(addrs[(i + k) % nodes].clone()).await?);
                }
                to_all.push(mine);
            }
            let to_all = Arc::new(std::sync::Mutex::new(to_all));
            let (got, cycle_s) = timed(&conns, |i, _| {
                let done = done.clone();
                let mine = std::mem::take(&mut to_all.lock().unwrap()[i]);
                async move { cycle(mine, &done, urls).await }
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
                "| {nodes} | {clients} | {:.0} | {:.0} |",
                urls as f64 / put_s,
                urls as f64 / cycle_s
            ))
        })?;
        println!("{row}");
        for server in servers {
            server_rt.block_on(server.shutdown())?;
        }
    }
    Ok(())
}
