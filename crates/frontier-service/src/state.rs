//! The whole service state — every crawl, and the active flag — and the calls that change
//! it, in the one form they are both applied and logged in.
//!
//! Why the calls are the log: everything the service holds (the URLs, the queues' delays,
//! blocks and limits, the leases, the active flag and each crawl's policy frontier) is a
//! deterministic function of the changing calls it received, in order, and of the time each
//! was applied at. So the store keeps those calls ([`LoggedCall`]: a prost message wrapping
//! the request itself, its time and the buffer bound it ran with), and a restart replays them
//! through [`FrontierState::apply`] — the same code — exactly as the crawler replays its
//! frontier calls (`crates/crawler/src/resume.rs`). Calls that change nothing (a `GetURLs`
//! that found nothing to serve, a skipped URL) are not logged.
//!
//! So that a restart need not replay a crawl's whole history, the log is compacted now and
//! then into a checkpoint of the state ([`FrontierState::checkpoint`], `crate::checkpoint`),
//! after which only the calls logged since are replayed.

use crate::checkpoint::{CheckpointPart, PartReader, StateCheckpoint};
use crate::crawl::{take_of, Counts, Crawl, LinkCounts, Ranked, ScanCursor, UrlFilter};
use crate::ext_proto::PageReport;
use crate::page_text::TextHome;
use crate::proto::{
    ack_message::Status as AckStatus, get_params, url_item, Active, BlockQueueParams,
    CrawlLimitParams, DeleteCrawlMessage, GetParams, PurgeUrlParams, QueueDelayParams,
    QueueWithinCrawlParams, UrlInfo, UrlItem,
};
use crawlrank_crawl_state::CrawlLimits;
use crawlrank_frontier::{Frontier, Offer, PageId, PolicySpec};
use crawlrank_urlfrontier::cluster_proto::Offer as WireOffer;
use crawlrank_urlfrontier::normalise_crawl_id;
use std::collections::BTreeMap;
use std::path::Path;
use tonic::Status;

/// Pages a checkpoint part holds at most ([`FrontierState::checkpoint_parts`]): with their
/// URLs, a few MiB a part.
pub const PART_PAGES: usize = 65_536;
/// Words of frontier calls after which a checkpoint part takes no more calls (8 MiB in memory).
pub const PART_WORDS: usize = 1 << 20;

/// Seconds in a day (PurgeURLs counts days).
const DAY_SECS: u64 = 86_400;
/// The most out-links one `ReportPage` may carry.
pub const MAX_OUTLINKS: usize = 100_000;
/// The most bytes of metadata one URL may carry (its keys and values together): the service
/// keeps it with the URL and sends it back with every lease.
pub const MAX_METADATA_BYTES: usize = 16 * 1024;
/// The most metadata values one URL may carry (across its keys).
pub const MAX_METADATA_VALUES: usize = 256;

/// Refuses a URL whose metadata is over [`MAX_METADATA_BYTES`] or [`MAX_METADATA_VALUES`],
/// naming the URL and the limit.
pub fn check_metadata(info: &UrlInfo) -> Result<(), Status> {
    let mut bytes = 0usize;
    let mut values = 0usize;
    for (k, v) in &info.metadata {
        bytes += k.len() + v.values.iter().map(String::len).sum::<usize>();
        values += v.values.len().max(1);
    }
    if bytes > MAX_METADATA_BYTES {
        return Err(Status::invalid_argument(format!(
            "the metadata of '{}' is {bytes} bytes, more than the {MAX_METADATA_BYTES} a URL may carry",
            info.url
        )));
    }
    if values > MAX_METADATA_VALUES {
        return Err(Status::invalid_argument(format!(
            "the metadata of '{}' holds {values} values, more than the {MAX_METADATA_VALUES} a URL may carry",
            info.url
        )));
    }
    Ok(())
}

/// The checks a call must pass before it is applied live (not at replay: a log written
/// before a limit existed still replays): every URL's metadata within the limits.
pub fn check_call(call: &Call) -> Result<(), Status> {
    let info = match call {
        Call::Put(UrlItem {
            item: Some(url_item::Item::Discovered(d)),
            ..
        }) => d.info.as_ref(),
        Call::Put(UrlItem {
            item: Some(url_item::Item::Known(k)),
            ..
        }) => k.info.as_ref(),
        Call::Report(r) => r.page.as_ref().and_then(|k| k.info.as_ref()),
        Call::SplitReport(SplitReport {
            report: Some(r), ..
        }) => r.page.as_ref().and_then(|k| k.info.as_ref()),
        Call::Offered(OfferedItem {
            item: Some(item), ..
        }) => return check_call(&Call::Put(item.clone())),
        _ => None,
    };
    info.map_or(Ok(()), check_metadata)
}

/// One changing call, as applied and as logged.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Call {
    /// One item of `PutURLs` (a URL of a `PutDiscovered` batch is logged as a discovered
    /// item).
    #[prost(message, tag = "2")]
    Put(UrlItem),
    /// `GetURLs`.
    #[prost(message, tag = "3")]
    Get(GetParams),
    /// `DeleteCrawl`.
    #[prost(message, tag = "4")]
    DeleteCrawl(DeleteCrawlMessage),
    /// `DeleteQueue`.
    #[prost(message, tag = "5")]
    DeleteQueue(QueueWithinCrawlParams),
    /// `BlockQueueUntil`.
    #[prost(message, tag = "6")]
    Block(BlockQueueParams),
    /// `SetDelay`.
    #[prost(message, tag = "7")]
    Delay(QueueDelayParams),
    /// `SetCrawlLimit`.
    #[prost(message, tag = "8")]
    Limit(CrawlLimitParams),
    /// `SetActive`.
    #[prost(message, tag = "9")]
    Active(Active),
    /// `PurgeURLs`.
    #[prost(message, tag = "10")]
    Purge(PurgeUrlParams),
    /// `ReportPage` (crawlrank's extension): a fetched page and its out-links, applied
    /// together. Tag 11 is [`LoggedCall::max_waiting`]'s.
    #[prost(message, tag = "12")]
    Report(PageReport),
    /// A discovered URL handed to this cluster node by another, with what the page linking
    /// to it passed along the link there (`crate::cluster`).
    #[prost(message, tag = "13")]
    Offered(OfferedItem),
    /// `ReportPage` of a page this cluster node owns, some of whose out-links other nodes
    /// own: applied here with the local links, the remote ones counted in its out-degree and
    /// handed to their owners with the page's offer.
    #[prost(message, tag = "14")]
    SplitReport(SplitReport),
}

/// [`Call::Offered`]'s message.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OfferedItem {
    /// The discovered item.
    #[prost(message, optional, tag = "1")]
    pub item: Option<UrlItem>,
    /// What the linking page passed along.
    #[prost(message, optional, tag = "2")]
    pub offer: Option<WireOffer>,
}

/// [`Call::SplitReport`]'s message.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SplitReport {
    /// The page with the out-links this node owns.
    #[prost(message, optional, tag = "1")]
    pub report: Option<PageReport>,
    /// The out-links other nodes own.
    #[prost(message, repeated, tag = "2")]
    pub remote: Vec<RemoteLink>,
    /// Pages of the crawl the other nodes had crawled when this was applied, as this node
    /// knew it: the batch clock's count (`crate::cluster`'s crawl-wide clock).
    #[prost(uint64, tag = "3")]
    pub crawled_elsewhere: u64,
}

/// An out-link another node owns.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RemoteLink {
    /// The URL.
    #[prost(string, tag = "1")]
    pub url: String,
    /// Its owner's index in the sorted node list.
    #[prost(uint32, tag = "2")]
    pub owner: u32,
}

/// A [`WireOffer`] as the frontier's [`Offer`].
pub fn offer_of(w: &WireOffer) -> Offer {
    Offer {
        outdegree: w.outdegree,
        distance: w.distance,
        t: w.t,
        delta: w.delta,
        cash: w.cash,
    }
}

/// The frontier's [`Offer`] as its wire form.
pub fn wire_offer(o: &Offer) -> WireOffer {
    WireOffer {
        outdegree: o.outdegree,
        distance: o.distance,
        t: o.t,
        delta: o.delta,
        cash: o.cash,
    }
}

/// A call with what else its result depended on: the log's record.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LoggedCall {
    /// When it was applied, in seconds since the Unix epoch.
    #[prost(uint64, tag = "1")]
    pub now: u64,
    /// The call.
    #[prost(oneof = "Call", tags = "2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14")]
    pub call: Option<Call>,
    /// The bound on popped, unserved pages it ran with (`GetURLs` only).
    #[prost(uint64, tag = "11")]
    pub max_waiting: u64,
}

/// What a call answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// An ack status (one `PutURLs` item).
    Ack(AckStatus),
    /// URLs to fetch (`GetURLs`).
    Urls(Vec<UrlInfo>),
    /// A count (deletions, purges).
    Count(u64),
    /// What `ReportPage` did with the page's out-links, and the page's own status (`FAIL`
    /// only when the crawl cannot hold more URLs; the links were applied and the call is
    /// logged all the same, so the log and the memory agree).
    Report(LinkCounts, AckStatus),
    /// [`Call::SplitReport`]'s: as [`Answer::Report`], with what the page passed along its
    /// links other nodes own (see [`Crawl::report_split`]).
    SplitReport(LinkCounts, AckStatus, Option<Option<Offer>>),
    /// Nothing to say.
    Done,
}

/// `dir` prepared for the crawls' page text.
fn text_home(dir: &Path) -> anyhow::Result<TextHome> {
    TextHome::prepare(dir.to_path_buf()).map_err(|e| {
        anyhow::anyhow!(
            "cannot prepare the page text directory {}: {e}",
            dir.display()
        )
    })
}

/// Every crawl of the service, and whether it serves.
pub struct FrontierState {
    spec: PolicySpec,
    /// The bounds on each crawl's URLs (`crate::store::Store::crawl_limits`).
    limits: CrawlLimits,
    crawls: BTreeMap<String, Crawl>,
    active: bool,
    /// Where the crawls keep their pages' URLs and metadata.
    text: TextHome,
}

impl FrontierState {
    /// An empty state whose crawls are ordered by `spec`'s policy; fails if `spec` cannot
    /// build a frontier (e.g. a policy that needs impacts).
    pub fn new(spec: PolicySpec) -> anyhow::Result<Self> {
        Frontier::from_spec(&spec)?;
        Ok(Self {
            spec,
            limits: CrawlLimits::UNBOUNDED,
            crawls: BTreeMap::new(),
            active: true,
            text: TextHome::Memory,
        })
    }

    /// The state with every crawl's URLs admitted within `limits`, the ones its calls were
    /// answered with.
    pub fn with_limits(mut self, limits: CrawlLimits) -> Self {
        self.limits = limits;
        for crawl in self.crawls.values_mut() {
            crawl.set_limits(limits);
        }
        self
    }

    /// The policy every crawl is ordered by.
    pub fn spec(&self) -> &PolicySpec {
        &self.spec
    }

    /// The state as a checkpoint in one message (`crate::checkpoint`).
    pub fn checkpoint(&self) -> StateCheckpoint {
        StateCheckpoint {
            active: self.active,
            crawls: self.crawls.values().map(Crawl::checkpoint).collect(),
        }
    }

    /// The state's checkpoint but the crawls' pages and frontier calls, which
    /// [`checkpoint_parts`](Self::checkpoint_parts) gives.
    pub fn checkpoint_header(&self) -> StateCheckpoint {
        StateCheckpoint {
            active: self.active,
            crawls: self.crawls.values().map(Crawl::checkpoint_header).collect(),
        }
    }

    /// Gives `each` every part of the crawls' pages and frontier calls, one at a time, with
    /// the crawl's index in [`checkpoint_header`](Self::checkpoint_header)'s list and the
    /// part's number among the crawl's (0, 1, 2, …): [`PART_PAGES`] pages and about
    /// [`PART_WORDS`] words of calls a part.
    pub fn checkpoint_parts(
        &self,
        mut each: impl FnMut(u32, u64, CheckpointPart) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        for (crawl, c) in (0u32..).zip(self.crawls.values()) {
            let mut number = 0;
            c.checkpoint_parts(PART_PAGES, PART_WORDS, |part| -> anyhow::Result<()> {
                each(crawl, number, part)?;
                number += 1;
                Ok(())
            })?;
        }
        Ok(())
    }

    /// The state a checkpoint holds, its crawls ordered by `spec`'s policy.
    pub fn from_checkpoint(spec: PolicySpec, c: StateCheckpoint) -> anyhow::Result<Self> {
        Self::from_checkpoint_in(spec, c, None)
    }

    /// An empty state whose crawls keep their pages' URLs and metadata in scratch files
    /// of `dir` (emptied first: the files are rebuilt from the store at every start), not
    /// in memory.
    pub fn new_in(spec: PolicySpec, dir: &Path) -> anyhow::Result<Self> {
        let mut state = Self::new(spec)?;
        state.text = text_home(dir)?;
        Ok(state)
    }

    /// [`FrontierState::from_checkpoint`], the crawls' page text in scratch files of
    /// `dir` when given ([`FrontierState::new_in`]).
    pub fn from_checkpoint_in(
        spec: PolicySpec,
        c: StateCheckpoint,
        dir: Option<&Path>,
    ) -> anyhow::Result<Self> {
        Self::from_checkpoint_parts(spec, c, dir, &mut |_, _| Ok(()))
    }

    /// [`FrontierState::from_checkpoint_in`] of a checkpoint whose crawls' pages and calls
    /// are (also) in parts: `parts(crawl, f)` gives `f` the parts of the crawl of that index
    /// in `c`'s list, in order ([`checkpoint_parts`](Self::checkpoint_parts)).
    pub fn from_checkpoint_parts(
        spec: PolicySpec,
        c: StateCheckpoint,
        dir: Option<&Path>,
        parts: PartReader<'_>,
    ) -> anyhow::Result<Self> {
        let mut state = Self::new(spec)?;
        if let Some(dir) = dir {
            state.text = text_home(dir)?;
        }
        state.active = c.active;
        for (i, crawl) in (0u32..).zip(c.crawls) {
            let crawl = Crawl::from_checkpoint_parts(crawl, &state.spec, &state.text, &mut |f| {
                parts(i, f)
            })?;
            state.crawls.insert(crawl.id().to_string(), crawl);
        }
        Ok(state)
    }

    /// Pages each crawl's frontier was told were crawled here, by crawl id.
    pub fn crawled(&self) -> Vec<(String, u64)> {
        self.crawls
            .iter()
            .map(|(id, c)| (id.clone(), c.crawled()))
            .collect()
    }

    /// URLs held, across the crawls (deleted ones included: they keep their place).
    pub fn pages(&self) -> usize {
        self.crawls.values().map(Crawl::pages).sum()
    }

    fn crawl_or_new(&mut self, id: &str) -> Result<&mut Crawl, Status> {
        let id = normalise_crawl_id(id);
        if !self.crawls.contains_key(id) {
            let mut crawl = Crawl::new_in(id, &self.spec, &self.text).map_err(|e| {
                Status::internal(format!("cannot build the frontier of crawl '{id}': {e:#}"))
            })?;
            crawl.set_limits(self.limits);
            self.crawls.insert(id.to_string(), crawl);
        }
        Ok(self.crawls.get_mut(id).expect("just inserted"))
    }

    /// The crawl `id` names (empty: the default crawl), if it exists.
    pub fn crawl(&self, id: &str) -> Option<&Crawl> {
        self.crawls.get(normalise_crawl_id(id))
    }

    fn crawl_mut(&mut self, id: &str) -> Option<&mut Crawl> {
        self.crawls.get_mut(normalise_crawl_id(id))
    }

    /// Applies a changing call at time `now`; returns its answer and whether it changed the
    /// state (then it must be logged). `max_waiting` bounds the popped, unserved pages of a
    /// `GetURLs`.
    pub fn apply(
        &mut self,
        call: &Call,
        now: u64,
        max_waiting: usize,
    ) -> Result<(Answer, bool), Status> {
        Ok(match call {
            Call::Put(item) => {
                let (status, changed) = self.put(item, now)?;
                (Answer::Ack(status), changed)
            }
            Call::Get(params) => {
                let mut out = Vec::new();
                let changed = self.get(params, now, max_waiting, &mut out);
                (Answer::Urls(out), changed)
            }
            Call::DeleteCrawl(m) => match self.crawls.remove(normalise_crawl_id(&m.value)) {
                Some(crawl) => {
                    let size = crawl.counts(None, now).map_or(0, |c| c.size);
                    (Answer::Count(size), true)
                }
                None => (Answer::Count(0), false),
            },
            Call::DeleteQueue(p) => match self
                .crawl_mut(&p.crawl_id)
                .and_then(|c| c.delete_queue(&p.key))
            {
                Some(active) => (Answer::Count(active), true),
                None => (Answer::Count(0), false),
            },
            Call::Block(p) => {
                let changed = self
                    .crawl_mut(&p.crawl_id)
                    .is_some_and(|c| c.block(&p.key, p.time));
                (Answer::Done, changed)
            }
            Call::Delay(p) => {
                let changed = if p.key.is_empty() {
                    self.crawl_or_new(&p.crawl_id)?
                        .set_delay("", p.delay_requestable)
                } else {
                    self.crawl_mut(&p.crawl_id)
                        .is_some_and(|c| c.set_delay(&p.key, p.delay_requestable))
                };
                (Answer::Done, changed)
            }
            Call::Limit(p) => {
                let found = self
                    .crawl_mut(&p.crawl_id)
                    .is_some_and(|c| c.set_limit(&p.key, p.limit));
                if !found {
                    return Err(Status::not_found(format!(
                        "SetCrawlLimit: crawl '{}' has no queue '{}'",
                        normalise_crawl_id(&p.crawl_id),
                        p.key
                    )));
                }
                (Answer::Done, true)
            }
            Call::Report(r) => {
                let (counts, status) = self.report(r, now)?;
                (Answer::Report(counts, status), true)
            }
            Call::SplitReport(split) => {
                let report = split.report.clone().unwrap_or_default();
                let remote = split.remote.len() as u64;
                let (counts, status, offered) =
                    self.report_with(&report, now, Some((remote, split.crawled_elsewhere)))?;
                (Answer::SplitReport(counts, status, offered), true)
            }
            Call::Offered(o) => {
                let Some(url_item::Item::Discovered(d)) =
                    o.item.as_ref().and_then(|i| i.item.as_ref())
                else {
                    return Err(Status::invalid_argument(
                        "an offered item must be a discovered URL",
                    ));
                };
                let (Some(info), Some(offer)) = (d.info.as_ref(), o.offer.as_ref()) else {
                    return Ok((Answer::Ack(AckStatus::Skipped), false));
                };
                let crawl = self.crawl_or_new(&info.crawl_id)?;
                let (status, changed) = crawl.put_offered(info, &offer_of(offer), now);
                if !changed && crawl.is_pristine() {
                    let id = crawl.id().to_string();
                    self.crawls.remove(&id);
                }
                (Answer::Ack(status), changed)
            }
            Call::Active(a) => {
                self.active = a.state;
                (Answer::Done, true)
            }
            Call::Purge(p) => {
                let cutoff = now.saturating_sub(u64::from(p.days).saturating_mul(DAY_SECS));
                let key = (!p.key.is_empty()).then_some(p.key.as_str());
                let purged = self
                    .crawl_mut(&p.crawl_id)
                    .map_or(0, |c| c.purge(key, cutoff));
                (Answer::Count(purged), purged > 0)
            }
        })
    }

    /// `ReportPage`: checked whole before anything changes, so a refused report changes
    /// nothing (and is not logged).
    fn report(&mut self, r: &PageReport, now: u64) -> Result<(LinkCounts, AckStatus), Status> {
        let (counts, status, _) = self.report_with(r, now, None)?;
        Ok((counts, status))
    }

    /// [`FrontierState::report`], on a cluster node with `split`: the page's out-links other
    /// nodes own and the pages they crawled ([`Crawl::report_split`]).
    fn report_with(
        &mut self,
        r: &PageReport,
        now: u64,
        split: Option<(u64, u64)>,
    ) -> Result<(LinkCounts, AckStatus, Option<Option<Offer>>), Status> {
        let (info, refetch) = r
            .page
            .as_ref()
            .and_then(|k| Some((k.info.as_ref()?, k.refetchable_from_date)))
            .ok_or_else(|| Status::invalid_argument("ReportPage: the report names no page"))?;
        Crawl::check_url(info)
            .map_err(|why| Status::invalid_argument(format!("ReportPage: {why}")))?;
        if r.outlinks.len() > MAX_OUTLINKS {
            return Err(Status::invalid_argument(format!(
                "ReportPage: {} out-links, more than the {MAX_OUTLINKS} a report may hold",
                r.outlinks.len()
            )));
        }
        let crawl = self.crawl_mut(&info.crawl_id).ok_or_else(|| {
            Status::not_found(format!(
                "ReportPage: there is no crawl '{}' (PutURLs creates a crawl)",
                normalise_crawl_id(&info.crawl_id)
            ))
        })?;
        Ok(match split {
            Some((remote, elsewhere)) => {
                crawl.report_split(info, refetch, &r.outlinks, remote, elsewhere, now)
            }
            None => {
                let (counts, status) = crawl.report_page(info, refetch, &r.outlinks, now);
                (counts, status, None)
            }
        })
    }

    fn put(&mut self, item: &UrlItem, now: u64) -> Result<(AckStatus, bool), Status> {
        let (info, refetch) = match &item.item {
            Some(url_item::Item::Discovered(d)) => (d.info.as_ref(), None),
            Some(url_item::Item::Known(k)) => (k.info.as_ref(), Some(k.refetchable_from_date)),
            None => return Ok((AckStatus::Skipped, false)),
        };
        let Some(info) = info else {
            return Ok((AckStatus::Skipped, false));
        };
        let crawl = self.crawl_or_new(&info.crawl_id)?;
        let (status, changed) = match refetch {
            None => crawl.put_discovered(info, now),
            Some(date) => crawl.put_known(info, date, now),
        };
        if !changed && crawl.is_pristine() {
            // A skipped URL does not create a crawl.
            let id = crawl.id().to_string();
            self.crawls.remove(&id);
        }
        Ok((status, changed))
    }

    fn get(
        &mut self,
        params: &GetParams,
        now: u64,
        max_waiting: usize,
        out: &mut Vec<UrlInfo>,
    ) -> bool {
        if !self.active {
            return false;
        }
        let mut take = take_of(params, max_waiting);
        let only = match &params.item {
            Some(get_params::Item::CrawlId(id)) => Some(normalise_crawl_id(id).to_string()),
            Some(get_params::Item::AnyCrawlId(_)) | None => None,
        };
        let mut changed = false;
        for (id, crawl) in self.crawls.iter_mut() {
            if only.as_ref().is_some_and(|o| o != id) {
                continue;
            }
            let before = out.len();
            changed |= crawl.take_urls(&take, now, out);
            // Queues are counted per crawl: the next crawl gets what is left.
            let served_queues = count_queues(&out[before..]);
            take.max_queues = take.max_queues.saturating_sub(served_queues);
            take.max_urls = take.max_urls.saturating_sub(out.len() - before);
            if take.max_queues == 0 || take.max_urls == 0 {
                break;
            }
        }
        changed
    }

    /// Whether the service serves (`SetActive`).
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// The crawls holding URLs, in id order.
    pub fn crawl_ids(&self) -> Vec<String> {
        self.crawls
            .iter()
            .filter(|(_, c)| !c.is_empty())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// `GetStats`: counts of a queue (`key` non-empty) or a crawl; zero for unknown ones.
    pub fn counts(&self, crawl_id: &str, key: &str, now: u64) -> Counts {
        let key = (!key.is_empty()).then_some(key);
        self.crawl(crawl_id)
            .and_then(|c| c.counts(key, now))
            .unwrap_or_default()
    }

    /// `ListQueues`: the matching keys from `start`, at most `size`, and how many match.
    pub fn queues(
        &self,
        crawl_id: &str,
        include_inactive: bool,
        start: usize,
        size: usize,
        now: u64,
    ) -> (Vec<String>, u64) {
        let Some(crawl) = self.crawl(crawl_id) else {
            return (Vec::new(), 0);
        };
        let total = crawl.queue_keys(include_inactive, now).count() as u64;
        let keys = crawl
            .queue_keys(include_inactive, now)
            .skip(start)
            .take(size)
            .map(str::to_string)
            .collect();
        (keys, total)
    }

    /// One bounded step of a `ListURLs` or `CountURLs` scan of crawl `crawl_id` (see
    /// [`Crawl::scan_urls`]); `None` when done or when there is no such crawl.
    pub fn scan_urls(
        &self,
        crawl_id: &str,
        filter: &UrlFilter,
        from: Option<&ScanCursor>,
        budget: usize,
        visit: impl FnMut(&Crawl, PageId) -> bool,
    ) -> Option<ScanCursor> {
        self.crawl(crawl_id)?.scan_urls(filter, from, budget, visit)
    }

    /// `GetRanking`: the crawl's never-fetched URLs in the policy's order, at most `limit`;
    /// `NOT_FOUND` for an unknown crawl.
    pub fn ranking(&self, crawl_id: &str, limit: usize, now: u64) -> Result<Vec<Ranked>, Status> {
        let crawl = self.crawl(crawl_id).ok_or_else(|| {
            Status::not_found(format!(
                "GetRanking: there is no crawl '{}'",
                normalise_crawl_id(crawl_id)
            ))
        })?;
        crawl.ranking(limit, now).map_err(|e| {
            Status::internal(format!(
                "GetRanking: cannot rebuild the order of crawl '{}': {e:#}",
                crawl.id()
            ))
        })
    }
}

/// Distinct queues among served URLs (they come grouped by crawl; keys are per crawl).
fn count_queues(urls: &[UrlInfo]) -> usize {
    let mut keys: Vec<&str> = urls.iter().map(|u| u.key.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    keys.len()
}
