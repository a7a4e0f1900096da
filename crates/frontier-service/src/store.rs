//! The service's state on disk: an embedded `redb` database (the store the crawler uses)
//! holding the policy the crawls are ordered by, a checkpoint of the state and the log of
//! the changing calls made since.
//!
//! Tables:
//! - `meta`: the format version and the [`PolicySpec`] (its one stored encoding, as in the
//!   crawl state), fixed when the state is created: a replay with another policy would build
//!   other frontiers; likewise `limits`, the caps on hosts and the limits on hops URLs are
//!   admitted within ([`Store::crawl_limits`]);
//! - `calls`: sequence number → encoded [`LoggedCall`], replayed in order at open
//!   (`crate::state` says why a log of calls is enough);
//! - `checkpoint`: `state` → the encoded [`StateCheckpoint`] of every call before `through`
//!   (its sequence number, little-endian), absent until the first compaction; its crawls'
//!   pages and frontier calls are in
//! - `checkpoint_parts`: (crawl, part) → an encoded [`CheckpointPart`], the crawl by its index
//!   in the checkpoint's list, its parts numbered 0, 1, 2, … (`crate::checkpoint` says why).
//!
//! - `dead_letters`: JetStream sequence → payload of each message of a cluster node's subject
//!   that did not decode (set aside and counted, never applied; crate::cluster).
//! - `outbox`: number → owner (u32, little-endian), the item's number among those sent to
//!   that owner (u64, little-endian) and encoded `Forwarded` of each item a cluster node's
//!   applied calls hand to another node (the out-links of a page it reported, each with what
//!   the page passed along it), written in the same transaction as the calls and deleted once
//!   JetStream has stored it: what leaves a page (OPIC's cash) is thus never lost between the
//!   node's commit and JetStream, and is sent again after a crash until JetStream has it. The
//!   next number is kept in `meta` (`cluster.outbox_next`), so numbers are never reused.
//! - `sent`: owner (u32) → the next number of an item to that owner: the numbers each owner
//!   gets from this store run 0, 1, 2, … without gaps ([`Received`] relies on it).
//! - `received`: (sending node, its store's incarnation) → [`Received`], what this node
//!   applied of that sender's items, written in the same transaction as the calls applying
//!   them: a copy sent again, however late (past JetStream's duplicate window), is skipped.
//!
//! `meta` also holds `cluster.incarnation`, a random number drawn when the store is created:
//! it tells a node's items from those an earlier store of the same node sent (their numbers
//! start again at 0).
//!
//! A cluster node also keeps in `meta` (`cluster.applied`) the JetStream sequence of the last
//! forwarded item it applied, written in the same transaction as the calls that applied it, so
//! that a redelivery after a crash is recognised.
//!
//! Compaction ([`Store::write_checkpoint`]) writes the checkpoint and drops the calls it
//! covers in one transaction: a crash leaves either the old log or the checkpoint with an
//! empty log, never both nor neither. Sequence numbers go on from `through`.
//!
//! Every append is one transaction with redb's default `Durability::Immediate`, committed
//! before the call is answered, so a `kill -9` loses no answered call. The service appends
//! the calls of a whole group-commit window at once (`crate::service`): one transaction and
//! one fsync for them all.

use crate::checkpoint::{CheckpointPart, PartReader, StateCheckpoint};
use crate::state::{FrontierState, LoggedCall};
use anyhow::{bail, Context, Result};
use crawlrank_crawl_state::{CrawlLimits, HopLimits, UrlLimits};
use crawlrank_frontier::PolicySpec;
use prost::Message;
use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use std::path::{Path, PathBuf};

const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
const CALLS: TableDefinition<u64, &[u8]> = TableDefinition::new("calls");
const CHECKPOINT: TableDefinition<&str, &[u8]> = TableDefinition::new("checkpoint");
const CHECKPOINT_PARTS: TableDefinition<(u32, u64), &[u8]> =
    TableDefinition::new("checkpoint_parts");
const DEAD_LETTERS: TableDefinition<u64, &[u8]> = TableDefinition::new("dead_letters");
const OUTBOX: TableDefinition<u64, &[u8]> = TableDefinition::new("outbox");
const SENT: TableDefinition<u32, u64> = TableDefinition::new("sent");
const RECEIVED: TableDefinition<(u32, u64), &[u8]> = TableDefinition::new("received");

/// `meta`'s key of the bounds on URLs ([`Store::crawl_limits`]).
const LIMITS_KEY: &str = "limits";

fn encode_limits(l: &CrawlLimits) -> Vec<u8> {
    [
        l.urls.max_urls,
        l.urls.max_per_host,
        l.urls.max_hosts_per_domain,
        l.urls.max_per_domain,
        l.hops.max_hops.map_or(u64::MAX, u64::from),
        u64::from(l.hops.max_redirects),
    ]
    .iter()
    .flat_map(|v| v.to_le_bytes())
    .collect()
}

fn decode_limits(bytes: &[u8]) -> Result<CrawlLimits> {
    if bytes.len() != 48 {
        bail!("{} bytes where 48 were expected", bytes.len());
    }
    let f: Vec<u64> = bytes.chunks(8).map(le_u64).collect::<Result<_>>()?;
    let hops = match f[4] {
        u64::MAX => None,
        h => Some(u32::try_from(h).context("--max-hops out of range")?),
    };
    Ok(CrawlLimits {
        urls: UrlLimits {
            max_urls: f[0],
            max_per_host: f[1],
            max_hosts_per_domain: f[2],
            max_per_domain: f[3],
        },
        hops: HopLimits {
            max_hops: hops,
            max_redirects: u32::try_from(f[5]).context("--max-redirects out of range")?,
        },
    })
}

/// Bounds as the command line names them.
fn describe_limits(l: &CrawlLimits) -> String {
    let u = &l.urls;
    format!(
        "--max-urls {} --max-pages-per-host {} --max-hosts-per-domain {} --max-urls-per-domain {} {} --max-redirects {}",
        u.max_urls,
        u.max_per_host,
        u.max_hosts_per_domain,
        u.max_per_domain,
        l.hops.max_hops.map_or("no --max-hops".to_string(), |h| format!("--max-hops {h}")),
        l.hops.max_redirects
    )
}
/// The `meta` key of this store's incarnation.
const INCARNATION_KEY: &str = "cluster.incarnation";
/// The `meta` key of the next outbox number.
const OUTBOX_NEXT_KEY: &str = "cluster.outbox_next";
/// The `meta` key of the last JetStream sequence applied.
const APPLIED_KEY: &str = "cluster.applied";

/// What a cluster node applied from JetStream in one transaction: the sequence of the last
/// item, the messages that did not decode (sequence, payload), and what it now has applied
/// of each sender whose items it applied.
#[derive(Debug, Default)]
pub struct Applied {
    /// The last sequence applied.
    pub through: u64,
    /// Undecodable messages, set aside.
    pub dead: Vec<(u64, Vec<u8>)>,
    /// (sending node, its incarnation) → what is applied of its items, after this batch.
    pub received: Vec<((u32, u64), Received)>,
}

/// The numbers a node applied of the outbox items one sender (a node's store incarnation)
/// sent it: every number below `next`, and those in `above`. The sender numbers the items it
/// sends each node 0, 1, 2, … without gaps, so `above` holds only numbers that came before an
/// earlier one (a publish that failed and was sent again after later ones were stored): it
/// stays small whatever the order of the copies, and no assumption on that order is needed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Received {
    next: u64,
    above: std::collections::BTreeSet<u64>,
}

impl Received {
    /// Records item `number` as applied: false when it already was (a copy, to skip).
    pub fn take(&mut self, number: u64) -> bool {
        if number < self.next || !self.above.insert(number) {
            return false;
        }
        while self.above.remove(&self.next) {
            self.next += 1;
        }
        true
    }

    /// `next`, then each of `above`, little-endian.
    fn encode(&self) -> Vec<u8> {
        std::iter::once(self.next)
            .chain(self.above.iter().copied())
            .flat_map(u64::to_le_bytes)
            .collect()
    }

    fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.is_empty() || !bytes.len().is_multiple_of(8) {
            return None;
        }
        let mut words = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")));
        Some(Self {
            next: words.next()?,
            above: words.collect(),
        })
    }
}

/// An item of the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxItem {
    /// Its number in this store's outbox.
    pub number: u64,
    /// The node it goes to (an index in the sorted node list).
    pub owner: u32,
    /// Its number among the items this store sends `owner` (see [`Received`]).
    pub to_owner: u64,
    /// The encoded `Forwarded`.
    pub item: Vec<u8>,
}

/// The state format this build writes; bump on any change of the tables or of
/// [`LoggedCall`]'s or [`StateCheckpoint`]'s meaning.
pub const FORMAT: &str = "crawlrank-frontier-service-state/5";
/// The format before checkpoints in parts: its checkpoint is one message, which this build
/// reads as it is (and marks [`FORMAT`] at its next compaction, so that an older build, which
/// would not read the parts, refuses it).
const FORMAT_V4: &str = "crawlrank-frontier-service-state/4";
/// The format before the outbox's numbers per owner: its outbox rows (owner and item) are
/// given them when it is opened, and it is then marked [`FORMAT`].
const FORMAT_V3: &str = "crawlrank-frontier-service-state/3";
/// The format before a cluster node's outbox, offers and split reports: read as it is (it
/// holds none of them), and marked [`FORMAT`] at the next compaction.
const FORMAT_V2: &str = "crawlrank-frontier-service-state/2";
/// The format before checkpoints: a log of every call, which this build reads as a state
/// without a checkpoint (and marks [`FORMAT`] at its first compaction, so that an older
/// build, which would ignore the checkpoint, refuses it).
const FORMAT_V1: &str = "crawlrank-frontier-service-state/1";

/// The database's page cache in memory.
const CACHE_BYTES: usize = 16 << 20;

/// The database file inside a state directory.
pub fn db_path(dir: &Path) -> PathBuf {
    dir.join("frontier.redb")
}

/// An open state directory.
pub struct Store {
    db: Database,
    path: PathBuf,
    next_call: u64,
    /// The first call the log holds (the checkpoint covers those before).
    first_call: u64,
    /// The next outbox number.
    next_outbox: u64,
    /// The next number of an item to each owner (absent: 0).
    next_to: std::collections::HashMap<u32, u64>,
    /// What this node applied of each sender's items, as committed.
    received: std::collections::HashMap<(u32, u64), Received>,
    /// This store's incarnation.
    incarnation: u64,
    /// The bounds on URLs, once read ([`Store::crawl_limits`]; none until then).
    limits: CrawlLimits,
}

impl Store {
    /// Opens (or creates) the state in `dir`. A new state records `spec`; an existing one
    /// returns its own, which must equal `spec` when `spec` is given.
    pub fn open(
        dir: &Path,
        spec: Option<&PolicySpec>,
        default: &PolicySpec,
    ) -> Result<(Self, PolicySpec)> {
        let path = db_path(dir);
        let exists = path.is_file();
        if !exists {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the state directory {}", dir.display()))?;
        }
        let mut builder = Database::builder();
        builder.set_cache_size(CACHE_BYTES);
        let db = if exists {
            builder.open(&path)
        } else {
            builder.create(&path)
        }
        .with_context(|| {
            format!(
                "cannot open the frontier state {}; if another service uses this directory, stop it first",
                path.display()
            )
        })?;
        let mut store = Self {
            db,
            path,
            next_call: 0,
            first_call: 0,
            next_outbox: 0,
            next_to: Default::default(),
            received: Default::default(),
            incarnation: 0,
            limits: CrawlLimits::UNBOUNDED,
        };
        let stored = if exists { store.read_meta()? } else { None };
        let spec = match (stored, spec) {
            (Some(stored), Some(asked)) if stored != *asked => bail!(
                "the frontier state {} orders its crawls with policy {} ({}); it cannot be \
                 served with {} ({}): give the same options, or another --state",
                store.path.display(),
                stored.kind,
                stored.encode().trim_end().replace('\n', " "),
                asked.kind,
                asked.encode().trim_end().replace('\n', " ")
            ),
            (Some(stored), _) => stored,
            (None, asked) => {
                let spec = asked.unwrap_or(default).clone();
                store.init(&spec)?;
                spec
            }
        };
        store.first_call = store.read_through()?;
        store.next_call = store.count_calls()?.max(store.first_call);
        store.next_outbox = store.read_u64(OUTBOX_NEXT_KEY)?;
        store.open_cluster_tables()?;
        Ok((store, spec))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// This store's incarnation: the `origin` of the items its outbox sends.
    pub fn incarnation(&self) -> u64 {
        self.incarnation
    }

    /// What this node applied of the items sender `node`'s store `incarnation` sent it.
    pub fn received(&self, node: u32, incarnation: u64) -> Received {
        self.received
            .get(&(node, incarnation))
            .cloned()
            .unwrap_or_default()
    }

    /// Reads (or, on a new store, draws) the incarnation, the numbers per owner and what was
    /// received; a format 3 store's outbox rows are given their numbers per owner (in outbox
    /// order, as they were sent) and the store marked [`FORMAT`].
    fn open_cluster_tables(&mut self) -> Result<()> {
        let mut open = || -> Result<()> {
            let txn = self.db.begin_write()?;
            {
                let mut meta = txn.open_table(META)?;
                let incarnation = match meta.get(INCARNATION_KEY)? {
                    Some(v) => Some(le_u64(v.value()).context("the incarnation is unreadable")?),
                    None => None,
                };
                self.incarnation = match incarnation {
                    Some(i) => i,
                    None => {
                        let i = draw_incarnation();
                        meta.insert(INCARNATION_KEY, i.to_le_bytes().as_slice())?;
                        i
                    }
                };
                let v3 = meta
                    .get("format")?
                    .is_some_and(|f| f.value() == FORMAT_V3.as_bytes());
                let mut sent = txn.open_table(SENT)?;
                if v3 {
                    let mut outbox = txn.open_table(OUTBOX)?;
                    let rows: Vec<(u64, Vec<u8>)> = outbox
                        .iter()?
                        .map(|r| r.map(|(k, v)| (k.value(), v.value().to_vec())))
                        .collect::<std::result::Result<_, _>>()?;
                    for (number, row) in rows {
                        anyhow::ensure!(row.len() >= 4, "outbox item {number} is cut");
                        let owner = u32::from_le_bytes(row[..4].try_into().expect("4 bytes"));
                        let to_owner = sent.get(owner)?.map_or(0, |v| v.value());
                        sent.insert(owner, to_owner + 1)?;
                        let mut new = row[..4].to_vec();
                        new.extend_from_slice(&to_owner.to_le_bytes());
                        new.extend_from_slice(&row[4..]);
                        outbox.insert(number, new.as_slice())?;
                    }
                    meta.insert("format", FORMAT.as_bytes())?;
                }
                for row in sent.iter()? {
                    let (k, v) = row?;
                    self.next_to.insert(k.value(), v.value());
                }
                let received = txn.open_table(RECEIVED)?;
                for row in received.iter()? {
                    let (k, v) = row?;
                    let r = Received::decode(v.value()).with_context(|| {
                        format!("what was received from {:?} is unreadable", k.value())
                    })?;
                    self.received.insert(k.value(), r);
                }
            }
            txn.commit()?;
            Ok(())
        };
        let path = self.path.display().to_string();
        open().with_context(|| format!("cannot read the cluster tables of {path}"))
    }

    fn read_meta(&self) -> Result<Option<PolicySpec>> {
        let txn = self.db.begin_read()?;
        let meta = match txn.open_table(META) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let Some(format) = meta.get("format")? else {
            return Ok(None);
        };
        let format = String::from_utf8_lossy(format.value()).into_owned();
        if ![FORMAT, FORMAT_V4, FORMAT_V3, FORMAT_V2, FORMAT_V1].contains(&format.as_str()) {
            bail!(
                "{} holds a state of format '{format}', this build reads '{FORMAT}'; it was not modified",
                self.path.display()
            );
        }
        let spec = meta
            .get("policy")?
            .with_context(|| format!("{} names no policy", self.path.display()))?;
        let text = std::str::from_utf8(spec.value()).context("the stored policy is not UTF-8")?;
        Ok(Some(PolicySpec::decode(text).with_context(|| {
            format!("the policy stored in {} is unreadable", self.path.display())
        })?))
    }

    fn init(&mut self, spec: &PolicySpec) -> Result<()> {
        let txn = self.db.begin_write()?;
        {
            let mut meta = txn.open_table(META)?;
            meta.insert("format", FORMAT.as_bytes())?;
            meta.insert("policy", spec.encode().as_bytes())?;
            txn.open_table(CALLS)?;
        }
        txn.commit()
            .with_context(|| format!("cannot initialise {}", self.path.display()))
    }

    fn count_calls(&self) -> Result<u64> {
        let txn = self.db.begin_read()?;
        let calls = txn.open_table(CALLS)?;
        let next = calls.last()?.map_or(0, |(k, _)| k.value() + 1);
        Ok(next)
    }

    fn read_through(&self) -> Result<u64> {
        let txn = self.db.begin_read()?;
        let table = match txn.open_table(CHECKPOINT) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(0),
            Err(e) => return Err(e.into()),
        };
        let Some(v) = table.get("through")? else {
            return Ok(0);
        };
        le_u64(v.value())
            .with_context(|| format!("the checkpoint of {} is unreadable", self.path.display()))
    }

    /// Calls logged since the checkpoint (all of them if there is none).
    pub fn calls_since_checkpoint(&self) -> u64 {
        self.next_call - self.first_call
    }

    /// Reads the state back in one snapshot: `start` is given the checkpoint, if the log was
    /// ever compacted, with what gives its crawls' parts (`parts(crawl, f)` gives `f` each part
    /// of the crawl of that index, in order), and builds what `apply` then gives every call
    /// logged after it, in order, with its index among them. Parts and calls are read one at a
    /// time, never held together: a node's checkpoint and log can each hold as many URLs as
    /// its state (an undecodable record is an error naming it).
    pub fn load<S>(
        &self,
        start: impl FnOnce(Option<StateCheckpoint>, PartReader<'_>) -> Result<S>,
        mut apply: impl FnMut(&mut S, u64, LoggedCall) -> Result<()>,
    ) -> Result<S> {
        let read = || -> Result<S> {
            let txn = self.db.begin_read()?;
            let checkpoint = match txn.open_table(CHECKPOINT) {
                Ok(t) => match t.get("state")? {
                    Some(v) => Some(
                        StateCheckpoint::decode(v.value())
                            .context("the checkpoint is undecodable")?,
                    ),
                    None => None,
                },
                Err(redb::TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(e.into()),
            };
            let parts = match txn.open_table(CHECKPOINT_PARTS) {
                Ok(t) => Some(t),
                Err(redb::TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(e.into()),
            };
            let mut read_parts = |crawl: u32, f: &mut dyn FnMut(CheckpointPart) -> Result<()>| {
                let Some(table) = &parts else { return Ok(()) };
                for (expected, row) in (0u64..).zip(table.range((crawl, 0)..=(crawl, u64::MAX))?) {
                    let (k, v) = row?;
                    let (_, number) = k.value();
                    if number != expected {
                        bail!("part {expected} of crawl {crawl}'s checkpoint is missing");
                    }
                    let part = CheckpointPart::decode(v.value()).with_context(|| {
                        format!("part {number} of crawl {crawl}'s checkpoint is undecodable")
                    })?;
                    f(part)?;
                }
                Ok(())
            };
            let mut state = start(checkpoint, &mut read_parts)?;
            let calls = txn.open_table(CALLS)?;
            for (i, row) in calls.iter()?.enumerate() {
                let (k, v) = row?;
                let seq = self.first_call + i as u64;
                if k.value() != seq {
                    bail!("call {seq} is missing from the log");
                }
                let call = LoggedCall::decode(v.value())
                    .with_context(|| format!("call {seq} of the log is undecodable"))?;
                apply(&mut state, i as u64, call)?;
            }
            Ok(state)
        };
        read().with_context(|| format!("cannot read the state in {}", self.path.display()))
    }

    /// Compacts the log: stores the checkpoint of `state`, the state after every call logged
    /// so far, and drops those calls, in one durable transaction. The checkpoint's parts are
    /// built and written one at a time ([`FrontierState::checkpoint_parts`]).
    pub fn write_checkpoint(&mut self, state: &FrontierState) -> Result<()> {
        let write = || -> Result<()> {
            let txn = self.db.begin_write()?;
            txn.delete_table(CHECKPOINT_PARTS)?;
            {
                let mut parts = txn.open_table(CHECKPOINT_PARTS)?;
                state.checkpoint_parts(|crawl, number, part| {
                    parts.insert((crawl, number), part.encode_to_vec().as_slice())?;
                    Ok(())
                })?;
                let bytes = state.checkpoint_header().encode_to_vec();
                let mut table = txn.open_table(CHECKPOINT)?;
                table.insert("state", bytes.as_slice())?;
                table.insert("through", self.next_call.to_le_bytes().as_slice())?;
                let mut meta = txn.open_table(META)?;
                meta.insert("format", FORMAT.as_bytes())?;
            }
            txn.delete_table(CALLS)?;
            txn.open_table(CALLS)?;
            txn.commit()?;
            Ok(())
        };
        write()
            .with_context(|| format!("cannot write the checkpoint of {}", self.path.display()))?;
        self.first_call = self.next_call;
        Ok(())
    }

    /// The bounds this state admits URLs within (the caps on hosts, the limits on hops), fixed
    /// when the state is created (`meta`'s `limits`: six little-endian `u64`, `UrlLimits`'
    /// fields in order, then `--max-hops` (`u64::MAX`: none) and `--max-redirects`), as the
    /// policy is: a replay under other bounds would admit other URLs than the calls were
    /// answered for. A new state records `asked` (or the crawler's defaults); an existing one
    /// returns its own, which must equal `asked` when given. A state written before the bounds
    /// existed admits every URL, and keeps doing so.
    pub fn crawl_limits(&mut self, asked: Option<&CrawlLimits>) -> Result<CrawlLimits> {
        let stored = {
            let txn = self.db.begin_read()?;
            let meta = txn.open_table(META)?;
            meta.get(LIMITS_KEY)?.map(|v| v.value().to_vec())
        };
        let limits = match stored {
            Some(bytes) => decode_limits(&bytes).with_context(|| {
                format!(
                    "{} holds unreadable crawl limits ({} bytes)",
                    self.path.display(),
                    bytes.len()
                )
            })?,
            None => {
                let fresh = self.next_call == 0 && !self.has_checkpoint()?;
                let limits = if fresh {
                    asked.copied().unwrap_or_default()
                } else {
                    CrawlLimits::UNBOUNDED
                };
                let txn = self.db.begin_write()?;
                {
                    let mut meta = txn.open_table(META)?;
                    meta.insert(LIMITS_KEY, encode_limits(&limits).as_slice())?;
                }
                txn.commit().with_context(|| {
                    format!("cannot record the crawl limits in {}", self.path.display())
                })?;
                limits
            }
        };
        self.limits = limits;
        if let Some(asked) = asked {
            if *asked != limits {
                bail!(
                    "the frontier state {} admits URLs within {} (fixed when it was created); it \
                     cannot be served with {}: give the same limits, or another --state",
                    self.path.display(),
                    describe_limits(&limits),
                    describe_limits(asked)
                );
            }
        }
        Ok(limits)
    }

    /// Whether the log was ever compacted into a checkpoint (without reading it).
    fn has_checkpoint(&self) -> Result<bool> {
        let txn = self.db.begin_read()?;
        match txn.open_table(CHECKPOINT) {
            Ok(t) => Ok(t.get("state")?.is_some()),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// The bounds [`Store::crawl_limits`] read (none before).
    pub fn limits(&self) -> CrawlLimits {
        self.limits
    }

    /// The JetStream sequence of the last forwarded item applied (0: none).
    pub fn applied(&self) -> Result<u64> {
        self.read_u64(APPLIED_KEY)
    }

    /// A little-endian `u64` of `meta` (0 when absent).
    fn read_u64(&self, key: &str) -> Result<u64> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        let Some(v) = meta.get(key)? else {
            return Ok(0);
        };
        le_u64(v.value())
            .with_context(|| format!("{} holds an unreadable {key}", self.path.display()))
    }

    /// The oldest items of the outbox, at most `limit`.
    pub fn outbox(&self, limit: usize) -> Result<Vec<OutboxItem>> {
        let read = || -> Result<Vec<OutboxItem>> {
            let txn = self.db.begin_read()?;
            let table = match txn.open_table(OUTBOX) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
                Err(e) => return Err(e.into()),
            };
            let mut out = Vec::new();
            for row in table.iter()?.take(limit) {
                let (k, v) = row?;
                let v = v.value();
                anyhow::ensure!(v.len() >= 12, "outbox item {} is cut", k.value());
                out.push(OutboxItem {
                    number: k.value(),
                    owner: u32::from_le_bytes(v[..4].try_into().expect("4 bytes")),
                    to_owner: u64::from_le_bytes(v[4..12].try_into().expect("8 bytes")),
                    item: v[12..].to_vec(),
                });
            }
            Ok(out)
        };
        read().with_context(|| format!("cannot read the outbox of {}", self.path.display()))
    }

    /// Drops outbox items JetStream has stored.
    pub fn outbox_done(&mut self, numbers: &[u64]) -> Result<()> {
        let write = || -> Result<()> {
            let txn = self.db.begin_write()?;
            {
                let mut table = txn.open_table(OUTBOX)?;
                for n in numbers {
                    table.remove(*n)?;
                }
            }
            txn.commit()?;
            Ok(())
        };
        write().with_context(|| format!("cannot update the outbox of {}", self.path.display()))
    }

    /// How many forwarded messages were set aside as undecodable.
    pub fn dead_letters(&self) -> Result<u64> {
        let txn = self.db.begin_read()?;
        match txn.open_table(DEAD_LETTERS) {
            Ok(t) => Ok(t.len()?),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(0),
            Err(e) => Err(e.into()),
        }
    }

    /// Appends calls to the log in one durable transaction, with what a cluster node applied
    /// from JetStream by them, if anything, and the items they hand to other nodes (owner,
    /// encoded item) into the outbox, each numbered among those to its owner.
    pub fn append(
        &mut self,
        calls: &[LoggedCall],
        applied: Option<&Applied>,
        outbox: &[(u32, Vec<u8>)],
    ) -> Result<()> {
        if calls.is_empty() && applied.is_none() && outbox.is_empty() {
            return Ok(());
        }
        let mut next_to = self.next_to.clone();
        let mut write = || -> Result<()> {
            let txn = self.db.begin_write()?;
            {
                let mut table = txn.open_table(CALLS)?;
                for (i, call) in calls.iter().enumerate() {
                    table.insert(self.next_call + i as u64, call.encode_to_vec().as_slice())?;
                }
                if !outbox.is_empty() {
                    let mut table = txn.open_table(OUTBOX)?;
                    for (i, (owner, item)) in outbox.iter().enumerate() {
                        let to_owner = next_to.entry(*owner).or_insert(0);
                        let mut row = owner.to_le_bytes().to_vec();
                        row.extend_from_slice(&to_owner.to_le_bytes());
                        row.extend_from_slice(item);
                        table.insert(self.next_outbox + i as u64, row.as_slice())?;
                        *to_owner += 1;
                    }
                    let next = self.next_outbox + outbox.len() as u64;
                    txn.open_table(META)?
                        .insert(OUTBOX_NEXT_KEY, next.to_le_bytes().as_slice())?;
                    let mut sent = txn.open_table(SENT)?;
                    for (owner, _) in outbox {
                        sent.insert(*owner, next_to[owner])?;
                    }
                }
                if let Some(applied) = applied {
                    let mut meta = txn.open_table(META)?;
                    meta.insert(APPLIED_KEY, applied.through.to_le_bytes().as_slice())?;
                    if !applied.dead.is_empty() {
                        let mut dead = txn.open_table(DEAD_LETTERS)?;
                        for (seq, payload) in &applied.dead {
                            dead.insert(*seq, payload.as_slice())?;
                        }
                    }
                    if !applied.received.is_empty() {
                        let mut received = txn.open_table(RECEIVED)?;
                        for (origin, r) in &applied.received {
                            received.insert(*origin, r.encode().as_slice())?;
                        }
                    }
                }
            }
            txn.commit()?;
            Ok(())
        };
        write()
            .with_context(|| format!("cannot append to the call log of {}", self.path.display()))?;
        self.next_call += calls.len() as u64;
        self.next_outbox += outbox.len() as u64;
        self.next_to = next_to;
        if let Some(applied) = applied {
            for (origin, r) in &applied.received {
                self.received.insert(*origin, r.clone());
            }
        }
        Ok(())
    }
}

/// A new store's incarnation: random (the process's hash keys, the time and the process id),
/// never 0.
/// A stored little-endian `u64`; an error when the value is not 8 bytes long (a damaged
/// store), for the caller to say which value it is.
fn le_u64(bytes: &[u8]) -> Result<u64> {
    let bytes: [u8; 8] = bytes
        .try_into()
        .map_err(|_| anyhow::anyhow!("{} bytes where 8 were expected", bytes.len()))?;
    Ok(u64::from_le_bytes(bytes))
}

fn draw_incarnation() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(now);
    h.write_u32(std::process::id());
    h.finish().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Call;

    /// The caps on hosts are fixed when a state is created: a new state records the ones
    /// asked (or the defaults), a restart with other caps is refused naming both, and a state
    /// that logged calls before the caps existed admits every URL.
    #[test]
    fn the_caps_are_fixed_when_the_state_is_created() {
        let spec = crate::policy_spec("bfs", Some(10), None, 0).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (mut store, _) = Store::open(dir.path(), None, &spec).unwrap();
        assert_eq!(store.crawl_limits(None).unwrap(), CrawlLimits::default());
        drop(store);
        let mut small = CrawlLimits::default();
        small.urls.max_per_host = 5;
        small.hops.max_hops = Some(3);
        let (mut store, _) = Store::open(dir.path(), None, &spec).unwrap();
        let err = store.crawl_limits(Some(&small)).unwrap_err().to_string();
        assert!(
            err.contains("--max-pages-per-host 100000") && err.contains("--max-pages-per-host 5"),
            "{err}"
        );
        assert!(
            err.contains("no --max-hops") && err.contains("--max-hops 3"),
            "{err}"
        );
        let default = CrawlLimits::default();
        assert_eq!(store.crawl_limits(Some(&default)).unwrap(), default);
        drop(store);
        let dir = tempfile::tempdir().unwrap();
        let (mut store, _) = Store::open(dir.path(), None, &spec).unwrap();
        assert_eq!(store.crawl_limits(Some(&small)).unwrap(), small);
        drop(store);
        let (mut store, _) = Store::open(dir.path(), None, &spec).unwrap();
        assert_eq!(store.crawl_limits(None).unwrap(), small, "read back");
        assert_eq!(store.limits(), small);
        // A state with calls and no bounds recorded: written before the bounds.
        let dir = tempfile::tempdir().unwrap();
        let (mut store, _) = Store::open(dir.path(), None, &spec).unwrap();
        store.next_call = 1;
        assert_eq!(store.crawl_limits(None).unwrap(), CrawlLimits::UNBOUNDED);
        assert!(store.crawl_limits(Some(&small)).is_err());
    }

    /// A checkpoint is written in parts and read back to the same state, as a format 4
    /// checkpoint in one message is; a missing part is an error naming it.
    #[test]
    fn checkpoints_in_parts_and_in_one_message_give_the_same_state() {
        use crate::proto::{url_item, DiscoveredUrlItem, UrlInfo, UrlItem};
        let spec = crate::policy_spec("bfs", Some(100), None, 0).unwrap();
        let mut state = FrontierState::new(spec.clone()).unwrap();
        // Two parts of pages: a full one and the rest.
        let urls = crate::state::PART_PAGES + 1_000;
        for i in 0..urls {
            let info = UrlInfo {
                url: format!("http://h{}.test/p{i}", i % 7),
                ..Default::default()
            };
            let put = Call::Put(UrlItem {
                item: Some(url_item::Item::Discovered(DiscoveredUrlItem {
                    info: Some(info),
                })),
                ..Default::default()
            });
            state.apply(&put, 0, 16).unwrap();
        }
        let want = state.checkpoint();
        let load = |dir: &Path| -> Result<FrontierState> {
            let (store, spec) = Store::open(dir, None, &spec)?;
            store.load(
                |c, parts| {
                    let c = c.context("no checkpoint")?;
                    FrontierState::from_checkpoint_parts(spec, c, None, parts)
                },
                |_, _, _| Ok(()),
            )
        };
        let parted = tempfile::tempdir().unwrap();
        let (mut store, _) = Store::open(parted.path(), None, &spec).unwrap();
        store.write_checkpoint(&state).unwrap();
        drop(store);
        assert!(load(parted.path()).unwrap().checkpoint() == want);

        let whole = tempfile::tempdir().unwrap();
        let (store, _) = Store::open(whole.path(), None, &spec).unwrap();
        let txn = store.db.begin_write().unwrap();
        {
            let mut table = txn.open_table(CHECKPOINT).unwrap();
            table
                .insert("state", want.encode_to_vec().as_slice())
                .unwrap();
            table
                .insert("through", 0u64.to_le_bytes().as_slice())
                .unwrap();
            let mut meta = txn.open_table(META).unwrap();
            meta.insert("format", FORMAT_V4.as_bytes()).unwrap();
        }
        txn.commit().unwrap();
        drop(store);
        assert!(load(whole.path()).unwrap().checkpoint() == want);

        let (store, _) = Store::open(parted.path(), None, &spec).unwrap();
        let txn = store.db.begin_write().unwrap();
        txn.open_table(CHECKPOINT_PARTS)
            .unwrap()
            .remove((0, 0))
            .unwrap();
        txn.commit().unwrap();
        drop(store);
        let err = format!("{:#}", load(parted.path()).err().unwrap());
        assert!(
            err.contains("part 0 of crawl 0's checkpoint is missing"),
            "{err}"
        );
    }

    /// A format 3 store's outbox rows (owner and item) get their numbers per owner when it is
    /// opened, in outbox order, and the numbers go on from there.
    #[test]
    fn a_format_3_outbox_is_numbered_per_owner_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let spec = crate::policy_spec("bfs", Some(10), None, 0).unwrap();
        let (store, _) = Store::open(dir.path(), None, &spec).unwrap();
        {
            let txn = store.db.begin_write().unwrap();
            {
                let mut meta = txn.open_table(META).unwrap();
                meta.insert("format", FORMAT_V3.as_bytes()).unwrap();
                meta.remove(INCARNATION_KEY).unwrap();
                meta.insert(OUTBOX_NEXT_KEY, 3u64.to_le_bytes().as_slice())
                    .unwrap();
                let mut outbox = txn.open_table(OUTBOX).unwrap();
                for (n, owner, item) in [(0u64, 1u32, 7u8), (1, 2, 8), (2, 1, 9)] {
                    let mut row = owner.to_le_bytes().to_vec();
                    row.push(item);
                    outbox.insert(n, row.as_slice()).unwrap();
                }
            }
            txn.commit().unwrap();
        }
        drop(store);
        let (mut store, _) = Store::open(dir.path(), None, &spec).unwrap();
        let got: Vec<(u64, u32, u64, Vec<u8>)> = store
            .outbox(10)
            .unwrap()
            .into_iter()
            .map(|i| (i.number, i.owner, i.to_owner, i.item))
            .collect();
        assert_eq!(
            got,
            [(0, 1, 0, vec![7]), (1, 2, 0, vec![8]), (2, 1, 1, vec![9])]
        );
        assert_ne!(store.incarnation(), 0);
        store.append(&[], None, &[(1, vec![10])]).unwrap();
        let last = store.outbox(10).unwrap().pop().unwrap();
        assert_eq!((last.number, last.owner, last.to_owner), (3, 1, 2));
        drop(store);
        let db = Database::open(db_path(dir.path())).unwrap();
        let txn = db.begin_read().unwrap();
        let meta = txn.open_table(META).unwrap();
        assert_eq!(
            meta.get("format").unwrap().unwrap().value(),
            FORMAT.as_bytes()
        );
    }

    /// Copies are recognised in any order, and only the numbers above a gap are kept.
    #[test]
    fn what_was_received_is_a_few_numbers_whatever_the_order() {
        let mut r = Received::default();
        for n in [0, 1, 4, 3, 6] {
            assert!(r.take(n), "{n}");
        }
        for n in [0, 1, 3, 4, 6] {
            assert!(!r.take(n), "{n} again");
        }
        assert_eq!((r.next, r.above.len()), (2, 3));
        assert!(r.take(2));
        assert_eq!((r.next, r.above.len()), (5, 1));
        assert!(r.take(5));
        assert_eq!((r.next, r.above.len()), (7, 0));
        assert_eq!(Received::decode(&r.encode()), Some(r));
        assert_eq!(Received::decode(&[1, 2, 3]), None);
    }

    #[test]
    fn the_applied_sequence_and_dead_letters_are_committed_with_the_calls() {
        let dir = tempfile::tempdir().unwrap();
        let spec = crate::policy_spec("bfs", Some(10), None, 0).unwrap();
        let (mut store, _) = Store::open(dir.path(), None, &spec).unwrap();
        assert_eq!(
            (store.applied().unwrap(), store.dead_letters().unwrap()),
            (0, 0)
        );
        let call = LoggedCall {
            now: 1,
            call: Some(Call::Active(crate::proto::Active {
                state: true,
                local: false,
            })),
            max_waiting: 1,
        };
        store
            .append(std::slice::from_ref(&call), None, &[])
            .unwrap();
        assert_eq!(store.applied().unwrap(), 0);
        let mut from = Received::default();
        assert!(from.take(0) && from.take(2) && !from.take(0) && !from.take(2));
        let applied = Applied {
            through: 7,
            dead: vec![(5, vec![0xff])],
            received: vec![((1, 99), from.clone())],
        };
        store.append(&[call], Some(&applied), &[]).unwrap();
        // Nothing but the sequence moves (items that were all skipped) is committed too.
        store
            .append(
                &[],
                Some(&Applied {
                    through: 9,
                    ..Default::default()
                }),
                &[(2, vec![1, 2, 3])],
            )
            .unwrap();
        drop(store);
        let (mut store, _) = Store::open(dir.path(), None, &spec).unwrap();
        assert_eq!(
            (store.applied().unwrap(), store.dead_letters().unwrap()),
            (9, 1)
        );
        let count = |n: &mut u64, _, _| {
            *n += 1;
            Ok(())
        };
        let calls = store.load(|_, _| Ok(0), count).unwrap();
        assert_eq!(calls, 2);
        assert_eq!(store.received(1, 99), from);
        assert_eq!(store.received(1, 98), Received::default());
        // The outbox item survived the restart; once sent and dropped, its number is never
        // given again (JetStream drops a message whose id it has seen).
        let item = |number, owner, to_owner, item: &[u8]| OutboxItem {
            number,
            owner,
            to_owner,
            item: item.to_vec(),
        };
        assert_eq!(store.outbox(10).unwrap(), vec![item(0, 2, 0, &[1, 2, 3])]);
        let incarnation = store.incarnation();
        assert_ne!(incarnation, 0);
        store.outbox_done(&[0]).unwrap();
        drop(store);
        let (mut store, _) = Store::open(dir.path(), None, &spec).unwrap();
        assert!(store.outbox(10).unwrap().is_empty());
        assert_eq!(store.incarnation(), incarnation);
        store
            .append(&[], None, &[(1, vec![4]), (2, vec![5]), (1, vec![6])])
            .unwrap();
        // Numbered per owner, on from before the restart.
        assert_eq!(
            store.outbox(10).unwrap(),
            vec![
                item(1, 1, 0, &[4]),
                item(2, 2, 1, &[5]),
                item(3, 1, 1, &[6])
            ]
        );
    }
}
