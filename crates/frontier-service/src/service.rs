//! The URLFrontier gRPC service: each RPC turned into a call on the [`FrontierState`], logged
//! in the [`Store`] when it changes something, and its answer turned back into messages.
//!
//! Concurrency: one `std::sync::Mutex` owns the state and its store together ([`Core`]).
//! `GetURLs` must see every queue of a crawl at once to rank across them, and the log must
//! hold the calls in the order they were applied, so one lock serialises the calls; each
//! holds it for a bounded time (a `GetURLs` pops at most `max_waiting` pages and returns at
//! most `MAX_URLS_PER_CALL` URLs, a `PutURLs` batch is at most `PUT_BATCH` items). The
//! read-only calls that may look at every URL of a crawl (`ListURLs`, `CountURLs`) do so in
//! steps of [`SCAN_STEP`] URLs, letting go of the lock between steps, so any other call
//! waits at most one step, whatever the crawl's size. (A read-write lock would let readers
//! share it, but the policies' frontiers are not `Sync`.) Holding the lock, and the durable commit, are blocking work, so every
//! RPC runs them on tokio's blocking pool (`spawn_blocking`); async is used only for the
//! gRPC I/O.
//!
//! Changing calls are committed in groups ([`ServiceConfig::commit_interval`]): a durable
//! commit (an fsync) costs milliseconds whatever it holds, so the calls of one window share
//! one, and each is answered only after it — an answer always means the call is on disk.
//!
//! A call that panics (a bug) fails alone: the calls applied before it are logged, the
//! memory it may have half changed is rebuilt from the log, and it is answered `INTERNAL`;
//! the calls after it go on. If the memory cannot be rebuilt, every changing call is refused
//! from then on, saying why, until a restart.

use crate::checkpoint::{PartReader, StateCheckpoint};
use crate::cluster::{owner_of_item, Cluster, ClusterConfig, Delivered};
use crate::crawl::{host_key, Capped, Crawl, ScanCursor, UrlFilter};
use crate::ext_proto::PageReport;
use crate::proto::{
    self, ack_message::Status as AckStatus, url_frontier_client::UrlFrontierClient,
    url_frontier_server::UrlFrontier, url_item, AckMessage, BatchAck, DiscoveredBatch,
    DiscoveredUrlItem, GetParams, UrlInfo, UrlItem,
};
use crate::state::check_call;
use crate::state::{Answer, Call, FrontierState, LoggedCall, OfferedItem};
use crate::store::{Applied, Store};
use crate::time_source::TimeSource;
use anyhow::{Context, Result};
use crawlrank_crawl_state::CrawlLimits;
use crawlrank_frontier::PageId;
use crawlrank_frontier::PolicySpec;
use crawlrank_urlfrontier::cluster_proto::{forwarded, Forwarded};
use crawlrank_urlfrontier::normalise_crawl_id;
use futures_util::FutureExt;
use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tonic::transport::Channel;
use tonic::{Request, Response, Status, Streaming};

/// Items of a `PutURLs` stream applied (and committed) together when the client sends
/// faster than they are acked.
pub const PUT_BATCH: usize = 512;
/// `PutURLs` batches of one stream waiting for their commits at once, before the service
/// stops reading the stream until the oldest is committed.
const PUT_PIPELINE: usize = 8;
/// Acks waiting to be sent before the service stops reading a client's stream (its
/// backpressure: the client's HTTP/2 window fills up).
const ACK_BUFFER: usize = 1024;
/// `ListURLs` and `ListQueues` return this many when the request says 0.
const DEFAULT_PAGE: usize = 100;
/// The most a `ListURLs` answer holds, whatever the request says.
const MAX_LIST_PAGE: usize = 100_000;
/// URLs a `ListURLs` or `CountURLs` looks at per hold of the state's lock.
pub const SCAN_STEP: usize = 16_384;
/// The longest a scan waits between two steps for the calls waiting for the lock.
const SCAN_YIELD: Duration = Duration::from_millis(5);

/// How to open a service.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// The state directory (created if missing).
    pub state_dir: PathBuf,
    /// The policy, with its configuration. `None`: the state's own, or `default_policy` for
    /// a new state. A state created with another policy is refused.
    pub policy: Option<PolicySpec>,
    /// The policy of a new state when `policy` is `None`.
    pub default_policy: PolicySpec,
    /// Most pages popped from a crawl's frontier and not yet served, before `GetURLs` stops
    /// popping (pages of queues that may not serve wait there; larger: fuller use of the
    /// queues, staler order for the batch policies).
    pub max_waiting: usize,
    /// Where the time is read.
    pub time: TimeSource,
    /// The group-commit window: a changing call waits this long for others to share its
    /// commit (one transaction, one fsync), and is answered only once that commit is
    /// durable. Zero: a call is committed at once, with only the calls that came while the
    /// previous commit was being written.
    pub commit_interval: Duration,
    /// The bounds on each crawl's URLs, the crawler's: the caps on hosts and the limits on
    /// hops from the seeds. Out-links (URLs discovered with a parent, and the links of
    /// `ReportPage`) past them are skipped, as `crawlrank crawl` skips them; URLs without a
    /// parent are seeds and pass the per-host and per-domain caps. `None`: the state's own, or
    /// the crawler's defaults for a new state. A state created with other bounds is refused.
    pub limits: Option<CrawlLimits>,
    /// Entries each crawl's frontier keeps in memory when its policy keeps a priority
    /// queue; the rest spill to sorted runs in `STATE/spill`, the order unchanged (the
    /// crawler's `SpillingHeap`). 0 keeps them all in memory. Default
    /// [`DEFAULT_NODE_FRONTIER_HOT`].
    pub frontier_hot: usize,
}

/// Pages a service expects a crawl to reach when not told (as `crawlrank crawl`): it sets
/// the batch size K = ceil(R/72) and IECA's R.
pub const DEFAULT_EXPECTED_PAGES: u64 = 100_000;
/// The default [`ServiceConfig::max_waiting`].
pub const DEFAULT_MAX_WAITING: usize = 4096;
/// The default [`ServiceConfig::commit_interval`], in milliseconds: about one fsync on a
/// common SSD, so a busy service's calls share commits while a lone call waits little.
pub const DEFAULT_COMMIT_INTERVAL_MS: u64 = 5;
/// Frontier entries a crawl of the service keeps in memory by default
/// ([`ServiceConfig::frontier_hot`], `frontier serve --frontier-hot`): 2^16, about 1 MiB, where
/// `crawl` keeps 2^22. A node is meant for 10^7–10^9 URLs, and the hot part only has to stay ahead
/// of `GetURLs`: with 65,536 entries the leasing cycle runs as fast as with every entry in memory
/// (docs/performance.md, "Frontier service throughput"), and each URL costs about 14 bytes less.
pub const DEFAULT_NODE_FRONTIER_HOT: usize = 1 << 16;

/// The policy spec of a service: policy `name` for crawls expected to reach
/// `expected_pages` pages, with batch size `batch` (default ceil(R/72)) and the `random`
/// policy's seed. The policies that need a search log's impacts (rw, rw-eg, learned) are
/// refused: the service has no way to be given one yet.
pub fn policy_spec(
    name: &str,
    expected_pages: Option<u64>,
    batch: Option<u64>,
    rng_seed: u64,
) -> Result<PolicySpec> {
    let kind = crawlrank_frontier::PolicyKind::parse(name)?;
    anyhow::ensure!(
        !kind.needs_impact(),
        "the policy {kind} needs a search log's impacts, which the frontier service cannot be given yet; choose another policy"
    );
    let expected = expected_pages.unwrap_or(DEFAULT_EXPECTED_PAGES);
    let mut config = crawlrank_frontier::PolicyConfig::for_crawl(expected, expected);
    if let Some(k) = batch {
        config.batch = k;
    }
    config.rng_seed = rng_seed;
    config.check()?;
    Ok(PolicySpec { kind, config })
}

impl ServiceConfig {
    /// The defaults for a state in `state_dir`: its own policy, or FICA for a new one;
    /// [`DEFAULT_MAX_WAITING`]; the system clock.
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        Self {
            state_dir: state_dir.into(),
            policy: None,
            default_policy: policy_spec("fica", None, None, 0)
                .expect("fica with the defaults is a valid policy"),
            max_waiting: DEFAULT_MAX_WAITING,
            time: TimeSource::System,
            commit_interval: Duration::from_millis(DEFAULT_COMMIT_INTERVAL_MS),
            limits: None,
            frontier_hot: DEFAULT_NODE_FRONTIER_HOT,
        }
    }
}

/// The state and its store, behind the service's one lock.
struct Core {
    state: FrontierState,
    /// `None` once the service is stopped ([`FrontierService::shutdown`]): the store is
    /// closed, and every call that would read or write it is refused.
    store: Option<Store>,
    /// Why the store failed, once it did: the memory is then ahead of the log, so every
    /// changing call is refused until a restart replays the log. [`STOPPED`] once the
    /// service is stopped.
    broken: Option<String>,
    /// Forwarded messages set aside as undecodable (a cluster node's), read without the
    /// lock by `GetStats`.
    dead_letters: Arc<AtomicU64>,
    /// Woken when a commit put items into the store's outbox (a cluster node's publisher,
    /// [`FrontierService::run_outbox`], sends them to JetStream).
    outbox_ready: Arc<tokio::sync::Notify>,
}

/// `GetStats` counts of an OPIC crawl (per node, with `local`): the cash the node's pages
/// hold (the virtual page's included), the cash its pages sent along links other nodes own and
/// the cash it received along its own, in units of 1e-15; the crawl's pages on the node; and
/// `n`, the pages the crawl was told to expect (each starts with 1/n). Over the nodes,
/// `Σ held + Σ sent − Σ received + (n − Σ pages)/n` is the crawl's cash, 1 at any instant, and
/// `Σ sent − Σ received` is the cash in flight between nodes (docs/algorithms.md §3.11).
pub const OPIC_HELD: &str = "crawlrank.opic.held_e15";
/// See [`OPIC_HELD`].
pub const OPIC_SENT: &str = "crawlrank.opic.sent_e15";
/// See [`OPIC_HELD`].
pub const OPIC_RECEIVED: &str = "crawlrank.opic.received_e15";
/// See [`OPIC_HELD`].
pub const OPIC_PAGES: &str = "crawlrank.opic.pages";
/// See [`OPIC_HELD`].
pub const OPIC_TOTAL_PAGES: &str = "crawlrank.opic.total_pages";

/// Sends the store's outbox to JetStream, oldest first, whenever a commit fills it (and once
/// a second in case a wake-up was missed, or JetStream failed), dropping each item JetStream
/// has stored. Runs until the service is gone; a failure is retried.
async fn run_outbox(
    core: std::sync::Weak<Mutex<Core>>,
    cluster: Arc<Cluster>,
    ready: Arc<tokio::sync::Notify>,
) {
    const BATCH: usize = 512;
    loop {
        match send_outbox(&core, &cluster, BATCH).await {
            Ok(None) => return,
            // A full batch: there may be more.
            Ok(Some(n)) if n >= BATCH => continue,
            Ok(Some(_)) => {}
            Err(e) => tracing::warn!(
                "frontier: sending the outbox to JetStream failed ({e:#}); trying again in 1 s"
            ),
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), ready.notified()).await;
    }
}

/// One batch of [`run_outbox`]: how many items JetStream stored (`None`: the service is gone).
async fn send_outbox(
    core: &std::sync::Weak<Mutex<Core>>,
    cluster: &Cluster,
    limit: usize,
) -> Result<Option<usize>> {
    let weak = core.clone();
    let items = tokio::task::spawn_blocking(move || {
        weak.upgrade().map(|core| {
            let core = core.lock().unwrap_or_else(|p| p.into_inner());
            core.store_ref().and_then(|store| {
                store
                    .outbox(limit)
                    .map(|items| (store.incarnation(), items))
            })
        })
    })
    .await
    .context("the outbox reader stopped")?;
    let (incarnation, items) = match items {
        None => return Ok(None),
        Some(items) => items?,
    };
    if items.is_empty() {
        return Ok(Some(0));
    }
    let stored = cluster.publish_outbox(incarnation, &items).await;
    if stored.is_empty() {
        anyhow::bail!("JetStream stored none of {} items", items.len());
    }
    crate::failpoint::hit("after-outbox-ack");
    let n = stored.len();
    let weak = core.clone();
    let done = tokio::task::spawn_blocking(move || {
        weak.upgrade().map(|core| {
            core.lock()
                .unwrap_or_else(|p| p.into_inner())
                .store_mut()
                .and_then(|store| store.outbox_done(&stored))
        })
    })
    .await
    .context("the outbox writer stopped")?;
    match done {
        None => Ok(None),
        Some(r) => r.map(|()| Some(n)),
    }
}

/// The crawl-wide clock ([`Cluster::tick_clock`]) every [`crate::cluster::CLOCK_PERIOD`],
/// until the service is gone; a failure (the NATS server restarting) is tried again at the
/// next tick, the last counts read staying in use meanwhile.
async fn run_clock(core: std::sync::Weak<Mutex<Core>>, cluster: Arc<Cluster>) {
    let mut said = false;
    loop {
        let weak = core.clone();
        let mine = tokio::task::spawn_blocking(move || {
            weak.upgrade().map(|core| {
                core.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .state
                    .crawled()
            })
        })
        .await;
        let Ok(Some(mine)) = mine else { return };
        match cluster.tick_clock(&mine).await {
            Ok(()) => said = false,
            Err(e) if !said => {
                said = true;
                tracing::warn!(
                    "frontier: the crawl-wide clock could not be updated ({e:#}); trying again every {:?}",
                    crate::cluster::CLOCK_PERIOD
                );
            }
            Err(_) => {}
        }
        tokio::time::sleep(crate::cluster::CLOCK_PERIOD).await;
    }
}

/// A cash amount (≥ 0) in units of 1e-15.
fn to_femto(cash: f64) -> u64 {
    (cash.max(0.0) * 1e15).round() as u64
}

/// The answers to one request's calls, or why none could be given.
type Answers = Result<Vec<Result<Answer, Status>>, Status>;

/// One request's calls waiting to be applied, and where their answers go.
struct Pending {
    calls: Vec<Call>,
    /// For forwarded items a cluster node applies: what the calls apply from JetStream,
    /// committed with them.
    applied: Option<Applied>,
    reply: tokio::sync::oneshot::Sender<Answers>,
}

/// What a panic carried, as text.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// The folder of a state directory where its crawls keep their pages' URLs and metadata
/// while the service runs (scratch, rebuilt from the store at every start).
pub const PAGE_TEXT_DIR: &str = "page-text";

/// The folder of a state directory where the crawls' frontiers keep their cold part
/// ([`ServiceConfig::frontier_hot`]; scratch, cleared at every start).
pub const SPILL_DIR: &str = "spill";

/// Builds the state the store holds: its checkpoint (or its policy's empty state), with
/// every call logged after it replayed in order.
fn load_state(store: &Store, spec: PolicySpec) -> Result<FrontierState> {
    let cannot = || format!("cannot serve the frontier state {}", store.path().display());
    // The pages' URLs and metadata go to scratch files beside the store, written again from
    // it now (crate::page_text).
    let text = store.path().with_file_name(PAGE_TEXT_DIR);
    let limits = store.limits();
    let start = |checkpoint: Option<StateCheckpoint>, parts: PartReader<'_>| {
        Ok(match checkpoint {
            Some(c) => FrontierState::from_checkpoint_parts(spec, c, Some(&text), parts)
                .with_context(cannot)?,
            None => FrontierState::new_in(spec, &text).with_context(cannot)?,
        }
        .with_limits(limits))
    };
    let apply = |state: &mut FrontierState, i: u64, logged: LoggedCall| -> Result<()> {
        let Some(call) = &logged.call else {
            anyhow::bail!("call {i} after the checkpoint is empty");
        };
        let max_waiting = usize::try_from(logged.max_waiting).unwrap_or(usize::MAX);
        state
            .apply(call, logged.now, max_waiting)
            .map_err(|s| anyhow::anyhow!("{}", s.message()))
            .with_context(|| {
                format!(
                    "replaying call {i} after the checkpoint of {} failed; the log was written \
                     by another version of crawlrank",
                    store.path().display()
                )
            })?;
        Ok(())
    };
    store.load(start, apply)
}

/// Calls logged since the last checkpoint before the log is compacted, at the least; more
/// when the state holds more URLs (see [`Core::compact_if_due`]).
pub const COMPACT_AFTER_CALLS: u64 = 100_000;

/// What [`Core::broken`] says once the service is stopped.
const STOPPED: &str = "the frontier service is stopped";

impl Core {
    /// The error a changing call gets once the state is broken (or the service stopped).
    fn refusal(why: &str) -> Status {
        if why == STOPPED {
            return Status::unavailable(STOPPED);
        }
        Status::unavailable(format!(
            "the frontier state could not be written ({why}); restart the service"
        ))
    }

    /// The store, unless the service is stopped.
    fn store_ref(&self) -> Result<&Store> {
        self.store.as_ref().context(STOPPED)
    }

    /// The store, unless the service is stopped.
    fn store_mut(&mut self) -> Result<&mut Store> {
        self.store.as_mut().context(STOPPED)
    }

    /// Closes the store (its file is free for another service once this returns) and
    /// refuses every call from now on.
    fn close(&mut self) {
        self.broken = Some(STOPPED.to_string());
        self.store = None;
    }

    /// Applies the calls of several requests, each request's in order and the requests in
    /// the order they came, logs those that changed something in one commit (group commit:
    /// one fsync for all the requests of a commit window, or that arrived while the last
    /// commit was written), and only then sends each request its answers.
    fn run_group(&mut self, group: Vec<Pending>, now: u64, max_waiting: usize) {
        if let Some(why) = &self.broken {
            for p in group {
                let _ = p.reply.send(Err(Self::refusal(why)));
            }
            return;
        }
        let mut logged = Vec::new();
        let mut outbox = Vec::new();
        let mut replies = Vec::with_capacity(group.len());
        let mut applied: Option<Applied> = None;
        for p in group {
            if let Some(a) = p.applied {
                let into = applied.get_or_insert_with(Applied::default);
                into.through = into.through.max(a.through);
                into.dead.extend(a.dead);
                into.received.extend(a.received);
            }
            let answers = p
                .calls
                .into_iter()
                .map(|call| self.apply(call, now, max_waiting, &mut logged, &mut outbox))
                .collect::<Vec<_>>();
            replies.push((p.reply, answers));
        }
        if self.broken.is_none() {
            match self
                .store_mut()
                .and_then(|store| store.append(&logged, applied.as_ref(), &outbox))
            {
                Ok(()) => {
                    let dead = applied.map_or(0, |a| a.dead.len() as u64);
                    self.dead_letters.fetch_add(dead, Ordering::SeqCst);
                    if !outbox.is_empty() {
                        crate::failpoint::hit("after-outbox-commit");
                        self.outbox_ready.notify_one();
                    }
                }
                Err(e) => self.broken = Some(format!("{e:#}")),
            }
        }
        if let Some(why) = &self.broken {
            // Some answered calls may be in memory and not in the log: none is answered as
            // done.
            for (reply, _) in replies {
                let _ = reply.send(Err(Status::internal(format!(
                    "the frontier state could not be written: {why}"
                ))));
            }
            return;
        }
        for (reply, answers) in replies {
            let _ = reply.send(Ok(answers));
        }
        // After the answers: the clients need not wait for a compaction.
        self.compact_if_due();
    }

    /// Compacts the log ([`Core::compact`]) once the calls logged since the last checkpoint
    /// are at least [`COMPACT_AFTER_CALLS`] and at least the URLs held: a checkpoint costs
    /// about the URLs held, so this keeps its cost per call bounded while the log stays at
    /// most about as long as the state is large. A failed compaction changes nothing (the
    /// log still holds every call) and is tried again after the next calls; `compact` says
    /// why it failed.
    fn compact_if_due(&mut self) {
        let due = COMPACT_AFTER_CALLS.max(self.state.pages() as u64);
        let Some(store) = &self.store else { return };
        if store.calls_since_checkpoint() >= due {
            let _ = self.compact();
        }
    }

    /// Writes a checkpoint of the state and drops the log's calls it covers.
    fn compact(&mut self) -> Result<()> {
        let Self { state, store, .. } = self;
        let store = store.as_mut().context(STOPPED)?;
        store.write_checkpoint(state)
    }

    /// Applies one call; if it changed something it is added to `logged`, and the items it
    /// hands to other cluster nodes to `outbox`. A call that panics fails alone: the calls in
    /// `logged` are written (with their outbox items), and the memory the panicking call may
    /// have half changed is rebuilt from the log (or the state is marked broken).
    fn apply(
        &mut self,
        call: Call,
        now: u64,
        max_waiting: usize,
        logged: &mut Vec<LoggedCall>,
        outbox: &mut Vec<(u32, Vec<u8>)>,
    ) -> Result<Answer, Status> {
        if let Some(why) = &self.broken {
            return Err(Self::refusal(why));
        }
        check_call(&call)?;
        let state = &mut self.state;
        match catch_unwind(AssertUnwindSafe(|| state.apply(&call, now, max_waiting))) {
            Ok(Ok((answer, changed))) => {
                let answer = match (answer, &call) {
                    (Answer::SplitReport(counts, status, offer), Call::SplitReport(split)) => {
                        outbox.extend(crate::cluster::hand_on(split, offer.as_ref()));
                        Answer::Report(counts, status)
                    }
                    (answer, _) => answer,
                };
                if changed {
                    logged.push(LoggedCall {
                        now,
                        call: Some(call),
                        max_waiting: max_waiting as u64,
                    });
                }
                Ok(answer)
            }
            Ok(Err(status)) => Err(status),
            Err(panic) => {
                let what = panic_text(&*panic);
                let spec = self.state.spec().clone();
                let (logged, outbox) = (std::mem::take(logged), std::mem::take(outbox));
                let rebuilt = self.store_mut().and_then(|store| {
                    store.append(&logged, None, &outbox)?;
                    load_state(store, spec)
                });
                match rebuilt {
                    Ok(state) => self.state = state,
                    Err(e) => {
                        self.broken = Some(format!(
                            "a call failed with a bug ({what}) and the state could not be \
                             rebuilt from its log: {e:#}"
                        ));
                    }
                }
                Err(Status::internal(format!(
                    "the call failed with a bug of the frontier service ({what}); it changed \
                     nothing"
                )))
            }
        }
    }
}

/// The URLFrontier service over crawlrank's frontier (cheap to clone: clones share it).
#[derive(Clone)]
pub struct FrontierService {
    core: Arc<Mutex<Core>>,
    /// Calls waiting for `core`'s lock (a scan's steps not counted): a scan between two steps
    /// lets them have it first (a mutex hands itself to no one in particular, and the
    /// scanning thread, already running, would most often take it back at once).
    waiting: Arc<AtomicUsize>,
    /// Requests waiting for the next group commit ([`Core::run_group`]).
    pending: Arc<Mutex<Vec<Pending>>>,
    time: TimeSource,
    max_waiting: usize,
    /// [`ServiceConfig::commit_interval`].
    commit_interval: Duration,
    /// The address served, for `ListNodes`.
    node: Arc<OnceLock<String>>,
    /// The cluster this service is a node of, once it joined one ([`FrontierService::join_cluster`]).
    cluster: Arc<OnceLock<Arc<Cluster>>>,
    /// The same counter as [`Core::dead_letters`].
    dead_letters: Arc<AtomicU64>,
    /// The same as [`Core::outbox_ready`].
    outbox_ready: Arc<tokio::sync::Notify>,
    /// Set once by [`FrontierService::shutdown`]: the background tasks end when they see it.
    stop: Arc<tokio::sync::watch::Sender<bool>>,
    /// The background tasks (a cluster node's consumer, outbox publisher and clock), which
    /// `shutdown` waits for.
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
    /// Where recent `ListURLs` answers ended.
    listings: Arc<Mutex<Listings>>,
}

/// What a `ListURLs` call lists: its crawl, queue, filter text and case rule.
type Listing = (String, String, String, bool);

/// Where recent `ListURLs` answers ended, so that the next page of a listing goes on from the
/// last URL listed instead of skipping `start` URLs again (paging through a crawl of n URLs
/// cost about n² / size URLs looked at): by the listing and the `start` that follows it, the
/// last page listed. A crawl's pages keep their ids (a deleted one is skipped), so going on
/// after that page gives what skipping `start` URLs gives while the crawl does not change, and
/// neither repeats nor skips a URL when URLs before it were deleted meanwhile. At most
/// [`MAX_LISTINGS`] are kept.
#[derive(Default)]
struct Listings {
    /// Bumped by every `DeleteCrawl`: a crawl made again numbers its pages from 0, so the
    /// ends recorded before are not used.
    epoch: u64,
    ends: HashMap<(Listing, u64), (u64, PageId)>,
}

/// The most `ListURLs` ends kept ([`Listings`]).
const MAX_LISTINGS: usize = 1024;

impl Listings {
    /// Where the page of `listing` starting at `start` goes on from, if a recent answer
    /// ended there.
    fn resume(&self, listing: &Listing, start: u64) -> Option<PageId> {
        let &(epoch, last) = self.ends.get(&(listing.clone(), start))?;
        (epoch == self.epoch).then_some(last)
    }

    /// An answer of `listing`, begun at `epoch`, ended with page `last`, before `next`.
    fn ended(&mut self, listing: Listing, next: u64, epoch: u64, last: PageId) {
        if epoch != self.epoch {
            return;
        }
        if self.ends.len() >= MAX_LISTINGS {
            self.ends.clear();
        }
        self.ends.insert((listing, next), (epoch, last));
    }
}

impl FrontierService {
    /// Opens the state in `config.state_dir` and replays its log.
    pub fn open(config: ServiceConfig) -> Result<Self> {
        let (mut store, mut spec) = Store::open(
            &config.state_dir,
            config.policy.as_ref(),
            &config.default_policy,
        )?;
        store.crawl_limits(config.limits.as_ref())?;
        // The store is ours (its database is locked): the spill directory is scratch.
        spec.config.spill = crawlrank_frontier::SpillConfig::for_crawl(
            config.state_dir.join(SPILL_DIR),
            config.frontier_hot,
        )?;
        let state = load_state(&store, spec)?;
        let dead_letters = Arc::new(AtomicU64::new(store.dead_letters()?));
        let outbox_ready = Arc::new(tokio::sync::Notify::new());
        let mut core = Core {
            state,
            store: Some(store),
            broken: None,
            dead_letters: dead_letters.clone(),
            outbox_ready: outbox_ready.clone(),
        };
        // A long log (one written before compaction existed, or left by a crash before a
        // compaction was due) is compacted now, so the next start is quick.
        core.compact_if_due();
        Ok(Self {
            core: Arc::new(Mutex::new(core)),
            waiting: Arc::new(AtomicUsize::new(0)),
            pending: Arc::new(Mutex::new(Vec::new())),
            time: config.time,
            max_waiting: config.max_waiting.max(1),
            commit_interval: config.commit_interval,
            node: Arc::new(OnceLock::new()),
            cluster: Arc::new(OnceLock::new()),
            dead_letters,
            outbox_ready,
            stop: Arc::new(tokio::sync::watch::Sender::new(false)),
            tasks: Arc::new(Mutex::new(Vec::new())),
            listings: Arc::new(Mutex::new(Listings::default())),
        })
    }

    /// Stops the service: its background tasks (a cluster node's consumer of forwarded items,
    /// outbox publisher and clock) end and are waited for, the calls queued for a commit are
    /// committed, and the store is closed — its directory can be opened again, in this
    /// process or another, as soon as this returns. Every call after it is refused. A task
    /// stopped between two steps leaves nothing half done: an item read from JetStream and
    /// not yet committed is read again at the next start, and an outbox item sent but not
    /// yet dropped is sent again and applied once (docs/frontier-service.md). Serve with
    /// [`crate::spawn`]: [`crate::RunningServer::shutdown`] stops serving first, then calls
    /// this.
    pub async fn shutdown(&self) -> Result<()> {
        self.stop.send_replace(true);
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|p| p.into_inner()));
        let mut failed = None;
        for task in tasks {
            if let Err(e) = task.await {
                failed.get_or_insert(e);
            }
        }
        let svc = self.clone();
        tokio::task::spawn_blocking(move || {
            svc.commit_pending();
            svc.write_lock().close();
        })
        .await
        .context("closing the frontier store failed")?;
        match failed {
            Some(e) => Err(anyhow::anyhow!(
                "a background task of the frontier service failed: {e}"
            )),
            None => Ok(()),
        }
    }

    /// Runs `task` in the background until it ends or the service stops, whichever comes
    /// first; [`FrontierService::shutdown`] waits for it. `task` may be dropped at any of its
    /// await points, so it must leave the store consistent at each (every task here writes
    /// the store only in whole commits).
    fn spawn_background(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        let mut stop = self.stop.subscribe();
        let handle = tokio::spawn(async move {
            tokio::select! {
                () = task => {}
                _ = stop.wait_for(|stopped| *stopped) => {}
            }
        });
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        tasks.retain(|t| !t.is_finished());
        tasks.push(handle);
    }

    /// Makes this service a node of the cluster `config` describes: connects to its NATS
    /// server, checks the node list and the policy against the cluster's, and starts applying
    /// the items the other nodes hand it. The task returned ends when applying fails (the
    /// store could not be written: the node must then stop, with an error) or when the
    /// service is shut down ([`FrontierService::shutdown`], with `Ok`); aborting it stops
    /// nothing. Call it before serving.
    pub async fn join_cluster(
        &self,
        config: &ClusterConfig,
    ) -> Result<tokio::task::JoinHandle<Result<()>>> {
        let cluster = Arc::new(Cluster::connect(config, &self.policy()).await?);
        anyhow::ensure!(
            self.cluster.set(cluster.clone()).is_ok(),
            "this service already is a node of a cluster"
        );
        let _ = self.node.set(config.me.clone());
        let applied = self.read_lock().store_ref()?.applied()?;
        let svc = self.clone();
        // The background tasks run until the service is shut down, which waits for them:
        // then nothing holds the store any more and it can be closed.
        self.spawn_background(run_outbox(
            Arc::downgrade(&self.core),
            cluster.clone(),
            self.outbox_ready.clone(),
        ));
        self.spawn_background(run_clock(Arc::downgrade(&self.core), cluster.clone()));
        let (result, failed) = tokio::sync::oneshot::channel();
        self.spawn_background(async move {
            let applying = cluster
                .run_consumer(applied, |batch| {
                    let svc = svc.clone();
                    async move { svc.apply_forwarded(batch).await }
                })
                .await;
            let _ = result.send(applying);
        });
        // The caller's handle only reports how the consumer ended: the consumer is the
        // service's, which `shutdown` stops and waits for.
        Ok(tokio::spawn(async move {
            match failed.await {
                Ok(applying) => applying,
                // The consumer was stopped by a shutdown (or panicked, which shutdown reports).
                Err(_) => Ok(()),
            }
        }))
    }

    /// The cluster this service is a node of, if any.
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.cluster.get()
    }

    /// Applies items other nodes handed this one, in order, and commits them with the
    /// sequence of the last one (the out-links of a report that other nodes own are handed on
    /// to them first). Fails only when the store cannot be written.
    async fn apply_forwarded(&self, batch: Vec<Delivered>) -> Result<()> {
        let cluster = self
            .cluster()
            .context("forwarded items reached a service that is no node")?
            .clone();
        let mut calls = Vec::with_capacity(batch.len());
        let mut applied = Applied::default();
        // What is applied of each sender's outbox items, this batch's included: a copy of one
        // applied before (sent again after a crash, however late) is skipped. Only this task
        // applies forwarded items, one batch at a time, so the store's record is current.
        let mut received = std::collections::HashMap::new();
        for d in batch {
            applied.through = applied.through.max(d.seq);
            if let Ok((_, _, Some(origin))) = &d.item {
                let key = (origin.node, origin.incarnation);
                let r = match received.entry(key) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(self.read_lock().store_ref()?.received(key.0, key.1))
                    }
                };
                if !r.take(origin.number) {
                    continue;
                }
            }
            match d.item {
                Ok((forwarded::Item::Put(item), None, _)) => calls.push(Call::Put(item)),
                Ok((forwarded::Item::Put(item), Some(offer), _)) => {
                    calls.push(Call::Offered(OfferedItem {
                        item: Some(item),
                        offer: Some(offer),
                    }))
                }
                Ok((forwarded::Item::Report(report), _, _)) => {
                    calls.push(Call::SplitReport(cluster.split_report(&report)));
                }
                Err(payload) => {
                    tracing::warn!(
                        "frontier: JetStream message {} does not decode ({} bytes); set aside as a dead letter",
                        d.seq,
                        payload.len()
                    );
                    applied.dead.push((d.seq, payload));
                }
            }
        }
        applied.received = received.into_iter().collect();
        self.run_with(calls, Some(applied))
            .await
            .map_err(|s| anyhow::anyhow!("{}", s.message()))
            .context("cannot apply the items handed to this node")?;
        Ok(())
    }

    /// Applies `PutURLs` items, in two halves: on a cluster node, hands the items of queues
    /// other nodes own to their owners through JetStream (awaited: stored there when this
    /// returns; they are answered `OK`), and queues this node's for the next group commit at
    /// once, so that a stream can submit its next batch while this one waits for its commit
    /// (the ticket's answers come after it).
    async fn submit_puts(&self, items: Vec<UrlItem>) -> Result<PutTicket, Status> {
        let Some(cluster) = self.cluster().cloned() else {
            let is_local = vec![true; items.len()];
            let local = self.submit(items.into_iter().map(Call::Put).collect(), None);
            return Ok(PutTicket { is_local, local });
        };
        let me = cluster.nodes().me();
        let mut local = Vec::new();
        let mut remote = Vec::new();
        let mut is_local = Vec::with_capacity(items.len());
        for item in items {
            match owner_of_item(cluster.nodes(), &item) {
                Some(owner) if owner != me => {
                    is_local.push(false);
                    remote.push((
                        owner,
                        Forwarded {
                            item: Some(forwarded::Item::Put(item)),
                            offer: None,
                            version: 2,
                            origin: None,
                        },
                    ));
                }
                _ => {
                    is_local.push(true);
                    local.push(Call::Put(item));
                }
            }
        }
        if !remote.is_empty() {
            cluster
                .forward(remote)
                .await
                .map_err(|e| Status::unavailable(format!("{e:#}")))?;
        }
        let local = if local.is_empty() {
            let (reply, answers) = tokio::sync::oneshot::channel();
            let _ = reply.send(Ok(Vec::new()));
            answers
        } else {
            self.submit(local, None)
        };
        Ok(PutTicket { is_local, local })
    }

    /// `ReportPage` on a cluster node: a page another node owns is handed to it whole; for a
    /// page of this node, the out-links other nodes own are handed to them and the page is
    /// reported here with the rest. `None` when this service is no node.
    pub(crate) async fn report_clustered(
        &self,
        report: &PageReport,
    ) -> Option<Result<Answer, Status>> {
        let cluster = self.cluster()?.clone();
        let info = report.page.as_ref().and_then(|p| p.info.as_ref());
        let owner = info.and_then(|i| cluster.nodes().owner_of_url(&i.crawl_id, &i.key, &i.url));
        let me = cluster.nodes().me();
        Some(
            async {
                match owner {
                    Some(o) if o != me => {
                        let item = Forwarded {
                            item: Some(forwarded::Item::Report(report.clone())),
                            offer: None,
                            version: 2,
                            origin: None,
                        };
                        cluster
                            .forward(vec![(o, item)])
                            .await
                            .map_err(|e| Status::unavailable(format!("{e:#}")))?;
                        Ok(Answer::Report(Default::default(), AckStatus::Ok))
                    }
                    // Ours: reported here with the links we own; what the page passes along the
                    // others leaves it in the same commit, into the outbox.
                    _ => {
                        self.run_one(Call::SplitReport(cluster.split_report(report)))
                            .await
                    }
                }
            }
            .await,
        )
    }

    /// The cluster, when a call that says `local` is false is to fan out to every node.
    fn fans_out(&self, local: bool) -> Option<Arc<Cluster>> {
        self.cluster().filter(|_| !local).cloned()
    }

    /// The cluster and the owner of queue `key` of `crawl`, when that is another node and
    /// the call does not say `local` (an empty key: this node).
    fn owner_elsewhere(
        &self,
        local: bool,
        crawl: &str,
        key: &str,
    ) -> Option<(Arc<Cluster>, usize)> {
        let cluster = self.fans_out(local)?;
        if key.is_empty() {
            return None;
        }
        let owner = cluster.nodes().owner(crawl, key);
        (owner != cluster.nodes().me()).then_some((cluster, owner))
    }

    /// Forwarded messages this node set aside as undecodable.
    pub fn dead_letters(&self) -> u64 {
        self.dead_letters.load(Ordering::SeqCst)
    }

    /// Compacts the state's log now: writes a checkpoint of the whole state and drops the
    /// calls it covers, so that the next start reads the checkpoint instead of replaying them
    /// (the service also does this by itself as its log grows). Blocks every changing call
    /// meanwhile.
    pub fn compact(&self) -> Result<()> {
        let mut core = self.write_lock();
        if let Some(why) = &core.broken {
            anyhow::bail!("the frontier state is broken ({why}); restart the service");
        }
        core.compact()
    }

    /// The policy the crawls are ordered by.
    pub fn policy(&self) -> PolicySpec {
        self.read_lock().state.spec().clone()
    }

    /// Records the address the service is reached at (`ListNodes`).
    pub fn set_node_address(&self, addr: String) {
        let _ = self.node.set(addr);
    }

    /// Where recent `ListURLs` answers ended (a panic while they were held leaves them
    /// whole: each change is one insert or one increment).
    fn listings(&self) -> MutexGuard<'_, Listings> {
        self.listings.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The state for a changing call. A panic while it was held outside
    /// [`Core::apply`]'s guard (in the store, say) may have left memory and log apart: the
    /// state is then marked broken, refusing every changing call until a restart.
    fn write_lock(&self) -> MutexGuard<'_, Core> {
        match self.lock_waiting() {
            Ok(core) => core,
            Err(poisoned) => {
                self.core.clear_poison();
                let mut core = poisoned.into_inner();
                core.broken.get_or_insert_with(|| {
                    "a call failed with a bug while the state was being written".to_string()
                });
                core
            }
        }
    }

    /// The state for a read-only call (a panic in a reader changes nothing).
    fn read_lock(&self) -> MutexGuard<'_, Core> {
        self.lock_waiting().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the lock, counted in `waiting` meanwhile so that a scan lets it go first.
    fn lock_waiting(&self) -> std::sync::LockResult<MutexGuard<'_, Core>> {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let guard = self.core.lock();
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        guard
    }

    /// Applies changing calls on the blocking pool, with a group commit: the request joins
    /// the queue of pending ones, and one commit applies and logs every request queued by
    /// then ([`Core::run_group`]); each is answered only after that commit is durable.
    ///
    /// With a commit window (`commit_interval` > 0) the request that finds the queue empty
    /// starts a timer; when it fires, the queue is committed as one group. The timer is a
    /// task of its own, so a client that goes away meanwhile does not leave the others of
    /// its group unanswered. Without a window every request asks for a commit at once, and
    /// those that arrive while one is being written share the next.
    async fn run(&self, calls: Vec<Call>) -> Answers {
        self.run_with(calls, None).await
    }

    /// [`FrontierService::run`], committing `applied` with the calls (in the same group
    /// commit: the group's one transaction records the highest `applied` of its calls).
    async fn run_with(&self, calls: Vec<Call>, applied: Option<Applied>) -> Answers {
        self.submit(calls, applied)
            .await
            .map_err(|_| Status::internal("the frontier call was dropped"))?
    }

    /// Queues `calls` for the next group commit at once (so the requests of one stream are
    /// applied in the order they were submitted, even while earlier ones wait for their
    /// commit) and returns where their answers will come ([`FrontierService::run`] says
    /// when). A commit that fails to run drops the sender: the receiver then errs.
    fn submit(
        &self,
        calls: Vec<Call>,
        applied: Option<Applied>,
    ) -> tokio::sync::oneshot::Receiver<Answers> {
        let (reply, answers) = tokio::sync::oneshot::channel();
        let first = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.push(Pending {
                calls,
                applied,
                reply,
            });
            pending.len() == 1
        };
        let svc = self.clone();
        if self.commit_interval.is_zero() {
            drop(tokio::task::spawn_blocking(move || svc.commit_pending()));
        } else if first {
            tokio::spawn(async move {
                tokio::time::sleep(svc.commit_interval).await;
                drop(tokio::task::spawn_blocking(move || svc.commit_pending()));
            });
        }
        answers
    }

    /// Applies and commits every request queued by now, in one group.
    fn commit_pending(&self) {
        let mut core = self.write_lock();
        let group = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()));
        if !group.is_empty() {
            let now = self.time.now();
            core.run_group(group, now, self.max_waiting);
        }
    }

    /// Applies one changing call.
    pub(crate) async fn run_one(&self, call: Call) -> Result<Answer, Status> {
        self.run(vec![call])
            .await?
            .pop()
            .unwrap_or_else(|| Err(Status::internal("a call gave no answer")))
    }

    /// Reads the state on the blocking pool.
    pub(crate) async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&FrontierState, u64) -> T + Send + 'static,
    ) -> Result<T, Status> {
        let svc = self.clone();
        tokio::task::spawn_blocking(move || {
            let now = svc.time.now();
            f(&svc.read_lock().state, now)
        })
        .await
        .map_err(|e| Status::internal(format!("the frontier query failed: {e}")))
    }
}

impl FrontierService {
    /// Scans the URLs of crawl `crawl_id` that `filter` covers on the blocking pool, in steps
    /// of [`SCAN_STEP`] URLs with the lock let go between them (see the module's
    /// documentation), calling `visit` on each match with the time of its step, until it
    /// returns false; returns what `visit` gathered.
    async fn scan<T: Send + 'static>(
        &self,
        crawl_id: String,
        filter: UrlFilter,
        from: Option<ScanCursor>,
        mut acc: T,
        mut visit: impl FnMut(&mut T, &Crawl, PageId, u64) -> bool + Send + 'static,
    ) -> Result<T, Status> {
        let svc = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut cursor = from;
            loop {
                let now = svc.time.now();
                let core = svc.core.lock().unwrap_or_else(|p| p.into_inner());
                cursor = core.state.scan_urls(
                    &crawl_id,
                    &filter,
                    cursor.as_ref(),
                    SCAN_STEP,
                    |crawl, page| visit(&mut acc, crawl, page, now),
                );
                drop(core);
                if cursor.is_none() {
                    return acc;
                }
                // The other calls first (for a while: a stream of them must not starve the
                // scan).
                let until = Instant::now() + SCAN_YIELD;
                while svc.waiting.load(Ordering::SeqCst) > 0 && Instant::now() < until {
                    std::thread::yield_now();
                }
            }
        })
        .await
        .map_err(|e| Status::internal(format!("the frontier query failed: {e}")))
    }
}

impl FrontierService {
    /// Runs `call`, a call on one queue, here, or on the cluster node that owns the queue
    /// when that is another node and the call does not say `local` (the owner is told it is
    /// `local`, to answer it itself).
    async fn at_queue_owner<C: QueueCall>(
        &self,
        call: C,
    ) -> Result<Response<proto::Empty>, Status> {
        let (local, crawl, key) = call.queue();
        if let Some((cluster, owner)) = self.owner_elsewhere(local, crawl, key) {
            let call = call.for_owner();
            return cluster.on_node(owner, |c| call.clone().send(c)).await;
        }
        done(self.run_one(call.into_call()).await?)
    }
}

/// A call on one queue of a crawl that changes it (`Empty` its answer), which a cluster node
/// runs where the queue lives ([`FrontierService::at_queue_owner`]).
trait QueueCall: Clone + Send + Sync + 'static {
    /// Whether it says `local`, its crawl and its queue's key.
    fn queue(&self) -> (bool, &str, &str);
    /// The copy sent to another node: `local`, for that node to run it itself.
    fn for_owner(self) -> Self;
    /// Sends it to the node behind `client`.
    fn send(
        self,
        client: UrlFrontierClient<Channel>,
    ) -> impl std::future::Future<Output = Result<Response<proto::Empty>, Status>> + Send;
    /// The logged call that runs it here.
    fn into_call(self) -> Call;
}

/// [`QueueCall`] for each message of a per-queue call: the message, its [`Call`] variant and
/// its client method.
macro_rules! queue_call {
    ($($message:ident => $variant:ident, $method:ident;)+) => {$(
        impl QueueCall for proto::$message {
            fn queue(&self) -> (bool, &str, &str) {
                (self.local, &self.crawl_id, &self.key)
            }
            fn for_owner(self) -> Self {
                Self { local: true, ..self }
            }
            async fn send(
                self,
                mut client: UrlFrontierClient<Channel>,
            ) -> Result<Response<proto::Empty>, Status> {
                client.$method(self).await
            }
            fn into_call(self) -> Call {
                Call::$variant(self)
            }
        }
    )+};
}

queue_call! {
    BlockQueueParams => Block, block_queue_until;
    QueueDelayParams => Delay, set_delay;
    CrawlLimitParams => Limit, set_crawl_limit;
}

fn count(answer: Answer) -> Result<Response<proto::Long>, Status> {
    match answer {
        Answer::Count(value) => Ok(Response::new(proto::Long { value })),
        other => Err(Status::internal(format!("unexpected answer {other:?}"))),
    }
}

fn done(answer: Answer) -> Result<Response<proto::Empty>, Status> {
    match answer {
        Answer::Done => Ok(Response::new(proto::Empty {})),
        other => Err(Status::internal(format!("unexpected answer {other:?}"))),
    }
}

/// The id an ack echoes: the client's, else the URL.
fn ack_id(item: &UrlItem) -> String {
    if !item.id.is_empty() {
        return item.id.clone();
    }
    let info = match &item.item {
        Some(url_item::Item::Discovered(d)) => d.info.as_ref(),
        Some(url_item::Item::Known(k)) => k.info.as_ref(),
        None => None,
    };
    info.map(|i| i.url.clone()).unwrap_or_default()
}

fn ack_status(answer: &Result<Answer, Status>) -> AckStatus {
    match answer {
        Ok(Answer::Ack(status)) => *status,
        _ => AckStatus::Fail,
    }
}

/// `PutURLs` items submitted ([`FrontierService::submit_puts`]): which of them this node
/// applies, and where the answers to those come after their commit.
struct PutTicket {
    is_local: Vec<bool>,
    local: tokio::sync::oneshot::Receiver<Answers>,
}

/// The answers to a batch of `PutURLs` items, in their order: this node's from `local`, `OK`
/// for those handed to other nodes.
fn merge_put_answers(
    is_local: &[bool],
    local: Vec<Result<Answer, Status>>,
) -> Vec<Result<Answer, Status>> {
    let mut local = local.into_iter();
    is_local
        .iter()
        .map(|&l| {
            if l {
                local
                    .next()
                    .unwrap_or_else(|| Err(Status::internal("a call gave no answer")))
            } else {
                Ok(Answer::Ack(AckStatus::Ok))
            }
        })
        .collect()
}

/// What a `PutURLs` stream's loop got next: a batch of items (`None`: the stream ended), or
/// the answers of its oldest batch waiting for a commit.
enum Next<T> {
    Batch(Option<Vec<T>>),
    Committed(Result<Answers, tokio::sync::oneshot::error::RecvError>),
}

/// Reads a client stream in batches of what has already arrived, up to `max` items as
/// `items` counts a message's: waits for one message, then takes those ready without
/// waiting. `None` at the end of the stream; a client error ends it too.
async fn next_batch<T>(
    input: &mut Streaming<T>,
    max: usize,
    items: impl Fn(&T) -> usize,
) -> Option<Vec<T>> {
    let first = match input.next().await {
        Some(Ok(message)) => message,
        _ => return None,
    };
    let mut taken = items(&first);
    let mut batch = vec![first];
    while taken < max {
        match input.next().now_or_never() {
            Some(Some(Ok(message))) => {
                taken += items(&message);
                batch.push(message);
            }
            _ => break,
        }
    }
    Some(batch)
}

/// A client's stream of puts (`PutURLs` items, `PutDiscovered` batches), read in batches of
/// what has arrived (about [`PUT_BATCH`] URLs, as `items` counts a message's; a message is
/// never split), each batch submitted as it arrives, up to
/// [`PUT_PIPELINE`] of them waiting for their commits at once, and acked in order once
/// committed: one stream fills a group-commit window instead of waiting one out per batch.
/// `split` makes a batch's items and what its acks need (`K`); `acks` makes its acks from
/// that and the items' answers. An error is sent as the stream's last message.
async fn pipelined_puts<T, K, A>(
    svc: FrontierService,
    mut input: Streaming<T>,
    tx: mpsc::Sender<Result<A, Status>>,
    items: impl Fn(&T) -> usize + Copy,
    split: impl Fn(Vec<T>) -> (K, Vec<UrlItem>),
    acks: impl Fn(K, &[Result<Answer, Status>]) -> Vec<A>,
) {
    let mut waiting: VecDeque<(K, PutTicket)> = VecDeque::new();
    let mut input_done = false;
    while !(input_done && waiting.is_empty()) {
        let next = if input_done || waiting.len() >= PUT_PIPELINE {
            Next::Committed((&mut waiting.front_mut().expect("not empty").1.local).await)
        } else if waiting.is_empty() {
            Next::Batch(next_batch(&mut input, PUT_BATCH, items).await)
        } else {
            let oldest = &mut waiting.front_mut().expect("not empty").1.local;
            tokio::select! {
                biased;
                answers = oldest => Next::Committed(answers),
                batch = next_batch(&mut input, PUT_BATCH, items) => Next::Batch(batch),
            }
        };
        let answers = match next {
            Next::Batch(Some(batch)) => {
                let (shape, items) = split(batch);
                // On a cluster node the items of other nodes are forwarded here, before the
                // local ones join the group commit: the order holds.
                match svc.submit_puts(items).await {
                    Ok(ticket) => waiting.push_back((shape, ticket)),
                    Err(status) => {
                        let _ = tx.send(Err(status)).await;
                        return;
                    }
                }
                continue;
            }
            Next::Batch(None) => {
                input_done = true;
                continue;
            }
            Next::Committed(answers) => answers,
        };
        let (shape, ticket) = waiting.pop_front().expect("the oldest was committed");
        let answers = match answers {
            Ok(Ok(a)) => merge_put_answers(&ticket.is_local, a),
            Ok(Err(status)) => {
                let _ = tx.send(Err(status)).await;
                return;
            }
            Err(_) => {
                let _ = tx
                    .send(Err(Status::internal("the frontier call was dropped")))
                    .await;
                return;
            }
        };
        for ack in acks(shape, &answers) {
            if tx.send(Ok(ack)).await.is_err() {
                return; // the client went away
            }
        }
    }
}

pub(crate) type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

#[tonic::async_trait]
impl UrlFrontier for FrontierService {
    async fn list_nodes(
        &self,
        _: Request<proto::Empty>,
    ) -> Result<Response<proto::StringList>, Status> {
        let values = match self.cluster() {
            Some(c) => c.nodes().list().to_vec(),
            None => self.node.get().cloned().into_iter().collect(),
        };
        Ok(Response::new(proto::StringList { values }))
    }

    async fn list_crawls(
        &self,
        request: Request<proto::Local>,
    ) -> Result<Response<proto::StringList>, Status> {
        let mut values = self.read(|state, _| state.crawl_ids()).await?;
        if let Some(cluster) = self.fans_out(request.get_ref().local) {
            for more in cluster
                .on_others(|mut c| async move {
                    Ok(c.list_crawls(proto::Local { local: true })
                        .await?
                        .into_inner())
                })
                .await?
            {
                values.extend(more.values);
            }
            values.sort();
            values.dedup();
        }
        Ok(Response::new(proto::StringList { values }))
    }

    async fn delete_crawl(
        &self,
        request: Request<proto::DeleteCrawlMessage>,
    ) -> Result<Response<proto::Long>, Status> {
        let m = request.into_inner();
        let cluster = self.fans_out(m.local);
        // The listings' ends name pages of the crawl as it was.
        self.listings().epoch += 1;
        let deleted = self.run_one(Call::DeleteCrawl(m.clone())).await;
        // And a listing that began meanwhile saw it as it was.
        self.listings().epoch += 1;
        let mut total = count(deleted?)?.into_inner();
        if let Some(cluster) = cluster {
            for n in cluster
                .on_others(|mut c| {
                    let m = proto::DeleteCrawlMessage {
                        local: true,
                        ..m.clone()
                    };
                    async move { Ok(c.delete_crawl(m).await?.into_inner()) }
                })
                .await?
            {
                total.value += n.value;
            }
        }
        Ok(Response::new(total))
    }

    async fn list_queues(
        &self,
        request: Request<proto::Pagination>,
    ) -> Result<Response<proto::QueueList>, Status> {
        let p = request.into_inner();
        let crawl = normalise_crawl_id(&p.crawl_id).to_string();
        let size = match p.size {
            0 => DEFAULT_PAGE,
            s => s as usize,
        };
        let (start, inactive) = (p.start as usize, p.include_inactive);
        let c = crawl.clone();
        let (values, total) = match self.fans_out(p.local) {
            None => {
                self.read(move |state, now| state.queues(&c, inactive, start, size, now))
                    .await?
            }
            Some(cluster) => {
                // Every node's first start + size keys, merged in key order, give the page.
                let window = start.saturating_add(size);
                let (mut keys, mut total) = self
                    .read(move |state, now| state.queues(&c, inactive, 0, window, now))
                    .await?;
                let ask = proto::Pagination {
                    start: 0,
                    size: u32::try_from(window).unwrap_or(u32::MAX),
                    local: true,
                    ..p.clone()
                };
                for more in cluster
                    .on_others(|mut c| {
                        let ask = ask.clone();
                        async move { Ok(c.list_queues(ask).await?.into_inner()) }
                    })
                    .await?
                {
                    keys.extend(more.values);
                    total += more.total;
                }
                keys.sort();
                (keys.into_iter().skip(start).take(size).collect(), total)
            }
        };
        Ok(Response::new(proto::QueueList {
            size: values.len() as u32,
            values,
            total,
            start: p.start,
            crawl_id: crawl,
        }))
    }

    type GetURLsStream = BoxStream<UrlInfo>;

    async fn get_ur_ls(
        &self,
        request: Request<GetParams>,
    ) -> Result<Response<Self::GetURLsStream>, Status> {
        let urls = match self.run_one(Call::Get(request.into_inner())).await? {
            Answer::Urls(urls) => urls,
            other => return Err(Status::internal(format!("unexpected answer {other:?}"))),
        };
        Ok(Response::new(Box::pin(tokio_stream::iter(
            urls.into_iter().map(Ok),
        ))))
    }

    type PutURLsStream = BoxStream<AckMessage>;

    async fn put_ur_ls(
        &self,
        request: Request<Streaming<UrlItem>>,
    ) -> Result<Response<Self::PutURLsStream>, Status> {
        let (tx, rx) = mpsc::channel(ACK_BUFFER);
        tokio::spawn(pipelined_puts(
            self.clone(),
            request.into_inner(),
            tx,
            |_| 1,
            // Each item is acked with its own id.
            |items: Vec<UrlItem>| (items.iter().map(ack_id).collect::<Vec<_>>(), items),
            |ids, answers| {
                ids.into_iter()
                    .zip(answers)
                    .map(|(id, answer)| AckMessage {
                        id,
                        status: ack_status(answer) as i32,
                    })
                    .collect()
            },
        ));
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    type PutDiscoveredStream = BoxStream<BatchAck>;

    async fn put_discovered(
        &self,
        request: Request<Streaming<DiscoveredBatch>>,
    ) -> Result<Response<Self::PutDiscoveredStream>, Status> {
        let (tx, rx) = mpsc::channel(ACK_BUFFER);
        tokio::spawn(pipelined_puts(
            self.clone(),
            request.into_inner(),
            tx,
            |batch: &DiscoveredBatch| batch.items.len(),
            // The batches read together are submitted as one; each is acked with its id and
            // its URLs' statuses.
            |batches: Vec<DiscoveredBatch>| {
                let shape: Vec<(String, usize)> = batches
                    .iter()
                    .map(|b| (b.id.clone(), b.items.len()))
                    .collect();
                let items = batches
                    .into_iter()
                    .flat_map(|b| b.items)
                    .map(|info| UrlItem {
                        item: Some(url_item::Item::Discovered(DiscoveredUrlItem {
                            info: Some(info),
                        })),
                        id: String::new(),
                        creation_date: 0,
                    })
                    .collect();
                (shape, items)
            },
            |shape, answers| {
                let mut answers = answers.iter();
                shape
                    .into_iter()
                    .map(|(id, n)| BatchAck {
                        id,
                        statuses: answers
                            .by_ref()
                            .take(n)
                            .map(|a| ack_status(a) as i32)
                            .collect(),
                    })
                    .collect()
            },
        ));
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn get_stats(
        &self,
        request: Request<proto::QueueWithinCrawlParams>,
    ) -> Result<Response<proto::Stats>, Status> {
        let p = request.into_inner();
        let crawl = normalise_crawl_id(&p.crawl_id).to_string();
        let key_asked = p.key.clone();
        let (c, key) = (crawl.clone(), p.key.clone());
        let counts = self
            .read(move |state, now| state.counts(&c, &key, now))
            .await?;
        let mut extra: HashMap<String, u64> = [
            ("completed", counts.completed),
            ("active_queues", counts.active_queues),
            ("crawlrank.fetched", counts.fetched),
            ("crawlrank.frontier", counts.frontier),
            ("crawlrank.dead_letters", self.dead_letters()),
        ]
        .into_iter()
        // Out-links the bounds skipped, named as the crawler counts them.
        .chain(Capped::KEYS.into_iter().zip(counts.capped.counts()))
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        if let Some((ledger, pages)) = counts.cash {
            // OPIC's cash, in units of 1e-15 (the counts are integers; a node's sums are
            // ≥ 0), and what 1/n is: `crawlrank status` adds the nodes up.
            let n = self.policy().config.total_pages;
            for (k, v) in [
                (OPIC_HELD, to_femto(ledger.held)),
                (OPIC_SENT, to_femto(ledger.sent)),
                (OPIC_RECEIVED, to_femto(ledger.received)),
                (OPIC_PAGES, pages),
                (OPIC_TOTAL_PAGES, n),
            ] {
                extra.insert(k.to_string(), v);
            }
        }
        let mut stats = proto::Stats {
            size: counts.size,
            in_process: u32::try_from(counts.in_process).unwrap_or(u32::MAX),
            counts: extra,
            number_of_queues: counts.queues,
            crawl_id: crawl,
        };
        if let Some(cluster) = self.fans_out(p.local) {
            let ask = proto::QueueWithinCrawlParams {
                key: key_asked,
                crawl_id: p.crawl_id.clone(),
                local: true,
            };
            for more in cluster
                .on_others(|mut c| {
                    let ask = ask.clone();
                    async move { Ok(c.get_stats(ask).await?.into_inner()) }
                })
                .await?
            {
                stats.size += more.size;
                stats.in_process = stats.in_process.saturating_add(more.in_process);
                stats.number_of_queues += more.number_of_queues;
                for (k, v) in more.counts {
                    // Every node holds the crawl's one `n`: a setting, not a count to add up.
                    if k == OPIC_TOTAL_PAGES {
                        stats.counts.entry(k).or_insert(v);
                    } else {
                        *stats.counts.entry(k).or_default() += v;
                    }
                }
            }
        }
        Ok(Response::new(stats))
    }

    async fn delete_queue(
        &self,
        request: Request<proto::QueueWithinCrawlParams>,
    ) -> Result<Response<proto::Long>, Status> {
        count(
            self.run_one(Call::DeleteQueue(request.into_inner()))
                .await?,
        )
    }

    async fn block_queue_until(
        &self,
        request: Request<proto::BlockQueueParams>,
    ) -> Result<Response<proto::Empty>, Status> {
        self.at_queue_owner(request.into_inner()).await
    }

    async fn set_active(
        &self,
        request: Request<proto::Active>,
    ) -> Result<Response<proto::Empty>, Status> {
        done(self.run_one(Call::Active(request.into_inner())).await?)
    }

    async fn get_active(
        &self,
        _: Request<proto::Local>,
    ) -> Result<Response<proto::Boolean>, Status> {
        let state = self.read(|state, _| state.is_active()).await?;
        Ok(Response::new(proto::Boolean { state }))
    }

    async fn set_delay(
        &self,
        request: Request<proto::QueueDelayParams>,
    ) -> Result<Response<proto::Empty>, Status> {
        let p = request.into_inner();
        if !p.key.is_empty() {
            return self.at_queue_owner(p).await;
        }
        if let Some(cluster) = self.fans_out(p.local) {
            // The crawl's default delay: every node's.
            let ask = p.clone().for_owner();
            cluster.on_others(|c| ask.clone().send(c)).await?;
        }
        done(self.run_one(Call::Delay(p)).await?)
    }

    async fn set_log_level(
        &self,
        request: Request<proto::LogLevelParams>,
    ) -> Result<Response<proto::Empty>, Status> {
        Err(Status::unimplemented(format!(
            "SetLogLevel (package '{}'): crawlrank's frontier service has no runtime log \
             levels to set",
            request.get_ref().package
        )))
    }

    async fn set_crawl_limit(
        &self,
        request: Request<proto::CrawlLimitParams>,
    ) -> Result<Response<proto::Empty>, Status> {
        self.at_queue_owner(request.into_inner()).await
    }

    async fn get_url_status(
        &self,
        request: Request<proto::UrlStatusRequest>,
    ) -> Result<Response<UrlItem>, Status> {
        let r = request.into_inner();
        if r.key.is_empty() && host_key(&r.url).is_none() {
            return Err(Status::invalid_argument(format!(
                "GetURLStatus: '{}' is not a URL with a host, and no queue key was given",
                r.url
            )));
        }
        let crawl = normalise_crawl_id(&r.crawl_id).to_string();
        let (c, url, key) = (crawl.clone(), r.url.clone(), r.key.clone());
        let item = self
            .read(move |state, now| {
                let key = (!key.is_empty()).then_some(key.as_str());
                state
                    .crawl(&c)
                    .and_then(|crawl| crawl.url_status(&url, key, now))
            })
            .await?;
        item.map(Response::new).ok_or_else(|| {
            Status::not_found(format!(
                "GetURLStatus: crawl '{crawl}' has no URL '{}'{}",
                r.url,
                if r.key.is_empty() {
                    String::new()
                } else {
                    format!(" in queue '{}'", r.key)
                }
            ))
        })
    }

    type ListURLsStream = BoxStream<UrlItem>;

    async fn list_ur_ls(
        &self,
        request: Request<proto::ListUrlParams>,
    ) -> Result<Response<Self::ListURLsStream>, Status> {
        let p = request.into_inner();
        let size = match p.size {
            0 => DEFAULT_PAGE,
            s => (s as usize).min(MAX_LIST_PAGE),
        };
        let filter = UrlFilter::new(&p.key, p.filter.as_deref(), p.ignore_case.unwrap_or(false))
            .map_err(|why| Status::invalid_argument(format!("ListURLs: {why}")))?;
        let start = u64::from(p.start);
        let listing: Listing = (
            p.crawl_id.clone(),
            p.key.clone(),
            p.filter.clone().unwrap_or_default(),
            p.ignore_case.unwrap_or(false),
        );
        let (epoch, resume) = {
            let listings = self.listings();
            (listings.epoch, listings.resume(&listing, start))
        };
        // Going on after the last URL of the answer that ended at `start`, or skipping `start`.
        let skip = if resume.is_some() { 0 } else { start };
        let (_, items, last) = self
            .scan(
                p.crawl_id,
                filter,
                resume,
                (0u64, Vec::new(), None),
                move |(skipped, items, last), crawl, page, now| {
                    if *skipped < skip {
                        *skipped += 1;
                    } else {
                        items.push(crawl.list_item(page, now));
                        *last = Some(page);
                    }
                    items.len() < size
                },
            )
            .await?;
        if let (Some(last), true) = (last, items.len() == size) {
            let next = start + size as u64;
            self.listings().ended(listing, next, epoch, last);
        }
        Ok(Response::new(Box::pin(tokio_stream::iter(
            items.into_iter().map(Ok),
        ))))
    }

    async fn count_ur_ls(
        &self,
        request: Request<proto::CountUrlParams>,
    ) -> Result<Response<proto::Long>, Status> {
        let p = request.into_inner();
        let filter = UrlFilter::new(&p.key, p.filter.as_deref(), p.ignore_case.unwrap_or(false))
            .map_err(|why| Status::invalid_argument(format!("CountURLs: {why}")))?;
        let cluster = self.fans_out(p.local.unwrap_or(false));
        let mut value = self
            .scan(p.crawl_id.clone(), filter, None, 0u64, |n, _, _, _| {
                *n += 1;
                true
            })
            .await?;
        if let Some(cluster) = cluster {
            let ask = proto::CountUrlParams {
                local: Some(true),
                ..p
            };
            for more in cluster
                .on_others(|mut c| {
                    let ask = ask.clone();
                    async move { Ok(c.count_ur_ls(ask).await?.into_inner()) }
                })
                .await?
            {
                value += more.value;
            }
        }
        Ok(Response::new(proto::Long { value }))
    }

    async fn purge_ur_ls(
        &self,
        request: Request<proto::PurgeUrlParams>,
    ) -> Result<Response<proto::Long>, Status> {
        count(self.run_one(Call::Purge(request.into_inner())).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crawl::tests::PANIC_AFTER_CHANGE;

    fn put(url: &str) -> Call {
        Call::Put(UrlItem {
            item: Some(url_item::Item::Discovered(DiscoveredUrlItem {
                info: Some(UrlInfo {
                    url: url.to_string(),
                    key: String::new(),
                    metadata: HashMap::new(),
                    crawl_id: String::new(),
                }),
            })),
            id: String::new(),
            creation_date: 0,
        })
    }

    /// The default crawl's URLs, in listing order.
    fn urls(state: &FrontierState) -> Vec<String> {
        let filter = UrlFilter::new("", None, false).unwrap();
        let mut out = Vec::new();
        state.scan_urls("", &filter, None, usize::MAX, |crawl, page| {
            out.push(crawl.list_item(page, 0));
            true
        });
        out.into_iter()
            .map(|item| match item.item {
                Some(url_item::Item::Discovered(d)) => d.info.unwrap().url,
                other => panic!("unexpected item {other:?}"),
            })
            .collect()
    }

    fn open_core(dir: &std::path::Path) -> Core {
        let spec = policy_spec("bfs", Some(100), None, 0).unwrap();
        let (store, spec) = Store::open(dir, None, &spec).unwrap();
        Core {
            state: load_state(&store, spec).unwrap(),
            store: Some(store),
            broken: None,
            dead_letters: Default::default(),
            outbox_ready: Default::default(),
        }
    }

    #[test]
    fn a_panicking_call_fails_alone_and_memory_stays_equal_to_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let mut core = open_core(dir.path());
        let (tx1, mut rx1) = tokio::sync::oneshot::channel();
        let (tx2, mut rx2) = tokio::sync::oneshot::channel();
        let bad = format!("http://b.test{PANIC_AFTER_CHANGE}");
        let group = vec![
            Pending {
                calls: vec![put("http://a.test/"), put(&bad), put("http://c.test/")],
                applied: None,
                reply: tx1,
            },
            Pending {
                calls: vec![put("http://d.test/")],
                applied: None,
                reply: tx2,
            },
        ];
        core.run_group(group, 1_000, 16);
        let first = rx1.try_recv().unwrap().unwrap();
        let ok = |a: &Result<Answer, Status>| matches!(a, Ok(Answer::Ack(AckStatus::Ok)));
        assert!(ok(&first[0]), "{first:?}");
        let failed = first[1].as_ref().unwrap_err();
        assert_eq!(failed.code(), tonic::Code::Internal);
        assert!(failed.message().contains("a bug struck"), "{failed:?}");
        assert!(ok(&first[2]), "{first:?}");
        let second = rx2.try_recv().unwrap().unwrap();
        assert!(second.len() == 1 && ok(&second[0]), "{second:?}");
        assert!(core.broken.is_none());
        let live = urls(&core.state);
        assert_eq!(
            live,
            ["http://a.test/", "http://c.test/", "http://d.test/"],
            "the panicking call left nothing behind"
        );
        // The service goes on, and what it holds is what a restart rebuilds from the log.
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        core.run_group(
            vec![Pending {
                calls: vec![put("http://e.test/")],
                applied: None,
                reply: tx,
            }],
            1_001,
            16,
        );
        let third = rx.try_recv().unwrap().unwrap();
        assert!(third.len() == 1 && ok(&third[0]), "{third:?}");
        let live = urls(&core.state);
        drop(core);
        let reopened = open_core(dir.path());
        assert_eq!(urls(&reopened.state), live);
    }
}
