//! A frontier of N nodes (`crawlrank frontier serve --nats URL --nodes A1,…,AN`): each node
//! owns the queues that URLFrontier 2.6's rule gives it and keeps them, with their policy
//! state, leases, delays and blocks, in its own store, exactly as a single service does.
//! The nodes hand each other the items they accept for queues they do not own through NATS
//! JetStream, a durable log, so that an acknowledged item is never lost whichever process
//! dies. docs/scaling.md is the user's guide.
//!
//! - Ownership ([`Nodes::owner`]): URLFrontier's own rule, so that a client that knows it
//!   (StormCrawler's spout) agrees with the cluster: Java's `String.hashCode` of
//!   `crawlID + "_" + key` (each part's `_` written `%5F`), `Math.abs(hash % N)`, an index into
//!   the node list sorted.
//! - Forwarding ([`Cluster::forward`]): an item owned elsewhere is published on the owner's
//!   subject of the stream [`STREAM`] and acknowledged to the client only once JetStream has
//!   stored it.
//! - Applying exactly once ([`Cluster::run_consumer`]): each node reads its subject in
//!   sequence order and applies the items with the service's ordinary calls; the JetStream
//!   sequence of the last item applied is written in the same store transaction as the change
//!   ([`crate::store::Store::append`]), so an item delivered again after a crash is recognised
//!   and skipped. On start the node purges its subject up to what it has applied and reads
//!   from the next sequence, so nothing is skipped that was not applied.
//! - What a page passes along its links ([`Cluster::split_report`], [`hand_on`]): the owner of
//!   a fetched page reports it with the out-links it owns, the others counted in the page's
//!   out-degree; the policy's offer for them (FICA's and IECA's distance, OPIC's cash share, a
//!   back-link) goes with each into the store's outbox in the same transaction, and the
//!   outbox is published ([`Cluster::publish_outbox`]) after the commit, each item marked
//!   with its [`Origin`] (this node, its store's incarnation, its number to its owner), which
//!   the owner records with the change ([`crate::store::Received`]): the offer leaves the page
//!   once and is applied once at the link's owner however late a copy sent again after a
//!   crash comes, past JetStream's duplicate window too (docs/algorithms.md §3.11).
//! - The crawl-wide clock ([`Cluster::tick_clock`], stream [`CLOCK`]): each node publishes its
//!   crawled count per crawl every [`CLOCK_PERIOD`] and reads the others', so that the
//!   policies' batch clock counts the crawl's total.
//! - Bad messages: a message that does not decode is set aside in the store's dead-letter
//!   table (in the same transaction that moves the applied sequence past it) and counted;
//!   it never stops the node.
//! - The cluster's identity: the sorted node list and the policy are recorded in the
//!   stream [`IDENTITY`] by the first node to start; a node started with another list
//!   or policy is refused, naming both.

use crate::crawl::host_key;
use crate::ext_proto::PageReport;
use crate::proto::url_frontier_client::UrlFrontierClient;
use crate::proto::StringList;
use crate::proto::{url_item, UrlInfo, UrlItem};
use crate::state::{wire_offer, RemoteLink, SplitReport};
use crate::store::OutboxItem;
use anyhow::{bail, Context, Result};
use async_nats::jetstream::{self, consumer, stream};
use crawlrank_frontier::Offer;
use crawlrank_frontier::PolicySpec;
use crawlrank_urlfrontier::cluster_proto::{forwarded, Forwarded, Offer as WireOffer, Origin};
use crawlrank_urlfrontier::{normalise_crawl_id, PARENT_KEY};
use futures_util::StreamExt;
use prost::Message;
use std::collections::HashSet;
use std::time::Duration;
use tonic::transport::{Channel, Endpoint};
use tonic::Status;

/// The JetStream stream of forwarded items; node `i` (of the sorted list) reads the subject
/// `crawlrank.frontier.node.<i>`.
pub const STREAM: &str = "CRAWLRANK_FRONTIER";
/// The JetStream stream holding the cluster's node list and policy (one message per subject).
pub const IDENTITY: &str = "CRAWLRANK_CLUSTER";
/// The JetStream stream of the crawl-wide clock: node `i` publishes the pages of crawl `c` it
/// has crawled on `crawlrank.clock.<i>.<c as hex>`, one message kept per subject.
pub const CLOCK: &str = "CRAWLRANK_CLOCK";
/// How often a node publishes its crawled counts and reads the others'. The count a node
/// uses for the others is at most about two periods old (docs/algorithms.md §3.11).
pub const CLOCK_PERIOD: Duration = Duration::from_secs(1);
/// How long connecting to the NATS server may take before a node gives up at start.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a call that fans out, or goes to a queue's owner, waits for a node that cannot be
/// reached (restarting) before it fails.
pub const PEER_PATIENCE: Duration = Duration::from_secs(15);
/// Most forwarded items a node applies in one store transaction.
const APPLY_BATCH: usize = 512;
/// How long a JetStream delivery waits for its ack before the server delivers it again: a
/// delivery the node never saw (a pull that broke off or expired as it came) is late by this
/// much. A batch is applied and committed well within it, and a redelivery of an item
/// applied already is recognised by its sequence, so a short wait costs nothing.
const ACK_WAIT: Duration = Duration::from_secs(10);

/// Java's `String.hashCode`: `s[0]*31^(n-1) + … + s[n-1]` over the UTF-16 code units, in
/// wrapping 32-bit arithmetic.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The name URLFrontier hashes for a queue: `crawlID_key`, the crawl id normalised (empty:
/// `DEFAULT`) and each part's `_` escaped as `%5F`.
pub fn queue_name(crawl_id: &str, key: &str) -> String {
    format!(
        "{}_{}",
        normalise_crawl_id(crawl_id).replace('_', "%5F"),
        key.replace('_', "%5F")
    )
}

/// A cluster's nodes: the addresses sorted, and which one this node is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nodes {
    sorted: Vec<String>,
    me: usize,
}

impl Nodes {
    /// The nodes `list` names (in any order), this node being `me`, which must be one of
    /// them; duplicates and empty names are refused.
    pub fn new(list: &[String], me: &str) -> Result<Self> {
        let mut sorted: Vec<String> = list.iter().map(|s| s.trim().to_string()).collect();
        if let Some(empty) = sorted.iter().position(|s| s.is_empty()) {
            bail!("the node list names an empty address (entry {})", empty + 1);
        }
        sorted.sort();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            bail!("the node list names {} twice", w[0]);
        }
        let me = sorted.iter().position(|s| s == me).with_context(|| {
            format!(
                "this node's address {me} is not in the node list {}; give --addr as one of --nodes",
                sorted.join(",")
            )
        })?;
        Ok(Self { sorted, me })
    }

    /// The addresses, sorted.
    pub fn list(&self) -> &[String] {
        &self.sorted
    }

    /// This node's index in [`Nodes::list`].
    pub fn me(&self) -> usize {
        self.me
    }

    /// The index of the node owning queue `key` of crawl `crawl_id`: URLFrontier 2.6's
    /// `Math.abs(hash % N)`.
    pub fn owner(&self, crawl_id: &str, key: &str) -> usize {
        owner_of(&queue_name(crawl_id, key), self.sorted.len())
    }

    /// The owner of a URL's queue (its key, or its host when the key is empty); `None` for a
    /// URL with no host and no key (the owner would refuse it anyway: this node does).
    pub fn owner_of_url(&self, crawl_id: &str, key: &str, url: &str) -> Option<usize> {
        if !key.is_empty() {
            return Some(self.owner(crawl_id, key));
        }
        host_key(url).map(|host| self.owner(crawl_id, &host))
    }
}

/// `Math.abs(java_string_hash(name) % n)`.
fn owner_of(name: &str, n: usize) -> usize {
    let n = i32::try_from(n.max(1)).unwrap_or(i32::MAX);
    (java_string_hash(name) % n).unsigned_abs() as usize
}

/// The subject node `i` reads.
pub fn subject(i: usize) -> String {
    format!("crawlrank.frontier.node.{i}")
}

/// The subject of node `i`'s crawled count of crawl `crawl` (its id in hex: any id is a
/// valid subject token).
fn clock_subject(i: usize, crawl: &str) -> String {
    let hex: String = crawl.bytes().map(|b| format!("{b:02x}")).collect();
    format!("crawlrank.clock.{i}.{hex}")
}

/// The durable consumer of node `i`.
fn consumer_name(i: usize) -> String {
    format!("crawlrank-node-{i}")
}

/// The owner of an item accepted by `PutURLs`, if it is a URL with a queue.
pub fn owner_of_item(nodes: &Nodes, item: &UrlItem) -> Option<usize> {
    let info = match &item.item {
        Some(url_item::Item::Discovered(d)) => d.info.as_ref(),
        Some(url_item::Item::Known(k)) => k.info.as_ref(),
        None => None,
    }?;
    nodes.owner_of_url(&info.crawl_id, &info.key, &info.url)
}

/// How to join a cluster.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// The NATS server (`nats://127.0.0.1:4222`; a comma-separated list for a NATS cluster).
    pub nats: String,
    /// Every node's address, this one's included.
    pub nodes: Vec<String>,
    /// This node's address, as in `nodes`.
    pub me: String,
}

/// A node's connection to its cluster (cheap to share behind an `Arc`).
pub struct Cluster {
    nodes: Nodes,
    js: jetstream::Context,
    stream: stream::Stream,
    /// A gRPC channel to each node (connected on first use), for the calls that fan out or
    /// go to a queue's owner.
    channels: Vec<Channel>,
    /// The stream [`CLOCK`].
    clock: stream::Stream,
    /// Pages of each crawl the other nodes have crawled, as last read from [`CLOCK`].
    elsewhere: std::sync::Mutex<std::collections::HashMap<String, u64>>,
    /// What this node last published on [`CLOCK`], per crawl.
    published: std::sync::Mutex<std::collections::HashMap<String, u64>>,
}

impl Cluster {
    /// Connects to the NATS server (failing within [`CONNECT_TIMEOUT`] when it cannot be
    /// reached), creates the streams if they are missing, and checks this node's
    /// list and policy against the cluster's recorded ones (recording them if none are).
    pub async fn connect(config: &ClusterConfig, policy: &PolicySpec) -> Result<Self> {
        let nodes = Nodes::new(&config.nodes, &config.me)?;
        let client = tokio::time::timeout(
            CONNECT_TIMEOUT + Duration::from_secs(1),
            async_nats::ConnectOptions::new()
                .connection_timeout(CONNECT_TIMEOUT)
                .name(format!("crawlrank frontier node {}", config.me))
                .connect(config.nats.as_str()),
        )
        .await
        .map_err(|_| anyhow::anyhow!("no answer within {CONNECT_TIMEOUT:?}"))
        .and_then(|r| r.map_err(anyhow::Error::from))
        .with_context(|| format!("cannot reach the NATS server {}", config.nats))?;
        let js = jetstream::new(client);
        let stream = js
            .get_or_create_stream(stream::Config {
                name: STREAM.to_string(),
                subjects: vec!["crawlrank.frontier.node.*".to_string()],
                retention: stream::RetentionPolicy::WorkQueue,
                storage: stream::StorageType::File,
                ..Default::default()
            })
            .await
            .with_context(|| {
                format!(
                    "cannot open the JetStream stream {STREAM} on {} (is JetStream enabled: \
                     nats-server -js?)",
                    config.nats
                )
            })?;
        let identity = latest_only_stream(&js, IDENTITY, "crawlrank.cluster.*").await?;
        let clock = latest_only_stream(&js, CLOCK, "crawlrank.clock.>").await?;
        let list = nodes.list().join(",");
        record_or_check(&js, &identity, "nodes", &list, "node list").await?;
        let policy_text = policy.encode().trim_end().replace('\n', " ");
        record_or_check(&js, &identity, "policy", &policy_text, "policy").await?;
        let channels = nodes
            .list()
            .iter()
            .map(|a| {
                Ok(Endpoint::from_shared(format!("http://{a}"))
                    .with_context(|| format!("'{a}' is not a node address (HOST:PORT)"))?
                    .connect_timeout(Duration::from_secs(2))
                    .connect_lazy())
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            nodes,
            js,
            stream,
            channels,
            clock,
            elsewhere: Default::default(),
            published: Default::default(),
        })
    }

    /// A URLFrontier client of node `i`.
    pub fn client(&self, i: usize) -> UrlFrontierClient<Channel> {
        UrlFrontierClient::new(self.channels[i].clone())
    }

    /// Calls `call` on every other node (with `local` set by the caller), waiting up to
    /// [`PEER_PATIENCE`] for a node that is unreachable (restarting), and returns their
    /// answers; a node still unreachable then fails the whole call, naming it (a partial sum
    /// would be a plausible wrong answer).
    pub async fn on_others<T, F, Fut>(&self, call: F) -> std::result::Result<Vec<T>, Status>
    where
        F: Fn(UrlFrontierClient<Channel>) -> Fut,
        Fut: std::future::Future<Output = std::result::Result<T, Status>>,
    {
        let mut out = Vec::new();
        for i in (0..self.nodes.list().len()).filter(|&i| i != self.nodes.me()) {
            out.push(self.on_node(i, &call).await?);
        }
        Ok(out)
    }

    /// Calls `call` on node `i`, waiting up to [`PEER_PATIENCE`] while it is unreachable.
    pub async fn on_node<T, F, Fut>(&self, i: usize, call: F) -> std::result::Result<T, Status>
    where
        F: Fn(UrlFrontierClient<Channel>) -> Fut,
        Fut: std::future::Future<Output = std::result::Result<T, Status>>,
    {
        let until = tokio::time::Instant::now() + PEER_PATIENCE;
        loop {
            match call(self.client(i)).await {
                Err(s)
                    if s.code() == tonic::Code::Unavailable
                        && tokio::time::Instant::now() < until =>
                {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(s) => {
                    return Err(Status::new(
                        s.code(),
                        format!(
                            "node {} of the cluster: {}",
                            self.nodes.list()[i],
                            s.message()
                        ),
                    ))
                }
                Ok(t) => return Ok(t),
            }
        }
    }

    /// The cluster's nodes.
    pub fn nodes(&self) -> &Nodes {
        &self.nodes
    }

    /// Publishes each item on its owner's subject and waits until JetStream has stored every
    /// one (an ack of the stream: durable on the NATS server). An item JetStream did not
    /// store (the server restarting) is published again for up to [`PEER_PATIENCE`]; an item
    /// stored twice is harmless, as applying one is idempotent.
    pub async fn forward(&self, items: Vec<(usize, Forwarded)>) -> Result<()> {
        let until = tokio::time::Instant::now() + PEER_PATIENCE;
        let mut todo: Vec<(usize, Vec<u8>)> = items
            .into_iter()
            .map(|(owner, item)| (owner, item.encode_to_vec()))
            .collect();
        loop {
            let mut acks = Vec::with_capacity(todo.len());
            for (owner, bytes) in &todo {
                let ack = self.js.publish(subject(*owner), bytes.clone().into()).await;
                acks.push(ack);
            }
            let mut failed = Vec::new();
            let mut why = None;
            for ((owner, bytes), ack) in todo.into_iter().zip(acks) {
                let stored = match ack {
                    Ok(ack) => ack.await.map(|_| ()).map_err(anyhow::Error::from),
                    Err(e) => Err(anyhow::Error::from(e)),
                };
                if let Err(e) = stored {
                    why = Some(e);
                    failed.push((owner, bytes));
                }
            }
            match why {
                None => return Ok(()),
                Some(e) if tokio::time::Instant::now() >= until => {
                    return Err(e.context(format!(
                        "JetStream did not store {} items handed to their owners",
                        failed.len()
                    )))
                }
                Some(_) => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    todo = failed;
                }
            }
        }
    }

    /// A fetched page's report as this node (its owner) applies it: the out-links it owns
    /// stay in the report, the others are listed with their owners, and the pages the other
    /// nodes have crawled are noted for the batch clock.
    pub fn split_report(&self, report: &PageReport) -> SplitReport {
        let page = report.page.as_ref().and_then(|p| p.info.as_ref());
        let crawl = page.map_or("", |i| i.crawl_id.as_str());
        let mut local = Vec::new();
        let mut remote = Vec::new();
        let mut seen = HashSet::new();
        for link in &report.outlinks {
            if !seen.insert(link.as_str()) {
                continue;
            }
            match self.nodes.owner_of_url(crawl, "", link) {
                Some(o) if o != self.nodes.me() => remote.push(RemoteLink {
                    url: link.clone(),
                    owner: u32::try_from(o).unwrap_or(u32::MAX),
                }),
                // Ours, or not a URL: the local report counts it as invalid.
                _ => local.push(link.clone()),
            }
        }
        SplitReport {
            report: Some(PageReport {
                page: report.page.clone(),
                outlinks: local,
            }),
            remote,
            crawled_elsewhere: self.crawled_elsewhere(crawl),
        }
    }

    /// Pages of crawl `crawl` the other nodes have crawled, as this node last read them
    /// ([`Cluster::tick_clock`]; 0 until it has).
    pub fn crawled_elsewhere(&self, crawl: &str) -> u64 {
        let crawl = crawlrank_urlfrontier::normalise_crawl_id(crawl);
        let map = self.elsewhere.lock().unwrap_or_else(|p| p.into_inner());
        map.get(crawl).copied().unwrap_or(0)
    }

    /// One tick of the crawl-wide clock: publishes the pages of each crawl this node has
    /// crawled (`mine`, by crawl id) where they changed, and reads every other node's last
    /// count of the same crawls.
    pub async fn tick_clock(&self, mine: &[(String, u64)]) -> Result<()> {
        let me = self.nodes.me();
        for (crawl, n) in mine {
            let changed = {
                let published = self.published.lock().unwrap_or_else(|p| p.into_inner());
                published.get(crawl) != Some(n)
            };
            if changed {
                self.js
                    .publish(clock_subject(me, crawl), n.to_string().into())
                    .await?
                    .await
                    .context("cannot publish this node's crawled count")?;
                self.published
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(crawl.clone(), *n);
            }
        }
        for (crawl, _) in mine {
            let mut sum = 0;
            for i in (0..self.nodes.list().len()).filter(|&i| i != me) {
                // No message yet: that node has crawled nothing of this crawl.
                if let Ok(m) = self
                    .clock
                    .get_last_raw_message_by_subject(&clock_subject(i, crawl))
                    .await
                {
                    sum += std::str::from_utf8(&m.payload)
                        .ok()
                        .and_then(|t| t.parse::<u64>().ok())
                        .unwrap_or(0);
                }
            }
            self.elsewhere
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(crawl.clone(), sum);
        }
        Ok(())
    }

    /// Publishes outbox items of this node's store `incarnation` on their owners' subjects,
    /// each marked with its [`Origin`] (this node, the incarnation, its number to its owner:
    /// the owner applies it once however late a copy comes) and a message id made of the
    /// same (so that JetStream drops a copy sent again within its duplicate window), and
    /// returns the outbox numbers JetStream stored. The publishes are pipelined: an item may
    /// be stored while an earlier one failed and is sent again later, which the owner's
    /// record of what it applied allows ([`crate::store::Received`]).
    pub async fn publish_outbox(&self, incarnation: u64, items: &[OutboxItem]) -> Vec<u64> {
        let me = self.nodes.me();
        let mut acks = Vec::with_capacity(items.len());
        for item in items {
            let origin = Origin {
                node: u32::try_from(me).unwrap_or(u32::MAX),
                incarnation,
                number: item.to_owner,
            };
            // An item that does not decode is sent as it is: its owner sets it aside.
            let payload = match Forwarded::decode(item.item.as_slice()) {
                Ok(mut f) => {
                    f.origin = Some(origin);
                    f.encode_to_vec()
                }
                Err(_) => item.item.clone(),
            };
            let message = jetstream::message::PublishMessage::build()
                .payload(payload.into())
                .message_id(format!(
                    "crawlrank-outbox-{me}-{incarnation:x}-{}-{}",
                    item.owner, item.to_owner
                ));
            let ack = self
                .js
                .send_publish(subject(item.owner as usize), message)
                .await;
            acks.push((item.number, ack));
        }
        let mut stored = Vec::new();
        for (number, ack) in acks {
            if let Ok(ack) = ack {
                if ack.await.is_ok() {
                    stored.push(number);
                }
            }
        }
        stored
    }

    /// Reads this node's subject from the sequence after `applied`, in order, and hands each
    /// batch to `apply` (which applies it and commits it with its last sequence), then
    /// acknowledges the batch to JetStream. A JetStream failure (the NATS server restarting)
    /// is retried every second, reading again from the first item not applied; it returns
    /// only when `apply` fails.
    pub async fn run_consumer<F, Fut>(&self, applied: u64, mut apply: F) -> Result<()>
    where
        F: FnMut(Vec<Delivered>) -> Fut,
        Fut: std::future::Future<Output = Result<()>>,
    {
        let mut applied = applied;
        loop {
            match self.consume(&mut applied, &mut apply).await {
                Stop::Apply(e) => return Err(e),
                Stop::Nats(e) => {
                    tracing::warn!(
                        "frontier: reading this node's items from JetStream failed ({e:#}); \
                         trying again from item {} in 1 s",
                        applied + 1
                    );
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }

    /// One run of [`Cluster::run_consumer`], from a new consumer starting after `applied`.
    async fn consume<F, Fut>(&self, applied: &mut u64, apply: &mut F) -> Stop
    where
        F: FnMut(Vec<Delivered>) -> Fut,
        Fut: std::future::Future<Output = Result<()>>,
    {
        let me = self.nodes.me();
        // Items up to `applied` are in the store already: drop them, and start a consumer at
        // the first item not applied, so that items come in sequence order and none is
        // skipped that was not applied. With none applied there is nothing to drop, and no
        // purge is asked: a purge "below sequence 1" drops *every* item of the subject
        // (nats-server 2.9 takes a sequence of 1 as none given), which lost the items sent to a
        // node before it first read them.
        if *applied > 0 {
            if let Err(e) = self
                .stream
                .purge()
                .filter(subject(me))
                .sequence(*applied + 1)
                .await
            {
                return Stop::Nats(anyhow::Error::from(e).context("cannot drop the applied items"));
            }
        }
        let name = consumer_name(me);
        let _ = self.stream.delete_consumer(&name).await;
        let consumer: consumer::PullConsumer = match self
            .stream
            .create_consumer(consumer::pull::Config {
                durable_name: Some(name.clone()),
                filter_subject: subject(me),
                // Everything left on the subject (a work-queue stream allows no other start):
                // after the purge, the items after `applied`.
                deliver_policy: consumer::DeliverPolicy::All,
                ack_policy: consumer::AckPolicy::Explicit,
                ack_wait: ACK_WAIT,
                max_ack_pending: (APPLY_BATCH * 4) as i64,
                ..Default::default()
            })
            .await
        {
            Ok(c) => c,
            Err(e) => {
                return Stop::Nats(
                    anyhow::Error::from(e).context(format!("cannot create the consumer {name}")),
                )
            }
        };
        loop {
            let mut batch = match consumer
                .fetch()
                .max_messages(APPLY_BATCH)
                .expires(Duration::from_millis(500))
                .messages()
                .await
            {
                Ok(b) => b,
                Err(e) => return Stop::Nats(anyhow::Error::from(e).context("cannot fetch")),
            };
            let mut delivered = Vec::new();
            let mut messages = Vec::new();
            let mut broke = None;
            while let Some(message) = batch.next().await {
                let message = match message {
                    Ok(m) => m,
                    Err(e) => {
                        broke = Some(anyhow::anyhow!("a fetch broke off: {e}"));
                        break;
                    }
                };
                let Ok(seq) = message.info().map(|i| i.stream_sequence) else {
                    continue;
                };
                if seq > *applied {
                    delivered.push(Delivered {
                        seq,
                        item: Forwarded::decode(message.payload.as_ref())
                            .ok()
                            .and_then(|f| Some((f.item?, f.offer, f.origin)))
                            .ok_or_else(|| message.payload.to_vec()),
                    });
                }
                messages.push(message);
            }
            if let Some(last) = delivered.last().map(|d| d.seq) {
                if let Err(e) = apply(delivered).await {
                    return Stop::Apply(e);
                }
                *applied = last;
            }
            for m in messages {
                // A lost ack means a redelivery, recognised by its sequence.
                let _ = m.ack().await;
            }
            if let Some(e) = broke {
                // Items the server sent after the break would come again only after
                // ACK_WAIT, behind newer ones: start again from the first not applied.
                return Stop::Nats(e);
            }
        }
    }
}

/// Why [`Cluster::consume`] stopped.
enum Stop {
    /// Applying failed: the node must stop.
    Apply(anyhow::Error),
    /// JetStream failed: read again.
    Nats(anyhow::Error),
}

/// One item read from JetStream: its sequence and the item, or the bytes that did not
/// decode.
pub struct Delivered {
    /// The JetStream stream sequence.
    pub seq: u64,
    /// The item with the offer it carries (a version 1 message carries none) and, for an
    /// outbox item, where it comes from; or the undecodable payload.
    pub item: std::result::Result<(forwarded::Item, Option<WireOffer>, Option<Origin>), Vec<u8>>,
}

/// The items a page's report hands to the owners of its out-links held elsewhere: each a
/// discovered child of the page with what the page passed along (`offer`: `Some(None)` when
/// the policy passes nothing, `None` when the page was not reported to the frontier now; the
/// child then enters its owner's frontier as a seed). As (owner, encoded [`Forwarded`]) for
/// the store's outbox.
pub fn hand_on(split: &SplitReport, offer: Option<&Option<Offer>>) -> Vec<(u32, Vec<u8>)> {
    let info = split
        .report
        .as_ref()
        .and_then(|r| r.page.as_ref())
        .and_then(|p| p.info.as_ref());
    let (crawl, parent) = info.map_or(("", ""), |i| (i.crawl_id.as_str(), i.url.as_str()));
    let offer = offer.copied().flatten().map(|o| wire_offer(&o));
    split
        .remote
        .iter()
        .map(|link| {
            let item = Forwarded {
                item: Some(forwarded::Item::Put(discovered_child(
                    &link.url, parent, crawl,
                ))),
                offer,
                version: 2,
                // Set as it is published (its number to its owner is the store's).
                origin: None,
            };
            (link.owner, item.encode_to_vec())
        })
        .collect()
}

/// A discovered item of `url` whose parent is `parent`.
fn discovered_child(url: &str, parent: &str, crawl: &str) -> UrlItem {
    UrlItem {
        item: Some(url_item::Item::Discovered(
            crate::proto::DiscoveredUrlItem {
                info: Some(UrlInfo {
                    url: url.to_string(),
                    key: String::new(),
                    metadata: [(
                        PARENT_KEY.to_string(),
                        StringList {
                            values: vec![parent.to_string()],
                        },
                    )]
                    .into(),
                    crawl_id: crawl.to_string(),
                }),
            },
        )),
        id: String::new(),
        creation_date: 0,
    }
}

/// Records `value` as the cluster's `key` (the subject `crawlrank.cluster.<key>` of the stream
/// [`IDENTITY`]) if none is recorded (a publish expecting the subject empty); else checks the
/// recorded one is the same.
/// Opens (creating it if missing) the file-backed stream `name` over `subjects` that keeps
/// only the latest message of each subject: the cluster's recorded identity and its clock,
/// where only the last value said counts.
async fn latest_only_stream(
    js: &jetstream::Context,
    name: &str,
    subjects: &str,
) -> Result<stream::Stream> {
    js.get_or_create_stream(stream::Config {
        name: name.to_string(),
        subjects: vec![subjects.to_string()],
        storage: stream::StorageType::File,
        max_messages_per_subject: 1,
        ..Default::default()
    })
    .await
    .with_context(|| format!("cannot open the JetStream stream {name}"))
}

async fn record_or_check(
    js: &jetstream::Context,
    identity: &stream::Stream,
    key: &str,
    value: &str,
    what: &str,
) -> Result<()> {
    let subject = format!("crawlrank.cluster.{key}");
    let first = jetstream::message::PublishMessage::build()
        .payload(value.to_string().into())
        .expected_last_subject_sequence(0);
    let stored = match js.send_publish(subject.clone(), first).await {
        Ok(ack) => ack.await.map(|_| ()),
        Err(e) => Err(e),
    };
    match stored {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == jetstream::context::PublishErrorKind::WrongLastSequence => {}
        Err(e) => return Err(e).with_context(|| format!("cannot record the cluster's {what}")),
    }
    let recorded = identity
        .get_last_raw_message_by_subject(&subject)
        .await
        .with_context(|| format!("cannot read the cluster's {what}"))?;
    let recorded = String::from_utf8_lossy(&recorded.payload).into_owned();
    if recorded != value {
        bail!(
            "this node was started with the {what} '{value}', but the cluster on this NATS \
             server was created with the {what} '{recorded}'; start every node with the same \
             one (or use another NATS server for a new cluster)"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by Java (`"…".hashCode()`, `Math.abs(h % 3)`, `Math.abs(h % 7)`).
    #[test]
    fn the_hash_and_the_owner_are_urlfrontiers() {
        let cases = [
            ("DEFAULT_example.com", 2127384031, 1, 3),
            ("DEFAULT_a.example", -1429071809, 2, 4),
            ("my%5Fcrawl_host%5Fone.test", 236431814, 2, 3),
            ("DEFAULT_h\u{e9}t\u{e9}.test", 1907513004, 0, 5),
            ("DEFAULT_\u{1F600}.test", -952979937, 0, 0),
            ("polygenelubricants", i32::MIN, 2, 2),
            ("", 0, 0, 0),
        ];
        for (name, hash, of3, of7) in cases {
            assert_eq!(java_string_hash(name), hash, "{name}");
            assert_eq!(owner_of(name, 3), of3, "{name}");
            assert_eq!(owner_of(name, 7), of7, "{name}");
        }
        assert_eq!(
            queue_name("my_crawl", "host_one.test"),
            "my%5Fcrawl_host%5Fone.test"
        );
        assert_eq!(queue_name("", "example.com"), "DEFAULT_example.com");
    }

    #[test]
    fn nodes_are_sorted_and_checked() {
        let list: Vec<String> = ["b:2", "a:1", "c:3"].map(String::from).into();
        let nodes = Nodes::new(&list, "b:2").unwrap();
        assert_eq!(nodes.list(), ["a:1", "b:2", "c:3"]);
        assert_eq!(nodes.me(), 1);
        assert_eq!(nodes.owner("", "example.com"), 1);
        assert_eq!(nodes.owner_of_url("", "", "http://example.com/x"), Some(1));
        assert_eq!(nodes.owner_of_url("", "", "not a url"), None);
        let err = Nodes::new(&list, "d:4").unwrap_err().to_string();
        assert!(err.contains("d:4") && err.contains("a:1,b:2,c:3"), "{err}");
        let twice: Vec<String> = ["a:1", "a:1"].map(String::from).into();
        assert!(Nodes::new(&twice, "a:1")
            .unwrap_err()
            .to_string()
            .contains("twice"));
    }
}
