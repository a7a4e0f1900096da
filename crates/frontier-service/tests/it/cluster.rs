//! The frontier cluster on a real `nats-server` with JetStream (loopback, a temporary store;
//! skipped with a message when `nats-server` is missing, a failure on CI): three nodes serving
//! a crawl of a synthetic web of hundreds of pages on two dozen hosts, driven through the
//! URLFrontier API as workers drive it (GetURLs at every node, each page reported to any
//! node), fetch the same pages as one service; items put to the wrong node are served by
//! their owner; a restarted node goes on from its state; a message that does not decode is
//! set aside and counted; a node whose list or policy differs from the cluster's is refused.
//! What a crawled page passes along its links travels to their owners: OPIC's cash sums to 1
//! over the nodes at any instant and after a node restarts mid-crawl, and FICA's distances on
//! three nodes are the one service's. An outbox item sent again after JetStream's duplicate
//! window is applied once.

use crate::common::{self, discovered, get, params, put, Client, ExtClient};
use crawlrank_frontier_service::{
    policy_spec, spawn, ClusterConfig, FrontierService, Nodes, RunningServer, ServiceConfig,
    TimeSource,
};
use crawlrank_testkit::NatsServer;
use crawlrank_urlfrontier::cluster_proto::{forwarded, Forwarded, Offer as WireOffer, Origin};
use crawlrank_urlfrontier::ext_proto::crawlrank_frontier_client::CrawlrankFrontierClient;
use crawlrank_urlfrontier::ext_proto::PageReport;
use crawlrank_urlfrontier::proto::ack_message::Status as AckStatus;
use crawlrank_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use crawlrank_urlfrontier::proto::{Empty, KnownUrlItem, QueueWithinCrawlParams};
use std::collections::BTreeSet;
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

    /// A random tree: page `i > 0` is linked from one page before it.
    fn tree(pages: usize) -> Self {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut links = vec![Vec::new(); pages];
        for child in 1..pages {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            links[(x % child as u64) as usize].push(child);
        }
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
        crawlrank_testkit::reachable_from(&self.links, 0)
            .into_iter()
            .map(Self::url)
            .collect()
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
    /// Stops the node as a user would: when this returns, its store is closed (a restart on
    /// the same state opens it at once) and it stopped applying forwarded items because it
    /// was shut down, not because applying failed.
    async fn stop(self) {
        self.server.shutdown().await.unwrap();
        if let Some(applying) = self.applying {
            tokio::time::timeout(Duration::from_secs(10), applying)
                .await
                .expect("the consumer of a stopped node still runs after 10 s")
                .unwrap()
                .unwrap();
        }
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
    start_node_with(listener, config(dir, clock, policy), nats).await
}

/// Starts a stopped `bfs` node again at its address `addr`, on its state in `dir`, in the
/// cluster of `addrs` on the NATS server at `nats`.
async fn restart_node(
    addr: &str,
    dir: &Path,
    clock: &TimeSource,
    nats: &str,
    addrs: &[String],
) -> Node {
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    start_node(listener, dir, clock, "bfs", Some((nats, addrs))).await
}

/// Starts a node on `listener` with `config`, in the cluster of `nodes` on `nats`.
async fn start_node_with(
    listener: tokio::net::TcpListener,
    config: ServiceConfig,
    nats: Option<(&str, &[String])>,
) -> Node {
    let addr = listener.local_addr().unwrap().to_string();
    let service = FrontierService::open(config).unwrap();
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

/// Runs the cluster test `test` under a 120 s limit with a NATS server started in a fresh
/// folder, which it is given for the nodes' state too; when nats-server is absent, the test
/// is skipped (saying so).
fn with_nats(test: impl AsyncFnOnce(&NatsServer, &Path)) {
    let tmp = tempfile::tempdir().unwrap();
    let Some(nats) = nats(tmp.path()) else { return };
    run_long(test(&nats, tmp.path()));
}

#[test]
fn three_nodes_fetch_what_one_service_fetches_each_page_once() {
    with_nats(async |nats, dir| {
        let web = Web::new(900);
        let reachable = web.reachable();
        assert!(reachable.len() > 500, "{}", reachable.len());
        let clock = TimeSource::manual(common::T0);
        let (ls, _) = listeners(1).await;
        let one = start_node(
            ls.into_iter().next().unwrap(),
            &dir.join("one"),
            &clock,
            "fica",
            None,
        )
        .await;
        let mut one = vec![one];
        let alone = crawl(&mut one, &web, &clock, reachable.len()).await;
        let (mut nodes, addrs, _) = start_cluster(nats, dir, 3, &clock, "fica").await;
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

/// Items sent to a node before it first reads its subject — it stopped, or had not started
/// reading yet — wait for it in JetStream and are served once it is back. (A node that had
/// applied nothing once purged "below sequence 1" when it started reading, which nats-server
/// 2.9 takes as every item of the subject: the items were lost.)
#[test]
fn items_sent_to_a_node_before_it_first_reads_them_are_not_lost() {
    with_nats(async |nats, dir| {
        let clock = TimeSource::manual(common::T0);
        let (mut nodes, addrs, dirs) = start_cluster(nats, dir, 3, &clock, "bfs").await;
        let sorted = Nodes::new(&addrs, &addrs[0]).unwrap();
        let owner_of = |url: &str| sorted.list()[sorted.owner_of_url("", "", url).unwrap()].clone();
        let url = (0..HOSTS)
            .map(Web::url)
            .find(|u| owner_of(u) != nodes[0].addr)
            .unwrap();
        let owner = nodes.iter().position(|n| n.addr == owner_of(&url)).unwrap();
        let stopped = nodes.remove(owner);
        let owner_addr = stopped.addr.clone();
        stopped.stop().await;
        let acks = put(&mut nodes[0].client, vec![discovered(&url)]).await;
        assert_eq!(acks, [AckStatus::Ok]);
        // Node 0 hands the item to JetStream, where it waits for its owner.
        let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
        let mut stream = js
            .get_stream(crawlrank_frontier_service::STREAM)
            .await
            .unwrap();
        let until = Instant::now() + Duration::from_secs(30);
        while stream.info().await.unwrap().state.messages == 0 {
            assert!(Instant::now() < until, "the item never reached JetStream");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut back = restart_node(&owner_addr, &dirs[owner], &clock, &nats.url(), &addrs).await;
        let served = wait_for_urls(&mut back.client).await;
        assert_eq!(served, [url]);
        back.stop().await;
        for n in nodes {
            n.stop().await;
        }
    });
}

#[test]
fn an_item_put_to_the_wrong_node_is_served_by_its_owner_and_a_restarted_node_goes_on() {
    with_nats(async |nats, dir| {
        let clock = TimeSource::manual(common::T0);
        let (mut nodes, addrs, dirs) = start_cluster(nats, dir, 3, &clock, "bfs").await;
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
        let mut back = restart_node(&owner_addr, &dirs[owner], &clock, &nats.url(), &addrs).await;
        clock.advance(2);
        let served = wait_for_urls(&mut back.client).await;
        assert_eq!(served, [second], "the lease of {url} still holds");

        // A message that does not decode is set aside and counted; the node goes on. It is
        // published on a connection of its own, so JetStream may store it after the next
        // item (a flush sends it, nothing says the stream holds it): the count is waited for.
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
        let until = Instant::now() + Duration::from_secs(30);
        let stats = loop {
            let stats = local_stats(&mut back.client).await;
            if stats.counts["crawlrank.dead_letters"] > 0 || Instant::now() > until {
                break stats;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(stats.counts["crawlrank.dead_letters"], 1, "{stats:?}");
        back.stop().await;
        for n in nodes {
            n.stop().await;
        }
    });
}

/// GetURLs until it returns something (items may still be on their way), for at most 30 s
/// (a loaded machine's fsyncs can take seconds each).
async fn wait_for_urls(client: &mut Client) -> Vec<String> {
    let until = Instant::now() + Duration::from_secs(30);
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
    with_nats(async |nats, dir| {
        let clock = TimeSource::manual(common::T0);
        let (nodes, addrs, _) = start_cluster(nats, dir, 2, &clock, "fica").await;
        let (ls, more) = listeners(1).await;
        let mut three = addrs.clone();
        three.push(more[0].clone());
        let join = ClusterConfig {
            nats: nats.url(),
            nodes: three.clone(),
            me: more[0].clone(),
        };
        let msg = refused_join(&dir.join("x"), &clock, "fica", &join).await;
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
        let msg = refused_join(&dir.join("y"), &clock, "bfs", &join).await;
        assert!(msg.contains("bfs") && msg.contains("fica"), "{msg}");
        // An unreachable NATS server: a clear error within seconds.
        let started = Instant::now();
        let port = crawlrank_testkit::free_port();
        let join = ClusterConfig {
            nats: format!("nats://127.0.0.1:{port}"),
            nodes: addrs.clone(),
            me: addrs[0].clone(),
        };
        let msg = refused_join(&dir.join("z"), &clock, "fica", &join).await;
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

/// A service config for policy `policy` expecting `expected` pages (OPIC's `n`; K = R/72).
fn config_expecting(dir: &Path, clock: &TimeSource, policy: &str, expected: u64) -> ServiceConfig {
    ServiceConfig {
        policy: Some(policy_spec(policy, Some(expected), None, 0).unwrap()),
        ..config(dir, clock, policy)
    }
}

/// OPIC's cash over the nodes, from each node's own counts: (total, in flight between nodes).
async fn opic_cash(nodes: &mut [Node]) -> (f64, f64) {
    let (mut held, mut sent, mut received, mut pages, mut n) = (0i128, 0i128, 0i128, 0u64, 0u64);
    for node in nodes.iter_mut() {
        let stats = node
            .client
            .get_stats(QueueWithinCrawlParams {
                local: true,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let c = |k: &str| stats.counts.get(k).copied().unwrap_or(0);
        held += i128::from(c("crawlrank.opic.held_e15"));
        sent += i128::from(c("crawlrank.opic.sent_e15"));
        received += i128::from(c("crawlrank.opic.received_e15"));
        pages += c("crawlrank.opic.pages");
        n = n.max(c("crawlrank.opic.total_pages"));
    }
    assert!(n > 0, "no node reports OPIC's cash");
    let unknown = n.saturating_sub(pages) as f64 / n as f64;
    (
        (held + sent - received) as f64 / 1e15 + unknown,
        (sent - received) as f64 / 1e15,
    )
}

#[test]
fn opic_cash_sums_to_one_over_three_nodes_and_after_a_node_restarts_mid_crawl() {
    with_nats(async |nats, dir| {
        let web = Web::new(300);
        let reachable = web.reachable();
        // OPIC's n is the pages the crawl will know: every page then starts with 1/n.
        let n = reachable.len() as u64;
        let clock = TimeSource::manual(common::T0);
        let (ls, addrs) = listeners(3).await;
        let dirs: Vec<PathBuf> = (0..3).map(|i| dir.join(format!("node{i}"))).collect();
        let mut nodes = Vec::new();
        for (l, dir) in ls.into_iter().zip(&dirs) {
            let config = config_expecting(dir, &clock, "opic", n);
            nodes.push(start_node_with(l, config, Some((&nats.url(), &addrs))).await);
        }
        let mut fetched = crawl(&mut nodes, &web, &clock, reachable.len() / 2).await;
        let (total, in_flight) = opic_cash(&mut nodes).await;
        assert!(
            (total - 1.0).abs() < 1e-9,
            "mid-crawl: the cash sums to {total}"
        );
        assert!(in_flight >= -1e-9, "{in_flight}");

        // Node 1 stops and starts again on its state; the crawl goes on.
        let stopped = nodes.remove(1);
        let addr = stopped.addr.clone();
        stopped.stop().await;
        let listener = tokio::net::TcpListener::bind(&addr).await.unwrap();
        let config = config_expecting(&dirs[1], &clock, "opic", n);
        nodes.insert(
            1,
            start_node_with(listener, config, Some((&nats.url(), &addrs))).await,
        );
        let (total, _) = opic_cash(&mut nodes).await;
        assert!(
            (total - 1.0).abs() < 1e-9,
            "after the restart: the cash sums to {total}"
        );
        fetched.extend(crawl(&mut nodes, &web, &clock, reachable.len() - fetched.len()).await);

        let set: BTreeSet<String> = fetched.iter().cloned().collect();
        assert_eq!(set.len(), fetched.len(), "a page was served twice");
        assert_eq!(set, reachable, "a discovered page was lost");
        // The last offers reach their owners; then no cash is in flight and the total is 1.
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let (total, in_flight) = opic_cash(&mut nodes).await;
            assert!((total - 1.0).abs() < 1e-9, "the cash sums to {total}");
            if in_flight.abs() < 1e-12 {
                break;
            }
            assert!(
                Instant::now() < until,
                "{in_flight} of cash stays in flight"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // A fanned-out GetStats adds the nodes' counts up but keeps the crawl's one `n`.
        let all = nodes[0]
            .client
            .get_stats(QueueWithinCrawlParams::default())
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            all.counts.get("crawlrank.opic.total_pages").copied(),
            Some(n),
            "{:?}",
            all.counts
        );
        for node in nodes {
            node.stop().await;
        }
    });
}

/// Every page's ranking score (−distance for FICA) on `nodes`, among those not yet fetched
/// (none on a node that has not yet heard of the crawl).
async fn scores(nodes: &mut [Node]) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    for node in nodes.iter_mut() {
        let ranking = node
            .ext
            .get_ranking(crawlrank_urlfrontier::ext_proto::RankingParams {
                crawl_id: String::new(),
                limit: 100_000,
            })
            .await;
        let mut stream = match ranking {
            Err(status) if status.code() == tonic::Code::NotFound => continue,
            r => r.unwrap().into_inner(),
        };
        while let Some(r) = stream.message().await.unwrap() {
            out.insert(r.url, r.score.unwrap());
        }
    }
    out
}

/// The pages of the tree `web` a crawl that fetched `fetched` has queued: the children of
/// the fetched pages not fetched themselves (the seed, page 0, before anything is fetched).
fn queued_in_tree(web: &Web, fetched: &BTreeSet<String>) -> BTreeSet<String> {
    if fetched.is_empty() {
        return BTreeSet::from([Web::url(0)]);
    }
    fetched
        .iter()
        .flat_map(|url| web.links[Web::page(url)].iter().map(|&l| Web::url(l)))
        .filter(|url| !fetched.contains(url))
        .collect()
}

/// Waits (at most 10 s) until the pages `nodes` have queued are `want`: the items a round
/// handed to other nodes travel through JetStream.
async fn wait_until_queued(nodes: &mut [Node], want: &BTreeSet<String>) {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let queued: BTreeSet<String> = scores(nodes).await.into_keys().collect();
        if queued == *want {
            return;
        }
        assert!(
            Instant::now() < until,
            "after 10 s the nodes have queued {} pages, not the {} expected; missing {:?}, extra {:?}",
            queued.len(),
            want.len(),
            want.difference(&queued).take(10).collect::<Vec<_>>(),
            queued.difference(want).take(10).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Crawls the tree `web` on `nodes` and on the lone service `one` in lock step, depth by
/// depth, so that both fetch the same pages whatever the timing: each round leases every
/// queued page (every queue, no limit per queue) at each node and at `one`, checks that both
/// leased the same pages, reports each with its out-links to the next node in turn (often
/// not its owner) and to `one`, and waits until the nodes have queued exactly the pages
/// the tree says (what crosses nodes has arrived). Stops after the round that brings the
/// pages fetched to `want` or more; returns them.
async fn crawl_in_step(
    nodes: &mut [Node],
    one: &mut Node,
    web: &Web,
    clock: &TimeSource,
    want: usize,
) -> BTreeSet<String> {
    let seed = Web::url(0);
    let last = nodes.len() - 1;
    assert_eq!(
        put(&mut nodes[last].client, vec![discovered(&seed)])
            .await
            .len(),
        1
    );
    assert_eq!(put(&mut one.client, vec![discovered(&seed)]).await.len(), 1);
    let mut fetched = BTreeSet::new();
    wait_until_queued(nodes, &queued_in_tree(web, &fetched)).await;
    let mut turn = 0;
    while fetched.len() < want {
        let mut leased = BTreeSet::new();
        for node in nodes.iter_mut() {
            leased.extend(get(&mut node.client, params(0, 60)).await);
        }
        let alone: BTreeSet<String> = get(&mut one.client, params(0, 60))
            .await
            .into_iter()
            .collect();
        assert_eq!(
            leased, alone,
            "the nodes and the one service leased different pages"
        );
        assert!(
            !leased.is_empty(),
            "nothing left to lease after {} pages",
            fetched.len()
        );
        for url in leased {
            let report = PageReport {
                page: Some(KnownUrlItem {
                    info: Some(common::info_in(&url, "", "")),
                    refetchable_from_date: 0,
                }),
                outlinks: web.links[Web::page(&url)]
                    .iter()
                    .map(|&l| Web::url(l))
                    .collect(),
            };
            turn += 1;
            let to = turn % nodes.len();
            nodes[to].ext.report_page(report.clone()).await.unwrap();
            one.ext.report_page(report).await.unwrap();
            fetched.insert(url);
        }
        clock.advance(2);
        wait_until_queued(nodes, &queued_in_tree(web, &fetched)).await;
    }
    fetched
}

#[test]
fn fica_distances_on_three_nodes_are_the_one_services() {
    // On a tree crawled within one batch (t = 0), a page's distance is log O(its parent)
    // whatever the order: the pages queued in both crawls must have the same distance.
    // Without the parents' offers, a link handed to another node would enter there as a
    // seed, at distance 0. Both crawls fetch the same pages (in lock step), so both queue the
    // same pages, the ones the tree says, however the nodes' timing goes.
    with_nats(async |nats, dir| {
        let web = Web::tree(400);
        // Few pages crawled (depth by depth, until at least this many), so that many are
        // still queued.
        const CRAWLED: usize = 40;
        let clock = TimeSource::manual(common::T0);
        let expected = 100_000;
        let (ls, _) = listeners(1).await;
        let config = config_expecting(&dir.join("one"), &clock, "fica", expected);
        let mut one = start_node_with(ls.into_iter().next().unwrap(), config, None).await;
        let (ls, addrs) = listeners(3).await;
        let mut nodes = Vec::new();
        for (i, l) in ls.into_iter().enumerate() {
            let dir = dir.join(format!("node{i}"));
            let config = config_expecting(&dir, &clock, "fica", expected);
            nodes.push(start_node_with(l, config, Some((&nats.url(), &addrs))).await);
        }
        let fetched = crawl_in_step(&mut nodes, &mut one, &web, &clock, CRAWLED).await;
        let queued = queued_in_tree(&web, &fetched);
        let alone = scores(std::slice::from_mut(&mut one)).await;
        let spread = scores(&mut nodes).await;
        assert!(
            alone.keys().eq(queued.iter()),
            "the one service queued other pages"
        );
        assert!(
            spread.keys().eq(queued.iter()),
            "the nodes queued other pages"
        );
        // The same every run: the pages fetched, hence queued, are fixed by the tree.
        assert!(queued.len() > 20, "only {} pages queued", queued.len());
        let mut away_from_seed = 0;
        for url in &queued {
            let (a, b) = (alone[url], spread[url]);
            assert!(
                (a - b).abs() < 1e-12,
                "{url}: distance {} on three nodes, {} on one service",
                -b,
                -a
            );
            away_from_seed += usize::from(a != 0.0);
        }
        assert!(away_from_seed > 10, "{away_from_seed}");
        for n in nodes.into_iter().chain([one]) {
            n.stop().await;
        }
    });
}

#[test]
fn the_batch_clock_counts_the_pages_the_other_nodes_crawled() {
    // Each node publishes its crawled count per crawl on the clock stream and reads the
    // others': what one node crawled shows in the others' count, and only in theirs.
    with_nats(async |nats, _| {
        let addrs: Vec<String> = ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]
            .map(String::from)
            .into();
        let spec = policy_spec("fica", Some(1000), None, 0).unwrap();
        let mut nodes = Vec::new();
        for me in &addrs {
            let config = ClusterConfig {
                nats: nats.url(),
                nodes: addrs.clone(),
                me: me.clone(),
            };
            nodes.push(
                crawlrank_frontier_service::Cluster::connect(&config, &spec)
                    .await
                    .unwrap(),
            );
        }
        let crawls = |a: u64, b: u64| vec![("DEFAULT".to_string(), a), ("other".to_string(), b)];
        nodes[0].tick_clock(&crawls(5, 0)).await.unwrap();
        nodes[1].tick_clock(&crawls(7, 2)).await.unwrap();
        nodes[2].tick_clock(&crawls(0, 0)).await.unwrap();
        // A second tick reads what the others published after this node's first.
        for (i, mine) in [crawls(5, 0), crawls(7, 2), crawls(0, 0)]
            .iter()
            .enumerate()
        {
            nodes[i].tick_clock(mine).await.unwrap();
        }
        assert_eq!(nodes[0].crawled_elsewhere(""), 7);
        assert_eq!(nodes[1].crawled_elsewhere("DEFAULT"), 5);
        assert_eq!(nodes[2].crawled_elsewhere(""), 12);
        assert_eq!(nodes[2].crawled_elsewhere("other"), 2);
        assert_eq!(nodes[1].crawled_elsewhere("other"), 0);
        assert_eq!(nodes[0].crawled_elsewhere("unknown"), 0);
        // Counts move on; a node's count is what it published last.
        nodes[0].tick_clock(&crawls(9, 1)).await.unwrap();
        nodes[2].tick_clock(&crawls(0, 0)).await.unwrap();
        assert_eq!(nodes[2].crawled_elsewhere(""), 16);
        assert_eq!(nodes[2].crawled_elsewhere("other"), 3);
    });
}

/// The `received` count of OPIC's cash (units of 1e-15) on the node `client` talks to.
async fn received_e15(client: &mut Client) -> u64 {
    let stats = local_stats(client).await;
    stats
        .counts
        .get("crawlrank.opic.received_e15")
        .copied()
        .unwrap_or(0)
}

/// A node down longer than JetStream's duplicate window sends an outbox item again under a
/// message id JetStream has forgotten (here: another id): the owner recognises the item by its
/// origin and number and applies it once, so the OPIC cash it carries is received once. An
/// item of another store incarnation of the same node, numbered alike, is another item.
#[test]
fn an_outbox_item_sent_again_past_the_duplicate_window_is_applied_once() {
    with_nats(async |nats, dir| {
        let clock = TimeSource::manual(common::T0);
        let (ls, addrs) = listeners(2).await;
        let mut nodes = Vec::new();
        for (i, l) in ls.into_iter().enumerate() {
            let dir = dir.join(format!("node{i}"));
            let config = config_expecting(&dir, &clock, "opic", 10);
            nodes.push(start_node_with(l, config, Some((&nats.url(), &addrs))).await);
        }
        let sorted = Nodes::new(&addrs, &addrs[0]).unwrap();
        let url = (0..HOSTS)
            .map(Web::url)
            .find(|u| sorted.owner_of_url("", "", u) == Some(1))
            .unwrap();
        let receiver = nodes
            .iter()
            .position(|n| n.addr == sorted.list()[1])
            .unwrap();
        // What node 0's outbox sends node 1: `cash` along a link to `url`.
        let item = |incarnation, number, cash| Forwarded {
            item: Some(forwarded::Item::Put(discovered(&url))),
            offer: Some(WireOffer {
                outdegree: 4,
                cash,
                ..Default::default()
            }),
            version: 2,
            origin: Some(Origin {
                node: 0,
                incarnation,
                number,
            }),
        };
        let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
        let publish = |id: &'static str, f: Forwarded| {
            let js = js.clone();
            async move {
                let message = async_nats::jetstream::message::PublishMessage::build()
                    .payload(prost::Message::encode_to_vec(&f).into())
                    .message_id(id);
                js.send_publish("crawlrank.frontier.node.1", message)
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            }
        };
        let wait_for = |want: u64, client: Client| async move {
            let mut client = client;
            let until = Instant::now() + Duration::from_secs(10);
            loop {
                let got = received_e15(&mut client).await;
                if got >= want || Instant::now() > until {
                    return got;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        let client = nodes[receiver].client.clone();
        publish("first copy", item(42, 0, 0.25)).await;
        assert_eq!(
            wait_for(250_000_000_000_000, client.clone()).await,
            250_000_000_000_000
        );
        // The same item again, as a node sends it after a crash between JetStream's ack and
        // its outbox's delete, past the duplicate window; then another store's item 0, which
        // the receiver applies after the copy (it reads its subject in order).
        publish("copy past the window", item(42, 0, 0.25)).await;
        publish("another incarnation", item(43, 0, 0.125)).await;
        let got = wait_for(375_000_000_000_000, client).await;
        assert_eq!(
            got, 375_000_000_000_000,
            "the copy's cash was applied again"
        );
        let stats = local_stats(&mut nodes[receiver].client).await;
        assert_eq!(stats.counts["crawlrank.dead_letters"], 0, "{stats:?}");
        for n in nodes {
            n.stop().await;
        }
    });
}
