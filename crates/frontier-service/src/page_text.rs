//! The text of a crawl's pages — each URL and its metadata — as records named by an 8-byte
//! [`TextRef`], kept in a scratch file of the state directory (or in memory, for a state
//! without a directory).
//!
//! Why not Rust values: a page's text is most of what a frontier node would hold for it. A
//! `Box<str>` URL is a 16-byte pointer plus an allocation rounded up with the allocator's
//! header (about 60 bytes for a 30-byte URL), and a metadata map holding one key allocates a
//! whole B-tree node (about 550 bytes). A record is its strings and a length byte each.
//!
//! Why a scratch file: the text is needed only when a page is served (`GetURLs`), listed or
//! written into a checkpoint, and when a URL put again is compared with the page whose
//! fingerprint it shares, so it can live on disk, where the operating system's page cache
//! keeps what is read often. The file is not the state: the store's checkpoint and log are,
//! and the file is written again from them at every start ([`TextHome::prepare`]), so it is
//! never synced. A write that fails (a full disk) leaves the records in memory, where they
//! stay: the crawl goes on, with a warning.
//!
//! Records are written once: a page's new metadata is a new record, and a deleted page's
//! record is left behind. The bytes left behind are counted and the crawl rewrites its live
//! records into a fresh arena or file ([`PageText::compact`]) when they are more than the
//! live ones, so garbage never exceeds the live text (plus [`CHUNK`]).
//!
//! A record: the length of what follows (LEB128), the URL's length and bytes, the number of
//! metadata keys, and for each key in key order its length and bytes, its number of values,
//! and each value's length and bytes. Key order makes a page's metadata, and everything
//! derived from it, the same whatever order a client's map listed it in.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The size of the in-memory arena's chunks and of the file's write buffer: large enough
/// that the chunk table and the write calls are negligible, small enough that an almost
/// empty crawl stays small.
pub const CHUNK: usize = 1 << 20;

/// The block a record is read with from the file: a sequential scan (a checkpoint, a
/// listing) reads each block once, a lookup one block.
const BLOCK: usize = 4096;

/// Where a page's record lives: in memory, its chunk (high 32 bits) and its offset there (low
/// 32 bits); in a file, its offset.
///
/// Aligned on 4 bytes, not 8, so that a record holding it beside 4-byte fields needs no
/// padding (the frontier service's page record is 28 bytes, not 32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, packed(4))]
pub struct TextRef(u64);

impl TextRef {
    /// No record: an empty URL and no metadata (a deleted page's text).
    pub const NONE: TextRef = TextRef(u64::MAX);
}

/// A page's metadata: each key's values, in key order.
pub type Metadata = BTreeMap<String, Vec<String>>;

/// Where a state's crawls keep their page text.
#[derive(Debug, Clone, Default)]
pub enum TextHome {
    /// In memory (a state without a directory: tests, examples, replays in memory).
    #[default]
    Memory,
    /// In scratch files of this directory, one per crawl.
    Dir(Arc<Path>),
}

impl TextHome {
    /// The directory `dir`, emptied of the files a previous run left (they are rebuilt
    /// from the store) and created if missing.
    pub fn prepare(dir: PathBuf) -> std::io::Result<Self> {
        if dir.is_dir() {
            for entry in std::fs::read_dir(&dir)? {
                let path = entry?.path();
                if path.is_file() {
                    std::fs::remove_file(&path)?;
                }
            }
        }
        std::fs::create_dir_all(&dir)?;
        Ok(Self::Dir(dir.into()))
    }
}

/// The records of a crawl's pages.
#[derive(Debug)]
pub struct PageText {
    home: TextHome,
    store: Store,
    /// Bytes of records still referenced.
    live: usize,
    /// Bytes of records no page refers to any more.
    garbage: usize,
    /// Garbage below this is never worth a rewrite ([`CHUNK`]; less in tests, to rewrite often).
    min_garbage: usize,
    /// How many rewrites were made (tests check that they happened).
    #[cfg(test)]
    pub rewrites: usize,
}

#[derive(Debug)]
enum Store {
    Memory(Vec<Vec<u8>>),
    File(FileText),
}

/// A scratch file of records and the records not written to it yet.
#[derive(Debug)]
struct FileText {
    path: PathBuf,
    file: File,
    /// Bytes written to the file: records at offsets below are there, the others in `tail`.
    written: u64,
    tail: Vec<u8>,
    /// The block read last, and its offset.
    block: RefCell<(u64, Vec<u8>)>,
    /// Whether a write failed: the records stay in `tail` from then on.
    failed: bool,
}

impl Drop for FileText {
    fn drop(&mut self) {
        // Scratch: a file left by a crash is removed at the next start instead.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Names the scratch files of this process apart (a rebuilt state's files live beside the
/// state it replaces until that one is dropped).
static FILES: AtomicU64 = AtomicU64::new(0);

impl FileText {
    fn create(dir: &Path) -> std::io::Result<Self> {
        let n = FILES.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("text-{}-{n}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok(Self {
            path,
            file,
            written: 0,
            tail: Vec::new(),
            block: RefCell::new((0, Vec::new())),
            failed: false,
        })
    }

    fn push(&mut self, record: &[u8]) -> u64 {
        if !self.failed && !self.tail.is_empty() && self.tail.len() + record.len() > CHUNK {
            match self.file.write_all_at(&self.tail, self.written) {
                Ok(()) => {
                    self.written += self.tail.len() as u64;
                    self.tail.clear();
                }
                Err(e) => {
                    tracing::warn!(
                        "cannot write the page text file {}: {e}; the crawl's URLs stay in memory",
                        self.path.display()
                    );
                    self.failed = true;
                }
            }
        }
        let at = self.written + self.tail.len() as u64;
        self.tail.extend_from_slice(record);
        at
    }

    /// The record at `at` (its length prefix first).
    fn read(&self, at: u64) -> Cow<'_, [u8]> {
        if at >= self.written {
            return Cow::Borrowed(&self.tail[(at - self.written) as usize..]);
        }
        let mut block = self.block.borrow_mut();
        let (start, bytes) = &mut *block;
        // The length prefix takes at most 10 bytes: read a block from `at` unless the last
        // one read holds them.
        let prefix = 10.min((self.written - at) as usize) as u64;
        if at < *start || at + prefix > *start + bytes.len() as u64 {
            bytes.resize(BLOCK.min((self.written - at) as usize), 0);
            self.read_exact(bytes, at);
            *start = at;
        }
        let offset = (at - *start) as usize;
        let mut pos = offset;
        let len = get_len(bytes, &mut pos);
        let total = pos - offset + len;
        if offset + total <= bytes.len() {
            return Cow::Owned(bytes[offset..offset + total].to_vec());
        }
        drop(block);
        // Longer than what the block holds: read it whole.
        let mut record = vec![0; total];
        self.read_exact(&mut record, at);
        Cow::Owned(record)
    }

    fn read_exact(&self, buf: &mut [u8], at: u64) {
        // Only bytes this process wrote are read: a failure is the disk's, and the crawl
        // cannot go on without its URLs (the call fails, and the service rebuilds its state
        // from the store).
        if let Err(e) = self.file.read_exact_at(buf, at) {
            panic!(
                "cannot read the page text file {}: {e}",
                self.path.display()
            );
        }
    }
}

fn put_len(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Reads a length at `*at`, moving past it. Records are written by [`put_len`] alone, so a
/// malformed length is a bug, not bad input.
fn get_len(bytes: &[u8], at: &mut usize) -> usize {
    let mut n = 0usize;
    let mut shift = 0;
    loop {
        let byte = bytes[*at];
        *at += 1;
        n |= usize::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return n;
        }
        shift += 7;
    }
}

fn get_str<'a>(bytes: &'a [u8], at: &mut usize) -> &'a str {
    let len = get_len(bytes, at);
    let s = &bytes[*at..*at + len];
    *at += len;
    // Only `&str`s are written: a record's strings are valid UTF-8.
    std::str::from_utf8(s).expect("a page record holds UTF-8 strings")
}

/// The record of `url` with `metadata`, its length first.
fn encode(url: &str, metadata: &Metadata) -> Vec<u8> {
    let mut body = Vec::with_capacity(url.len() + 2);
    put_len(&mut body, url.len());
    body.extend_from_slice(url.as_bytes());
    put_len(&mut body, metadata.len());
    for (key, values) in metadata {
        put_len(&mut body, key.len());
        body.extend_from_slice(key.as_bytes());
        put_len(&mut body, values.len());
        for v in values {
            put_len(&mut body, v.len());
            body.extend_from_slice(v.as_bytes());
        }
    }
    let mut record = Vec::with_capacity(body.len() + 3);
    put_len(&mut record, body.len());
    record.extend_from_slice(&body);
    record
}

/// A record's body (what follows its length) and the record's whole length.
fn body(record: &[u8]) -> (&[u8], usize) {
    let mut at = 0;
    let len = get_len(record, &mut at);
    (&record[at..at + len], at + len)
}

impl Default for PageText {
    fn default() -> Self {
        Self::in_memory()
    }
}

impl PageText {
    /// An arena in memory.
    pub fn in_memory() -> Self {
        Self {
            home: TextHome::Memory,
            store: Store::Memory(Vec::new()),
            live: 0,
            garbage: 0,
            min_garbage: CHUNK,
            #[cfg(test)]
            rewrites: 0,
        }
    }

    /// The records of a crawl kept where `home` says.
    pub fn new(home: &TextHome) -> std::io::Result<Self> {
        let mut text = Self::in_memory();
        if let TextHome::Dir(dir) = home {
            text.store = Store::File(FileText::create(dir)?);
            text.home = home.clone();
        }
        Ok(text)
    }

    /// Stores a record of `url` and `metadata`.
    pub fn push(&mut self, url: &str, metadata: &Metadata) -> TextRef {
        self.push_record(&encode(url, metadata))
    }

    fn push_record(&mut self, record: &[u8]) -> TextRef {
        self.live += record.len();
        match &mut self.store {
            Store::File(f) => TextRef(f.push(record)),
            Store::Memory(chunks) => {
                let fits = chunks
                    .last()
                    .is_some_and(|c| c.len() + record.len() <= c.capacity());
                if !fits {
                    // A record longer than a chunk (long metadata) gets a chunk of its own size.
                    chunks.push(Vec::with_capacity(CHUNK.max(record.len())));
                }
                let chunk = chunks.len() - 1;
                let last = &mut chunks[chunk];
                let offset = last.len();
                last.extend_from_slice(record);
                TextRef(((chunk as u64) << 32) | offset as u64)
            }
        }
    }

    /// The record at `r`, its length first.
    fn record(&self, r: TextRef) -> Cow<'_, [u8]> {
        if r == TextRef::NONE {
            // Four bytes follow: an empty URL, no metadata keys.
            return Cow::Borrowed(&[2, 0, 0]);
        }
        match &self.store {
            Store::File(f) => f.read(r.0),
            Store::Memory(chunks) => {
                let chunk = &chunks[(r.0 >> 32) as usize];
                Cow::Borrowed(&chunk[(r.0 & 0xffff_ffff) as usize..])
            }
        }
    }

    /// The URL of the record at `r`.
    pub fn url(&self, r: TextRef) -> Cow<'_, str> {
        match self.record(r) {
            Cow::Borrowed(record) => {
                let (body, _) = body(record);
                Cow::Borrowed(get_str(body, &mut 0))
            }
            Cow::Owned(record) => {
                let (body, _) = body(&record);
                Cow::Owned(get_str(body, &mut 0).to_string())
            }
        }
    }

    /// The metadata of the record at `r`.
    pub fn metadata(&self, r: TextRef) -> Metadata {
        let record = self.record(r);
        let (bytes, _) = body(&record);
        let mut at = 0;
        get_str(bytes, &mut at);
        let keys = get_len(bytes, &mut at);
        let mut metadata = Metadata::new();
        for _ in 0..keys {
            let key = get_str(bytes, &mut at).to_string();
            let values = (0..get_len(bytes, &mut at))
                .map(|_| get_str(bytes, &mut at).to_string())
                .collect();
            metadata.insert(key, values);
        }
        metadata
    }

    /// A new record of the URL at `r` with `metadata`; the one at `r` is left behind.
    pub fn replace_metadata(&mut self, r: TextRef, metadata: &Metadata) -> TextRef {
        let url = self.url(r).into_owned();
        self.free(r);
        self.push(&url, metadata)
    }

    /// The record at `r` is no longer referenced.
    pub fn free(&mut self, r: TextRef) {
        if r == TextRef::NONE {
            return;
        }
        let len = body(&self.record(r)).1;
        self.live -= len;
        self.garbage += len;
    }

    /// Whether the records left behind outweigh the live ones enough to rewrite them.
    pub fn wants_compaction(&self) -> bool {
        self.garbage > self.min_garbage && self.garbage > self.live
    }

    /// An arena rewritten as soon as its garbage outweighs its live records.
    #[cfg(test)]
    pub fn eager(home: &TextHome) -> Self {
        Self {
            min_garbage: 0,
            ..Self::new(home).unwrap()
        }
    }

    /// Rewrites the records `refs` point to into a fresh arena or file, and points them
    /// there; every record not among them is dropped. A fresh file that cannot be created
    /// leaves the records where they are.
    pub fn compact<'a>(&mut self, refs: impl Iterator<Item = &'a mut TextRef>) {
        let mut fresh = match Self::new(&self.home) {
            Ok(fresh) => fresh,
            Err(e) => {
                tracing::warn!("cannot rewrite a crawl's page text: {e}");
                // Not again before as much garbage more.
                self.min_garbage = self.min_garbage.max(self.garbage.saturating_mul(2));
                return;
            }
        };
        fresh.min_garbage = self.min_garbage;
        for r in refs.filter(|r| **r != TextRef::NONE) {
            let record = self.record(*r);
            let len = body(&record).1;
            *r = fresh.push_record(&record[..len]);
        }
        #[cfg(test)]
        {
            fresh.rewrites = self.rewrites + 1;
        }
        *self = fresh;
    }

    /// Bytes held in memory.
    #[cfg(test)]
    pub fn memory_bytes(&self) -> usize {
        match &self.store {
            Store::Memory(chunks) => chunks.iter().map(Vec::capacity).sum(),
            Store::File(f) => f.tail.capacity(),
        }
    }

    /// Bytes of records no page refers to any more.
    #[cfg(test)]
    pub fn garbage(&self) -> usize {
        self.garbage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(pairs: &[(&str, &[&str])]) -> Metadata {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    /// Both homes: memory, and a scratch directory (kept alive by the returned guard).
    fn homes() -> Vec<(TextHome, Option<tempfile::TempDir>)> {
        let dir = tempfile::tempdir().unwrap();
        let home = TextHome::prepare(dir.path().join("text")).unwrap();
        vec![(TextHome::Memory, None), (home, Some(dir))]
    }

    #[test]
    fn records_read_back_as_written() {
        for (home, _dir) in homes() {
            let mut text = PageText::new(&home).unwrap();
            let long = "x".repeat(300);
            let huge = "y".repeat(3 * BLOCK);
            let cases = [
                ("http://a.example/", meta(&[])),
                (
                    "http://b.example/é",
                    meta(&[("k", &["v1", "", "v3"]), ("", &[])]),
                ),
                (
                    "http://c.example/",
                    meta(&[(long.as_str(), &[long.as_str()])]),
                ),
                ("http://d.example/", meta(&[("k", &[huge.as_str()])])),
            ];
            // Enough records that most are in the file, read back in and out of order.
            let mut refs = Vec::new();
            for i in 0..2_000 {
                let (u, m) = &cases[i % cases.len()];
                refs.push((text.push(u, m), i % cases.len()));
            }
            for (r, case) in refs.iter().chain(refs.iter().rev().step_by(7)) {
                let (u, m) = &cases[*case];
                assert_eq!(text.url(*r), *u);
                assert_eq!(text.metadata(*r), *m);
            }
            assert_eq!(text.url(TextRef::NONE), "");
            assert!(text.metadata(TextRef::NONE).is_empty());
        }
    }

    #[test]
    fn a_record_longer_than_a_chunk_reads_back() {
        for (home, _dir) in homes() {
            let mut text = PageText::new(&home).unwrap();
            let a = text.push("http://a.example/", &Metadata::new());
            let big = "v".repeat(CHUNK + 10);
            let b = text.push("http://b.example/", &meta(&[("k", &[big.as_str()])]));
            let c = text.push("http://c.example/", &Metadata::new());
            let d = text.push("http://d.example/", &Metadata::new());
            assert_eq!(text.url(a), "http://a.example/");
            assert_eq!(text.metadata(b)["k"][0].len(), CHUNK + 10);
            assert_eq!(text.url(c), "http://c.example/");
            assert_eq!(text.url(d), "http://d.example/");
        }
    }

    #[test]
    fn the_file_holds_the_records_and_memory_a_chunk_at_most() {
        let (home, _dir) = homes().pop().unwrap();
        let mut text = PageText::new(&home).unwrap();
        for i in 0..200_000 {
            text.push(&format!("http://h{i}.example/some/path"), &Metadata::new());
        }
        assert!(text.memory_bytes() <= 2 * CHUNK, "{}", text.memory_bytes());
        let TextHome::Dir(dir) = &home else { panic!() };
        let files: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
        assert_eq!(files.len(), 1);
        drop(text);
        assert_eq!(
            std::fs::read_dir(dir).unwrap().count(),
            0,
            "scratch removed"
        );
    }

    #[test]
    fn compaction_keeps_live_records_and_drops_the_rest() {
        for (home, _dir) in homes() {
            let mut text = PageText::new(&home).unwrap();
            let mut refs = Vec::new();
            let value = "m".repeat(1000);
            for i in 0..3000 {
                let url = format!("http://h{i}.example/");
                refs.push(text.push(&url, &meta(&[("k", &[value.as_str()])])));
            }
            // Two pages in three get new metadata, leaving their first record behind.
            for (_, r) in refs.iter_mut().enumerate().filter(|(i, _)| i % 3 != 0) {
                *r = text.replace_metadata(*r, &meta(&[("new", &["1"])]));
            }
            assert!(text.garbage() > 2_000_000);
            assert!(text.wants_compaction());
            text.compact(refs.iter_mut());
            assert_eq!(text.garbage(), 0);
            for (i, r) in refs.iter().enumerate() {
                assert_eq!(text.url(*r), format!("http://h{i}.example/"));
                let m = text.metadata(*r);
                if i % 3 != 0 {
                    assert_eq!(m, meta(&[("new", &["1"])]));
                } else {
                    assert_eq!(m["k"][0], value);
                }
            }
            if let TextHome::Dir(dir) = &home {
                assert_eq!(
                    std::fs::read_dir(dir).unwrap().count(),
                    1,
                    "the old file removed"
                );
            }
        }
    }

    #[test]
    fn prepare_removes_what_a_previous_run_left() {
        let dir = tempfile::tempdir().unwrap();
        let text_dir = dir.path().join("text");
        std::fs::create_dir_all(&text_dir).unwrap();
        std::fs::write(text_dir.join("text-1-0"), b"left by a crash").unwrap();
        TextHome::prepare(text_dir.clone()).unwrap();
        assert_eq!(std::fs::read_dir(&text_dir).unwrap().count(), 0);
    }
}
