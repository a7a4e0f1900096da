//! The crawl's seen-set on disk: which URLs have a page id already, answered from the
//! crawl's store with bounded memory ([`SeenSet`]).
//!
//! Why on disk: a crawl discovers several URLs for every page it fetches, and a crawl for the
//! web must reach 10^8 discovered URLs and more on one machine; a seen-set in memory costs
//! 14–20 bytes a URL (a fingerprint and a hash slot) for the whole run. Here the URL → id
//! index is a table of the store (`seen`, [`SeenKey`] → page id, written in the same
//! transaction as the URL itself), and memory holds only what keeps the lookups off the disk:
//!
//! - a Bloom filter of every key ([`Bloom`], about 1.5–3 bytes a URL): a URL never seen —
//!   about half of the links a crawl finds — is answered "new" without reading the disk;
//! - the keys added since the last commit ([`SeenSet::saved`] moves them on), which the store
//!   does not have yet;
//! - a bounded cache of the keys looked up or added lately (two generations of at most
//!   `cache_entries / 2` each: a key found in the old one moves to the new one, the old one is
//!   dropped when the new one fills), since a page's links mostly name its host's pages, found
//!   moments before.
//!
//! Only a key that passes the filter and is in neither the pending keys nor the cache is
//! looked up in the store ([`SeenDisk`]), and the store keeps each host's keys together (the
//! key starts with the host's hash), so those reads touch a few pages of the B-tree per host.
//!
//! The key is 128 bits: the 64-bit xxh3 of the URL's origin, then the 64-bit xxh3 of the URL.
//! Two URLs are taken for one only if both halves agree, so the chance of a collision is no
//! more than with the URL's own 64-bit fingerprint (about n²/2⁶⁵ among n URLs: 3·10⁻⁴ for
//! 10^8; docs/crawler.md, Resources), and in practice far less (only URLs of hosts whose
//! origins collide compete). The answers are exact otherwise: the filter has no false
//! negatives, and every positive is checked against the pending keys, the cache or the store.
//! So the crawl order is what it was with the seen-set in memory.

use crawlrank_frontier::PageId;
use std::collections::HashMap;

/// Where a URL's page id is kept: the origin's hash (so one host's keys sit together on
/// disk), then the URL's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeenKey {
    origin: u64,
    url: u64,
}

impl SeenKey {
    /// The key of `url`, whose origin (`scheme://host:port`, [`crawlrank_util::hosts::origin_key`]) is
    /// `origin`.
    pub fn new(url: &str, origin: &str) -> Self {
        Self {
            origin: xxhash_rust::xxh3::xxh3_64(origin.as_bytes()),
            url: xxhash_rust::xxh3::xxh3_64(url.as_bytes()),
        }
    }

    /// The key of `url`, its origin found from it (an unparsable URL has the empty origin, as
    /// in the URL table).
    pub fn of(url: &str) -> Self {
        Self::new(
            url,
            &crawlrank_util::hosts::origin_key(url).unwrap_or_default(),
        )
    }

    /// The key as the store keeps it: ordered by origin first.
    pub fn to_u128(self) -> u128 {
        (u128::from(self.origin) << 64) | u128::from(self.url)
    }
}

/// A reader of the seen-set's table in the store, as of the last commit.
pub trait SeenDisk {
    /// The page id of the URL with this key, if the store has it.
    fn get(&self, key: SeenKey) -> anyhow::Result<Option<PageId>>;
}

/// A seen table in memory: for tests, and for tools that hold every key anyway.
impl SeenDisk for HashMap<SeenKey, PageId> {
    fn get(&self, key: SeenKey) -> anyhow::Result<Option<PageId>> {
        Ok(HashMap::get(self, &key).copied())
    }
}

/// Lookups of the seen-set, by where they were answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SeenCounts {
    /// Answered "new" by the Bloom filter alone.
    pub filtered: u64,
    /// Found among the keys not yet committed, or in the cache.
    pub in_memory: u64,
    /// Read from the store (found there, or a false positive of the filter).
    pub disk_reads: u64,
}

/// The seen-set: a Bloom filter, the pending keys and a bounded cache in memory, the rest in
/// the store (see the module docs).
pub struct SeenSet<D> {
    bloom: Bloom,
    pending: HashMap<SeenKey, PageId>,
    recent: HashMap<SeenKey, PageId>,
    older: HashMap<SeenKey, PageId>,
    /// The most keys `recent` holds before it becomes `older`.
    generation: usize,
    disk: D,
    counts: SeenCounts,
}

/// The cache's default size in keys: about 24 MiB (24 bytes a key and its id, plus the hash
/// table's slack), enough for the pages of the hosts being crawled at a time.
pub const DEFAULT_CACHE_ENTRIES: usize = 1 << 20;

impl<D: SeenDisk> SeenSet<D> {
    /// An empty seen-set over `disk`, caching at most `cache_entries` keys (at least 2).
    pub fn new(disk: D, cache_entries: usize) -> Self {
        Self {
            bloom: Bloom::new(),
            pending: HashMap::new(),
            recent: HashMap::new(),
            older: HashMap::new(),
            generation: (cache_entries / 2).max(1),
            disk,
            counts: SeenCounts::default(),
        }
    }

    /// The page id of `key`, if it has one.
    pub fn find(&mut self, key: SeenKey) -> anyhow::Result<Option<PageId>> {
        if !self.bloom.may_contain(key) {
            self.counts.filtered += 1;
            return Ok(None);
        }
        if let Some(&id) = self.pending.get(&key).or_else(|| self.recent.get(&key)) {
            self.counts.in_memory += 1;
            return Ok(Some(id));
        }
        if let Some(id) = self.older.remove(&key) {
            self.counts.in_memory += 1;
            self.remember(key, id);
            return Ok(Some(id));
        }
        self.counts.disk_reads += 1;
        let found = self.disk.get(key)?;
        if let Some(id) = found {
            self.remember(key, id);
        }
        Ok(found)
    }

    /// Adds a key known to be new, as page `id` (the store gets it at the next commit).
    pub fn insert(&mut self, key: SeenKey, id: PageId) {
        self.bloom.insert(key);
        self.pending.insert(key, id);
    }

    /// Adds a key the store has already (read back when a crawl resumes).
    pub fn insert_stored(&mut self, key: SeenKey) {
        self.bloom.insert(key);
    }

    /// The store now has every key added so far: they join the cache, and lookups go to
    /// `disk`, the store as of this commit.
    pub fn saved(&mut self, disk: D) {
        for (key, id) in std::mem::take(&mut self.pending) {
            self.remember(key, id);
        }
        self.pending.shrink_to(1024);
        self.disk = disk;
    }

    /// Where the lookups so far were answered.
    pub fn counts(&self) -> SeenCounts {
        self.counts
    }

    /// Bytes of memory held, about (the filter, and the hash tables at their capacity).
    pub fn memory_bytes(&self) -> usize {
        let per_entry = std::mem::size_of::<(SeenKey, PageId)>() + 1;
        self.bloom.memory_bytes()
            + (self.pending.capacity() + self.recent.capacity() + self.older.capacity()) * per_entry
    }

    fn remember(&mut self, key: SeenKey, id: PageId) {
        if self.recent.len() >= self.generation {
            self.older = std::mem::take(&mut self.recent);
            self.recent.reserve(self.generation.min(1 << 16));
        }
        self.recent.insert(key, id);
    }
}

/// Bits of a slice of the filter per key it is sized for: with [`BLOOM_PROBES`] probes in
/// one 512-bit block a slice answers "maybe" for about 0.5% of the keys it does not hold.
const BLOOM_BITS_PER_KEY: usize = 12;
const BLOOM_PROBES: u32 = 7;
/// Keys the first slice is sized for (then each new slice twice the last).
const BLOOM_FIRST_SLICE: usize = 1 << 16;

/// A Bloom filter that grows: a list of fixed-size slices, each twice the size of the one
/// before, new keys going to the last (a scalable Bloom filter). A key may be in any slice,
/// so a query asks each; with slices doubling there are about log₂(n / 65,536) of them, and
/// the filter never has to be rebuilt from the store's keys. Blocked: a key's bits are all in
/// one 64-byte block of a slice, one cache line a query per slice.
///
/// Written here rather than taken from a crate: the filter has to grow without its keys (the
/// store has them, but reading 10^8 back is what this avoids), and the key is hashed already.
struct Bloom {
    slices: Vec<BloomSlice>,
}

struct BloomSlice {
    /// 512-bit blocks.
    blocks: Vec<[u64; 8]>,
    capacity: usize,
    len: usize,
}

impl Bloom {
    fn new() -> Self {
        Self { slices: Vec::new() }
    }

    fn insert(&mut self, key: SeenKey) {
        if self.slices.last().is_none_or(|s| s.len >= s.capacity) {
            let capacity = self
                .slices
                .last()
                .map_or(BLOOM_FIRST_SLICE, |s| s.capacity * 2);
            let blocks = (capacity * BLOOM_BITS_PER_KEY).div_ceil(512);
            self.slices.push(BloomSlice {
                blocks: vec![[0; 8]; blocks],
                capacity,
                len: 0,
            });
        }
        let slice = self.slices.last_mut().expect("a slice was just ensured");
        slice.len += 1;
        let (block, bits) = probes(key, slice.blocks.len());
        let b = &mut slice.blocks[block];
        for bit in bits {
            b[(bit >> 6) as usize] |= 1 << (bit & 63);
        }
    }

    fn may_contain(&self, key: SeenKey) -> bool {
        self.slices.iter().any(|s| {
            let (block, bits) = probes(key, s.blocks.len());
            let b = &s.blocks[block];
            bits.into_iter()
                .all(|bit| b[(bit >> 6) as usize] & (1 << (bit & 63)) != 0)
        })
    }

    fn memory_bytes(&self) -> usize {
        self.slices.iter().map(|s| s.blocks.len() * 64).sum()
    }
}

/// The block of a slice of `blocks` blocks that holds `key`'s bits, and the bits (0..512).
fn probes(key: SeenKey, blocks: usize) -> (usize, [u32; BLOOM_PROBES as usize]) {
    // The URL's hash is uniform; the origin's is shared by a host's URLs, so it only salts.
    let h = key.url ^ key.origin.rotate_left(29);
    let block = ((u128::from(h) * blocks as u128) >> 64) as usize;
    let mut g = mix(h);
    let mut bits = [0; BLOOM_PROBES as usize];
    for b in &mut bits {
        *b = (g & 511) as u32;
        g = g.rotate_right(9);
    }
    (block, bits)
}

/// splitmix64's finaliser: the probe bits drawn from the block's hash, decorrelated from it.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// The store's table, in memory, counting its reads.
    #[derive(Default, Clone)]
    struct MapDisk {
        map: std::rc::Rc<std::cell::RefCell<HashMap<SeenKey, PageId>>>,
        reads: std::rc::Rc<Cell<u64>>,
    }

    impl SeenDisk for MapDisk {
        fn get(&self, key: SeenKey) -> anyhow::Result<Option<PageId>> {
            self.reads.set(self.reads.get() + 1);
            Ok(self.map.borrow().get(&key).copied())
        }
    }

    fn key(i: u64) -> SeenKey {
        SeenKey::of(&format!("http://h{}.test/p{i}", i % 13))
    }

    #[test]
    fn the_filter_has_no_false_negatives_and_few_false_positives() {
        let mut b = Bloom::new();
        for i in 0..300_000 {
            b.insert(key(i));
        }
        assert!((0..300_000).all(|i| b.may_contain(key(i))));
        let false_positives = (300_000..400_000)
            .filter(|&i| b.may_contain(key(i)))
            .count();
        // Three slices at about 0.5% each.
        assert!(false_positives < 3_000, "{false_positives} false positives");
        assert!(b.slices.len() >= 3, "it grew: {} slices", b.slices.len());
    }

    #[test]
    fn answers_are_exact_through_commits_and_a_tiny_cache() {
        let disk = MapDisk::default();
        let mut s = SeenSet::new(disk.clone(), 4);
        let mut committed: Vec<(SeenKey, PageId)> = Vec::new();
        for i in 0..2_000u64 {
            let k = key(i);
            assert_eq!(s.find(k).unwrap(), None, "key {i} is new");
            s.insert(k, i as PageId);
            // A known key of any age, and the one just added.
            let old = key(i / 2);
            assert_eq!(s.find(old).unwrap(), Some((i / 2) as PageId));
            assert_eq!(s.find(k).unwrap(), Some(i as PageId));
            committed.push((k, i as PageId));
            if i % 100 == 99 {
                disk.map.borrow_mut().extend(committed.drain(..));
                s.saved(disk.clone());
            }
        }
        let c = s.counts();
        assert!(c.disk_reads > 0, "a cache of 4 sends old keys to the disk");
        assert_eq!(c.disk_reads, disk.reads.get());
        assert!(c.filtered >= 1_900, "new keys mostly filtered: {c:?}");
    }

    #[test]
    fn a_big_cache_keeps_recent_keys_off_the_disk() {
        let disk = MapDisk::default();
        let mut s = SeenSet::new(disk.clone(), 1 << 12);
        for i in 0..1_000u64 {
            s.insert(key(i), i as PageId);
        }
        disk.map
            .borrow_mut()
            .extend((0..1_000u64).map(|i| (key(i), i as PageId)));
        s.saved(disk.clone());
        for i in 0..1_000u64 {
            assert_eq!(s.find(key(i)).unwrap(), Some(i as PageId));
        }
        assert_eq!(disk.reads.get(), 0);
    }

    #[test]
    fn stored_keys_are_read_from_the_disk() {
        let disk = MapDisk::default();
        disk.map.borrow_mut().insert(key(7), 3);
        let mut s = SeenSet::new(disk.clone(), 16);
        assert_eq!(s.find(key(7)).unwrap(), None, "not in the filter yet");
        s.insert_stored(key(7));
        assert_eq!(s.find(key(7)).unwrap(), Some(3));
        assert_eq!(s.find(key(7)).unwrap(), Some(3));
        assert_eq!(disk.reads.get(), 1, "the second answer came from the cache");
    }

    #[test]
    fn keys_order_by_origin_first() {
        let a = SeenKey::new("http://a.test/z", "http://a.test");
        let b = SeenKey::new("http://a.test/a", "http://a.test");
        assert_eq!(a.to_u128() >> 64, b.to_u128() >> 64);
        assert_ne!(a, b);
    }
}
