//! The crawl's URL table: every discovered URL gets a dense page id (the frontier's
//! [`PageId`], in discovery order) and a host id ([`HostId`], one per origin), and each host's
//! URLs are counted against the per-host cap ([`UrlTable::intern`]).
//!
//! Why a module of its own: the frontier, the politeness scheduler and robots.txt all speak
//! in ids, and this table is the one place that turns URLs into them.
//!
//! Why it holds no URL strings, and no index of them: a crawl discovers several URLs for
//! every page it fetches, and most are never fetched, so the strings and their hash index
//! are the bulk of a crawl's memory if they are kept (about 150 bytes per URL). The strings
//! live in the crawl's store (the `urls` table, id → URL), where the engine reads a page's URL
//! when it fetches it; the URL → id index is the seen-set ([`crate::seen`]), also in the
//! store, with a Bloom filter and a bounded cache in memory. Only each page's host (4 bytes)
//! and the URLs discovered since the last commit ([`UrlTable::unsaved_url`]) stay here, until
//! the store has them ([`UrlTable::saved`]).
//!
//! The price of hashing URLs (see [`crate::seen`]): two different URLs with the same 128-bit
//! key are taken for one, and the second is never fetched (docs/crawler.md, Resources).

use crate::links;
use crate::seen::{SeenCounts, SeenDisk, SeenKey, SeenSet};
use anyhow::Result;
use crawlrank_frontier::PageId;
use std::collections::HashMap;
use std::sync::Arc;

/// A host's id: one per origin (scheme, host and port, see [`links::host_key`]), dense, in
/// the order hosts were discovered. The politeness and robots.txt state are kept per host.
pub type HostId = u32;

/// What [`UrlTable::intern`] did with a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interned {
    /// Known already, with this id.
    Known(PageId),
    /// New: given this id (the caller records it in the state).
    New(PageId),
    /// New, but its host already has the most URLs allowed: dropped (a spider-trap cap).
    Capped,
}

/// The 64-bit fingerprint of a URL (xxh3, fixed seed: the same in every run and on every
/// machine), by which a search log's impacts are matched to URLs.
pub fn fingerprint(url: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(url.as_bytes())
}

/// URL → page id (the seen-set), page → host, host → origin and URL count, and the URLs not
/// yet in the store. `D` reads the seen-set's table in the store ([`crate::store::SeenReader`]).
pub struct UrlTable<D> {
    seen: SeenSet<D>,
    page_host: Vec<HostId>,
    /// By host id.
    origins: Vec<Arc<str>>,
    host_index: HashMap<Arc<str>, HostId>,
    /// URLs per host, by host id.
    host_urls: Vec<u64>,
    max_per_host: u64,
    /// The URLs the store does not have yet.
    unsaved: UnsavedUrls,
}

/// The URLs of pages `first..`, discovered since the last commit: the store does not have
/// them yet, so whoever looks a page's URL up asks these first.
#[derive(Debug, Clone, Default)]
pub struct UnsavedUrls {
    first: PageId,
    urls: Vec<Arc<str>>,
}

impl UnsavedUrls {
    /// The URL of page `id` if it is one of these.
    pub fn get(&self, id: PageId) -> Option<&Arc<str>> {
        let i = id.checked_sub(self.first)?;
        self.urls.get(i as usize)
    }
}

impl<D: SeenDisk> UrlTable<D> {
    /// An empty table whose hosts take at most `max_per_host` URLs, over the seen-set `disk`
    /// with a cache of at most `cache_entries` keys ([`crate::seen::DEFAULT_CACHE_ENTRIES`]).
    pub fn new(max_per_host: u64, disk: D, cache_entries: usize) -> Self {
        Self {
            seen: SeenSet::new(disk, cache_entries),
            page_host: Vec::new(),
            origins: Vec::new(),
            host_index: HashMap::new(),
            host_urls: Vec::new(),
            max_per_host,
            unsaved: UnsavedUrls::default(),
        }
    }

    /// Adds a URL read back from the store, as page id `len()`, whatever the cap (the
    /// store has it: it is not kept as unsaved).
    pub fn load(&mut self, url: &str) {
        let origin = links::host_key(url).unwrap_or_default();
        self.seen.insert_stored(SeenKey::new(url, &origin));
        self.add(&origin);
        self.unsaved.first = self.len() as PageId;
    }

    /// The id of `url`, giving it a new one when unseen. With `force` (seeds) the per-host
    /// cap does not apply.
    /// An error is the store's, failing to read the seen-set.
    pub fn intern(&mut self, url: &str, force: bool) -> Result<Interned> {
        let origin = links::host_key(url).unwrap_or_default();
        let key = SeenKey::new(url, &origin);
        if let Some(id) = self.seen.find(key)? {
            return Ok(Interned::Known(id));
        }
        if !force {
            if let Some(&h) = self.host_index.get(origin.as_str()) {
                if self.host_urls[h as usize] >= self.max_per_host {
                    return Ok(Interned::Capped);
                }
            }
        }
        let id = self.add(&origin);
        self.seen.insert(key, id);
        self.unsaved.urls.push(url.into());
        Ok(Interned::New(id))
    }

    /// Whether `url` has an id already.
    pub fn contains(&mut self, url: &str) -> Result<bool> {
        Ok(self.seen.find(SeenKey::of(url))?.is_some())
    }

    /// The id of the host whose origin (`scheme://host:port`) is `origin`, if it has one.
    pub fn host_id(&self, origin: &str) -> Option<HostId> {
        self.host_index.get(origin).copied()
    }

    /// Registers a URL of `origin` known to be new; returns its id.
    fn add(&mut self, origin: &str) -> PageId {
        let id = self.len() as PageId;
        let host = match self.host_index.get(origin) {
            Some(&h) => h,
            None => {
                let h = self.origins.len() as HostId;
                let origin: Arc<str> = origin.into();
                self.origins.push(origin.clone());
                self.host_urls.push(0);
                self.host_index.insert(origin, h);
                h
            }
        };
        self.host_urls[host as usize] += 1;
        self.page_host.push(host);
        id
    }

    /// The URL of page `id` when the store does not have it yet (discovered since the last
    /// [`saved`](Self::saved)); `None` for the others, which the store has.
    pub fn unsaved_url(&self, id: PageId) -> Option<&Arc<str>> {
        self.unsaved.get(id)
    }

    /// The URLs the store does not have yet, and the id of the first: for a reader that
    /// outlives this moment (a ranking snapshot's thread).
    pub fn unsaved(&self) -> UnsavedUrls {
        self.unsaved.clone()
    }

    /// The store now has every URL interned so far: their strings are dropped, and the
    /// seen-set reads the store through `disk`, as of this commit.
    pub fn saved(&mut self, disk: D) {
        self.unsaved.urls.clear();
        self.unsaved.urls.shrink_to(1024);
        self.unsaved.first = self.len() as PageId;
        self.seen.saved(disk);
    }

    /// Where the seen-set's lookups were answered so far.
    pub fn seen_counts(&self) -> SeenCounts {
        self.seen.counts()
    }

    /// Bytes of memory the seen-set holds, about.
    pub fn seen_memory_bytes(&self) -> usize {
        self.seen.memory_bytes()
    }

    /// The host of page `id`.
    pub fn host_of(&self, id: PageId) -> Option<HostId> {
        self.page_host.get(id as usize).copied()
    }

    /// The origin of `host` (`http://a.test:8080`), where its robots.txt lives.
    pub fn origin(&self, host: HostId) -> &str {
        &self.origins[host as usize]
    }

    /// URLs discovered.
    pub fn len(&self) -> usize {
        self.page_host.len()
    }

    /// Whether no URL was discovered.
    pub fn is_empty(&self) -> bool {
        self.page_host.is_empty()
    }

    /// Hosts discovered.
    pub fn hosts(&self) -> usize {
        self.origins.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Disk = HashMap<SeenKey, PageId>;

    /// What the engine's commit does for the seen-set: the store gets the unsaved URLs' keys.
    fn commit(t: &mut UrlTable<Disk>, disk: &mut Disk) {
        let u = t.unsaved();
        for (i, url) in u.urls.iter().enumerate() {
            disk.insert(SeenKey::of(url), u.first + i as PageId);
        }
        t.saved(disk.clone());
    }

    fn table(max_per_host: u64) -> UrlTable<Disk> {
        UrlTable::new(max_per_host, Disk::new(), 8)
    }

    #[test]
    fn ids_hosts_and_the_per_host_cap() {
        let mut t = table(2);
        let mut disk = Disk::new();
        disk.insert(SeenKey::of("http://a.test/"), 0);
        disk.insert(SeenKey::of("http://a.test/x"), 1);
        t.saved(disk.clone());
        t.load("http://a.test/");
        t.load("http://a.test/x");
        assert_eq!((t.len(), t.hosts()), (2, 1));
        assert_eq!(
            t.intern("http://a.test/x", false).unwrap(),
            Interned::Known(1)
        );
        assert_eq!(
            t.intern("http://a.test/y", false).unwrap(),
            Interned::Capped
        );
        assert_eq!(
            t.intern("http://a.test/y", true).unwrap(),
            Interned::New(2),
            "a seed"
        );
        assert_eq!(
            t.intern("http://b.test:81/", false).unwrap(),
            Interned::New(3)
        );
        assert_eq!(t.host_of(3), Some(1));
        assert_eq!(t.origin(1), "http://b.test:81");
        assert_eq!(t.host_of(4), None);
        assert_eq!((t.len(), t.hosts()), (4, 2));
    }

    #[test]
    fn only_unsaved_urls_are_kept_and_saving_drops_them() {
        let mut t = table(10);
        let mut disk = Disk::new();
        t.intern("http://a.test/", true).unwrap();
        commit(&mut t, &mut disk);
        assert_eq!(t.unsaved_url(0), None, "the store has it");
        assert_eq!(
            t.intern("http://a.test/n", false).unwrap(),
            Interned::New(1)
        );
        assert_eq!(t.unsaved_url(1).map(|u| &**u), Some("http://a.test/n"));
        assert_eq!(t.unsaved_url(2), None);
        commit(&mut t, &mut disk);
        assert_eq!(t.unsaved_url(1), None);
        assert_eq!(
            t.intern("http://a.test/n", false).unwrap(),
            Interned::Known(1)
        );
        assert_eq!(
            t.intern("http://a.test/m", false).unwrap(),
            Interned::New(2)
        );
        assert_eq!(t.unsaved_url(2).map(|u| &**u), Some("http://a.test/m"));
    }

    #[test]
    fn many_urls_keep_distinct_ids_through_commits_and_a_small_cache() {
        let mut t = table(u64::MAX);
        let mut disk = Disk::new();
        for i in 0..50_000u32 {
            let u = format!("http://h{}.test/p{i}", i % 97);
            assert_eq!(t.intern(&u, false).unwrap(), Interned::New(i));
            if i % 1000 == 999 {
                commit(&mut t, &mut disk);
            }
        }
        for i in (0..50_000u32).step_by(7) {
            let u = format!("http://h{}.test/p{i}", i % 97);
            assert_eq!(t.intern(&u, false).unwrap(), Interned::Known(i));
            assert!(t.contains(&u).unwrap());
        }
        assert!(!t.contains("http://h1.test/nowhere").unwrap());
        assert_eq!((t.len(), t.hosts()), (50_000, 97));
        assert!(
            t.seen_counts().disk_reads > 0,
            "a cache of 8 keys reads the store"
        );
    }
}
