//! The crawl's URL table: every discovered URL gets a dense page id (the frontier's
//! [`PageId`], in discovery order) and a host id ([`OriginId`], one per origin), and new URLs
//! are counted against the crawl's bounds ([`UrlLimits`], [`UrlTable::intern`]): URLs per
//! host, hosts and URLs per registrable domain, and page ids in all.
//!
//! Why the bounds live here: this is the one place a URL becomes an id, so a URL refused here
//! costs nothing anywhere else (no id, no frontier entry, no host state, no robots.txt
//! request). Ids are 32-bit and the frontier keeps `PageId::MAX` as its "unseen" mark, so at
//! most [`MAX_URLS`] ids exist: past that a new URL is refused and counted, never given an id
//! that wraps onto page 0. A wildcard-DNS site (`*.farm.test`) names a new host with every
//! link; each host would get its own URL quota and robots.txt request, so hosts and URLs are
//! also capped per registrable domain (eTLD+1, [`crawlrank_util::hosts::registrable_domain`]).
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

use crate::caps::{CapRefusal, HostCaps, OriginId, UrlLimits, MAX_URLS};
use crate::seen::{SeenCounts, SeenDisk, SeenKey, SeenSet};
use anyhow::{Context, Result};
use crawlrank_frontier::PageId;
use crawlrank_util::hosts::origin_key;
use std::sync::Arc;

/// What [`UrlTable::intern`] did with a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interned {
    /// Known already, with this id.
    Known(PageId),
    /// New: given this id (the caller records it in the state).
    New(PageId),
    /// New, but its host already has the most URLs allowed: dropped (a spider-trap cap).
    Capped,
    /// New, on a new host of a registrable domain that has the most hosts allowed: dropped.
    DomainHostsCapped,
    /// New, but its registrable domain already has the most URLs allowed: dropped.
    DomainCapped,
    /// New, but the crawl has given out its most ids ([`UrlLimits::max_urls`]): dropped.
    NoIdLeft,
}

/// The 64-bit fingerprint of a URL (xxh3, fixed seed: the same in every run and on every
/// machine), by which a search log's impacts are matched to URLs.
pub fn fingerprint(url: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(url.as_bytes())
}

/// URL → page id (the seen-set), page → host, host → origin and URL count, and the URLs not
/// yet in the store. `D` reads the seen-set's table in the crawl's store ([`SeenDisk`]).
pub struct UrlTable<D> {
    seen: SeenSet<D>,
    page_host: Vec<OriginId>,
    /// Hosts, registrable domains and the caps new URLs are admitted within.
    caps: HostCaps,
    max_urls: u64,
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
    /// An empty table that gives ids within `limits`, over the seen-set `disk` with a cache
    /// of at most `cache_entries` keys ([`crate::seen::DEFAULT_CACHE_ENTRIES`]).
    pub fn new(limits: UrlLimits, disk: D, cache_entries: usize) -> Self {
        Self {
            seen: SeenSet::new(disk, cache_entries),
            page_host: Vec::new(),
            caps: HostCaps::new(limits),
            max_urls: limits.max_urls.min(MAX_URLS),
            unsaved: UnsavedUrls::default(),
        }
    }

    /// Adds a URL read back from the store, as page id `len()`, whatever the caps (the
    /// store has it: it is not kept as unsaved). An error is a state with more URLs than ids
    /// can number (none written by this table).
    pub fn load(&mut self, url: &str) -> Result<()> {
        let origin = origin_key(url).unwrap_or_default();
        let id = self
            .add(&origin, true)?
            .expect("no cap refuses a forced URL");
        self.seen.insert_stored(SeenKey::new(url, &origin));
        self.unsaved.first = id + 1;
        Ok(())
    }

    /// The id of `url`, giving it a new one when unseen and within the limits. With `force`
    /// (seeds) the per-host and per-domain caps do not apply; the number of ids does.
    /// An error is the store's, failing to read the seen-set.
    pub fn intern(&mut self, url: &str, force: bool) -> Result<Interned> {
        let origin = origin_key(url).unwrap_or_default();
        let key = SeenKey::new(url, &origin);
        if let Some(id) = self.seen.find(key)? {
            return Ok(Interned::Known(id));
        }
        if self.len() as u64 >= self.max_urls {
            return Ok(Interned::NoIdLeft);
        }
        let id = match self.add(&origin, force)? {
            Ok(id) => id,
            Err(CapRefusal::Host) => return Ok(Interned::Capped),
            Err(CapRefusal::DomainHosts) => return Ok(Interned::DomainHostsCapped),
            Err(CapRefusal::Domain) => return Ok(Interned::DomainCapped),
        };
        self.seen.insert(key, id);
        self.unsaved.urls.push(url.into());
        Ok(Interned::New(id))
    }

    /// Whether `url` has an id already.
    pub fn contains(&mut self, url: &str) -> Result<bool> {
        Ok(self.seen.find(SeenKey::of(url))?.is_some())
    }

    /// The id of the host whose origin (`scheme://host:port`) is `origin`, if it has one.
    pub fn origin_id(&self, origin: &str) -> Option<OriginId> {
        self.caps.origin_id(origin)
    }

    /// Registers a URL of `origin` known to be new, within the caps unless `force`; returns
    /// its id, or the cap that refuses it. An error says the ids are all given out: the
    /// caller checks before, so only a state with more URLs than ids (which no crawl writes)
    /// meets it.
    fn add(&mut self, origin: &str, force: bool) -> Result<Result<PageId, CapRefusal>> {
        let id = PageId::try_from(self.len())
            .ok()
            .filter(|&id| u64::from(id) < MAX_URLS)
            .with_context(|| format!("more than {MAX_URLS} URLs: page ids are 32-bit"))?;
        Ok(self.caps.admit(origin, force).map(|host| {
            self.page_host.push(host);
            id
        }))
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
        // At most MAX_URLS ids exist (`add`), so the count fits.
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
    pub fn origin_of(&self, id: PageId) -> Option<OriginId> {
        self.page_host.get(id as usize).copied()
    }

    /// The origin of `host` (`http://a.test:8080`), where its robots.txt lives.
    pub fn origin(&self, host: OriginId) -> &str {
        self.caps.origin(host)
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
        self.caps.hosts()
    }

    /// Registrable domains discovered.
    pub fn domains(&self) -> usize {
        self.caps.domains()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

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
        let limits = UrlLimits {
            max_per_host,
            ..UrlLimits::UNBOUNDED
        };
        UrlTable::new(limits, Disk::new(), 8)
    }

    #[test]
    fn ids_hosts_and_the_per_host_cap() {
        let mut t = table(2);
        let mut disk = Disk::new();
        disk.insert(SeenKey::of("http://a.test/"), 0);
        disk.insert(SeenKey::of("http://a.test/x"), 1);
        t.saved(disk.clone());
        t.load("http://a.test/").unwrap();
        t.load("http://a.test/x").unwrap();
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
        assert_eq!(t.origin_of(3), Some(1));
        assert_eq!(t.origin(1), "http://b.test:81");
        assert_eq!(t.origin_of(4), None);
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

    #[test]
    fn ids_stop_at_the_configured_most_and_never_wrap() {
        let limits = UrlLimits {
            max_urls: 3,
            ..UrlLimits::UNBOUNDED
        };
        let mut t = UrlTable::new(limits, Disk::new(), 8);
        for (i, u) in ["http://a.test/", "http://b.test/", "http://a.test/2"]
            .iter()
            .enumerate()
        {
            assert_eq!(t.intern(u, false).unwrap(), Interned::New(i as PageId));
        }
        assert_eq!(
            t.intern("http://a.test/3", false).unwrap(),
            Interned::NoIdLeft
        );
        assert_eq!(
            t.intern("http://c.test/", true).unwrap(),
            Interned::NoIdLeft,
            "a seed gets no id past the most either"
        );
        assert_eq!(
            t.intern("http://a.test/", false).unwrap(),
            Interned::Known(0),
            "known URLs keep their ids"
        );
        assert_eq!((t.len(), t.hosts()), (3, 2));
        assert_eq!(t.unsaved_url(0).map(|u| &**u), Some("http://a.test/"));
        // A limit above the width of the ids is the width.
        let wide = UrlLimits {
            max_urls: u64::MAX,
            ..UrlLimits::UNBOUNDED
        };
        assert_eq!(UrlTable::new(wide, Disk::new(), 8).max_urls, MAX_URLS);
    }

    #[test]
    fn hosts_and_urls_are_capped_per_registrable_domain() {
        let limits = UrlLimits {
            max_hosts_per_domain: 3,
            max_per_domain: 5,
            ..UrlLimits::UNBOUNDED
        };
        let mut t = UrlTable::new(limits, Disk::new(), 8);
        let new = |t: &mut UrlTable<Disk>, u: &str| {
            matches!(t.intern(u, false).unwrap(), Interned::New(_))
        };
        // Three hosts of farm.test (a port or scheme of its own is another host, same domain).
        assert!(new(&mut t, "http://a.farm.test/"));
        assert!(new(&mut t, "http://b.farm.test:8080/"));
        assert!(new(&mut t, "https://farm.test/"));
        assert_eq!(
            t.intern("http://c.farm.test/", false).unwrap(),
            Interned::DomainHostsCapped
        );
        assert_eq!(
            t.intern("http://c.farm.test/", true).unwrap(),
            Interned::New(3),
            "a seed"
        );
        // Another domain is not concerned.
        assert!(new(&mut t, "http://c.other.test/"));
        assert!(new(&mut t, "http://a.farm.test/2"));
        assert_eq!(
            t.intern("http://a.farm.test/3", false).unwrap(),
            Interned::DomainCapped
        );
        assert_eq!(
            t.intern("http://b.farm.test:8080/x", false).unwrap(),
            Interned::DomainCapped
        );
        assert_eq!((t.hosts(), t.domains(), t.len()), (5, 2, 6));
        // IP addresses are domains of their own.
        assert!(new(&mut t, "http://127.0.0.1:81/"));
        assert!(new(&mut t, "http://[::1]:81/"));
        assert_eq!(crate::caps::domain_of("http://[::1]:81"), "[::1]");
        assert_eq!(crate::caps::domain_of("https://www.bbc.co.uk"), "bbc.co.uk");
        assert_eq!(t.domains(), 4);
    }
}
