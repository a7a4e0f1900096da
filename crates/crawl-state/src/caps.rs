//! The crawl's hosts and the caps on them: each origin (scheme, host and port) gets a dense id
//! ([`OriginId`]) and a count of its URLs, each registrable domain (eTLD+1) a count of its
//! hosts and URLs, and a new URL is admitted only within the [`UrlLimits`].
//!
//! Why here, once: the caps are what keep a crawl alive on a hostile web — a spider trap
//! names endless URLs on one host, a wildcard-DNS site (`*.farm.test`) a new host with every
//! link, each of which would get its own quota and robots.txt request. The crawler's URL table
//! ([`crate::UrlTable`]) and the frontier service's crawls admit URLs through this one type, so
//! a crawl through workers is capped exactly as `crawlrank crawl` is.
//!
//! Counts are of URLs held: the crawler never drops one, the frontier service drops the URLs a
//! client deletes ([`HostCaps::release`]), which frees their place under the caps.

use std::collections::HashMap;
use std::sync::Arc;

/// An origin's id (scheme, host and port, [`crawlrank_util::hosts::origin_key`]): dense, in
/// the order origins were first admitted. Every origin has at least one URL, so origin ids are
/// bounded by page ids.
pub type OriginId = u32;

/// The most page ids a crawl can give out: ids are `u32`, and `PageId::MAX` is the frontier's
/// mark of a page not seen (`crawlrank_frontier::PageTable`), so ids run from 0 to
/// `PageId::MAX - 1`.
pub const MAX_URLS: u64 = crawlrank_frontier::PageId::MAX as u64;

/// What a crawl gives new ids to (docs/crawler.md, A hostile web). Seeds pass the per-host
/// and per-domain caps, never [`max_urls`](Self::max_urls).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UrlLimits {
    /// Most URLs in all (`--max-urls`), at most [`MAX_URLS`].
    pub max_urls: u64,
    /// Most URLs per host (`--max-pages-per-host`).
    pub max_per_host: u64,
    /// Most hosts per registrable domain (`--max-hosts-per-domain`).
    pub max_hosts_per_domain: u64,
    /// Most URLs per registrable domain (`--max-urls-per-domain`).
    pub max_per_domain: u64,
}

impl UrlLimits {
    /// The crawler's defaults (the CLI's, for `crawl` and `frontier serve` alike).
    pub const DEFAULT: Self = Self {
        max_urls: MAX_URLS,
        max_per_host: 100_000,
        // Wikipedia has about 700 hosts, its languages and their mobile sites; platforms
        // that give each user a host (blogspot.com, github.io) are public suffixes, so each
        // user's host is a registrable domain of its own.
        max_hosts_per_domain: 10_000,
        // Ten hosts at the per-host cap.
        max_per_domain: 1_000_000,
    };

    /// No bound but the width of the ids.
    pub const UNBOUNDED: Self = Self {
        max_urls: MAX_URLS,
        max_per_host: u64::MAX,
        max_hosts_per_domain: u64::MAX,
        max_per_domain: u64::MAX,
    };
}

impl Default for UrlLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Why a new URL was refused by the caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapRefusal {
    /// Its host already has the most URLs allowed (a spider-trap cap).
    Host,
    /// It is on a new host of a registrable domain that has the most hosts allowed.
    DomainHosts,
    /// Its registrable domain already has the most URLs allowed.
    Domain,
}

/// The registrable domain of an origin (`http://www.a.test:8080` → `a.test`).
pub(crate) fn domain_of(origin: &str) -> String {
    let rest = origin.split_once("://").map_or(origin, |(_, r)| r);
    let host = match rest.strip_prefix('[') {
        // An IPv6 literal: up to and with its `]`.
        Some(v6) => &rest[..v6.find(']').map_or(rest.len(), |i| i + 2)],
        None => rest.split(':').next().unwrap_or(rest),
    };
    crawlrank_util::hosts::registrable_domain(host)
}

/// A registrable domain's hosts and URLs, counted against the per-domain caps (both fit in
/// 32 bits: there are at most [`MAX_URLS`] URLs, and fewer hosts).
#[derive(Debug, Clone, Copy, Default)]
struct DomainCount {
    hosts: u32,
    urls: u32,
}

/// The crawl's origins with their URL counts, their registrable domains with theirs, and the
/// caps new URLs are admitted within. An origin keeps its id once given, even when its last
/// URL is released. Domains are counted by [`admit`](Self::admit), which finds an origin's
/// registrable domain once, when the origin is new.
#[derive(Debug)]
pub struct HostCaps {
    /// By host id.
    origins: Vec<Arc<str>>,
    host_index: HashMap<Arc<str>, OriginId>,
    /// URLs held per host, by host id.
    host_urls: Vec<u64>,
    /// Each host's registrable domain, by host id.
    host_domain: Vec<u32>,
    /// Registrable domain → its index in `domains`.
    domain_index: HashMap<Box<str>, u32>,
    domains: Vec<DomainCount>,
    limits: UrlLimits,
}

impl HostCaps {
    /// No host yet; new URLs admitted within `limits` (whose `max_urls` is the caller's to
    /// check: it counts ids, which the caller gives out).
    pub fn new(limits: UrlLimits) -> Self {
        Self {
            origins: Vec::new(),
            host_index: HashMap::new(),
            host_urls: Vec::new(),
            host_domain: Vec::new(),
            domain_index: HashMap::new(),
            domains: Vec::new(),
            limits,
        }
    }

    /// Admits new URLs within `limits` from now on (those admitted stay).
    pub fn set_limits(&mut self, limits: UrlLimits) {
        self.limits = limits;
    }

    /// The limits new URLs are admitted within.
    pub fn limits(&self) -> UrlLimits {
        self.limits
    }

    /// Admits one more URL of `origin` (`scheme://host:port`, empty for a URL without one)
    /// and returns its host's id, or says which cap refuses it. With `force` (seeds, and URLs
    /// read back from a state) no cap applies.
    pub fn admit(&mut self, origin: &str, force: bool) -> Result<OriginId, CapRefusal> {
        let limits = self.limits();
        let host = self.host_index.get(origin).copied();
        // A host with no URL held counts among its domain's hosts again once admitted.
        let empty = host.is_none_or(|h| self.host_urls[h as usize] == 0);
        // A new origin's registrable domain, found once: checked here, recorded if admitted.
        let new_domain = host.is_none().then(|| domain_of(origin));
        let domain = match host {
            Some(h) => Some(self.host_domain[h as usize]),
            None => new_domain
                .as_deref()
                .and_then(|name| self.domain_index.get(name).copied()),
        };
        if !force {
            if host.is_some_and(|h| self.host_urls[h as usize] >= limits.max_per_host) {
                return Err(CapRefusal::Host);
            }
            if let Some(d) = domain {
                let d = self.domains[d as usize];
                if empty && u64::from(d.hosts) >= limits.max_hosts_per_domain {
                    return Err(CapRefusal::DomainHosts);
                }
                if u64::from(d.urls) >= limits.max_per_domain {
                    return Err(CapRefusal::Domain);
                }
            }
        }
        let host = match host {
            Some(h) => h,
            None => self.add_host(origin, new_domain.unwrap_or_default()),
        };
        let d = &mut self.domains[self.host_domain[host as usize] as usize];
        if empty {
            d.hosts += 1;
        }
        d.urls = d.urls.saturating_add(1);
        self.host_urls[host as usize] += 1;
        Ok(host)
    }

    /// Gives `origin`, of the registrable domain `domain`, an id, with no URL held yet.
    fn add_host(&mut self, origin: &str, domain: String) -> OriginId {
        let h = self.origins.len() as OriginId;
        let d = match self.domain_index.get(domain.as_str()) {
            Some(&d) => d,
            None => {
                let d = self.domains.len() as u32;
                self.domains.push(DomainCount::default());
                self.domain_index.insert(domain.into(), d);
                d
            }
        };
        let origin: Arc<str> = origin.into();
        self.origins.push(origin.clone());
        self.host_urls.push(0);
        self.host_domain.push(d);
        self.host_index.insert(origin, h);
        h
    }

    /// One URL of `host` is no longer held (deleted): its place under the caps is free again,
    /// and a host left with none no longer counts among its domain's hosts (it keeps its id).
    /// So the counts depend only on the URLs held, not on the order they came and went.
    pub fn release(&mut self, host: OriginId) {
        let Some(n) = self.host_urls.get_mut(host as usize) else {
            return;
        };
        if *n == 0 {
            return;
        }
        *n -= 1;
        let d = &mut self.domains[self.host_domain[host as usize] as usize];
        d.urls = d.urls.saturating_sub(1);
        if *n == 0 {
            d.hosts = d.hosts.saturating_sub(1);
        }
    }

    /// The id of the host whose origin is `origin`, if it has one.
    pub fn origin_id(&self, origin: &str) -> Option<OriginId> {
        self.host_index.get(origin).copied()
    }

    /// The origin of `host` (`http://a.test:8080`).
    pub fn origin(&self, host: OriginId) -> &str {
        &self.origins[host as usize]
    }

    /// Hosts admitted so far.
    pub fn hosts(&self) -> usize {
        self.origins.len()
    }

    /// Registrable domains admitted so far.
    pub fn domains(&self) -> usize {
        self.domains.len()
    }

    /// URLs held on `host`.
    pub fn urls_of(&self, host: OriginId) -> u64 {
        self.host_urls.get(host as usize).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_urls_free_their_place_under_the_caps() {
        let mut caps = HostCaps::new(UrlLimits {
            max_per_host: 2,
            max_per_domain: 3,
            ..UrlLimits::UNBOUNDED
        });
        let a = caps.admit("http://a.x.test", false).unwrap();
        assert_eq!(caps.admit("http://a.x.test", false), Ok(a));
        assert_eq!(caps.admit("http://a.x.test", false), Err(CapRefusal::Host));
        let b = caps.admit("http://b.x.test", false).unwrap();
        assert_eq!(
            caps.admit("http://b.x.test", false),
            Err(CapRefusal::Domain)
        );
        caps.release(a);
        assert_eq!(caps.admit("http://b.x.test", false), Ok(b), "a place freed");
        assert_eq!(caps.admit("http://a.x.test", true), Ok(a), "a seed");
        assert_eq!((caps.urls_of(a), caps.urls_of(b), caps.hosts()), (2, 2, 2));
        assert_eq!(caps.origin_id("http://b.x.test"), Some(b));
        // A host emptied no longer counts among its domain's hosts.
        let mut caps = HostCaps::new(UrlLimits {
            max_hosts_per_domain: 1,
            ..UrlLimits::UNBOUNDED
        });
        let a = caps.admit("http://a.y.test", false).unwrap();
        assert_eq!(
            caps.admit("http://b.y.test", false),
            Err(CapRefusal::DomainHosts)
        );
        caps.release(a);
        caps.release(a);
        assert_eq!(caps.urls_of(a), 0);
        let b = caps.admit("http://b.y.test", false).unwrap();
        assert_eq!(
            caps.admit("http://a.y.test", false),
            Err(CapRefusal::DomainHosts)
        );
        assert_eq!(caps.admit("http://b.y.test", false), Ok(b));
        assert_eq!(caps.origin(b), "http://b.y.test");
    }
}
