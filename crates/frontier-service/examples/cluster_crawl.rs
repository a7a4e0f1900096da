//! A crawl of a synthetic web through one frontier service and through a cluster of 3 nodes on
//! NATS JetStream: pages per second and the PageRank mass crawled after 10, 25, 50 and 75% of
//! the reachable pages, for FICA and BFS. The fetching is left out (a page is "fetched" the
//! moment it is leased and reported at once with its out-links), so the throughput is the
//! frontier's own: every lease, report and forwarded link durable before its answer.
//!
//!   cargo run -p crawlrank-frontier-service --features benchmarks --example cluster_crawl -- [PAGES] [HOSTS] [LOCAL]
//!
//! PAGES (default 20,000) on HOSTS hosts (default 200), page `i` on host `i % HOSTS`, 1 to 8
//! out-links each, a share LOCAL (default 0.8) of them to pages of the same host, the targets
//! skewed towards low ids (so PageRank is concentrated, as on the web). The crawl starts from
//! page 0. Each round leases one URL per queue from every node (GetURLs) and reports each page
//! to the next node in turn (ReportPage; most often not the page's owner). Needs `nats-server`
//! (Debian's package). docs/performance.md records the results.

mod common;

use anyhow::{Context, Result};
use crawlrank_frontier_service::{
    policy_spec, spawn, ClusterConfig, FrontierService, RunningServer, ServiceConfig, TimeSource,
};
use crawlrank_testkit::{reachable_from, NatsServer};
use crawlrank_urlfrontier::ext_proto::crawlrank_frontier_client::CrawlrankFrontierClient;
use crawlrank_urlfrontier::ext_proto::PageReport;
use crawlrank_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use crawlrank_urlfrontier::proto::{
    get_params, url_item, DiscoveredUrlItem, GetParams, KnownUrlItem, UrlInfo, UrlItem,
};
use std::collections::HashSet;
use std::time::{Duration, Instant};
use tonic::transport::Channel;

struct Web {
    hosts: usize,
    links: Vec<Vec<usize>>,
}

impl Web {
    fn new(pages: usize, hosts: usize, local: f64) -> Self {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut unit = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let per_host = pages.div_ceil(hosts);
        let links = (0..pages)
            .map(|i| {
                let n = 1 + (unit() * 8.0) as usize;
                (0..n)
                    .map(|_| {
                        let skew = unit() * unit();
                        if unit() < local {
                            let k = (skew * per_host as f64) as usize;
                            (k * hosts + i % hosts).min(pages - 1)
                        } else {
                            ((skew * pages as f64) as usize).min(pages - 1)
                        }
                    })
                    .collect()
            })
            .collect();
        Self { hosts, links }
    }

    fn url(&self, i: usize) -> String {
        format!("http://h{}.test/p{i}", i % self.hosts)
    }

    fn page(url: &str) -> usize {
        url.rsplit("/p")
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0)
    }

    fn reachable(&self) -> HashSet<usize> {
        reachable_from(&self.links, 0)
    }

    /// PageRank (damping 0.85, 50 power iterations, dangling mass spread evenly).
    fn pagerank(&self) -> Vec<f64> {
        let n = self.links.len();
        let mut pr = vec![1.0 / n as f64; n];
        for _ in 0..50 {
            let mut next = vec![0.0; n];
            let mut dangling = 0.0;
            for (p, out) in self.links.iter().enumerate() {
                if out.is_empty() {
                    dangling += pr[p];
                }
                for &q in out {
                    next[q] += 0.85 * pr[p] / out.len() as f64;
                }
            }
            let base = (0.15 + 0.85 * dangling) / n as f64;
            for v in &mut next {
                *v += base;
            }
            pr = next;
        }
        pr
    }
}

struct Node {
    server: RunningServer,
    api: UrlFrontierClient<Channel>,
    ext: CrawlrankFrontierClient<Channel>,
}

async fn start(
    root: &std::path::Path,
    n: usize,
    nats: Option<&str>,
    policy: &str,
    pages: u64,
    clock: &TimeSource,
) -> Result<Vec<Node>> {
    let mut listeners = Vec::new();
    for _ in 0..n {
        listeners.push(tokio::net::TcpListener::bind("127.0.0.1:0").await?);
    }
    let addrs: Vec<String> = listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.to_string()))
        .collect::<std::io::Result<_>>()?;
    let mut nodes = Vec::new();
    for (i, listener) in listeners.into_iter().enumerate() {
        let service = FrontierService::open(ServiceConfig {
            policy: Some(policy_spec(policy, Some(pages), None, 0)?),
            time: clock.clone(),
            ..ServiceConfig::new(root.join(format!("{policy}-{n}-{i}")))
        })?;
        if let Some(url) = nats {
            // The applying task, detached, runs until the process ends.
            let applying = service
                .join_cluster(&ClusterConfig {
                    nats: url.to_string(),
                    nodes: addrs.clone(),
                    me: addrs[i].clone(),
                })
                .await?;
            drop(applying);
        }
        let server = spawn(service, listener)?;
        let url = format!("http://{}", addrs[i]);
        nodes.push(Node {
            server,
            api: UrlFrontierClient::connect(url.clone()).await?,
            ext: CrawlrankFrontierClient::connect(url).await?,
        });
    }
    Ok(nodes)
}

/// Crawls the web; returns the pages in fetch order and the seconds it took.
/// The clock moves 2 s a round (a queue serves again 1 s after its last page).
async fn crawl(
    nodes: &mut [Node],
    web: &Web,
    want: usize,
    clock: &TimeSource,
) -> Result<(Vec<usize>, f64)> {
    let seed = UrlItem {
        item: Some(url_item::Item::Discovered(DiscoveredUrlItem {
            info: Some(UrlInfo {
                url: web.url(0),
                ..Default::default()
            }),
        })),
        ..Default::default()
    };
    let mut acks = nodes[0]
        .api
        .put_ur_ls(tokio_stream::iter(vec![seed]))
        .await?
        .into_inner();
    while acks.message().await?.is_some() {}
    let started = Instant::now();
    let mut order = Vec::new();
    let mut turn = 0;
    let n = nodes.len();
    while order.len() < want {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(1800),
            "{} of {want} pages after 30 minutes",
            order.len()
        );
        let mut got = 0;
        for i in 0..n {
            let mut stream = nodes[i]
                .api
                .get_ur_ls(GetParams {
                    max_urls_per_queue: 1,
                    delay_requestable: 600,
                    item: Some(get_params::Item::CrawlId(String::new())),
                    ..Default::default()
                })
                .await?
                .into_inner();
            let mut urls = Vec::new();
            while let Some(info) = stream.message().await? {
                urls.push(info.url);
            }
            got += urls.len();
            for url in urls {
                let page = Web::page(&url);
                turn += 1;
                nodes[turn % n]
                    .ext
                    .report_page(PageReport {
                        page: Some(KnownUrlItem {
                            info: Some(UrlInfo {
                                url,
                                ..Default::default()
                            }),
                            refetchable_from_date: 0,
                        }),
                        outlinks: web.links[page].iter().map(|&l| web.url(l)).collect(),
                    })
                    .await
                    .context("ReportPage failed")?;
                order.push(page);
            }
        }
        clock.advance(2);
        if got == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    Ok((order, started.elapsed().as_secs_f64()))
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let pages: usize = args.first().map_or(Ok(20_000), |a| a.parse())?;
    let hosts: usize = args.get(1).map_or(Ok(200), |a| a.parse())?;
    let local: f64 = args.get(2).map_or(Ok(0.8), |a| a.parse())?;
    let web = Web::new(pages, hosts, local);
    let reachable = web.reachable();
    let pr = web.pagerank();
    let total: f64 = reachable.iter().map(|&p| pr[p]).sum();
    let dir = tempfile::tempdir()?;
    let runtime = common::runtime()?;
    println!(
        "{pages} pages on {hosts} hosts, {} reachable from page 0, {:.0}% of links within their host",
        reachable.len(),
        local * 100.0
    );
    println!("policy\tnodes\tseconds\tpages/s\tmass@10%\tmass@25%\tmass@50%\tmass@75%");
    for policy in ["fica", "bfs"] {
        for n in [1, 3] {
            // A cluster of its own for each run (the node list is recorded on its server).
            let nats = NatsServer::start(&dir.path().join(format!("nats-{policy}-{n}")))
                .context("nats-server is needed")?;
            let (order, secs) = runtime.block_on(async {
                let url = nats.url();
                let clock = TimeSource::manual(1_735_689_600);
                let mut nodes = start(
                    dir.path(),
                    n,
                    (n > 1).then_some(url.as_str()),
                    policy,
                    pages as u64,
                    &clock,
                )
                .await?;
                let out = crawl(&mut nodes, &web, reachable.len(), &clock).await?;
                for node in nodes {
                    node.server.shutdown().await?;
                }
                anyhow::Ok(out)
            })?;
            let distinct: HashSet<usize> = order.iter().copied().collect();
            anyhow::ensure!(
                distinct == reachable && order.len() == reachable.len(),
                "{policy} on {n} nodes fetched {} pages ({} distinct) of {}",
                order.len(),
                distinct.len(),
                reachable.len()
            );
            let mass = |share: f64| {
                let k = (share * order.len() as f64) as usize;
                order[..k].iter().map(|&p| pr[p]).sum::<f64>() / total
            };
            println!(
                "{policy}\t{n}\t{secs:.1}\t{:.0}\t{:.3}\t{:.3}\t{:.3}\t{:.3}",
                order.len() as f64 / secs,
                mass(0.10),
                mass(0.25),
                mass(0.50),
                mass(0.75)
            );
        }
    }
    Ok(())
}
