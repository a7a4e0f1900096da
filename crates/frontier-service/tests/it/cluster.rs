//! The frontier cluster on a real `nats-server` with JetStream (loopback, a temporary store;
//! skipped with a message when `nats-server` is missing, a failure on CI): three nodes serving
//! a crawl of a synthetic web of hundreds of pages on two dozen hosts, driven through the
//! URLFrontier API as workers drive it (GetURLs at every node, each page reported to any
//! node), fetch the same pages as one service; items put to the wrong node are served by
//! their owner; a restarted node goes on from its state; a message that does not decode is
//! set aside and counted; a node whose list or policy differs from the cluster's is refused.

use crate::common::{self, discovered, get, params, put, Client, ExtClient};
use crawlrank_frontier_service::{
    policy_spec, spawn, ClusterConfig, FrontierService, Nodes, RunningServer, ServiceConfig,
    TimeSource,
};
use crawlrank_testkit::NatsServer;
use crawlrank_urlfrontier::ext_proto::crawlrank_frontier_client::CrawlrankFrontierClient;
use crawlrank_urlfrontier::ext_proto::PageReport;
use crawlrank_urlfrontier::proto::ack_message::Status as AckStatus;
use crawlrank_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use crawlrank_urlfrontier::proto::{Empty, KnownUrlItem, QueueWithinCrawlParams};
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A synthetic web: page `i` is `http://h{i % HOSTS}.test/p{i}`, with a few out-links each
/// (a fixed pseudo-random choice), crawled from page 0.
struct Web {
    links: Vec<Vec<usize>>,
}

const HOSTS: usize = 24;

impl Web {
    fn new(pages: usize) -> Self {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let links = (0..pages)
            .map(|_| (0..1 + next(5)).map(|_| next(pages)).collect())
            .collect();
        Self { links }
    }

    fn url(i: usize) -> String {
        format!("http://h{}.test/p{i}", i % HOSTS)
    }

    fn page(url: &str) -> usize {
        url.rsplit("/p").next().unwrap().parse().unwrap()
    }

    /// The pages reachable from page 0.
    fn reachable(&self) -> BTreeSet<String> {
        let mut seen = HashSet::from([0]);
        let mut todo = vec![0];
        while let Some(p) = todo.pop() {
            for &l in &self.links[p] {
                if seen.insert(l) {
                    todo.push(l);
                }
            }
        }
        seen.into_iter().map(Self::url).collect()
    }
}

/// A node (or a lone service) with its clients.
struct Node {
    server: RunningServer,
    applying: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    client: Client,
    ext: ExtClient,
    addr: String,
}

impl Node {
    async fn stop(self) {
        if let Some(a) = self.applying {
            a.abort();
        }
        self.server.shutdown().await.unwrap();
    }
}

fn config(dir: &Path, clock: &TimeSource, policy: &str) -> ServiceConfig {
    ServiceConfig {
        policy: Some(policy_spec(policy, Some(1000), None, 0).unwrap()),
        time: clock.clone(),
        ..ServiceConfig::new(dir)
    }
}

async fn connect(addr: &str) -> (Client, ExtClient) {
    let url = format!("http://{addr}");
    tokio::time::timeout(Duration::from_secs(10), async {
        (
            UrlFrontierClient::connect(url.clone()).await.unwrap(),
            CrawlrankFrontierClient::connect(url.clone()).await.unwrap(),
        )
    })
    .await
    .expect("connecting took more than 10 s")
}

/// Starts a node on `listener` with state `dir`, in the cluster of `nodes` on `nats`.
async fn start_node(
    listener: tokio::net::TcpListener,
    dir: &Path,
    clock: &TimeSource,
    policy: &str,
    nats: Option<(&str, &[String])>,
) -> Node {
    let addr = listener.local_addr().unwrap().to_string();
    let service = FrontierService::open(config(dir, clock, policy)).unwrap();
    let applying = match nats {
        Some((url, nodes)) => Some(
            service
                .join_cluster(&ClusterConfig {
                    nats: url.to_string(),
                    nodes: nodes.to_vec(),
                    me: addr.clone(),
                })
                .await
                .unwrap(),
        ),
        None => None,
    };
    let server = spawn(service, listener).unwrap();
    let (client, ext) = connect(&addr).await;
    Node {
        server,
        applying,
        client,
        ext,
        addr,
    }
}

/// `n` loopback listeners and their addresses.
async fn listeners(n: usize) -> (Vec<tokio::net::TcpListener>, Vec<String>) {
    let mut ls = Vec::new();
    for _ in 0..n {
        ls.push(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap());
    }
    let addrs = ls
        .iter()
        .map(|l| l.local_addr().unwrap().to_string())
        .collect();
    (ls, addrs)
}

/// A cluster of `n` nodes with states under `root`.
async fn start_cluster(
    nats: &NatsServer,
    root: &Path,
    n: usize,
    clock: &TimeSource,
    policy: &str,
) -> (Vec<Node>, Vec<String>, Vec<PathBuf>) {
    let (ls, addrs) = listeners(n).await;
    let dirs: Vec<PathBuf> = (0..n).map(|i| root.join(format!("node{i}"))).collect();
    let mut nodes = Vec::new();
    for (l, dir) in ls.into_iter().zip(&dirs) {
        nodes.push(start_node(l, dir, clock, policy, Some((&nats.url(), &addrs))).await);
    }
    (nodes, addrs, dirs)
}

/// Crawls `web` through `nodes` as workers would: every round, GetURLs at each node (one URL
/// per queue, leased 60 s) and each URL reported to the next node in turn (often not its
/// owner) with its out-links; the clock moves 2 s a round so the queues' delays pass. Stops
/// once `want` pages are fetched (or after 60 s); returns the pages in fetch order.
async fn crawl(nodes: &mut [Node], web: &Web, clock: &TimeSource, want: usize) -> Vec<String> {
    let seed = Web::url(0);
    let acks = put(&mut nodes[nodes.len() - 1].client, vec![discovered(&seed)]).await;
    assert_eq!(acks.len(), 1);
    let mut fetched = Vec::new();
    let mut turn = 0;
    let until = Instant::now() + Duration::from_secs(60);
    while fetched.len() < want && Instant::now() < until {
        let mut got = 0;
        for i in 0..nodes.len() {
            let urls = get(&mut nodes[i].client, params(1, 60)).await;
            got += urls.len();
            for url in urls {
                let links = web.links[Web::page(&url)]
                    .iter()
                    .map(|&l| Web::url(l))
                    .collect();
                turn += 1;
                let to = turn % nodes.len();
                nodes[to]
                    .ext
                    .report_page(PageReport {
                        page: Some(KnownUrlItem {
                            info: Some(common::info_in(&url, "", "")),
                            refetchable_from_date: 0,
                        }),
                        outlinks: links,
                    })
                    .await
                    .unwrap();
                fetched.push(url);
            }
        }
        clock.advance(2);
        if got == 0 {
            // Items on their way through JetStream.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    fetched
}

fn nats(dir: &Path) -> Option<NatsServer> {
    NatsServer::start(&dir.join("nats"))
}

/// The counters of the node `client` talks to, its own only.
async fn local_stats(client: &mut Client) -> crawlrank_urlfrontier::proto::Stats {
    client
        .get_stats(QueueWithinCrawlParams {
            local: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
}

/// Runs a cluster test body under a 120 s limit.
fn run_long<F: std::future::Future<Output = ()>>(body: F) {
    common::run_within(Duration::from_secs(120), body);
}

#[test]
fn three_nodes_fetch_what_one_service_fetches_each_page_once() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(nats) = nats(tmp.path()) else { return };
    let web = Web::new(900);
    let reachable = web.reachable();
    assert!(reachable.len() > 500, "{}", reachable.len());
    run_long(async {
        let clock = TimeSource::manual(common::T0);
        let (ls, _) = listeners(1).await;
        let one = start_node(
            ls.into_iter().next().unwrap(),
            &tmp.path().join("one"),
            &clock,
            "fica",
            None,
        )
        .await;
        let mut one = vec![one];
        let alone = crawl(&mut one, &web, &clock, reachable.len()).await;
        let (mut nodes, addrs, _) = start_cluster(&nats, tmp.path(), 3, &clock, "fica").await;
        let spread = crawl(&mut nodes, &web, &clock, reachable.len()).await;
        for (name, fetched) in [("one service", &alone), ("three nodes", &spread)] {
            let set: BTreeSet<String> = fetched.iter().cloned().collect();
            assert_eq!(set.len(), fetched.len(), "{name}: a page was served twice");
            let missing: Vec<_> = reachable.difference(&set).take(10).collect();
            let extra: Vec<_> = set.difference(&reachable).take(10).collect();
            assert!(
                missing.is_empty() && extra.is_empty(),
                "{name}: {} of {} reachable pages fetched; missing {missing:?}, extra {extra:?}",
                set.len(),
                reachable.len()
            );
        }
        // Nothing is left anywhere, and every node served only its own queues.
        let sorted = Nodes::new(&addrs, &addrs[0]).unwrap();
        for node in &mut nodes {
            assert!(get(&mut node.client, params(0, 60)).await.is_empty());
            let listed = node
                .client
                .list_nodes(Empty {})
                .await
                .unwrap()
                .into_inner()
                .values;
            assert_eq!(listed, sorted.list());
            let me = sorted.list().iter().position(|a| *a == node.addr).unwrap();
            let stats = local_stats(&mut node.client).await;
            assert!(stats.counts["crawlrank.fetched"] > 0, "{stats:?}");
            let queues = node
                .client
                .list_queues(crawlrank_urlfrontier::proto::Pagination {
                    include_inactive: true,
                    size: 1000,
                    local: true,
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner()
                .values;
            for q in queues {
                assert_eq!(sorted.owner("", &q), me, "queue {q} on node {}", node.addr);
            }
        }
        for n in nodes.into_iter().chain(one) {
            n.stop().await;
        }
    });
}

#[test]
fn an_item_put_to_the_wrong_node_is_served_by_its_owner_and_a_restarted_node_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(nats) = nats(tmp.path()) else { return };
    run_long(async {
        let clock = TimeSource::manual(common::T0);
        let (mut nodes, addrs, dirs) = start_cluster(&nats, tmp.path(), 3, &clock, "bfs").await;
        let sorted = Nodes::new(&addrs, &addrs[0]).unwrap();
        let owner_addr = |url: &str| -> String {
            sorted.list()[sorted.owner_of_url("", "", url).unwrap()].clone()
        };
        let idx = |addr: &str| nodes.iter().position(|n| n.addr == addr).unwrap();
        // Hosts owned by each node.
        let urls: Vec<String> = (0..HOSTS).map(Web::url).collect();
        let url = urls
            .iter()
            .find(|u| owner_addr(u) != nodes[0].addr)
            .unwrap()
            .clone();
        let owner = idx(&owner_addr(&url));
        let acks = put(&mut nodes[0].client, vec![discovered(&url)]).await;
        assert_eq!(acks, [AckStatus::Ok]);
        assert!(get(&mut nodes[0].client, params(0, 60)).await.is_empty());
        let served = wait_for_urls(&mut nodes[owner].client).await;
        assert_eq!(served, std::slice::from_ref(&url));

        // The owner stops; an item for it is accepted by another node meanwhile, and served
        // once the owner is back on its state.
        let other = (owner + 1) % 3;
        let second = format!("{url}second");
        let stopped = nodes.remove(owner);
        let owner_addr = stopped.addr.clone();
        stopped.stop().await;
        let other = if other > owner { other - 1 } else { other };
        let acks = put(&mut nodes[other].client, vec![discovered(&second)]).await;
        assert_eq!(acks, [AckStatus::Ok]);
        let listener = tokio::net::TcpListener::bind(&owner_addr).await.unwrap();
        let mut back = start_node(
            listener,
            &dirs[owner],
            &clock,
            "bfs",
            Some((&nats.url(), &addrs)),
        )
        .await;
        clock.advance(2);
        let served = wait_for_urls(&mut back.client).await;
        assert_eq!(served, [second], "the lease of {url} still holds");

        // A message that does not decode is set aside and counted; the node goes on.
        let client = async_nats::connect(nats.url()).await.unwrap();
        let me = sorted.list().iter().position(|a| *a == owner_addr).unwrap();
        client
            .publish(
                format!("crawlrank.frontier.node.{me}"),
                vec![0xff, 0xff, 0x07].into(),
            )
            .await
            .unwrap();
        client.flush().await.unwrap();
        let third = format!("{url}third");
        put(&mut nodes[other].client, vec![discovered(&third)]).await;
        clock.advance(2);
        let served = wait_for_urls(&mut back.client).await;
        assert_eq!(served, [third]);
        let stats = local_stats(&mut back.client).await;
        assert_eq!(stats.counts["crawlrank.dead_letters"], 1, "{stats:?}");
        back.stop().await;
        for n in nodes {
            n.stop().await;
        }
    });
}

/// GetURLs until it returns something (items may still be on their way), for at most 10 s.
async fn wait_for_urls(client: &mut Client) -> Vec<String> {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let got = get(client, params(0, 60)).await;
        if !got.is_empty() || Instant::now() > until {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Why a new service in `dir` with `policy` may not join the cluster as `join` says (it must
/// not be allowed to).
async fn refused_join(
    dir: &Path,
    clock: &TimeSource,
    policy: &str,
    join: &ClusterConfig,
) -> String {
    let service = FrontierService::open(config(dir, clock, policy)).unwrap();
    let err = service.join_cluster(join).await.unwrap_err();
    format!("{err:#}")
}

#[test]
fn a_node_with_another_node_list_or_policy_is_refused_naming_both() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(nats) = nats(tmp.path()) else { return };
    run_long(async {
        let clock = TimeSource::manual(common::T0);
        let (nodes, addrs, _) = start_cluster(&nats, tmp.path(), 2, &clock, "fica").await;
        let (ls, more) = listeners(1).await;
        let mut three = addrs.clone();
        three.push(more[0].clone());
        let join = ClusterConfig {
            nats: nats.url(),
            nodes: three.clone(),
            me: more[0].clone(),
        };
        let msg = refused_join(&tmp.path().join("x"), &clock, "fica", &join).await;
        let mut sorted = three.clone();
        sorted.sort();
        let mut recorded = addrs.clone();
        recorded.sort();
        assert!(
            msg.contains(&sorted.join(",")) && msg.contains(&recorded.join(",")),
            "{msg}"
        );
        drop(ls);
        let join = ClusterConfig {
            nats: nats.url(),
            nodes: addrs.clone(),
            me: addrs[0].clone(),
        };
        let msg = refused_join(&tmp.path().join("y"), &clock, "bfs", &join).await;
        assert!(msg.contains("bfs") && msg.contains("fica"), "{msg}");
        // An unreachable NATS server: a clear error within seconds.
        let started = Instant::now();
        let port = crawlrank_testkit::free_port();
        let join = ClusterConfig {
            nats: format!("nats://127.0.0.1:{port}"),
            nodes: addrs.clone(),
            me: addrs[0].clone(),
        };
        let msg = refused_join(&tmp.path().join("z"), &clock, "fica", &join).await;
        assert!(msg.contains("cannot reach the NATS server"), "{msg}");
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{:?}",
            started.elapsed()
        );
        for n in nodes {
            n.stop().await;
        }
    });
}
