//! Helpers shared by the service's integration tests (grpc, extension, conformance): a
//! service on 127.0.0.1:0 with a manual clock, tonic clients of both services, and the
//! URLFrontier calls in a line each. Every test body runs under a timeout.

#![allow(dead_code)]

use crawlrank_frontier_service::{
    policy_spec, spawn, FrontierService, RunningServer, ServiceConfig, TimeSource,
};
use crawlrank_urlfrontier::ext_proto::crawlrank_frontier_client::CrawlrankFrontierClient;
use crawlrank_urlfrontier::proto::{
    ack_message::Status as AckStatus, get_params, url_frontier_client::UrlFrontierClient, url_item,
    Active, BlockQueueParams, CrawlLimitParams, DiscoveredUrlItem, GetParams, KnownUrlItem, Local,
    Pagination, QueueDelayParams, QueueWithinCrawlParams, Stats, StringList, UrlInfo, UrlItem,
    UrlStatusRequest,
};
use crawlrank_urlfrontier::PARENT_KEY;
use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
use std::time::Duration;
use tonic::transport::Channel;

pub type Client = UrlFrontierClient<Channel>;
pub type ExtClient = CrawlrankFrontierClient<Channel>;

/// The manual clock's start: 2025-01-01.
pub const T0: u64 = 1_735_689_600;

/// Runs a test body on a runtime of its own, failing it after 60 s.
pub fn run<F: Future<Output = ()>>(body: F) {
    run_within(Duration::from_secs(60), body);
}

/// A runtime of 2 threads for a test's service and clients.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs a test body on a runtime of its own, failing it after `limit`.
pub fn run_within<F: Future<Output = ()>>(limit: Duration, body: F) {
    runtime().block_on(async {
        tokio::time::timeout(limit, body)
            .await
            .unwrap_or_else(|_| panic!("the test took more than {limit:?}"));
    });
}

pub struct Running {
    pub server: RunningServer,
    pub client: Client,
    pub ext: ExtClient,
}

/// The configuration of a service on `dir` with `clock` (policy `policy` for a new state).
pub fn config(dir: &Path, clock: &TimeSource, policy: Option<&str>) -> ServiceConfig {
    ServiceConfig {
        policy: policy.map(|p| policy_spec(p, None, None, 0).unwrap()),
        time: clock.clone(),
        ..ServiceConfig::new(dir)
    }
}

/// A service on `dir` (policy `policy` for a new state) on 127.0.0.1:0, with both clients.
pub async fn start(dir: &Path, clock: &TimeSource, policy: Option<&str>) -> Running {
    let service = FrontierService::open(config(dir, clock, policy)).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = spawn(service, listener).unwrap();
    let url = format!("http://{}", server.addr());
    let connect = async {
        let client = UrlFrontierClient::connect(url.clone()).await.unwrap();
        let ext = CrawlrankFrontierClient::connect(url.clone()).await.unwrap();
        (client, ext)
    };
    let (client, ext) = tokio::time::timeout(Duration::from_secs(10), connect)
        .await
        .expect("connecting took more than 10 s");
    Running {
        server,
        client,
        ext,
    }
}

pub fn info_in(url: &str, key: &str, crawl: &str) -> UrlInfo {
    UrlInfo {
        url: url.to_string(),
        key: key.to_string(),
        crawl_id: crawl.to_string(),
        ..Default::default()
    }
}

pub fn with_parent(mut info: UrlInfo, parent: &str) -> UrlInfo {
    info.metadata.insert(
        PARENT_KEY.to_string(),
        StringList {
            values: vec![parent.to_string()],
        },
    );
    info
}

pub fn discovered_item(info: UrlInfo) -> UrlItem {
    UrlItem {
        item: Some(url_item::Item::Discovered(DiscoveredUrlItem {
            info: Some(info),
        })),
        ..Default::default()
    }
}

pub fn known_item(info: UrlInfo, refetch: u64) -> UrlItem {
    UrlItem {
        item: Some(url_item::Item::Known(KnownUrlItem {
            info: Some(info),
            refetchable_from_date: refetch,
        })),
        ..Default::default()
    }
}

pub fn discovered(url: &str) -> UrlItem {
    discovered_item(info_in(url, "", ""))
}

/// Sends items on one PutURLs stream; returns the acks' statuses.
pub async fn put(client: &mut Client, items: Vec<UrlItem>) -> Vec<AckStatus> {
    let acks = put_with_ids(client, items).await;
    acks.into_iter().map(|(_, status)| status).collect()
}

/// Sends items on one PutURLs stream; returns the acks' ids and statuses.
pub async fn put_with_ids(client: &mut Client, items: Vec<UrlItem>) -> Vec<(String, AckStatus)> {
    let mut acks = client
        .put_ur_ls(tokio_stream::iter(items))
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    while let Some(ack) = acks.message().await.unwrap() {
        out.push((ack.id.clone(), ack.status()));
    }
    out
}

/// GetURLs of the default crawl: `max_per_queue` per queue (0: any), leased `lease` s.
pub fn params(max_per_queue: u32, lease: u32) -> GetParams {
    GetParams {
        max_urls_per_queue: max_per_queue,
        delay_requestable: lease,
        item: Some(get_params::Item::CrawlId(String::new())),
        ..Default::default()
    }
}

pub fn params_for_key(key: &str, max_per_queue: u32, lease: u32) -> GetParams {
    GetParams {
        key: key.to_string(),
        ..params(max_per_queue, lease)
    }
}

/// The URLs a GetURLs call returns.
pub async fn get(client: &mut Client, params: GetParams) -> Vec<String> {
    let mut stream = client.get_ur_ls(params).await.unwrap().into_inner();
    let mut out = Vec::new();
    while let Some(info) = stream.message().await.unwrap() {
        out.push(info.url);
    }
    out
}

pub async fn stats(client: &mut Client, crawl: &str, key: &str) -> Stats {
    client
        .get_stats(QueueWithinCrawlParams {
            key: key.to_string(),
            crawl_id: crawl.to_string(),
            local: false,
        })
        .await
        .unwrap()
        .into_inner()
}

/// GetURLStatus of `url` in the default crawl (its queue found from the URL).
pub async fn url_status(client: &mut Client, url: &str) -> Result<UrlItem, tonic::Status> {
    let request = UrlStatusRequest {
        url: url.to_string(),
        ..Default::default()
    };
    client.get_url_status(request).await.map(|r| r.into_inner())
}

/// The metadata of `url` in the default crawl, which must be known and never fetched (a
/// discovered item; the test fails otherwise).
pub async fn discovered_metadata(client: &mut Client, url: &str) -> HashMap<String, StringList> {
    match url_status(client, url).await.unwrap().item {
        Some(url_item::Item::Discovered(d)) => d.info.unwrap().metadata,
        other => panic!("{url} is not a discovered item: {other:?}"),
    }
}

/// DeleteQueue of queue `key` in the default crawl: the URLs it removed.
pub async fn delete_queue(client: &mut Client, key: &str) -> u64 {
    let queue = QueueWithinCrawlParams {
        key: key.to_string(),
        ..Default::default()
    };
    client.delete_queue(queue).await.unwrap().into_inner().value
}

/// BlockQueueUntil: queue `key` of the default crawl serves nothing before `time`.
pub async fn block_queue(client: &mut Client, key: &str, time: u64) {
    let block = BlockQueueParams {
        key: key.to_string(),
        time,
        ..Default::default()
    };
    client.block_queue_until(block).await.unwrap();
}

/// SetDelay: queue `key` of the default crawl (`""`: the crawl's default) waits `secs`
/// between two URLs served.
pub async fn set_delay(client: &mut Client, key: &str, secs: u32) {
    let delay = QueueDelayParams {
        key: key.to_string(),
        delay_requestable: secs,
        ..Default::default()
    };
    client.set_delay(delay).await.unwrap();
}

/// SetCrawlLimit: queue `key` of the default crawl serves `limit` URLs at most (0: no
/// limit).
pub async fn set_crawl_limit(
    client: &mut Client,
    key: &str,
    limit: u32,
) -> Result<(), tonic::Status> {
    let params = CrawlLimitParams {
        key: key.to_string(),
        limit,
        ..Default::default()
    };
    client.set_crawl_limit(params).await.map(|_| ())
}

/// SetActive: whether the service serves URLs at all.
pub async fn set_active(client: &mut Client, state: bool) {
    let active = Active {
        state,
        local: false,
    };
    client.set_active(active).await.unwrap();
}

/// ListQueues of the default crawl, first page: the active queues' keys.
pub async fn queue_keys(client: &mut Client) -> Vec<String> {
    let list = client.list_queues(Pagination::default()).await.unwrap();
    list.into_inner().values
}

/// The setup of most tests: a service on a fresh state directory (policy `policy`), its
/// manual clock at [`T0`], and both clients. The directory lives as long as the returned
/// guard; a test restarting the service passes `dir.path()` and `&clock` to [`start`].
pub async fn start_fresh(policy: Option<&str>) -> (tempfile::TempDir, TimeSource, Running) {
    let dir = tempfile::tempdir().unwrap();
    let clock = TimeSource::manual(T0);
    let running = start(dir.path(), &clock, policy).await;
    (dir, clock, running)
}

/// Runs `test` on a fresh service (as [`start_fresh`] sets it up) with its manual clock and
/// the running service, then shuts the service down: the frame of most tests, so that each
/// says only what it checks.
pub fn with_fresh(policy: Option<&str>, test: impl AsyncFnOnce(&TimeSource, &mut Running)) {
    run(async {
        let (_dir, clock, mut running) = start_fresh(policy).await;
        test(&clock, &mut running).await;
        running.server.shutdown().await.unwrap();
    });
}

/// ListCrawls over the whole cluster: the crawl ids the service holds.
pub async fn list_crawl_ids(client: &mut Client) -> Vec<String> {
    let crawls = client.list_crawls(Local::default()).await.unwrap();
    crawls.into_inner().values
}
