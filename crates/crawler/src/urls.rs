//! The crawl's URL table: every discovered URL gets a dense page id (the frontier's
//! [`PageId`], in discovery order) and a host id ([`HostId`], one per origin), and each host's
//! URLs are counted against the per-host cap ([`UrlTable::intern`]).
//!
//! Why a module of its own: the frontier, the politeness scheduler and robots.txt all speak
//! in ids, and this table is the one place that turns URLs into them.
//!
//! Why it holds no URL strings: a crawl discovers several URLs for every page it fetches,
//! and most are never fetched, so the strings are the bulk of a crawl's memory if they are
//! kept (about 150 bytes per URL with their hash index). Like Mercator and IRLbot, the
//! table keeps a 64-bit fingerprint of each URL ([`fingerprint`]) and a hash table of page
//! ids keyed by it — the seen-set, about 16 bytes per URL — plus each page's host (4 bytes).
//! The strings live in the crawl's store (the `urls` table, id → URL), where the engine reads
//! a page's URL when it fetches it; only the URLs discovered since the last commit are held
//! here ([`UrlTable::unsaved_url`]) until the store has them ([`UrlTable::saved`]).
//!
//! The price of fingerprints: two different URLs with the same 64-bit fingerprint are taken
//! for one, and the second is never fetched. Among n URLs that happens with probability
//! about n²/2⁶⁵: 3·10⁻⁴ for 10⁸ URLs (docs/crawler.md, Resources).

use crate::links;
use crawlrank_frontier::PageId;
use hashbrown::HashTable;
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

/// The 64-bit fingerprint the seen-set keeps of a URL (xxh3, fixed seed: the same in every
/// run and on every machine).
pub fn fingerprint(url: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(url.as_bytes())
}

/// URL fingerprint → page id, page → host, host → origin and URL count, and the URLs not
/// yet in the store.
#[derive(Debug)]
pub struct UrlTable {
    /// Each page's URL fingerprint, by page id.
    fingerprints: Vec<u64>,
    /// Page ids, hashed by their fingerprint.
    seen: HashTable<PageId>,
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

impl UrlTable {
    /// An empty table whose hosts take at most `max_per_host` URLs.
    pub fn new(max_per_host: u64) -> Self {
        Self {
            fingerprints: Vec::new(),
            seen: HashTable::new(),
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
        self.add(url, &origin);
        self.unsaved.first = self.fingerprints.len() as PageId;
    }

    /// The id of `url`, giving it a new one when unseen. With `force` (seeds) the per-host
    /// cap does not apply.
    pub fn intern(&mut self, url: &str, force: bool) -> Interned {
        let fp = fingerprint(url);
        if let Some(&id) = self.find(fp) {
            return Interned::Known(id);
        }
        let origin = links::host_key(url).unwrap_or_default();
        if !force {
            if let Some(&h) = self.host_index.get(origin.as_str()) {
                if self.host_urls[h as usize] >= self.max_per_host {
                    return Interned::Capped;
                }
            }
        }
        let id = self.add(url, &origin);
        self.unsaved.urls.push(url.into());
        Interned::New(id)
    }

    /// Whether `url` has an id already.
    pub fn contains(&self, url: &str) -> bool {
        self.find(fingerprint(url)).is_some()
    }

    /// The id of the host whose origin (`scheme://host:port`) is `origin`, if it has one.
    pub fn host_id(&self, origin: &str) -> Option<HostId> {
        self.host_index.get(origin).copied()
    }

    fn find(&self, fp: u64) -> Option<&PageId> {
        let fps = &self.fingerprints;
        self.seen.find(fp, |&id| fps[id as usize] == fp)
    }

    /// Registers a URL known to be new; returns its id.
    fn add(&mut self, url: &str, origin: &str) -> PageId {
        let id = self.fingerprints.len() as PageId;
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
        let fp = fingerprint(url);
        self.fingerprints.push(fp);
        let fps = &self.fingerprints;
        self.seen.insert_unique(fp, id, |&id| fps[id as usize]);
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

    /// The store now has every URL interned so far: their strings are dropped.
    pub fn saved(&mut self) {
        self.unsaved.urls.clear();
        self.unsaved.urls.shrink_to(1024);
        self.unsaved.first = self.fingerprints.len() as PageId;
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
        self.fingerprints.len()
    }

    /// Whether no URL was discovered.
    pub fn is_empty(&self) -> bool {
        self.fingerprints.is_empty()
    }

    /// Hosts discovered.
    pub fn hosts(&self) -> usize {
        self.origins.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_hosts_and_the_per_host_cap() {
        let mut t = UrlTable::new(2);
        t.load("http://a.test/");
        t.load("http://a.test/x");
        assert_eq!((t.len(), t.hosts()), (2, 1));
        assert_eq!(t.intern("http://a.test/x", false), Interned::Known(1));
        assert_eq!(t.intern("http://a.test/y", false), Interned::Capped);
        assert_eq!(
            t.intern("http://a.test/y", true),
            Interned::New(2),
            "a seed"
        );
        assert_eq!(t.intern("http://b.test:81/", false), Interned::New(3));
        assert_eq!(t.host_of(3), Some(1));
        assert_eq!(t.origin(1), "http://b.test:81");
        assert_eq!(t.host_of(4), None);
        assert_eq!((t.len(), t.hosts()), (4, 2));
    }

    #[test]
    fn only_unsaved_urls_are_kept_and_saving_drops_them() {
        let mut t = UrlTable::new(10);
        t.load("http://a.test/");
        assert_eq!(t.unsaved_url(0), None, "the store has it");
        assert_eq!(t.intern("http://a.test/n", false), Interned::New(1));
        assert_eq!(t.unsaved_url(1).map(|u| &**u), Some("http://a.test/n"));
        assert_eq!(t.unsaved_url(2), None);
        t.saved();
        assert_eq!(t.unsaved_url(1), None);
        assert_eq!(t.intern("http://a.test/n", false), Interned::Known(1));
        assert_eq!(t.intern("http://a.test/m", false), Interned::New(2));
        assert_eq!(t.unsaved_url(2).map(|u| &**u), Some("http://a.test/m"));
    }

    #[test]
    fn many_urls_keep_distinct_ids() {
        let mut t = UrlTable::new(u64::MAX);
        for i in 0..50_000u32 {
            let u = format!("http://h{}.test/p{i}", i % 97);
            assert_eq!(t.intern(&u, false), Interned::New(i));
        }
        for i in (0..50_000u32).step_by(7) {
            let u = format!("http://h{}.test/p{i}", i % 97);
            assert_eq!(t.intern(&u, false), Interned::Known(i));
        }
        assert_eq!((t.len(), t.hosts()), (50_000, 97));
    }
}
