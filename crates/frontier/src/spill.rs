//! A priority queue of pages whose cold part lives on disk: [`SpillingHeap`], with exactly
//! the pop order of [`IndexedHeap`](crate::IndexedHeap) (a crawl of 10^8 URLs must
//! fit in 16 GB, and a queued page costs the in-memory heap 16 bytes plus its 4-byte position).
//!
//! # Design
//!
//! Entries are `(key, seq, page)`, ordered by `(key, seq)`; `seq` is unique per page, so the
//! order is total and the pop sequence is fully determined by the entries, whatever their
//! layout. The heap splits them at a bound `B` (an entry):
//!
//! - **hot**: an in-memory indexed binary min-heap of at most `hot_capacity` entries, all
//!   ordering at or before `B`;
//! - **cold**: every other entry, all ordering strictly after `B`, as records in sorted runs
//!   (LSM-style). Cold writes are buffered in memory (`run_records` of them), sorted and
//!   written as one run file; a run is read back sequentially through a buffered reader.
//!
//! With no cold entry there is no bound and everything is hot. A push or key change that
//! orders at or before `B` goes hot, any other goes cold; so the hot minimum is always the
//! global minimum and `pop` is the hot heap's pop. When hot overflows, its worst half is
//! sorted and written as one run, and `B` drops to the largest entry kept. When hot is empty
//! and cold is not, a refill merges the runs' heads (k-way) and moves the next
//! `hot_capacity / 2` valid entries hot, in order; `B` becomes the last one moved. When runs
//! exceed `max_runs`, the smallest half of them are merged into one (compaction), dropping
//! stale records.
//!
//! # Stale records and the stamp invariant (exact)
//!
//! A cold page's key change cannot find its old record on disk, so it writes a new one and
//! the old one becomes *stale*. Every record carries a *stamp*, from a global counter; one
//! write batch (a hot spill, a compaction's output, a rekey) may share one stamp because it
//! holds at most one record per page, and a single cold write gets its own. `pos[page]` is
//! either `ABSENT`, a hot index, or `COLD | (stamp mod 2^31)` of the page's current record.
//! A record is valid iff its page is cold and the low bits match. This is exact because:
//!
//! 1. every stored record (buffer, runs) has a stamp in `[epoch_start, next_stamp)`;
//! 2. `next_stamp − epoch_start ≤ 2^30 + 1 < 2^31`: before a stamp is allocated, once
//!    `2^30` stamps were used since `epoch_start`, a **full compaction** merges the buffer
//!    and every run, keeps the valid records only, rewrites them with one new stamp (one
//!    record per page) and starts a new epoch there. So two stored stamps are equal iff
//!    their low 31 bits are;
//! 3. no two records of one page share a stamp.
//!
//! Hence a stale record's stamp never aliases its page's current one. `len` counts hot
//! entries plus valid cold entries (`cold_len`, maintained at every transition), so it is
//! exact; when `cold_len` reaches 0 every remaining record is stale and all are dropped.
//!
//! # I/O failures (disk full)
//!
//! Policies' `pop` and `on_crawled` cannot fail, and losing or reordering a queued page would
//! silently change the crawl. So a failed write never loses an entry: the run file is
//! truncated to the records written before the error (still a valid sorted run) and the rest
//! of the run is kept in memory as a *memory run*, which the merges read like a file. The
//! failure is counted and its message kept ([`SpillStatus`], reached through
//! `Frontier::spill_status`), so the crawler can report it; memory then grows as if nothing
//! spilled, and later writes try the disk again. Failing to *read back* a run this heap wrote
//! (an I/O error on a file it holds open) would lose entries; that panics, naming the file.
//!
//! # Files
//!
//! Each heap makes its own directory `crawlrank-frontier-spill.XXXXXX` inside the configured
//! directory, lazily at its first spill (a crawl that never overflows writes nothing), holding
//! `run-NNNNNNNN.cold` files of 20-byte records. Run files are deleted as soon as they are
//! consumed or merged, and the directory is removed when the heap is dropped. Nothing in it
//! survives a restart on purpose: a crawl rebuilds its frontier from its event log.
//!
//! # Costs
//!
//! Memory: `4` bytes per page ever queued (`pos`), `16 × hot_capacity`, `20 × run_records`
//! for the write buffer, and a 64 KiB read buffer per run (at most `max_runs + 1`). Disk: 20
//! bytes per cold record, stale ones included until a compaction drops them. Time: a push is
//! O(log hot_capacity) amortized plus its share of the sequential run writes; `rekey_all` on
//! a heap with cold entries reads every record once and rewrites every entry once (an
//! external sort).

use crate::heap::Entry;
use crate::PageId;
use std::cmp::Ordering;
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// `pos` of a page in neither part.
const ABSENT: u32 = 0x7FFF_FFFF;
/// `pos` flag of a cold page; the low 31 bits are its current record's stamp.
const COLD: u32 = 0x8000_0000;
/// Bytes of a record on disk: key (f64), seq, page, stamp (u32 each), little-endian.
const RECORD_BYTES: usize = 20;
/// Records a run writer encodes before one `write_all`.
const WRITE_CHUNK_RECORDS: usize = 4096;
/// The read buffer of each run file.
const READ_BUFFER_BYTES: usize = 64 << 10;
/// The stamp bits `pos` keeps (see the module doc).
const STAMP_BITS: u32 = 31;

/// How a frontier's priority queue spills its cold part to disk. Off unless a
/// [`PolicyConfig::spill`](crate::PolicyConfig::spill) is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillConfig {
    /// Where each heap makes its own scratch directory (`crawlrank-frontier-spill.XXXXXX`,
    /// removed when the heap is dropped). Created if missing.
    pub dir: PathBuf,
    /// Entries kept in memory (at least 2). 16 bytes each.
    pub hot_capacity: usize,
    /// Cold writes buffered in memory before they are sorted and written as a run (at least
    /// 1). 20 bytes each.
    pub run_records: usize,
    /// Runs allowed before the smallest half of them are merged (at least 2).
    pub max_runs: usize,
}

impl SpillConfig {
    /// The spilling of a crawl whose state is its own (its database locked by this process):
    /// `dir` is cleared of whatever an earlier run left there — the runs of one killed, say —
    /// since a frontier is rebuilt from the crawl's log, never from its spill; then spilling
    /// into it with `hot_capacity` entries in memory, or none when `hot_capacity` is 0. For
    /// `crawlrank crawl` and `crawlrank frontier serve` alike (`--frontier-hot`).
    pub fn for_crawl(dir: PathBuf, hot_capacity: usize) -> anyhow::Result<Option<Self>> {
        use anyhow::Context;
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| {
                format!(
                    "cannot clear the frontier's scratch directory {}",
                    dir.display()
                )
            })?;
        }
        Ok((hot_capacity > 0).then(|| Self::new(dir, hot_capacity)))
    }

    /// Spilling into `dir` with `hot_capacity` entries in memory; a write buffer of half that
    /// (between 1024 and 2^20 records) and at most 32 runs.
    pub fn new(dir: impl Into<PathBuf>, hot_capacity: usize) -> Self {
        Self {
            dir: dir.into(),
            hot_capacity: hot_capacity.max(2),
            run_records: (hot_capacity / 2).clamp(1024, 1 << 20),
            max_runs: 32,
        }
    }
}

/// What a spilling heap holds and whether its writes failed, for the crawler to report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpillStatus {
    /// Entries in memory (the hot heap).
    pub hot: usize,
    /// Valid cold entries.
    pub cold: usize,
    /// Sorted runs (on disk or, after a failed write, in memory).
    pub runs: usize,
    /// Records (valid or stale) in memory runs: what failed writes kept in memory.
    pub memory_records: u64,
    /// Writes (creating the directory, a run file, or writing one) that failed.
    pub write_failures: u64,
    /// The last write error, with the path it concerned.
    pub last_write_error: Option<String>,
}

/// A cold entry as stored: the entry and the stamp of the write that stored it (low bits).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Record {
    key: f64,
    seq: u32,
    page: PageId,
    stamp: u32,
}

impl Record {
    fn new(e: Entry, stamp: u32) -> Self {
        Self {
            key: e.key,
            seq: e.seq,
            page: e.page,
            stamp,
        }
    }
    fn entry(&self) -> Entry {
        Entry {
            key: self.key,
            seq: self.seq,
            page: self.page,
        }
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.key.to_bits().to_le_bytes());
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&self.page.to_le_bytes());
        out.extend_from_slice(&self.stamp.to_le_bytes());
    }
    fn decode(b: &[u8; RECORD_BYTES]) -> Self {
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        Self {
            key: f64::from_bits(u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))),
            seq: u32_at(8),
            page: u32_at(12),
            stamp: u32_at(16),
        }
    }
}

/// `(key, seq)` order of entries, exactly [`Entry::before`]'s (so `-0.0` and `0.0` are equal
/// keys, as in [`IndexedHeap`](crate::IndexedHeap)); total, since keys are never NaN and seqs
/// are unique.
fn order(a: &Entry, b: &Entry) -> Ordering {
    if a.before(b) {
        Ordering::Less
    } else if b.before(a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

fn record_order(a: &Record, b: &Record) -> Ordering {
    order(&a.entry(), &b.entry())
}

/// Where a run's records come from.
enum RunSource {
    /// A run file, open for reading (deleted when the run is dropped).
    Disk {
        reader: BufReader<File>,
        path: PathBuf,
    },
    /// Records a failed write kept in memory, read from `next`.
    Memory { records: Vec<Record>, next: usize },
}

/// A sorted run of cold records, read front to back; `head` is the next record.
struct Run {
    source: RunSource,
    /// Records after `head`.
    remaining: u64,
    head: Option<Record>,
}

impl Run {
    fn on_disk(file: File, path: PathBuf, len: u64) -> Self {
        let mut run = Self {
            source: RunSource::Disk {
                reader: BufReader::with_capacity(READ_BUFFER_BYTES, file),
                path,
            },
            remaining: len,
            head: None,
        };
        run.advance();
        run
    }

    fn in_memory(records: Vec<Record>) -> Self {
        let mut run = Self {
            remaining: records.len() as u64,
            source: RunSource::Memory { records, next: 0 },
            head: None,
        };
        run.advance();
        run
    }

    /// Records left, `head` included.
    fn len(&self) -> u64 {
        self.remaining + u64::from(self.head.is_some())
    }

    fn memory_records(&self) -> u64 {
        match self.source {
            RunSource::Memory { .. } => self.len(),
            RunSource::Disk { .. } => 0,
        }
    }

    /// Replaces `head` by the next record.
    fn advance(&mut self) {
        if self.remaining == 0 {
            self.head = None;
            return;
        }
        self.remaining -= 1;
        self.head = Some(match &mut self.source {
            RunSource::Memory { records, next } => {
                *next += 1;
                records[*next - 1]
            }
            RunSource::Disk { reader, path } => {
                let mut b = [0u8; RECORD_BYTES];
                if let Err(e) = reader.read_exact(&mut b) {
                    // This heap wrote the file and holds it open: failing to read it back
                    // means queued pages are lost, and the crawl order with them.
                    panic!(
                        "the frontier cannot read back its spill run {}: {e}",
                        path.display()
                    );
                }
                Record::decode(&b)
            }
        });
    }

    fn take_head(&mut self) -> Option<Record> {
        let r = self.head?;
        self.advance();
        Some(r)
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if let RunSource::Disk { path, .. } = &self.source {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The index of the run with the smallest head.
fn min_head(runs: &[Run]) -> Option<usize> {
    let mut best: Option<(usize, Record)> = None;
    for (i, run) in runs.iter().enumerate() {
        if let Some(h) = run.head {
            if best.is_none_or(|(_, b)| record_order(&h, &b) == Ordering::Less) {
                best = Some((i, h));
            }
        }
    }
    best.map(|(i, _)| i)
}

/// Writes one sorted run; after a failure, keeps the rest of it in memory.
struct RunWriter {
    file: Option<(File, PathBuf)>,
    chunk: Vec<Record>,
    bytes: Vec<u8>,
    written: u64,
    memory: Vec<Record>,
    error: Option<String>,
}

impl RunWriter {
    /// A writer to a new file in `dir` (or, if there is none, straight to memory).
    fn create(dir: Result<&Path, String>, id: u64) -> Self {
        let (file, error) = match dir {
            Err(e) => (None, Some(e)),
            Ok(dir) => {
                let path = dir.join(format!("run-{id:08}.cold"));
                match OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .open(&path)
                {
                    Ok(f) => (Some((f, path)), None),
                    Err(e) => (None, Some(format!("creating {}: {e}", path.display()))),
                }
            }
        };
        Self {
            file,
            chunk: Vec::new(),
            bytes: Vec::new(),
            written: 0,
            memory: Vec::new(),
            error,
        }
    }

    fn push(&mut self, r: Record) {
        if self.error.is_some() {
            self.memory.push(r);
            return;
        }
        self.chunk.push(r);
        if self.chunk.len() == WRITE_CHUNK_RECORDS {
            self.write_chunk();
        }
    }

    fn write_chunk(&mut self) {
        let Some((file, path)) = &mut self.file else {
            self.memory.append(&mut self.chunk);
            return;
        };
        self.bytes.clear();
        for r in &self.chunk {
            r.encode(&mut self.bytes);
        }
        match file.write_all(&self.bytes) {
            Ok(()) => {
                self.written += self.chunk.len() as u64;
                self.chunk.clear();
            }
            Err(e) => {
                // The file keeps the records written before this chunk: still a sorted run.
                let _ = file.set_len(self.written * RECORD_BYTES as u64);
                let _ = file.seek(SeekFrom::Start(self.written * RECORD_BYTES as u64));
                self.error = Some(format!("writing {}: {e}", path.display()));
                self.memory.append(&mut self.chunk);
            }
        }
    }

    /// The run(s) written: the file part, then the part kept in memory; and the error if any.
    fn finish(mut self) -> (Vec<Run>, Option<String>) {
        if !self.chunk.is_empty() {
            self.write_chunk();
        }
        let mut runs = Vec::new();
        if let Some((mut file, path)) = self.file.take() {
            if self.written == 0 {
                let _ = std::fs::remove_file(&path);
            } else {
                if let Err(e) = file.seek(SeekFrom::Start(0)) {
                    panic!(
                        "the frontier cannot rewind its spill run {}: {e}",
                        path.display()
                    );
                }
                runs.push(Run::on_disk(file, path, self.written));
            }
        }
        if !self.memory.is_empty() {
            runs.push(Run::in_memory(std::mem::take(&mut self.memory)));
        }
        (runs, self.error.take())
    }
}

/// A min-heap of pages keyed by `(f64, u32)` whose entries beyond `hot_capacity` live in
/// sorted runs on disk; pops in exactly [`IndexedHeap`](crate::IndexedHeap)'s order. See the
/// module documentation for the design and its invariant.
pub struct SpillingHeap {
    config: SpillConfig,
    /// The hot part: a binary min-heap.
    hot: Vec<Entry>,
    /// Per page: `ABSENT`, a hot index, or `COLD | stamp bits`.
    pos: Vec<u32>,
    /// `None`: no cold entries. `Some(b)`: hot entries order at or before `b`, valid cold
    /// entries strictly after it.
    bound: Option<Entry>,
    /// Valid cold records.
    cold_len: usize,
    /// Cold writes not yet in a run (unsorted).
    buffer: Vec<Record>,
    runs: Vec<Run>,
    /// The stamp the next write gets, and the first stamp of the current epoch.
    next_stamp: u64,
    epoch_start: u64,
    /// Stamp bits kept in `pos` (31; smaller in tests, to make aliasing reachable).
    stamp_bits: u32,
    /// The scratch directory (made at the first spill).
    dir: Option<tempfile::TempDir>,
    files_made: u64,
    write_failures: u64,
    last_write_error: Option<String>,
    counters: Counters,
}

/// What the heap has done, for tests (and `Debug`).
#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    spills: u64,
    refills: u64,
    compactions: u64,
    full_compactions: u64,
}

impl std::fmt::Debug for SpillingHeap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpillingHeap")
            .field("config", &self.config)
            .field("status", &self.status())
            .field("counters", &self.counters)
            .finish()
    }
}

impl SpillingHeap {
    /// An empty heap spilling as `config` says (capacities below their minimum are raised).
    pub fn new(config: SpillConfig) -> Self {
        Self::with_stamp_bits(config, STAMP_BITS)
    }

    fn with_stamp_bits(mut config: SpillConfig, stamp_bits: u32) -> Self {
        config.hot_capacity = config.hot_capacity.clamp(2, ABSENT as usize - 1);
        config.run_records = config.run_records.max(1);
        config.max_runs = config.max_runs.max(2);
        Self {
            config,
            hot: Vec::new(),
            pos: Vec::new(),
            bound: None,
            cold_len: 0,
            buffer: Vec::new(),
            runs: Vec::new(),
            next_stamp: 0,
            epoch_start: 0,
            stamp_bits,
            dir: None,
            files_made: 0,
            write_failures: 0,
            last_write_error: None,
            counters: Counters::default(),
        }
    }

    /// Number of pages in the heap (hot and valid cold).
    #[inline]
    pub fn len(&self) -> usize {
        self.hot.len() + self.cold_len
    }

    /// Whether the heap is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The scratch directory, once the heap has made it.
    pub fn spill_dir(&self) -> Option<&Path> {
        self.dir.as_ref().map(|d| d.path())
    }

    /// Sizes, and the write failures so far.
    pub fn status(&self) -> SpillStatus {
        SpillStatus {
            hot: self.hot.len(),
            cold: self.cold_len,
            runs: self.runs.len(),
            memory_records: self.runs.iter().map(Run::memory_records).sum(),
            write_failures: self.write_failures,
            last_write_error: self.last_write_error.clone(),
        }
    }

    /// Inserts `page`, or changes its key if already queued (a queued page keeps its `seq`).
    pub fn push_or_update(&mut self, page: PageId, key: f64, seq: u32) {
        debug_assert!(!key.is_nan(), "NaN priority for page {page}");
        if page as usize >= self.pos.len() {
            self.pos.resize(page as usize + 1, ABSENT);
        }
        let e = Entry { key, seq, page };
        let goes_hot = self.bound.is_none_or(|b| !b.before(&e));
        let p = self.pos[page as usize];
        if p == ABSENT {
            if goes_hot {
                self.hot_insert(e);
            } else {
                self.cold_len += 1;
                self.cold_write(e);
            }
        } else if p & COLD == 0 {
            let i = p as usize;
            if goes_hot {
                crate::heap::rekey_at(&mut self.hot, &mut self.pos, i, key);
            } else {
                self.hot_remove(i);
                self.cold_len += 1;
                self.cold_write(e);
            }
        } else if goes_hot {
            // Setting `pos` to a hot index makes the cold record stale.
            self.cold_len -= 1;
            if self.cold_len == 0 {
                self.drop_cold();
            }
            self.hot_insert(e);
        } else {
            self.cold_write(e);
        }
    }

    /// Removes and returns the page with the smallest key.
    pub fn pop(&mut self) -> Option<(PageId, f64)> {
        if self.hot.is_empty() {
            if self.cold_len == 0 {
                return None;
            }
            self.refill();
        }
        let top = crate::heap::pop_root(&mut self.hot, &mut self.pos, ABSENT)
            .expect("the hot part holds entries after a refill");
        Some((top.page, top.key))
    }

    /// Replaces every key at once (`key_of(page)`). With cold entries this is an external
    /// sort: every valid entry is read once, re-keyed and written once into new runs, which
    /// start a new stamp epoch.
    pub fn rekey_all(&mut self, mut key_of: impl FnMut(PageId) -> f64) {
        if self.cold_len == 0 {
            for e in &mut self.hot {
                e.key = key_of(e.page);
            }
            self.heapify();
            return;
        }
        let stamp = self.start_epoch();
        let old_runs = self.take_all_runs();
        let total = self.len();
        let mut sorter = Vec::with_capacity(self.config.run_records.min(total));
        let mut new_runs = Vec::new();
        let hot = std::mem::take(&mut self.hot);
        for e in hot {
            self.rekey_into(&mut sorter, &mut new_runs, e, stamp, &mut key_of);
        }
        for mut run in old_runs {
            while let Some(r) = run.take_head() {
                if self.is_valid(&r) {
                    self.rekey_into(&mut sorter, &mut new_runs, r.entry(), stamp, &mut key_of);
                }
            }
        }
        let sorted = self.write_sorted(&mut sorter);
        new_runs.extend(sorted);
        debug_assert!(new_runs.iter().map(Run::len).sum::<u64>() == total as u64);
        self.runs = new_runs;
        self.cold_len = total;
        self.bound = None;
        self.compact_if_too_many_runs();
        self.refill();
    }

    fn rekey_into(
        &mut self,
        sorter: &mut Vec<Record>,
        new_runs: &mut Vec<Run>,
        mut e: Entry,
        stamp: u32,
        key_of: &mut impl FnMut(PageId) -> f64,
    ) {
        e.key = key_of(e.page);
        self.pos[e.page as usize] = self.cold_mark(stamp);
        sorter.push(Record::new(e, stamp));
        if sorter.len() >= self.config.run_records {
            let runs = self.write_sorted(sorter);
            new_runs.extend(runs);
        }
    }

    // --- stamps ---

    fn stamp_mask(&self) -> u32 {
        ((1u64 << self.stamp_bits) - 1) as u32
    }

    fn cold_mark(&self, stamp: u32) -> u32 {
        COLD | stamp
    }

    /// Whether `r` is its page's current record.
    fn is_valid(&self, r: &Record) -> bool {
        self.pos[r.page as usize] == self.cold_mark(r.stamp)
    }

    /// A stamp for one write batch (at most one record per page), after a full compaction
    /// if the epoch is used up (invariant 2 of the module doc).
    fn allocate_stamp(&mut self) -> u32 {
        if self.next_stamp - self.epoch_start >= 1u64 << (self.stamp_bits - 1) {
            self.full_compaction();
        }
        let s = self.next_stamp;
        self.next_stamp += 1;
        s as u32 & self.stamp_mask()
    }

    /// Starts a new epoch; the caller must rewrite every valid record with the stamp returned
    /// and drop every old record before the next allocation.
    fn start_epoch(&mut self) -> u32 {
        self.epoch_start = self.next_stamp;
        self.next_stamp += 1;
        self.epoch_start as u32 & self.stamp_mask()
    }

    // --- cold part ---

    fn cold_write(&mut self, e: Entry) {
        let stamp = self.allocate_stamp();
        self.pos[e.page as usize] = self.cold_mark(stamp);
        self.buffer.push(Record::new(e, stamp));
        if self.buffer.len() >= self.config.run_records {
            self.flush_buffer();
        }
    }

    fn flush_buffer(&mut self) {
        if self.buffer.is_empty() {
            return;
        }
        let mut buffer = std::mem::take(&mut self.buffer);
        let runs = self.write_sorted(&mut buffer);
        self.buffer = buffer;
        self.runs.extend(runs);
        self.compact_if_too_many_runs();
    }

    /// Every run, the buffer (sorted, as a memory run) included, taken out of the heap.
    fn take_all_runs(&mut self) -> Vec<Run> {
        let mut runs = std::mem::take(&mut self.runs);
        if !self.buffer.is_empty() {
            let mut buffer = std::mem::take(&mut self.buffer);
            buffer.sort_unstable_by(record_order);
            runs.push(Run::in_memory(buffer));
        }
        runs
    }

    /// All cold records are stale: forget them.
    fn drop_cold(&mut self) {
        self.runs.clear();
        self.buffer.clear();
        self.bound = None;
    }

    /// Moves the next valid cold entries (up to half the hot capacity) into the empty hot
    /// heap, in order; the bound becomes the last one moved.
    fn refill(&mut self) {
        debug_assert!(self.hot.is_empty() && self.cold_len > 0);
        self.counters.refills += 1;
        self.flush_buffer();
        let want = (self.config.hot_capacity / 2).max(1);
        let mut last = None;
        while self.hot.len() < want {
            let Some(i) = min_head(&self.runs) else {
                break;
            };
            let r = self.runs[i].take_head().expect("a head");
            if self.is_valid(&r) {
                self.pos[r.page as usize] = self.hot.len() as u32;
                self.hot.push(r.entry()); // in increasing order: a valid heap
                self.cold_len -= 1;
                last = Some(r.entry());
            }
        }
        self.runs.retain(|r| r.len() > 0);
        assert!(
            last.is_some(),
            "the frontier's spilling heap counted cold entries it could not find"
        );
        if self.cold_len == 0 {
            self.drop_cold();
        } else {
            self.bound = last;
        }
    }

    /// Merges the smallest half of the runs into one if there are more than `max_runs`.
    fn compact_if_too_many_runs(&mut self) {
        if self.runs.len() <= self.config.max_runs {
            return;
        }
        self.counters.compactions += 1;
        self.runs.sort_by_key(|r| std::cmp::Reverse(r.len()));
        let merged = self
            .runs
            .split_off(self.runs.len() - (self.config.max_runs / 2 + 1));
        let out = self.merge(merged, None);
        self.runs.extend(out);
    }

    /// Merges every record into one run of the valid ones under a new epoch's stamp.
    fn full_compaction(&mut self) {
        self.counters.full_compactions += 1;
        let all = self.take_all_runs();
        let stamp = self.start_epoch();
        let out = self.merge(all, Some(stamp));
        self.runs = out;
    }

    /// Merges `runs` into new run(s) of their valid records, restamped if `restamp` says so.
    fn merge(&mut self, mut runs: Vec<Run>, restamp: Option<u32>) -> Vec<Run> {
        let mut writer = self.run_writer();
        while let Some(i) = min_head(&runs) {
            let mut r = runs[i].take_head().expect("a head");
            if self.is_valid(&r) {
                if let Some(s) = restamp {
                    r.stamp = s;
                    self.pos[r.page as usize] = self.cold_mark(s);
                }
                writer.push(r);
            }
        }
        drop(runs);
        self.finish(writer)
    }

    /// Sorts `records` and writes them as run(s); `records` is left empty.
    fn write_sorted(&mut self, records: &mut Vec<Record>) -> Vec<Run> {
        records.sort_unstable_by(record_order);
        let mut writer = self.run_writer();
        for r in records.drain(..) {
            writer.push(r);
        }
        self.finish(writer)
    }

    fn run_writer(&mut self) -> RunWriter {
        if self.dir.is_none() {
            let made = std::fs::create_dir_all(&self.config.dir).and_then(|()| {
                tempfile::Builder::new()
                    .prefix("crawlrank-frontier-spill.")
                    .tempdir_in(&self.config.dir)
            });
            match made {
                Ok(d) => self.dir = Some(d),
                Err(e) => {
                    let msg = format!(
                        "making a spill directory in {}: {e}",
                        self.config.dir.display()
                    );
                    return RunWriter::create(Err(msg), 0);
                }
            }
        }
        self.files_made += 1;
        let dir = self.dir.as_ref().expect("made").path();
        RunWriter::create(Ok(dir), self.files_made)
    }

    fn finish(&mut self, writer: RunWriter) -> Vec<Run> {
        let (runs, error) = writer.finish();
        if let Some(e) = error {
            self.write_failures += 1;
            self.last_write_error = Some(e);
        }
        runs
    }

    // --- hot part ---

    fn hot_insert(&mut self, e: Entry) {
        let i = self.hot.len();
        self.hot.push(e);
        self.pos[e.page as usize] = i as u32;
        self.sift_up(i);
        if self.hot.len() > self.config.hot_capacity {
            self.spill_hot();
        }
    }

    fn hot_remove(&mut self, i: usize) {
        let last = self.hot.pop().expect("non-empty");
        if i < self.hot.len() {
            let removed = std::mem::replace(&mut self.hot[i], last);
            self.pos[last.page as usize] = i as u32;
            if last.before(&removed) {
                self.sift_up(i);
            } else {
                self.sift_down(i);
            }
        }
    }

    /// Writes the worst half of the hot entries as one sorted run; the bound drops to the
    /// largest entry kept.
    fn spill_hot(&mut self) {
        self.counters.spills += 1;
        let keep = self.hot.len() - self.hot.len() / 2;
        self.hot.select_nth_unstable_by(keep - 1, order);
        self.bound = Some(self.hot[keep - 1]);
        let stamp = self.allocate_stamp();
        // Sorted and written in place: no temporary copy of half the hot part.
        self.hot[keep..].sort_unstable_by(order);
        let mut writer = self.run_writer();
        for i in keep..self.hot.len() {
            let e = self.hot[i];
            self.pos[e.page as usize] = self.cold_mark(stamp);
            writer.push(Record::new(e, stamp));
        }
        self.cold_len += self.hot.len() - keep;
        self.hot.truncate(keep);
        let runs = self.finish(writer);
        self.runs.extend(runs);
        self.heapify();
        self.compact_if_too_many_runs();
    }

    fn heapify(&mut self) {
        for (i, e) in self.hot.iter().enumerate() {
            self.pos[e.page as usize] = i as u32;
        }
        for i in (0..self.hot.len() / 2).rev() {
            self.sift_down(i);
        }
    }

    fn sift_up(&mut self, i: usize) {
        crate::heap::sift_up(&mut self.hot, &mut self.pos, i);
    }

    fn sift_down(&mut self, i: usize) {
        crate::heap::sift_down(&mut self.hot, &mut self.pos, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexedHeap;
    use crawlrank_rng::XorShift64;

    fn tiny(dir: &Path, hot: usize, run_records: usize, max_runs: usize) -> SpillConfig {
        SpillConfig {
            dir: dir.to_path_buf(),
            hot_capacity: hot,
            run_records,
            max_runs,
        }
    }

    /// Random pushes, decreases, increases, re-pushes of popped pages, pops and rekey_alls on
    /// `pages` pages, on `heap` and on an [`IndexedHeap`]: the same pops and lengths at every
    /// step. `on_step` may tamper with the heap's surroundings.
    fn agree_with_indexed_heap(
        heap: &mut SpillingHeap,
        seed: u64,
        pages: u32,
        steps: u32,
        mut on_step: impl FnMut(u32, &SpillingHeap),
    ) {
        let mut reference = IndexedHeap::new();
        let mut rng = XorShift64::new(seed);
        let mut seq_of: Vec<Option<u32>> = vec![None; pages as usize];
        let mut next_seq = 0u32;
        // Few distinct keys, so that ties (broken by seq) are common; -0.0 equals 0.0.
        let key = |r: u64| match r % 41 {
            40 => -0.0,
            k => k as f64 - 10.0,
        };
        for step in 0..steps {
            on_step(step, heap);
            let roll = rng.next_u64() % 1000;
            if roll < 2 {
                let round = rng.next_u64();
                let k = |p: PageId| key(crawlrank_rng::mix64(round ^ u64::from(p)));
                heap.rekey_all(k);
                reference.rekey_all(k);
            } else if roll < 250 {
                let got = heap.pop();
                let want = reference.pop();
                assert_eq!(
                    got.map(|(p, k)| (p, k.to_bits())),
                    want.map(|(p, k)| (p, k.to_bits())),
                    "pop at step {step}"
                );
                if let Some((p, _)) = got {
                    seq_of[p as usize] = None;
                }
            } else {
                let page = (rng.next_u64() % u64::from(pages)) as PageId;
                let seq = *seq_of[page as usize].get_or_insert_with(|| {
                    next_seq += 1;
                    next_seq
                });
                let k = key(rng.next_u64());
                heap.push_or_update(page, k, seq);
                reference.push_or_update(page, k, seq);
            }
            assert_eq!(heap.len(), reference.len(), "len at step {step}");
        }
        while let Some(want) = reference.pop() {
            assert_eq!(heap.pop().map(|(p, _)| p), Some(want.0));
        }
        assert!(heap.pop().is_none() && heap.is_empty());
    }

    #[test]
    fn pops_exactly_like_the_in_memory_heap_while_spilling_refilling_and_compacting() {
        let parent = tempfile::tempdir().unwrap();
        for (seed, hot, run_records, max_runs, stamp_bits) in [
            (1, 8, 4, 2, 7),
            (2, 16, 8, 3, 7),
            (3, 64, 16, 4, 8),
            (4, 8, 3, 3, 31),
            (5, 32, 64, 8, 31),
        ] {
            let config = tiny(parent.path(), hot, run_records, max_runs);
            let mut heap = SpillingHeap::with_stamp_bits(config, stamp_bits);
            agree_with_indexed_heap(&mut heap, seed, 1_500, 20_000, |_, _| {});
            let c = heap.counters;
            assert!(
                c.spills > 0 && c.refills > 100 && c.compactions > 10,
                "seed {seed}: {c:?}"
            );
            if stamp_bits < 31 {
                assert!(c.full_compactions > 10, "seed {seed}: {c:?}");
            }
        }
    }

    #[test]
    fn the_spill_directory_is_made_when_needed_and_removed_on_drop() {
        let parent = tempfile::tempdir().unwrap();
        let mut heap = SpillingHeap::new(tiny(parent.path(), 4, 2, 4));
        for p in 0..4 {
            heap.push_or_update(p, f64::from(p), p);
        }
        assert!(heap.spill_dir().is_none(), "nothing spilled yet");
        for p in 4..100 {
            heap.push_or_update(p, f64::from(p), p);
        }
        let dir = heap.spill_dir().unwrap().to_path_buf();
        let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(name.starts_with("crawlrank-frontier-spill."), "{name}");
        let files: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(!files.is_empty());
        assert_eq!(heap.status().write_failures, 0);
        assert_eq!(heap.pop(), Some((0, 0.0)));
        drop(heap);
        assert!(!dir.exists());
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_spill_directory_removed_under_the_heap_keeps_every_entry_and_counts_failures() {
        let parent = tempfile::tempdir().unwrap();
        let mut heap = SpillingHeap::with_stamp_bits(tiny(parent.path(), 16, 8, 3), 7);
        let mut removed = false;
        agree_with_indexed_heap(&mut heap, 9, 2_000, 40_000, |step, heap| {
            if step == 5_000 {
                let dir = heap.spill_dir().expect("spilled by now");
                std::fs::remove_dir_all(dir).unwrap();
                removed = true;
            }
        });
        assert!(removed);
        let s = heap.status();
        assert!(s.write_failures > 100, "{s:?}");
        assert!(
            s.last_write_error.as_deref().unwrap().contains("creating "),
            "{s:?}"
        );
    }

    #[test]
    fn an_unusable_spill_directory_keeps_every_entry_in_memory() {
        let parent = tempfile::tempdir().unwrap();
        let file = parent.path().join("not-a-directory");
        std::fs::write(&file, b"x").unwrap();
        let mut heap = SpillingHeap::new(tiny(&file.join("spill"), 8, 4, 3));
        agree_with_indexed_heap(&mut heap, 11, 1_000, 20_000, |step, heap| {
            if step == 10_000 {
                let s = heap.status();
                assert!(s.memory_records > 0, "{s:?}");
            }
        });
        let s = heap.status();
        assert!(s.write_failures > 10, "{s:?}");
        assert!(
            s.last_write_error
                .unwrap()
                .contains("making a spill directory"),
            "failures name what failed"
        );
        assert!(heap.spill_dir().is_none());
    }

    #[test]
    fn a_failed_write_keeps_the_written_prefix_and_the_rest_in_memory() {
        // /dev/full fails every write with ENOSPC, as a full disk does.
        let Ok(full) = OpenOptions::new().read(true).write(true).open("/dev/full") else {
            return;
        };
        let mut writer = RunWriter {
            file: Some((full, PathBuf::from("/dev/full"))),
            chunk: Vec::new(),
            bytes: Vec::new(),
            written: 0,
            memory: Vec::new(),
            error: None,
        };
        let records: Vec<Record> = (0..10_000u32)
            .map(|i| Record {
                key: f64::from(i),
                seq: i,
                page: i,
                stamp: 0,
            })
            .collect();
        for &r in &records {
            writer.push(r);
        }
        writer.file = None; // do not rewind /dev/full into a "run"
        let (mut runs, error) = writer.finish();
        assert!(error.unwrap().contains("/dev/full"));
        assert_eq!(runs.len(), 1);
        let mut back = Vec::new();
        while let Some(r) = runs[0].take_head() {
            back.push(r);
        }
        assert_eq!(back, records);
    }
}
