//! The crawl's URL table: every discovered URL gets a dense page id (the frontier's
//! [`PageId`], in discovery order) and a host id ([`HostId`], one per origin), and each host's
//! URLs are counted against the per-host cap ([`UrlTable::intern`]).
//!
//! Why a module of its own: the frontier, the politeness scheduler and robots.txt all speak
//! in ids, and this table is the one place that turns URLs into them. It is held in memory
//! (the state keeps the id → URL table on disk and this one is rebuilt from it at open); a
//! table that does not live in memory replaces this struct, behind the same methods.

use crate::links;
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

/// URL ↔ page id, page → host, host → origin and URL count.
#[derive(Debug)]
pub struct UrlTable {
    urls: Vec<Arc<str>>,
    index: HashMap<Arc<str>, PageId>,
    page_host: Vec<HostId>,
    /// By host id.
    origins: Vec<String>,
    host_index: HashMap<String, HostId>,
    /// URLs per host, by host id.
    host_urls: Vec<u64>,
    max_per_host: u64,
}

impl UrlTable {
    /// A table holding `urls` (as stored, id = position) whose hosts take at most
    /// `max_per_host` URLs from now on. The stored URLs are all kept, whatever the cap.
    pub fn new(urls: Vec<String>, max_per_host: u64) -> Self {
        let mut t = Self {
            urls: Vec::with_capacity(urls.len()),
            index: HashMap::with_capacity(urls.len()),
            page_host: Vec::with_capacity(urls.len()),
            origins: Vec::new(),
            host_index: HashMap::new(),
            host_urls: Vec::new(),
            max_per_host,
        };
        for u in urls {
            let origin = links::host_key(&u).unwrap_or_default();
            t.add(&u, origin);
        }
        t
    }

    /// The id of `url`, giving it a new one when unseen. With `force` (seeds) the per-host
    /// cap does not apply.
    pub fn intern(&mut self, url: &str, force: bool) -> Interned {
        if let Some(&id) = self.index.get(url) {
            return Interned::Known(id);
        }
        let origin = links::host_key(url).unwrap_or_default();
        if !force {
            if let Some(&h) = self.host_index.get(&origin) {
                if self.host_urls[h as usize] >= self.max_per_host {
                    return Interned::Capped;
                }
            }
        }
        Interned::New(self.add(url, origin))
    }

    /// Registers a URL known to be new; returns its id.
    fn add(&mut self, url: &str, origin: String) -> PageId {
        let id = self.urls.len() as PageId;
        let host = match self.host_index.get(&origin) {
            Some(&h) => h,
            None => {
                let h = self.origins.len() as HostId;
                self.origins.push(origin.clone());
                self.host_urls.push(0);
                self.host_index.insert(origin, h);
                h
            }
        };
        self.host_urls[host as usize] += 1;
        let url: Arc<str> = url.into();
        self.urls.push(url.clone());
        self.index.insert(url, id);
        self.page_host.push(host);
        id
    }

    /// The URL of page `id`.
    pub fn url(&self, id: PageId) -> Option<&Arc<str>> {
        self.urls.get(id as usize)
    }

    /// Every URL, by id (for the ranking snapshot).
    pub fn urls(&self) -> &[Arc<str>] {
        &self.urls
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
        self.urls.len()
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
        let mut t = UrlTable::new(vec!["http://a.test/".into(), "http://a.test/x".into()], 2);
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
        assert_eq!(t.url(2).map(|u| &**u), Some("http://a.test/y"));
        assert_eq!((t.host_of(4), t.url(4)), (None, None));
        assert_eq!((t.len(), t.hosts()), (4, 2));
    }
}
