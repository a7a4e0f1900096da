//! The crawl state on disk: an embedded `redb` database holding the URL table, an append-only
//! event log, and a little metadata.
//!
//! Why an event log rather than a snapshot of the frontier: every policy is a deterministic
//! function of the calls made to it (`seed`, `pop`, `on_crawled`, in their order), so
//! recording those calls is enough to rebuild the exact frontier — IECA's distances, OPIC's
//! cash, the batch policies' PageRank vectors, even `random`'s generator — without each policy
//! having to serialise itself. On restart the log is replayed through the same calls and every
//! replayed pop is checked against the recorded one (see `crate::resume`).
//!
//! Tables:
//! - `meta`: format version, the policy configuration the frontier was built with, the WARC
//!   write position (with the first event whose page may be archived in its file, and the
//!   pages whose records a damaged file lost) and the counters of [`crawlrank_fetch::Stats`];
//! - `urls`: id → URL (ids are dense, in discovery order);
//! - `events`: sequence number → encoded [`Event`]. The link graph is the `Crawled` events'
//!   links, the crawled set is their ids. The log grows with the crawl's links, so it is
//!   never loaded whole but read as a stream ([`Store::events`]);
//! - `pages`: id → [`PageMeta`], for the fetched pages that said `noindex` or named a
//!   canonical URL (most pages say neither, so the table stays small);
//! - `robots`: origin → [`StoredRobots`], each host's last robots.txt answer and when it was
//!   fetched, so that a resumed crawl does not fetch it again while it is fresh;
//! - `seen`: the URL → id index, keyed by [`SeenKey`] (crawlrank_crawl_state::SeenSet), so that the crawl need
//!   not hold it in memory;
//! - `impacts` and `hosts`: a search log's impacts, and the hosts paused by refusals;
//! - `sitemaps`: the sitemap files queued (crawlrank_fetch::sitemap) and whether each was fetched, so
//!   that a resumed crawl fetches only the others. Their entries are in the log as seed
//!   events, committed with the row that marks their sitemap fetched.
//!
//! `pages`, `robots`, `seen`, `impacts`, `hosts` and `sitemaps` were added after format 1 without changing it: an older state simply
//! lacks them (read as empty: its robots.txt files are fetched again, its pages carry no
//! marks), and an older build ignores them. Anything an older build would misread — another
//! event encoding, a changed table — needs a new [`FORMAT`].
//!
//! Every change of one engine step ([`StepWrites`]) goes in one transaction with
//! `Durability::Immediate`, so a `kill -9` or a power cut leaves the state of the last commit,
//! whole. A state written by another format version is refused with a clear error and left
//! untouched.

use crawlrank_fetch::backoff::HostPause;
use crawlrank_fetch::page::PageMeta;
// The log's `Crawled` events carry an outcome: named here too, where readers of the log
// (the replay's tests among them) look for it.
use crawlrank_fetch::page::Outcome;
use crawlrank_fetch::robots::StoredRobots;
use crawlrank_crawl_state::{SeenDisk, SeenKey};
use crawlrank_fetch::warc::WarcPosition;
use anyhow::{bail, ensure, Context, Result};
use crawlrank_frontier::{PageId, PolicySpec};
use redb::{
    Database, ReadOnlyDatabase, ReadTransaction, ReadableDatabase, ReadableTable,
    ReadableTableMetadata, TableDefinition,
};
use std::path::{Path, PathBuf};

const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
const URLS: TableDefinition<u32, &str> = TableDefinition::new("urls");
const EVENTS: TableDefinition<u64, &[u8]> = TableDefinition::new("events");
const PAGES: TableDefinition<u32, &[u8]> = TableDefinition::new("pages");
const ROBOTS: TableDefinition<&str, &[u8]> = TableDefinition::new("robots");
/// The search log's impact of the discovered pages that have one (`rw`, `rw-eg`, `learned`):
/// page id → impact. Absent in states of other crawls and of older builds.
const IMPACTS: TableDefinition<u32, f64> = TableDefinition::new("impacts");
/// Hosts paused by refusals (crawlrank_fetch::backoff): origin → [`HostPause::encode`]. A row is
/// deleted when its host's back-off is gone. Absent in states of older builds.
const HOSTS: TableDefinition<&str, &[u8]> = TableDefinition::new("hosts");
/// The seen-set (crawlrank_crawl_state::SeenSet): [`SeenKey::to_u128`] → page id, one row per row of `urls`,
/// written in the same transaction. Older builds did not write it, so a crawl that finds it
/// missing or short rebuilds it from `urls` ([`Store::ensure_seen_index`]).
const SEEN: TableDefinition<u128, u32> = TableDefinition::new("seen");
/// The sitemap files the crawl queued (crawlrank_fetch::sitemap), in the order they became known:
/// row number → a state byte ([`crawlrank_fetch::sitemap::PENDING`] or [`crawlrank_fetch::sitemap::DONE`]), then
/// the URL. Absent in states of older builds, whose sitemaps were pages of the crawl.
const SITEMAPS: TableDefinition<u64, &[u8]> = TableDefinition::new("sitemaps");

/// The `meta` key of [`Store::seed_hosts`].
const SEED_HOSTS: &str = "seed_hosts";

/// The `meta` key of [`Loaded::warc_first_event`] (a little-endian `u64`; absent in states of
/// older builds: 0).
const WARC_FIRST_EVENT: &str = "warc_first_event";

/// The `meta` key of [`Loaded::warc_refetch`] (little-endian `u32` page ids; absent when
/// none).
const WARC_REFETCH: &str = "warc_refetch";

/// The state format this build reads and writes. Bump on any change of the existing tables or
/// of the event encoding (a new table that older states lack and older builds ignore needs
/// none).
pub const FORMAT: &str = "crawlrank-crawl-state/1";

/// One recorded call on the frontier.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `frontier.seed(ids)`.
    Seed(Vec<PageId>),
    /// `frontier.pop()` returned this page.
    Popped(PageId),
    /// `frontier.on_crawled(id, links)`, with how the fetch ended and its HTTP status (0 if
    /// none).
    Crawled {
        /// The page.
        id: PageId,
        /// How its fetch ended.
        outcome: Outcome,
        /// Its HTTP status, 0 if none.
        status: u16,
        /// Its out-links, in page order (a redirect's: its target).
        links: Vec<PageId>,
    },
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], pos: &mut usize) -> Result<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*pos).context("truncated event")?;
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(v);
        }
    }
    bail!("bad varint in event")
}

fn get_u32(b: &[u8], pos: &mut usize) -> Result<u32> {
    u32::try_from(get_varint(b, pos)?).context("page id out of range")
}

impl Event {
    /// The binary form: a tag byte, then varints.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Event::Seed(ids) => {
                out.push(0);
                put_varint(&mut out, ids.len() as u64);
                ids.iter().for_each(|&i| put_varint(&mut out, i.into()));
            }
            Event::Popped(id) => {
                out.push(1);
                put_varint(&mut out, (*id).into());
            }
            Event::Crawled {
                id,
                outcome,
                status,
                links,
            } => {
                out.push(2);
                put_varint(&mut out, (*id).into());
                out.push(outcome.to_byte());
                put_varint(&mut out, (*status).into());
                put_varint(&mut out, links.len() as u64);
                links.iter().for_each(|&i| put_varint(&mut out, i.into()));
            }
        }
        out
    }

    /// Parses [`encode`](Self::encode)'s output.
    pub fn decode(b: &[u8]) -> Result<Self> {
        let mut pos = 1;
        let ev = match b.first() {
            Some(0) => {
                let n = get_varint(b, &mut pos)? as usize;
                ensure!(n <= b.len(), "bad seed count");
                Event::Seed(
                    (0..n)
                        .map(|_| get_u32(b, &mut pos))
                        .collect::<Result<_>>()?,
                )
            }
            Some(1) => Event::Popped(get_u32(b, &mut pos)?),
            Some(2) => {
                let id = get_u32(b, &mut pos)?;
                let outcome = Outcome::from_byte(*b.get(pos).context("truncated event")?)?;
                pos += 1;
                let status = u16::try_from(get_varint(b, &mut pos)?).context("bad status")?;
                let n = get_varint(b, &mut pos)? as usize;
                ensure!(n <= b.len(), "bad link count");
                let links = (0..n)
                    .map(|_| get_u32(b, &mut pos))
                    .collect::<Result<_>>()?;
                Event::Crawled {
                    id,
                    outcome,
                    status,
                    links,
                }
            }
            _ => bail!("unknown event tag"),
        };
        ensure!(pos == b.len(), "trailing bytes in event");
        Ok(ev)
    }
}

/// The `pages` table's records: a flags byte (bit 0: noindex, bit 1: canonical present),
/// then the canonical URL.
fn encode_page_meta(m: &PageMeta) -> Vec<u8> {
    let flags = u8::from(m.noindex) | u8::from(m.canonical.is_some()) << 1;
    let mut out = vec![flags];
    out.extend_from_slice(m.canonical.as_deref().unwrap_or("").as_bytes());
    out
}

fn decode_page_meta(b: &[u8]) -> Result<PageMeta> {
    let (&flags, rest) = b.split_first().context("empty page record")?;
    ensure!(flags < 4, "unknown page flags {flags}");
    let canonical = if flags & 2 != 0 {
        Some(
            std::str::from_utf8(rest)
                .context("canonical URL is not UTF-8")?
                .to_string(),
        )
    } else {
        ensure!(rest.is_empty(), "trailing bytes in page record");
        None
    };
    Ok(PageMeta {
        noindex: flags & 1 != 0,
        canonical,
    })
}

/// Everything read back from a state directory at open, except the event log, which grows
/// with the number of links and is read as a stream ([`Store::events`]).
#[derive(Debug, Default)]
pub struct Loaded {
    /// The policy and configuration the crawl's frontier was built with (a resumed crawl
    /// must use the same, or the replay would build another frontier).
    pub config: Option<PolicySpec>,
    /// URLs discovered (their ids are `0..urls`; [`Store::urls`] streams them, and
    /// [`Store::url_reader`] looks them up).
    pub urls: u64,
    /// Where the WARC output stood at the last commit.
    pub warc: WarcPosition,
    /// The first event of the log whose page may have its records in the WARC file `warc`
    /// is in (the log's length when that file was started): the pages a damaged file may
    /// have lost are among those crawled from there on.
    pub warc_first_event: u64,
    /// Pages crawled whose WARC records were lost (a damaged file) and are still to be
    /// fetched again for the archive.
    pub warc_refetch: Vec<PageId>,
    /// The serialized counters (see [`crawlrank_fetch::Stats::decode`]).
    pub stats: Vec<u8>,
}

/// The writes of one engine step, committed in one transaction ([`Store::commit`]).
#[derive(Debug, Default)]
pub struct StepWrites {
    /// URLs discovered in this step, with their new ids.
    pub new_urls: Vec<(PageId, String)>,
    /// Frontier calls made in this step, in order (appended to the log).
    pub events: Vec<Event>,
    /// The WARC writer's new position, when records were appended.
    pub warc: Option<WarcPosition>,
    /// [`Loaded::warc_first_event`], when a new WARC file was started.
    pub warc_first_event: Option<u64>,
    /// [`Loaded::warc_refetch`], the whole list, when it changed.
    pub warc_refetch: Option<Vec<PageId>>,
    /// The counters, serialized ([`crawlrank_fetch::Stats::encode`]), when they changed.
    pub stats: Option<Vec<u8>>,
    /// Marks of pages finished in this step (only pages that have any).
    pub pages: Vec<(PageId, PageMeta)>,
    /// robots.txt answers to keep, by origin.
    pub robots: Vec<(String, StoredRobots)>,
    /// Impacts of the pages discovered in this step that the search log gives one.
    pub impacts: Vec<(PageId, f64)>,
    /// Hosts whose pause changed, by origin (`None`: it has none any more).
    pub hosts: Vec<(String, Option<HostPause>)>,
    /// Sitemap files queued or fetched in this step: row, state, URL (crawlrank_fetch::sitemap).
    pub sitemaps: Vec<(u64, u8, String)>,
}

impl StepWrites {
    /// Whether there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.new_urls.is_empty()
            && self.impacts.is_empty()
            && self.events.is_empty()
            && self.pages.is_empty()
            && self.robots.is_empty()
            && self.hosts.is_empty()
            && self.sitemaps.is_empty()
            && self.warc.is_none()
            && self.warc_first_event.is_none()
            && self.warc_refetch.is_none()
            && self.stats.is_none()
    }
}

/// The store's page cache in memory (redb's own default is 1 GiB, which a long crawl
/// fills): the crawl's memory stays bounded whatever the size of its state on disk.
pub const STORE_CACHE_BYTES: usize = 128 << 20;

/// An open state directory.
pub struct Store {
    db: Db,
    path: PathBuf,
    next_event: u64,
}

/// The database of a [`Store`]: opened for a crawl, which writes, or only for reading
/// ([`Store::open_read_only`]), which leaves the file as it is, byte for byte: opening a
/// redb file for writing rewrites its header even when nothing is committed.
enum Db {
    ReadWrite(Database),
    ReadOnly(ReadOnlyDatabase),
}

impl Db {
    fn begin_read(&self) -> std::result::Result<ReadTransaction, redb::TransactionError> {
        match self {
            Db::ReadWrite(db) => db.begin_read(),
            Db::ReadOnly(db) => db.begin_read(),
        }
    }

    /// The database, for a write transaction; an error naming `path` when it was opened
    /// read-only (a bug in the caller, reported rather than a panic).
    fn writable(&self, path: &Path) -> Result<&Database> {
        match self {
            Db::ReadWrite(db) => Ok(db),
            Db::ReadOnly(_) => bail!(
                "the crawl state {} was opened read-only and cannot be written",
                path.display()
            ),
        }
    }
}

/// The database file inside a state directory.
pub fn db_path(dir: &Path) -> PathBuf {
    dir.join("crawl.redb")
}

fn open_error(path: &Path, e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!(
        "cannot open the crawl state {} ({e}); if another crawl uses this directory, stop it first; \
         the state was not modified",
        path.display()
    )
}

fn unreadable(path: &Path) -> String {
    format!(
        "the crawl state {} is unreadable; it was not modified",
        path.display()
    )
}

/// A table whose keys are 0, 1, 2, … read in key order in one read transaction (a snapshot:
/// later commits are not seen) and decoded one row at a time, so that no more than one row
/// is in memory however long the table. A gap in the keys or an undecodable row is an error
/// naming the row, after which the iterator ends: what follows is not trusted.
pub struct DenseRows<K: redb::Key + 'static, V: redb::Value + 'static, T> {
    /// `None` once an error was returned.
    rows: Option<redb::Range<'static, K, V>>,
    next: u64,
    path: PathBuf,
    /// Row `i`'s key and value → its item, or why it is bad.
    decode: RowDecoder<K, V, T>,
}

type RowDecoder<K, V, T> =
    fn(u64, redb::AccessGuard<'static, K>, redb::AccessGuard<'static, V>) -> Result<T>;

impl<K: redb::Key + 'static, V: redb::Value + 'static, T> DenseRows<K, V, T> {
    fn read(
        store: &Store,
        table: TableDefinition<'static, K, V>,
        decode: RowDecoder<K, V, T>,
    ) -> Result<Self> {
        let rows = (|| -> Result<_> {
            let txn = store.db.begin_read()?;
            Ok(txn.open_table(table)?.range::<K::SelfType<'static>>(..)?)
        })()
        .with_context(|| unreadable(&store.path))?;
        Ok(Self {
            rows: Some(rows),
            next: 0,
            path: store.path.clone(),
            decode,
        })
    }
}

impl<K: redb::Key + 'static, V: redb::Value + 'static, T> Iterator for DenseRows<K, V, T> {
    type Item = Result<(u64, T)>;

    fn next(&mut self) -> Option<Self::Item> {
        let row = self.rows.as_mut()?.next()?;
        let i = self.next;
        let res = row
            .map_err(anyhow::Error::from)
            .and_then(|(k, v)| (self.decode)(i, k, v))
            .with_context(|| unreadable(&self.path));
        match res {
            Ok(item) => {
                self.next += 1;
                Some(Ok((i, item)))
            }
            Err(e) => {
                self.rows = None;
                Some(Err(e))
            }
        }
    }
}

/// The event log being read ([`Store::events`]): `(sequence number, event)`.
pub type Events = DenseRows<u64, &'static [u8], Event>;

/// The URL table being read in id order ([`Store::urls`]): `(page id, URL)`.
pub type Urls = DenseRows<u32, &'static str, String>;

/// The page marks being read in id order ([`Store::marks`]). An undecodable row is an error
/// naming it, after which the iterator ends.
pub struct Marks {
    /// `None` once an error was returned, or when the state has no marks table.
    rows: Option<redb::Range<'static, u32, &'static [u8]>>,
    path: PathBuf,
}

impl Iterator for Marks {
    type Item = Result<(PageId, PageMeta)>;

    fn next(&mut self) -> Option<Self::Item> {
        let row = self.rows.as_mut()?.next()?;
        let res = row.map_err(anyhow::Error::from).and_then(|(k, v)| {
            let id = k.value();
            let meta = decode_page_meta(v.value()).with_context(|| format!("page record {id}"))?;
            Ok((id, meta))
        });
        if res.is_err() {
            self.rows = None;
        }
        Some(res.with_context(|| unreadable(&self.path)))
    }
}

/// Reads single URLs by id ([`Store::url_reader`]).
pub struct UrlReader {
    table: redb::ReadOnlyTable<u32, &'static str>,
    path: PathBuf,
}

impl UrlReader {
    /// The URL of page `id` (`None` when the state has no such page).
    pub fn get(&self, id: PageId) -> Result<Option<String>> {
        let v = self.table.get(id).with_context(|| unreadable(&self.path))?;
        Ok(v.map(|v| v.value().to_string()))
    }
}

/// A reader of the seen-set's table, over the state as of when it was made (crawlrank_crawl_state::SeenSet).
pub struct SeenReader {
    table: redb::ReadOnlyTable<u128, u32>,
    path: PathBuf,
}

impl SeenDisk for SeenReader {
    fn get(&self, key: SeenKey) -> Result<Option<PageId>> {
        let v = self
            .table
            .get(key.to_u128())
            .with_context(|| unreadable(&self.path))?;
        Ok(v.map(|v| v.value()))
    }
}

impl Store {
    /// Opens the state in `dir`, creating it when `create` holds and the directory has none.
    pub fn open(dir: &Path, create: bool) -> Result<(Self, Loaded)> {
        let path = db_path(dir);
        let exists = path.is_file();
        if !exists && !create {
            bail!(
                "{} holds no crawl state (no {})",
                dir.display(),
                path.display()
            );
        }
        if !exists {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let mut builder = Database::builder();
        builder.set_cache_size(STORE_CACHE_BYTES);
        let db = if exists {
            builder.open(&path)
        } else {
            builder.create(&path)
        }
        .map_err(|e| open_error(&path, e))?;
        let mut store = Self {
            db: Db::ReadWrite(db),
            path,
            next_event: 0,
        };
        if !exists {
            let txn = store
                .db
                .writable(&store.path)?
                .begin_write()
                .context("cannot start a transaction")?;
            {
                let mut meta = txn.open_table(META)?;
                meta.insert("format", FORMAT.as_bytes())?;
                txn.open_table(URLS)?;
                txn.open_table(EVENTS)?;
                txn.open_table(PAGES)?;
                txn.open_table(ROBOTS)?;
                txn.open_table(SEEN)?;
            }
            txn.commit()
                .with_context(|| format!("cannot initialise {}", store.path.display()))?;
        }
        let loaded = store.load().with_context(|| unreadable(&store.path))?;
        Ok((store, loaded))
    }

    /// Opens the state in `dir` for reading only (exports, status, rankings, Python's
    /// `Crawl`): the file is left untouched, its size and modification time included. A state
    /// a killed crawl left needs redb's repair before it can be read; that one is opened as
    /// [`open`](Self::open) opens it, which repairs it as a resumed crawl would (the repair
    /// changes no committed data).
    pub fn open_read_only(dir: &Path) -> Result<(Self, Loaded)> {
        let path = db_path(dir);
        if !path.is_file() {
            return Self::open(dir, false);
        }
        let mut builder = Database::builder();
        builder.set_cache_size(STORE_CACHE_BYTES);
        let db = match builder.open_read_only(&path) {
            Ok(db) => db,
            Err(redb::DatabaseError::RepairAborted) => return Self::open(dir, false),
            Err(e) => return Err(open_error(&path, e)),
        };
        let mut store = Self {
            db: Db::ReadOnly(db),
            path,
            next_event: 0,
        };
        let loaded = store.load().with_context(|| unreadable(&store.path))?;
        Ok((store, loaded))
    }

    /// The robots.txt answer last stored for `origin`, if any. A record this build cannot
    /// read counts as none (the answers are a cache, never worth refusing a state for: the
    /// host's robots.txt is fetched again).
    pub fn robots(&self, origin: &str) -> Result<Option<StoredRobots>> {
        let read = || -> Result<Option<StoredRobots>> {
            let txn = self.db.begin_read()?;
            let table = match txn.open_table(ROBOTS) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            let value = table.get(origin)?;
            Ok(value.and_then(|v| StoredRobots::decode(v.value()).ok()))
        };
        read().with_context(|| unreadable(&self.path))
    }

    /// The number the next event appended to the log will have (the log's length as of the
    /// last commit).
    pub fn next_event(&self) -> u64 {
        self.next_event
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every URL in id order, read in one read transaction and decoded one at a time, so
    /// that no more than one URL string is in memory however many the crawl discovered. A
    /// gap in the ids is an error naming the missing id, after which the iterator ends.
    pub fn urls(&self) -> Result<Urls> {
        DenseRows::read(self, URLS, |i, k, v| {
            ensure!(
                u64::from(k.value()) == i,
                "URL ids are not dense (missing id {i})"
            );
            Ok(v.value().to_string())
        })
    }

    /// Every URL, by id, in memory: for the exports, which need them all at once (the crawl
    /// itself never holds them, see the `urls` module).
    pub fn all_urls(&self) -> Result<Vec<String>> {
        self.urls()?.map(|r| r.map(|(_, u)| u)).collect()
    }

    /// A reader of single URLs by id, over the state as of now (a read transaction: later
    /// commits are not seen by it).
    pub fn url_reader(&self) -> Result<UrlReader> {
        Ok(UrlReader {
            table: self.read_only(URLS)?,
            path: self.path.clone(),
        })
    }

    /// Table `def` as of now, in a read transaction of its own (later commits are not seen
    /// by it), for the readers that outlive one call.
    fn read_only<K: redb::Key + 'static, V: redb::Value + 'static>(
        &self,
        def: TableDefinition<K, V>,
    ) -> Result<redb::ReadOnlyTable<K, V>> {
        (|| -> Result<_> { Ok(self.db.begin_read()?.open_table(def)?) })()
            .with_context(|| unreadable(&self.path))
    }

    /// The marks of the fetched pages that have any, streamed in id order over the state as
    /// of now (a read transaction), one row in memory at a time: they grow with the crawled
    /// pages, so the crawl never holds them (docs/crawler.md, Resources).
    pub fn marks(&self) -> Result<Marks> {
        let rows = (|| -> Result<_> {
            let txn = self.db.begin_read()?;
            // A table added after format 1: a state written before lacks it.
            match txn.open_table(PAGES) {
                Ok(t) => Ok(Some(t.range::<u32>(..)?)),
                Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
                Err(e) => Err(e.into()),
            }
        })()
        .with_context(|| unreadable(&self.path))?;
        Ok(Marks {
            rows,
            path: self.path.clone(),
        })
    }

    /// A reader of the seen-set as of now ([`ensure_seen_index`](Self::ensure_seen_index)
    /// first: a state of an older build may lack the table).
    pub fn seen_reader(&self) -> Result<SeenReader> {
        Ok(SeenReader {
            table: self.read_only(SEEN)?,
            path: self.path.clone(),
        })
    }

    /// Makes the seen-set's table hold a row for each of the `urls` URLs: a state written by
    /// an older build lacks it, or lacks the rows of the URLs that build added, and then it
    /// is rebuilt from `urls` in one transaction (a pass over the URLs, as a resume makes
    /// anyway). Returns whether it was rebuilt.
    pub fn ensure_seen_index(&mut self, urls: u64) -> Result<bool> {
        let rows = (|| -> Result<Option<u64>> {
            let txn = self.db.begin_read()?;
            match txn.open_table(SEEN) {
                Ok(t) => Ok(Some(t.len()?)),
                Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
                Err(e) => Err(e.into()),
            }
        })()
        .with_context(|| unreadable(&self.path))?;
        if rows == Some(urls) {
            return Ok(false);
        }
        let rebuild = || -> Result<()> {
            let txn = self.db.writable(&self.path)?.begin_write()?;
            {
                txn.delete_table(SEEN)?;
                let mut seen = txn.open_table(SEEN)?;
                for row in self.urls()? {
                    let (id, url) = row?;
                    seen.insert(SeenKey::of(&url).to_u128(), id as PageId)?;
                }
            }
            txn.commit()?;
            Ok(())
        };
        rebuild().with_context(|| {
            format!(
                "cannot build the seen-set of the crawl state {} (is the disk full?)",
                self.path.display()
            )
        })?;
        Ok(true)
    }

    /// The URL of page `id`, read from the store (`None` when it has no such page).
    pub fn url(&self, id: PageId) -> Result<Option<String>> {
        self.url_reader()?.get(id)
    }

    /// The stored impacts of discovered pages (see `IMPACTS`), in id order; none when the
    /// crawl reads no search log.
    pub fn impacts(&self) -> Result<Vec<(PageId, f64)>> {
        self.all_rows(IMPACTS, |id, impact| Some((id, impact)))
    }

    /// The hosts paused by refusals when the state was last committed, by origin (a row this
    /// build cannot read is skipped: a pause is politeness, never worth refusing a state for).
    pub fn host_pauses(&self) -> Result<Vec<(String, HostPause)>> {
        self.all_rows(HOSTS, |origin, b| {
            HostPause::decode(b).map(|p| (origin.to_string(), p))
        })
    }

    /// The sitemap files queued (crawlrank_fetch::sitemap), in the order they became known: row, state,
    /// URL. A row this build cannot read is an error (it would lose a sitemap's entries or
    /// fetch one again without a word).
    pub fn sitemaps(&self) -> Result<Vec<(u64, u8, String)>> {
        let rows = self.all_rows(SITEMAPS, |seq, b: &[u8]| {
            let url = b.get(1..).and_then(|u| std::str::from_utf8(u).ok());
            let state = b.first().copied().filter(|&s| s <= crawlrank_fetch::sitemap::DONE);
            Some(match (state, url) {
                (Some(st), Some(u)) => Ok((seq, st, u.to_string())),
                _ => Err(seq),
            })
        })?;
        rows.into_iter()
            .map(|r| {
                r.map_err(|seq| {
                    anyhow::anyhow!(
                        "{}: sitemap record {seq} is unreadable",
                        self.path.display()
                    )
                })
            })
            .collect()
    }

    /// Every row of `table` in key order, mapped by `row` (a row it maps to `None` is
    /// skipped); none when the table does not exist (a state of an older build, or of a crawl
    /// that never wrote one).
    fn all_rows<K: redb::Key + 'static, V: redb::Value + 'static, T>(
        &self,
        table: TableDefinition<K, V>,
        mut row: impl FnMut(K::SelfType<'_>, V::SelfType<'_>) -> Option<T>,
    ) -> Result<Vec<T>> {
        let mut read = || -> Result<Vec<T>> {
            let txn = self.db.begin_read()?;
            let table = match txn.open_table(table) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
                Err(e) => return Err(e.into()),
            };
            let mut out = Vec::new();
            for r in table.iter()? {
                let (k, v) = r?;
                out.extend(row(k.value(), v.value()));
            }
            Ok(out)
        };
        read().with_context(|| unreadable(&self.path))
    }

    /// The event log in order, `(sequence number, event)`, read in one read transaction (a
    /// snapshot: later commits are not seen) and decoded one event at a time, so that no more
    /// than one event is in memory however long the log. A gap or an undecodable event is an
    /// error naming the event, after which the iterator ends.
    pub fn events(&self) -> Result<Events> {
        DenseRows::read(self, EVENTS, |i, k, v| {
            ensure!(k.value() == i, "event {i} is missing");
            Event::decode(v.value()).with_context(|| format!("event {i}"))
        })
    }

    fn load(&mut self) -> Result<Loaded> {
        let txn = self.db.begin_read()?;
        let meta = txn
            .open_table(META)
            .context("no metadata table: not a crawlrank crawl state")?;
        let format = meta
            .get("format")?
            .map(|v| v.value().to_vec())
            .unwrap_or_default();
        let format = String::from_utf8_lossy(&format);
        ensure!(
            format == FORMAT,
            "the state was written in format '{format}', this crawlrank reads '{FORMAT}': \
             finish it with the version that started it, or start a new state directory"
        );
        let mut loaded = Loaded::default();
        if let Some(c) = meta.get("config")? {
            let text = std::str::from_utf8(c.value())
                .context("the stored crawl configuration is not text")?;
            let spec = PolicySpec::decode(text).with_context(|| {
                format!(
                    "the stored crawl configuration in {} is unreadable",
                    self.path.display()
                )
            })?;
            loaded.config = Some(spec);
        }
        if let Some(w) = meta.get("warc")? {
            let b = w.value();
            ensure!(b.len() == 12, "bad WARC position");
            loaded.warc = WarcPosition {
                file: u32::from_le_bytes(b[0..4].try_into()?),
                offset: u64::from_le_bytes(b[4..12].try_into()?),
            };
        }
        if let Some(v) = meta.get(WARC_FIRST_EVENT)? {
            let b: [u8; 8] = v.value().try_into().context("bad WARC first event")?;
            loaded.warc_first_event = u64::from_le_bytes(b);
        }
        if let Some(v) = meta.get(WARC_REFETCH)? {
            let b = v.value();
            ensure!(b.len() % 4 == 0, "bad list of pages to archive again");
            loaded.warc_refetch = b
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
        }
        if let Some(s) = meta.get("stats")? {
            loaded.stats = s.value().to_vec();
        }
        loaded.urls = txn.open_table(URLS)?.len()?;
        // The events themselves are decoded when they are streamed (`events`): decoding them
        // here too would read the whole log twice on every resume. Their keys are distinct, so
        // `len` of them ending at `len - 1` means none is missing, which is what `commit`
        // needs to append after them.
        let events = txn.open_table(EVENTS)?;
        self.next_event = events.len()?;
        let last = events.last()?.map(|(k, _)| k.value());
        if last.is_some_and(|last| last + 1 != self.next_event) {
            let mut expected = 0;
            for row in events.iter()? {
                if row?.0.value() != expected {
                    break;
                }
                expected += 1;
            }
            bail!("event {expected} is missing");
        }
        Ok(loaded)
    }

    /// The host names and IP literals the user named in seeds, over all runs (their
    /// addresses are connected to whatever they are, see crawlrank_fetch::addresses); `None` for a
    /// state written before they were kept (a `meta` key added without a new format: an
    /// older build ignores it).
    pub fn seed_hosts(&self) -> Result<Option<Vec<String>>> {
        let read = || -> Result<Option<Vec<String>>> {
            let txn = self.db.begin_read()?;
            let meta = txn.open_table(META)?;
            let value = meta.get(SEED_HOSTS)?;
            Ok(value.map(|v| {
                let text = String::from_utf8_lossy(v.value());
                text.lines().map(String::from).collect()
            }))
        };
        read().with_context(|| unreadable(&self.path))
    }

    /// Records [`seed_hosts`](Self::seed_hosts) (the whole list, replacing the last one).
    pub fn set_seed_hosts(&self, hosts: &[String]) -> Result<()> {
        let txn = self.db.writable(&self.path)?.begin_write()?;
        txn.open_table(META)?
            .insert(SEED_HOSTS, hosts.join("\n").as_bytes())?;
        txn.commit().with_context(|| {
            format!(
                "cannot write the seeds' hosts to the crawl state {}",
                self.path.display()
            )
        })
    }

    /// Records the frontier configuration (once, when the crawl starts).
    pub fn set_config(&self, c: &PolicySpec) -> Result<()> {
        let txn = self.db.writable(&self.path)?.begin_write()?;
        txn.open_table(META)?
            .insert("config", c.encode().as_bytes())?;
        txn.commit().context("cannot write the crawl configuration")
    }

    /// Commits one step's writes, durably. On error (a full disk) nothing of them is kept.
    pub fn commit(&mut self, writes: &StepWrites) -> Result<()> {
        if writes.is_empty() {
            return Ok(());
        }
        let res = (|| -> Result<()> {
            let txn = self.db.writable(&self.path)?.begin_write()?;
            {
                let mut urls = txn.open_table(URLS)?;
                let mut seen = txn.open_table(SEEN)?;
                for (id, u) in &writes.new_urls {
                    urls.insert(*id, u.as_str())?;
                    seen.insert(SeenKey::of(u).to_u128(), *id)?;
                }
                let mut events = txn.open_table(EVENTS)?;
                for (i, e) in writes.events.iter().enumerate() {
                    events.insert(self.next_event + i as u64, e.encode().as_slice())?;
                }
                if !writes.pages.is_empty() {
                    let mut pages = txn.open_table(PAGES)?;
                    for (id, m) in &writes.pages {
                        pages.insert(*id, encode_page_meta(m).as_slice())?;
                    }
                }
                if !writes.impacts.is_empty() {
                    let mut impacts = txn.open_table(IMPACTS)?;
                    for &(id, v) in &writes.impacts {
                        impacts.insert(id, v)?;
                    }
                }
                if !writes.robots.is_empty() {
                    let mut robots = txn.open_table(ROBOTS)?;
                    for (origin, r) in &writes.robots {
                        robots.insert(origin.as_str(), r.encode().as_slice())?;
                    }
                }
                if !writes.hosts.is_empty() {
                    let mut hosts = txn.open_table(HOSTS)?;
                    for (origin, pause) in &writes.hosts {
                        match pause {
                            Some(p) => {
                                hosts.insert(origin.as_str(), p.encode().as_slice())?;
                            }
                            None => {
                                hosts.remove(origin.as_str())?;
                            }
                        }
                    }
                }
                if !writes.sitemaps.is_empty() {
                    let mut sitemaps = txn.open_table(SITEMAPS)?;
                    for (seq, state, url) in &writes.sitemaps {
                        let mut row = vec![*state];
                        row.extend_from_slice(url.as_bytes());
                        sitemaps.insert(*seq, row.as_slice())?;
                    }
                }
                let mut meta = txn.open_table(META)?;
                if let Some(w) = writes.warc {
                    let mut b = w.file.to_le_bytes().to_vec();
                    b.extend_from_slice(&w.offset.to_le_bytes());
                    meta.insert("warc", b.as_slice())?;
                }
                if let Some(first) = writes.warc_first_event {
                    meta.insert(WARC_FIRST_EVENT, first.to_le_bytes().as_slice())?;
                }
                if let Some(pages) = &writes.warc_refetch {
                    if pages.is_empty() {
                        meta.remove(WARC_REFETCH)?;
                    } else {
                        let b: Vec<u8> = pages.iter().flat_map(|p| p.to_le_bytes()).collect();
                        meta.insert(WARC_REFETCH, b.as_slice())?;
                    }
                }
                if let Some(s) = &writes.stats {
                    meta.insert("stats", s.as_slice())?;
                }
            }
            txn.commit()?;
            Ok(())
        })();
        res.with_context(|| {
            format!(
                "cannot commit to the crawl state {} (is the disk full?)",
                self.path.display()
            )
        })?;
        self.next_event += writes.events.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crawlrank_fetch::backoff::HostPause;

    fn pause(secs: u64) -> HostPause {
        HostPause {
            until: std::time::SystemTime::UNIX_EPOCH
                + std::time::Duration::from_secs(1_700_000_000 + secs),
            backoff: std::time::Duration::from_secs(secs),
        }
    }
    use super::*;
    use crawlrank_fetch::robots::RobotsAnswer;
    use crawlrank_frontier::{PolicyConfig, PolicyKind};

    #[test]
    fn events_round_trip() {
        for e in [
            Event::Seed(vec![0, 1, 300_000]),
            Event::Popped(u32::MAX),
            Event::Crawled {
                id: 7,
                outcome: Outcome::Redirect,
                status: 301,
                links: vec![1, 2, 128],
            },
        ] {
            assert_eq!(Event::decode(&e.encode()).unwrap(), e);
        }
        assert!(Event::decode(&[2, 1]).is_err());
        assert!(Event::decode(&[9]).is_err());
        assert!(Event::decode(&[1, 0x80]).is_err());
    }

    #[test]
    fn page_and_robots_records_round_trip() {
        for m in [
            PageMeta {
                noindex: true,
                canonical: Some("http://a.test/é".into()),
            },
            PageMeta {
                noindex: true,
                canonical: None,
            },
            PageMeta {
                noindex: false,
                canonical: Some(String::new()),
            },
        ] {
            assert_eq!(decode_page_meta(&encode_page_meta(&m)).unwrap(), m);
        }
        assert!(decode_page_meta(&[]).is_err());
        assert!(decode_page_meta(&[8]).is_err());
        assert!(decode_page_meta(&[1, b'x']).is_err());
        for r in [
            StoredRobots {
                fetched_at: u64::MAX,
                answer: RobotsAnswer::Body(Vec::new()),
            },
            StoredRobots {
                fetched_at: 0,
                answer: RobotsAnswer::Unavailable,
            },
        ] {
            assert_eq!(StoredRobots::decode(&r.encode()).unwrap(), r);
        }
        assert!(StoredRobots::decode(&[0; 8]).is_err());
        assert!(StoredRobots::decode(&[0; 10]).is_err());
    }

    /// URLs are streamed in id order and looked up one by one; neither keeps them all.
    #[test]
    fn urls_are_streamed_and_looked_up() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = Store::open(dir.path(), true).unwrap();
        let urls: Vec<(PageId, String)> = (0..1000)
            .map(|i| (i, format!("http://h{}.test/p{i}", i % 7)))
            .collect();
        s.commit(&StepWrites {
            new_urls: urls.clone(),
            ..StepWrites::default()
        })
        .unwrap();
        let streamed: Vec<(PageId, String)> = s
            .urls()
            .unwrap()
            .map(|r| r.map(|(i, u)| (i as PageId, u)).unwrap())
            .collect();
        assert_eq!(streamed, urls);
        assert_eq!(s.url(999).unwrap().as_deref(), Some("http://h5.test/p999"));
        assert_eq!(s.url(1000).unwrap(), None);
        let reader = s.url_reader().unwrap();
        assert_eq!(reader.get(3).unwrap().as_deref(), Some("http://h3.test/p3"));
        drop(s);
        let (_, l) = Store::open(dir.path(), false).unwrap();
        assert_eq!(l.urls, 1000);
    }

    /// Reading a state (exports, status, Python) leaves its file as it is, byte for byte and
    /// with its modification time, and a write through a read-only store is an error.
    #[test]
    fn a_read_only_open_leaves_the_file_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = Store::open(dir.path(), true).unwrap();
        s.commit(&StepWrites {
            new_urls: (0..100).map(|i| (i, format!("http://h.test/p{i}"))).collect(),
            ..StepWrites::default()
        })
        .unwrap();
        drop(s);
        let path = db_path(dir.path());
        let stamp = || {
            let m = std::fs::metadata(&path).unwrap();
            (std::fs::read(&path).unwrap(), m.modified().unwrap())
        };
        let before = stamp();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (s, l) = Store::open_read_only(dir.path()).unwrap();
        assert_eq!(l.urls, 100);
        assert_eq!(s.url(42).unwrap().as_deref(), Some("http://h.test/p42"));
        let err = s.set_seed_hosts(&["h.test".to_string()]).unwrap_err();
        assert!(format!("{err:#}").contains("opened read-only"), "{err:#}");
        drop(s);
        assert!(stamp() == before, "a read-only open changed {}", path.display());
        // A read-write open, for contrast, rewrites the header: the check above can fail.
        drop(Store::open(dir.path(), false).unwrap());
        assert!(stamp() != before, "a read-write open left the file as it was");
    }

    /// The seen-set's table is written with the URLs, and rebuilt when a state lacks it (an
    /// older build's) or lacks some of its rows (URLs an older build added).
    #[test]
    fn the_seen_index_is_kept_and_rebuilt_when_missing() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = Store::open(dir.path(), true).unwrap();
        let url = |i: u32| format!("http://h{}.test/p{i}", i % 7);
        s.commit(&StepWrites {
            new_urls: (0..500).map(|i| (i, url(i))).collect(),
            ..StepWrites::default()
        })
        .unwrap();
        assert!(!s.ensure_seen_index(500).unwrap(), "complete: left alone");
        let check = |s: &Store, n: u32| {
            let r = s.seen_reader().unwrap();
            for i in 0..n {
                assert_eq!(r.get(SeenKey::of(&url(i))).unwrap(), Some(i));
            }
            assert_eq!(r.get(SeenKey::of("http://h1.test/none")).unwrap(), None);
        };
        check(&s, 500);
        // What an older build leaves: no table, then URLs without rows.
        let txn = s.db.writable(&s.path).unwrap().begin_write().unwrap();
        txn.delete_table(SEEN).unwrap();
        txn.commit().unwrap();
        assert!(s.ensure_seen_index(500).unwrap());
        check(&s, 500);
        let txn = s.db.writable(&s.path).unwrap().begin_write().unwrap();
        {
            let mut urls = txn.open_table(URLS).unwrap();
            urls.insert(500, url(500).as_str()).unwrap();
        }
        txn.commit().unwrap();
        assert!(s.ensure_seen_index(501).unwrap());
        check(&s, 501);
    }

    /// A state written before the `pages` and `robots` tables existed opens, with neither.
    #[test]
    fn a_state_without_the_newer_tables_opens() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = Store::open(dir.path(), true).unwrap();
        s.commit(&StepWrites {
            new_urls: vec![(0, "http://a.test/".into())],
            events: vec![Event::Seed(vec![0])],
            ..StepWrites::default()
        })
        .unwrap();
        drop(s);
        {
            let db = Database::open(db_path(dir.path())).unwrap();
            let txn = db.begin_write().unwrap();
            assert!(txn.delete_table(PAGES).unwrap());
            assert!(txn.delete_table(ROBOTS).unwrap());
            txn.commit().unwrap();
        }
        let (mut s, l) = Store::open(dir.path(), false).unwrap();
        assert_eq!(l.urls, 1);
        assert_eq!(s.marks().unwrap().count(), 0);
        assert_eq!(s.robots("http://a.test").unwrap(), None);
        // And it takes the new records: the tables are created by the first commit.
        s.commit(&StepWrites {
            pages: vec![(
                0,
                PageMeta {
                    noindex: true,
                    canonical: None,
                },
            )],
            ..StepWrites::default()
        })
        .unwrap();
        drop(s);
        let s = Store::open(dir.path(), false).unwrap().0;
        assert_eq!(s.marks().unwrap().count(), 1);
    }

    #[test]
    fn sitemap_rows_round_trip_and_a_bad_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = Store::open(dir.path(), true).unwrap();
        // A state that never queued a sitemap (or of an older build) has none.
        assert!(s.sitemaps().unwrap().is_empty());
        let rows = vec![
            (
                0,
                crawlrank_fetch::sitemap::PENDING,
                "http://a.test/sitemap.xml".to_string(),
            ),
            (
                1,
                crawlrank_fetch::sitemap::PENDING,
                "http://a.test/s.xml".to_string(),
            ),
        ];
        s.commit(&StepWrites {
            sitemaps: rows.clone(),
            ..StepWrites::default()
        })
        .unwrap();
        s.commit(&StepWrites {
            sitemaps: vec![(0, crawlrank_fetch::sitemap::DONE, rows[0].2.clone())],
            ..StepWrites::default()
        })
        .unwrap();
        let (done, pending) = (crawlrank_fetch::sitemap::DONE, crawlrank_fetch::sitemap::PENDING);
        assert_eq!(
            s.sitemaps().unwrap(),
            [
                (0, done, rows[0].2.clone()),
                (1, pending, rows[1].2.clone())
            ]
        );
        drop(s);
        {
            let db = Database::open(db_path(dir.path())).unwrap();
            let txn = db.begin_write().unwrap();
            txn.open_table(SITEMAPS)
                .unwrap()
                .insert(2, [7u8, b'x'].as_slice())
                .unwrap();
            txn.commit().unwrap();
        }
        let (s, _) = Store::open(dir.path(), false).unwrap();
        let e = s.sitemaps().unwrap_err().to_string();
        assert!(e.contains("sitemap record 2"), "{e}");
    }

    #[test]
    fn store_round_trip_and_version_check() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, l) = Store::open(dir.path(), true).unwrap();
        assert!(l.config.is_none() && l.urls == 0);
        let c = PolicySpec {
            kind: PolicyKind::Fica,
            config: PolicyConfig {
                batch: 3,
                rng_seed: 1,
                ..PolicyConfig::for_crawl(10, 10)
            },
        };
        s.set_config(&c).unwrap();
        let b = StepWrites {
            new_urls: vec![(0, "http://a.test/".into()), (1, "http://a.test/x".into())],
            events: vec![Event::Seed(vec![0]), Event::Popped(0)],
            warc: Some(WarcPosition {
                file: 2,
                offset: 99,
            }),
            warc_first_event: Some(7),
            warc_refetch: Some(vec![1, 0]),
            stats: Some(b"x".to_vec()),
            pages: vec![
                (
                    1,
                    PageMeta {
                        noindex: true,
                        canonical: None,
                    },
                ),
                (
                    0,
                    PageMeta {
                        noindex: false,
                        canonical: Some("http://a.test/c".into()),
                    },
                ),
            ],
            robots: vec![
                (
                    "http://a.test".into(),
                    StoredRobots {
                        fetched_at: 1_700_000_000,
                        answer: RobotsAnswer::Body(b"User-agent: *\nDisallow: /x".to_vec()),
                    },
                ),
                (
                    "http://b.test:81".into(),
                    StoredRobots {
                        fetched_at: 5,
                        answer: RobotsAnswer::Unavailable,
                    },
                ),
            ],
            impacts: vec![(1, 2.5)],
            sitemaps: Vec::new(),
            hosts: vec![
                ("http://a.test".into(), Some(pause(7))),
                ("http://b.test:81".into(), Some(pause(9))),
            ],
        };
        assert_eq!(s.impacts().unwrap(), []);
        assert_eq!(s.host_pauses().unwrap(), []);
        s.commit(&b).unwrap();
        // A pause that is over is deleted.
        s.commit(&StepWrites {
            hosts: vec![("http://b.test:81".into(), None)],
            ..StepWrites::default()
        })
        .unwrap();
        drop(s);
        let (s, l) = Store::open(dir.path(), false).unwrap();
        assert_eq!(s.impacts().unwrap(), [(1, 2.5)]);
        assert_eq!(
            s.host_pauses().unwrap(),
            [("http://a.test".to_string(), pause(7))]
        );
        assert_eq!(l.config, Some(c));
        assert_eq!(l.urls, 2);
        assert_eq!(
            read_events(&s),
            [(0, b.events[0].clone()), (1, b.events[1].clone())]
        );
        let mut pages = b.pages.clone();
        pages.sort_by_key(|p| p.0);
        let marks: Vec<(PageId, PageMeta)> = s.marks().unwrap().map(Result::unwrap).collect();
        assert_eq!(marks, pages);
        for (origin, answer) in &b.robots {
            assert_eq!(s.robots(origin).unwrap().as_ref(), Some(answer));
        }
        assert_eq!(s.robots("http://c.test").unwrap(), None);
        assert_eq!(
            l.warc,
            WarcPosition {
                file: 2,
                offset: 99
            }
        );
        assert_eq!((l.warc_first_event, l.warc_refetch), (7, vec![1, 0]));
        drop(s);

        // Another format version: refused, untouched.
        {
            let db = Database::open(db_path(dir.path())).unwrap();
            let txn = db.begin_write().unwrap();
            txn.open_table(META)
                .unwrap()
                .insert("format", b"crawlrank-crawl-state/999".as_slice())
                .unwrap();
            txn.commit().unwrap();
        }
        let err = Store::open(dir.path(), true).err().unwrap();
        assert!(format!("{err:#}").contains("crawl-state/999"), "{err:#}");

        // Garbage: a clear error, and the file is left as it was.
        let garbage = tempfile::tempdir().unwrap();
        std::fs::write(db_path(garbage.path()), b"not a database at all").unwrap();
        let err = Store::open(garbage.path(), true).err().unwrap();
        assert!(
            format!("{err:#}").contains("cannot open the crawl state"),
            "{err:#}"
        );
        assert_eq!(
            std::fs::read(db_path(garbage.path())).unwrap(),
            b"not a database at all"
        );
        assert!(Store::open(tempfile::tempdir().unwrap().path(), false).is_err());
    }

    fn read_events(s: &Store) -> Vec<(u64, Event)> {
        s.events().unwrap().map(Result::unwrap).collect()
    }

    /// Replaces (or, with `None`, removes) the stored bytes of event `i`, behind the store.
    fn tamper(dir: &Path, i: u64, bytes: Option<&[u8]>) {
        let db = Database::open(db_path(dir)).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut events = txn.open_table(EVENTS).unwrap();
            match bytes {
                Some(b) => events.insert(i, b).unwrap(),
                None => events.remove(i).unwrap(),
            };
        }
        txn.commit().unwrap();
    }

    #[test]
    fn the_log_is_streamed_in_order_and_appended_after_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = Store::open(dir.path(), true).unwrap();
        assert!(read_events(&s).is_empty());
        let first = vec![Event::Seed(vec![0]), Event::Popped(0)];
        s.commit(&StepWrites {
            new_urls: vec![(0, "http://a.test/".into())],
            events: first.clone(),
            ..StepWrites::default()
        })
        .unwrap();
        drop(s);
        // A reopened store numbers its next events after the stored ones.
        let (mut s, _) = Store::open(dir.path(), false).unwrap();
        let crawled = Event::Crawled {
            id: 0,
            outcome: Outcome::Html,
            status: 200,
            links: vec![0],
        };
        s.commit(&StepWrites {
            events: vec![crawled.clone()],
            ..StepWrites::default()
        })
        .unwrap();
        let all: Vec<Event> = first.into_iter().chain([crawled]).collect();
        let want: Vec<(u64, Event)> = (0..).zip(all).collect();
        assert_eq!(read_events(&s), want);
        // A stream is a snapshot: what is committed while it is read is not in it.
        let mut events = s.events().unwrap();
        assert_eq!(events.next().unwrap().unwrap(), want[0]);
        s.commit(&StepWrites {
            events: vec![Event::Popped(1)],
            ..StepWrites::default()
        })
        .unwrap();
        assert_eq!(events.map(Result::unwrap).collect::<Vec<_>>(), want[1..]);
        assert_eq!(read_events(&s).len(), 4);
    }

    #[test]
    fn a_gap_in_the_log_is_refused_at_open_and_a_bad_event_when_read() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, _) = Store::open(dir.path(), true).unwrap();
        s.commit(&StepWrites {
            new_urls: vec![(0, "http://a.test/".into()), (1, "http://a.test/b".into())],
            events: vec![Event::Seed(vec![0, 1]), Event::Popped(0), Event::Popped(1)],
            ..StepWrites::default()
        })
        .unwrap();
        drop(s);

        // An undecodable event: the state opens (events are decoded when read), and reading
        // stops at it with its number.
        tamper(dir.path(), 1, Some(&[1, 0x80]));
        let (s, _) = Store::open(dir.path(), false).unwrap();
        let mut events = s.events().unwrap();
        assert_eq!(
            events.next().unwrap().unwrap(),
            (0, Event::Seed(vec![0, 1]))
        );
        let err = format!("{:#}", events.next().unwrap().unwrap_err());
        assert!(
            err.contains("is unreadable") && err.contains("event 1"),
            "{err}"
        );
        assert!(events.next().is_none(), "nothing is read past a bad event");
        drop((events, s));

        // A missing event: refused at open, named.
        tamper(dir.path(), 1, None);
        let err = format!("{:#}", Store::open(dir.path(), false).err().unwrap());
        assert!(
            err.contains("is unreadable") && err.contains("event 1 is missing"),
            "{err}"
        );
        tamper(dir.path(), 1, Some(&Event::Popped(0).encode()));
        tamper(dir.path(), 0, None);
        let err = format!("{:#}", Store::open(dir.path(), false).err().unwrap());
        assert!(err.contains("event 0 is missing"), "{err}");
    }
}
