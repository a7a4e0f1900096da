//! The text of a crawl's pages — each URL and its metadata — packed into one arena of
//! large chunks, and named by an 8-byte [`TextRef`].
//!
//! Why an arena: a page's text is most of what a frontier node holds for it, and kept as
//! Rust values it costs far more than its bytes. A `Box<str>` URL is a 16-byte pointer plus
//! an allocation rounded up with the allocator's header (about 60 bytes for a 30-byte URL),
//! and an empty metadata map is 24 bytes while one holding a single key allocates a whole
//! B-tree node (about 550 bytes). Here a record is its bytes and two or three length bytes,
//! in chunks of [`CHUNK`] bytes: a URL put with one parent costs about 100 bytes, not 900.
//!
//! Records are written once: a page's new metadata is a new record, and a deleted page's
//! record is left behind. The bytes left behind are counted ([`PageText::garbage`]) and the
//! crawl rewrites its live records into a fresh arena ([`PageText::compact`]) when they
//! are more than the live ones, so garbage never exceeds the live text (plus one chunk).
//!
//! A record: the URL's length (LEB128), its bytes, the number of metadata keys (LEB128),
//! and for each key in key order its length and bytes, its number of values, and each value's
//! length and bytes. Key order makes a page's metadata, and so everything derived from it,
//! the same whatever order a client's map listed it in.

use std::collections::BTreeMap;

/// The size of the arena's chunks: large enough that the chunk table is negligible, small
/// enough that an almost empty crawl stays small.
pub const CHUNK: usize = 1 << 20;

/// Where a page's record lives: its chunk (high 32 bits) and its offset there (low 32 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextRef(u64);

impl TextRef {
    /// No record: an empty URL and no metadata (a deleted page's text).
    pub const NONE: TextRef = TextRef(u64::MAX);
}

/// The arena of a crawl's page records.
#[derive(Debug)]
pub struct PageText {
    chunks: Vec<Vec<u8>>,
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

impl Default for PageText {
    fn default() -> Self {
        Self {
            chunks: Vec::new(),
            live: 0,
            garbage: 0,
            min_garbage: CHUNK,
            #[cfg(test)]
            rewrites: 0,
        }
    }
}

/// A page's metadata: each key's values, in key order.
pub type Metadata = BTreeMap<String, Vec<String>>;

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

/// The bytes of `url`'s record with `metadata`.
fn encode<'a>(
    url: &str,
    metadata: impl ExactSizeIterator<Item = (&'a str, &'a [String])>,
    out: &mut Vec<u8>,
) {
    put_len(out, url.len());
    out.extend_from_slice(url.as_bytes());
    put_len(out, metadata.len());
    for (key, values) in metadata {
        put_len(out, key.len());
        out.extend_from_slice(key.as_bytes());
        put_len(out, values.len());
        for v in values {
            put_len(out, v.len());
            out.extend_from_slice(v.as_bytes());
        }
    }
}

impl PageText {
    /// Stores a record of `url` and `metadata`.
    pub fn push(&mut self, url: &str, metadata: &Metadata) -> TextRef {
        let mut record = Vec::with_capacity(url.len() + 2);
        encode(
            url,
            metadata.iter().map(|(k, v)| (k.as_str(), v.as_slice())),
            &mut record,
        );
        self.push_record(&record)
    }

    fn push_record(&mut self, record: &[u8]) -> TextRef {
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| c.len() + record.len() <= c.capacity());
        if !fits {
            // A record longer than a chunk (long metadata) gets a chunk of its own size.
            self.chunks
                .push(Vec::with_capacity(CHUNK.max(record.len())));
        }
        let chunk = self.chunks.len() - 1;
        let last = &mut self.chunks[chunk];
        let offset = last.len();
        last.extend_from_slice(record);
        self.live += record.len();
        TextRef(((chunk as u64) << 32) | offset as u64)
    }

    fn record(&self, r: TextRef) -> (&[u8], usize) {
        if r == TextRef::NONE {
            // An empty URL, no metadata keys.
            return (&[0, 0], 0);
        }
        (
            &self.chunks[(r.0 >> 32) as usize],
            (r.0 & 0xffff_ffff) as usize,
        )
    }

    /// The length in bytes of the record at `r`.
    fn record_len(&self, r: TextRef) -> usize {
        let (bytes, start) = self.record(r);
        let mut at = start;
        get_str(bytes, &mut at);
        let keys = get_len(bytes, &mut at);
        for _ in 0..keys {
            get_str(bytes, &mut at);
            for _ in 0..get_len(bytes, &mut at) {
                get_str(bytes, &mut at);
            }
        }
        at - start
    }

    /// The URL of the record at `r`.
    pub fn url(&self, r: TextRef) -> &str {
        let (bytes, mut at) = self.record(r);
        get_str(bytes, &mut at)
    }

    /// The metadata of the record at `r`.
    pub fn metadata(&self, r: TextRef) -> Metadata {
        let (bytes, mut at) = self.record(r);
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
        let url = self.url(r).to_string();
        self.free(r);
        self.push(&url, metadata)
    }

    /// The record at `r` is no longer referenced.
    pub fn free(&mut self, r: TextRef) {
        if r == TextRef::NONE {
            return;
        }
        let len = self.record_len(r);
        self.live -= len;
        self.garbage += len;
    }

    /// Whether the records left behind outweigh the live ones enough to rewrite them.
    pub fn wants_compaction(&self) -> bool {
        self.garbage > self.min_garbage && self.garbage > self.live
    }

    /// An arena rewritten as soon as its garbage outweighs its live records.
    #[cfg(test)]
    pub fn eager() -> Self {
        Self {
            min_garbage: 0,
            ..Self::default()
        }
    }

    /// Rewrites the records `refs` point to into a fresh arena, and points them there; every
    /// record not among them is dropped.
    pub fn compact<'a>(&mut self, refs: impl Iterator<Item = &'a mut TextRef>) {
        let old = std::mem::replace(
            self,
            Self {
                min_garbage: self.min_garbage,
                ..Self::default()
            },
        );
        #[cfg(test)]
        {
            self.rewrites = old.rewrites + 1;
        }
        for r in refs.filter(|r| **r != TextRef::NONE) {
            let (bytes, start) = old.record(*r);
            let len = old.record_len(*r);
            *r = self.push_record(&bytes[start..start + len]);
        }
    }

    /// Bytes held in the arena's chunks (their capacity).
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.chunks.iter().map(Vec::capacity).sum()
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

    #[test]
    fn records_read_back_as_written() {
        let mut text = PageText::default();
        let long = "x".repeat(300);
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
        ];
        let refs: Vec<TextRef> = cases.iter().map(|(u, m)| text.push(u, m)).collect();
        for (r, (u, m)) in refs.iter().zip(&cases) {
            assert_eq!(text.url(*r), *u);
            assert_eq!(text.metadata(*r), *m);
        }
    }

    #[test]
    fn a_record_longer_than_a_chunk_gets_its_own() {
        let mut text = PageText::default();
        let a = text.push("http://a.example/", &Metadata::new());
        let big = "v".repeat(CHUNK + 10);
        let b = text.push("http://b.example/", &meta(&[("k", &[big.as_str()])]));
        let c = text.push("http://c.example/", &Metadata::new());
        assert_eq!(text.url(a), "http://a.example/");
        assert_eq!(text.metadata(b)["k"][0].len(), CHUNK + 10);
        assert_eq!(text.url(c), "http://c.example/");
    }

    #[test]
    fn compaction_keeps_live_records_and_drops_the_rest() {
        let mut text = PageText::default();
        let mut refs = Vec::new();
        let value = "m".repeat(1000);
        for i in 0..3000 {
            let url = format!("http://h{i}.example/");
            let r = text.push(&url, &meta(&[("k", &[value.as_str()])]));
            refs.push(r);
        }
        // Every other page gets new metadata, leaving its first record behind.
        for r in refs.iter_mut().step_by(2) {
            *r = text.replace_metadata(*r, &meta(&[("new", &["1"])]));
        }
        assert!(text.garbage() > 1_400_000);
        let before = text.bytes();
        text.compact(refs.iter_mut());
        assert_eq!(text.garbage(), 0);
        assert!(text.bytes() < before);
        for (i, r) in refs.iter().enumerate() {
            assert_eq!(text.url(*r), format!("http://h{i}.example/"));
            let m = text.metadata(*r);
            if i % 2 == 0 {
                assert_eq!(m, meta(&[("new", &["1"])]));
            } else {
                assert_eq!(m["k"][0], value);
            }
        }
    }
}
