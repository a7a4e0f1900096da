//! Sitemaps (sitemaps.org protocol 0.9) as a source of URLs.
//!
//! A site lists its pages in `/sitemap.xml` and in the files its robots.txt names on
//! `Sitemap:` lines; pages linked from nowhere are found only there. With `--sitemaps` (on by
//! default on the command line, off in [`crate::CrawlConfig`]'s default) the crawl reads, for
//! every seed host, `/sitemap.xml` and the robots.txt `Sitemap:` files on that host.
//!
//! **A sitemap is not a page.** Like robots.txt it is a *side request* of its host: fetched
//! under the host's politeness (one request at a time per host, the host's delay before and
//! after), but never popped from the frontier, never counted in `--max-pages`, never reported
//! to the policy (`on_crawled`: the policies' clock `t = crawled div K` does not move) and
//! never a node or an arc of the crawl's link graph, ranking or export. *Why*: a sitemap is
//! not a document of the web the policies rank, and a `/sitemap.xml` that does not exist (a
//! 404 on most sites) must not cost a page of the budget or shift the policy's order; a real
//! sitemap as a page would give every listed URL an in-link from one artificial page,
//! distorting in-degrees, OPIC's cash, FICA's distances and PageRank.
//!
//! When: a host's sitemaps are fetched when its first page is about to be requested, after
//! its robots.txt (whose `Disallow` rules they obey) and before that page, one after the
//! other, in the order they became known: `/sitemap.xml` (queued with the seeds), the
//! robots.txt `Sitemap:` files (queued when robots.txt is read), then the sitemaps a sitemap
//! index names and the target of a sitemap's redirect on the same host. At most
//! [`MAX_SITEMAPS_PER_HOST`] files per host are fetched; the rest are dropped and counted.
//!
//! How the entries enter the crawl: each sitemap's entries, in file order, are URLs of the
//! site discovered *without a link* — no page is their parent — and enter the frontier the
//! way seeds do (`Frontier::seed`, logged as a seed event), right after that sitemap is read:
//! after the seeds, before any page of the host is fetched. Each policy then treats them as
//! it treats a page found without a link (docs/algorithms.md, "Pages found without a link").
//! An entry passes every rule a link passes (scope, `--include`/`--exclude`, the URL rules,
//! the per-host URL cap); an entry already known is not given again.
//!
//! The crawl state records every sitemap file it has queued and whether it was fetched (the
//! `sitemaps` table of crate::store), in the same transaction as the entries it gave: a
//! resumed crawl fetches again only those not fetched yet, and never loses an entry.
//!
//! A page reached by a link that turns out to be a sitemap (an HTML page linking to an
//! `.xml` file) stays a page — it was linked — but its entries are not its out-links: they
//! enter the frontier as above, and the page has no out-link.
//!
//! [`parse_sitemap`] reads a fetched body with `quick-xml` (a maintained streaming parser: a
//! 50 MB file is never held as a tree), after gunzipping it when it starts with the gzip magic.
//! Hostile input is bounded, counted and never fatal:
//! - the protocol's limits: at most [`MAX_ENTRIES`] entries and [`MAX_BYTES`] uncompressed
//!   bytes per file (a gzip bomb stops there); entries past them are dropped and counted;
//! - entries on another host than the sitemap are dropped and counted (the protocol lets a
//!   sitemap list only URLs of its own site; cross-site sitemaps need the other site's
//!   robots.txt, which a crawl cannot check here); so are robots.txt `Sitemap:` files on
//!   another host;
//! - malformed XML ends the parse with what was read so far, and is counted;
//! - a body that is not a sitemap (an HTML page, a 404) adds nothing and is counted;
//! - an index inside an index inside an index… is bounded by [`MAX_SITEMAPS_PER_HOST`].

use crate::links::{normalize, UrlRefusal, UrlRules};
use crate::scope::host_name;
use crate::stats::Stats;
use quick_xml::events::Event;
use std::io::Read;
use url::Url;

/// Most entries read from one sitemap file (the protocol's limit).
pub const MAX_ENTRIES: usize = 50_000;

/// Most uncompressed bytes read from one sitemap file (the protocol's limit: 50 MiB).
pub const MAX_BYTES: usize = 50 << 20;

/// Most sitemap files fetched per host (its `/sitemap.xml`, its robots.txt's, the ones its
/// indexes name): a site of 10^7 pages needs 200 full sitemaps, and the per-host URL cap
/// stops the entries long before this.
pub const MAX_SITEMAPS_PER_HOST: usize = 1_000;

/// What a sitemap body yields.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SitemapLinks {
    /// Whether the body is a sitemap (`<urlset>`) or a sitemap index (`<sitemapindex>`).
    pub is_sitemap: bool,
    /// A sitemap index: its entries are sitemaps.
    pub index: bool,
    /// The entries' normalised URLs, in file order, deduplicated.
    pub links: Vec<String>,
    /// Entries dropped: past [`MAX_ENTRIES`] or [`MAX_BYTES`], or on another host.
    pub dropped: u32,
    /// Entries whose URL is malformed, not http(s), or caught by the trap rules.
    pub invalid: u32,
    /// Why the parse stopped early (malformed XML, a broken gzip stream, the size limit).
    pub error: Option<String>,
}

/// Whether a non-HTML response should be read as a possible sitemap: an XML or gzip content
/// type, or a path ending in `.xml` or `.xml.gz`.
pub fn looks_like_sitemap(url: &Url, content_type: Option<&str>) -> bool {
    let ct = content_type
        .and_then(|c| c.split(';').next())
        .map(|c| c.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let path = url.path().to_ascii_lowercase();
    ct.ends_with("/xml")
        || ct.ends_with("+xml")
        || ct.contains("gzip")
        || path.ends_with(".xml")
        || path.ends_with(".xml.gz")
}

/// Reads `body` (fetched from `base`) as a sitemap or sitemap index (see the [module
/// documentation](self)). A body whose root element is neither gives `is_sitemap: false`.
pub fn parse_sitemap(base: &Url, body: &[u8], rules: &UrlRules) -> SitemapLinks {
    let mut out = SitemapLinks::default();
    let mut inflated = Vec::new();
    let xml: &[u8] = if body.starts_with(&[0x1f, 0x8b]) {
        let mut d = flate2::read::MultiGzDecoder::new(body).take(MAX_BYTES as u64 + 1);
        if let Err(e) = d.read_to_end(&mut inflated) {
            out.error = Some(format!("broken gzip stream: {e}"));
        }
        &inflated
    } else {
        body
    };
    let xml = if xml.len() > MAX_BYTES {
        out.error = Some(format!(
            "over {MAX_BYTES} bytes uncompressed: the rest is ignored"
        ));
        &xml[..MAX_BYTES]
    } else {
        xml
    };
    let host = host_name(base.as_str()).map(str::to_ascii_lowercase);
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut depth = 0usize;
    let mut in_loc = false;
    let mut loc = String::new();
    let mut seen = std::collections::HashSet::new();
    loop {
        let event = match reader.read_event_into(&mut buf) {
            Ok(e) => e,
            Err(e) => {
                out.error.get_or_insert(format!(
                    "malformed XML at byte {}: {e}",
                    reader.buffer_position()
                ));
                break;
            }
        };
        match event {
            Event::Start(e) => {
                let name = e.local_name();
                if depth == 0 {
                    match name.as_ref() {
                        b"urlset" => out.is_sitemap = true,
                        b"sitemapindex" => {
                            out.is_sitemap = true;
                            out.index = true;
                        }
                        _ => return SitemapLinks::default(),
                    }
                }
                depth += 1;
                if depth == 3 && name.as_ref() == b"loc" {
                    in_loc = true;
                    loc.clear();
                }
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                if in_loc && e.local_name().as_ref() == b"loc" {
                    in_loc = false;
                    take_entry(&mut out, &loc, host.as_deref(), rules, &mut seen);
                }
            }
            Event::Text(t) if in_loc => loc.push_str(&String::from_utf8_lossy(&t)),
            // quick-xml hands entity references apart from the text around them.
            Event::GeneralRef(r) if in_loc => {
                if let Ok(Some(c)) = r.resolve_char_ref() {
                    loc.push(c);
                } else if let Some(v) =
                    quick_xml::escape::resolve_xml_entity(&String::from_utf8_lossy(&r))
                {
                    loc.push_str(v);
                }
            }
            Event::CData(t) if in_loc => loc.push_str(&String::from_utf8_lossy(&t)),
            Event::Empty(e) if depth == 0 => {
                // `<urlset/>`: an empty sitemap.
                out.is_sitemap = matches!(e.local_name().as_ref(), b"urlset" | b"sitemapindex");
                out.index = e.local_name().as_ref() == b"sitemapindex";
                break;
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    out
}

/// A sitemap file's state in the crawl state's `sitemaps` table: queued, not fetched yet.
pub const PENDING: u8 = 0;
/// A sitemap file's state: fetched (or given up), its entries given to the frontier.
pub const DONE: u8 = 1;

/// One sitemap file waiting to be fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedSitemap {
    /// Its row in the state's `sitemaps` table (the order it became known in).
    pub seq: u64,
    /// Its normalised URL.
    pub url: String,
    /// Failed attempts so far (a 5xx, a timeout, a connection failure).
    pub attempts: u32,
}

/// The sitemap files of a crawl: the ones waiting, by host in the order they became known,
/// and every one ever queued (fetched or not), so that none is queued twice.
#[derive(Debug, Default)]
pub struct SitemapQueue {
    known: std::collections::HashSet<String>,
    per_host: std::collections::HashMap<u32, usize>,
    waiting: std::collections::HashMap<u32, std::collections::VecDeque<QueuedSitemap>>,
    next_seq: u64,
}

/// Why a sitemap file was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotQueued {
    /// Queued before (fetched or waiting).
    Known,
    /// Its host has [`MAX_SITEMAPS_PER_HOST`] already.
    HostCap,
    /// It is on another host than the one whose sitemap it would be.
    OtherHost,
}

impl NotQueued {
    /// Whether the sitemap was dropped (counted in `sitemap_dropped`), not merely known.
    pub fn dropped(self) -> bool {
        self != NotQueued::Known
    }
}

impl SitemapQueue {
    /// Takes back a row of the state's `sitemaps` table: `seq`, its `state`
    /// ([`PENDING`] or [`DONE`]) and URL, of `host`. Rows come in `seq` order.
    pub fn restore(&mut self, seq: u64, state: u8, url: String, host: u32) {
        self.next_seq = self.next_seq.max(seq + 1);
        *self.per_host.entry(host).or_default() += 1;
        if self.known.insert(url.clone()) && state == PENDING {
            let q = QueuedSitemap {
                seq,
                url,
                attempts: 0,
            };
            self.waiting.entry(host).or_default().push_back(q);
        }
    }

    /// Queues `url`, a sitemap file of `host`, behind its host's others; returns its row
    /// number for the state's `sitemaps` table.
    pub fn push(&mut self, host: u32, url: &str) -> Result<u64, NotQueued> {
        if self.known.contains(url) {
            return Err(NotQueued::Known);
        }
        let n = self.per_host.entry(host).or_default();
        if *n >= MAX_SITEMAPS_PER_HOST {
            return Err(NotQueued::HostCap);
        }
        *n += 1;
        self.known.insert(url.to_string());
        let seq = self.next_seq;
        self.next_seq += 1;
        let q = QueuedSitemap {
            seq,
            url: url.to_string(),
            attempts: 0,
        };
        self.waiting.entry(host).or_default().push_back(q);
        Ok(seq)
    }

    /// Queues `url` as a sitemap of `host`, whose origin is `origin`, when it is on that host
    /// ([`push`](Self::push)); one on another host is not queued. The rule for the `Sitemap:`
    /// files of a host's robots.txt, the sitemaps an index names and a redirect's target.
    pub fn push_on_host(&mut self, host: u32, origin: &str, url: &str) -> Result<u64, NotQueued> {
        if crate::links::origin_key(url).as_deref() != Some(origin) {
            return Err(NotQueued::OtherHost);
        }
        self.push(host, url)
    }

    /// Queues `url` as a sitemap of `host` ([`push_on_host`](Self::push_on_host)); one dropped
    /// (another host's, or past the host's cap) is counted in `stats` as `crawl` counts it.
    /// Returns its row number when queued.
    pub fn queue(&mut self, host: u32, origin: &str, url: &str, stats: &mut Stats) -> Option<u64> {
        match self.push_on_host(host, origin, url) {
            Ok(seq) => Some(seq),
            Err(why) => {
                stats.sitemap_dropped += u64::from(why.dropped());
                None
            }
        }
    }

    /// Queues the `Sitemap:` files of `host`'s robots.txt (`listed`, as written there), each
    /// normalised by `rules` ([`queue`](Self::queue)); one that is no usable URL is counted
    /// in `stats` (`sitemap_invalid`). Returns those queued, with their row numbers.
    pub fn queue_listed(
        &mut self,
        host: u32,
        origin: &str,
        listed: &[String],
        rules: &UrlRules,
        stats: &mut Stats,
    ) -> Vec<(u64, String)> {
        let mut queued = Vec::new();
        for s in listed {
            match normalize(s, rules) {
                Ok(u) => queued.extend(self.queue(host, origin, &u, stats).map(|seq| (seq, u))),
                Err(_) => stats.sitemap_invalid += 1,
            }
        }
        queued
    }

    /// The sitemap `host` fetches next, if any.
    pub fn next(&self, host: u32) -> Option<&QueuedSitemap> {
        self.waiting.get(&host)?.front()
    }

    /// Counts a failed attempt of `host`'s next sitemap; returns the attempts so far.
    pub fn failed(&mut self, host: u32) -> u32 {
        match self.waiting.get_mut(&host).and_then(|q| q.front_mut()) {
            Some(q) => {
                q.attempts += 1;
                q.attempts
            }
            None => 0,
        }
    }

    /// Removes `host`'s next sitemap (fetched or given up).
    pub fn pop(&mut self, host: u32) -> Option<QueuedSitemap> {
        let q = self.waiting.get_mut(&host)?;
        let front = q.pop_front();
        if q.is_empty() {
            self.waiting.remove(&host);
        }
        front
    }

    /// Sitemap files waiting, over all hosts.
    pub fn waiting(&self) -> usize {
        self.waiting.values().map(|q| q.len()).sum()
    }
}

/// Keeps one `<loc>` entry, or counts why not.
fn take_entry(
    out: &mut SitemapLinks,
    loc: &str,
    host: Option<&str>,
    rules: &UrlRules,
    seen: &mut std::collections::HashSet<String>,
) {
    if out.links.len() >= MAX_ENTRIES {
        out.dropped += 1;
        return;
    }
    match normalize(loc, rules) {
        Ok(u) => {
            let same_host =
                host.is_some_and(|h| host_name(&u).is_some_and(|e| e.eq_ignore_ascii_case(h)));
            if !same_host {
                out.dropped += 1;
            } else if seen.insert(u.clone()) {
                out.links.push(u);
            }
        }
        Err(UrlRefusal::Invalid | UrlRefusal::Trap | UrlRefusal::Pathological) => out.invalid += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Url {
        Url::parse("http://a.test/sitemap.xml").unwrap()
    }

    fn parse(body: &[u8]) -> SitemapLinks {
        parse_sitemap(&base(), body, &UrlRules::default())
    }

    #[test]
    fn urlsets_and_indexes() {
        let s = parse(
            br#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://a.test/x?a=1&amp;b=2</loc><lastmod>2024-01-01</lastmod></url>
  <url><loc> http://A.test/y#frag </loc></url>
  <url><loc>http://a.test/y</loc></url>
  <url><loc>http://other.test/z</loc></url>
  <url><loc>mailto:x@a.test</loc></url>
</urlset>"#,
        );
        assert!(s.is_sitemap && !s.index);
        assert_eq!(s.links, ["http://a.test/x?a=1&b=2", "http://a.test/y"]);
        assert_eq!((s.dropped, s.invalid, s.error.as_deref()), (1, 1, None));
        let i = parse(
            b"<sitemapindex><sitemap><loc>http://a.test/s1.xml.gz</loc></sitemap></sitemapindex>",
        );
        assert!(i.is_sitemap && i.index);
        assert_eq!(i.links, ["http://a.test/s1.xml.gz"]);
        // Not a sitemap at all.
        assert_eq!(
            parse(b"<html><body>hi</body></html>"),
            SitemapLinks::default()
        );
        assert!(parse(b"<urlset/>").is_sitemap);
    }

    #[test]
    fn hostile_sitemaps_are_bounded_and_counted() {
        // Bad XML: the entries before the fault are kept.
        let s = parse(b"<urlset><url><loc>http://a.test/1</loc></url><url><loc>http://a.test/2</loc></oops><url><loc>http://a.test/3</loc></url></urlset>");
        assert_eq!(s.links, ["http://a.test/1", "http://a.test/2"]);
        assert!(
            s.error.as_deref().unwrap().contains("malformed XML"),
            "{s:?}"
        );
        // Too many entries.
        let mut big = String::from("<urlset>");
        for i in 0..MAX_ENTRIES + 10 {
            big.push_str(&format!("<url><loc>http://a.test/{i}</loc></url>"));
        }
        big.push_str("</urlset>");
        let s = parse(big.as_bytes());
        assert_eq!((s.links.len(), s.dropped), (MAX_ENTRIES, 10));
        // A gzip bomb: 200 MiB of blanks inside a urlset compress to a few hundred KiB; the
        // parse stops at 50 MiB, keeping the entry before the blanks.
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(b"<urlset><url><loc>http://a.test/first</loc></url>")
            .unwrap();
        let blanks = vec![b' '; 1 << 20];
        for _ in 0..200 {
            e.write_all(&blanks).unwrap();
        }
        let bomb = e.finish().unwrap();
        assert!(bomb.len() < 1 << 20);
        let s = parse(&bomb);
        assert_eq!(s.links, ["http://a.test/first"]);
        assert!(
            s.error.as_deref().unwrap().contains("uncompressed"),
            "{s:?}"
        );
        // A broken gzip stream.
        let s = parse(&bomb[..bomb.len() / 2]);
        assert_eq!(s.links, ["http://a.test/first"]);
        assert!(s.error.is_some());
    }

    #[test]
    fn the_queue_keeps_order_refuses_repeats_and_caps_each_host() {
        let mut q = SitemapQueue::default();
        assert_eq!(q.push(1, "http://a.test/sitemap.xml"), Ok(0));
        assert_eq!(q.push(2, "http://b.test/sitemap.xml"), Ok(1));
        assert_eq!(q.push(1, "http://a.test/s2.xml"), Ok(2));
        assert_eq!(
            q.push(1, "http://a.test/sitemap.xml"),
            Err(NotQueued::Known)
        );
        assert_eq!(q.next(1).unwrap().url, "http://a.test/sitemap.xml");
        assert_eq!((q.failed(1), q.failed(1)), (1, 2));
        assert_eq!(q.pop(1).unwrap().attempts, 2);
        assert_eq!(q.pop(1).unwrap().url, "http://a.test/s2.xml");
        assert!(q.pop(1).is_none() && q.next(1).is_none());
        assert_eq!(q.waiting(), 1);
        for i in 2..MAX_SITEMAPS_PER_HOST {
            assert!(q.push(1, &format!("http://a.test/{i}.xml")).is_ok());
        }
        assert_eq!(q.push(1, "http://a.test/x.xml"), Err(NotQueued::HostCap));
        // Restored rows: a fetched one is known, not waiting; numbering goes on after them.
        let mut r = SitemapQueue::default();
        r.restore(0, DONE, "http://a.test/sitemap.xml".into(), 1);
        r.restore(4, PENDING, "http://a.test/s.xml".into(), 1);
        assert_eq!(r.next(1).unwrap().seq, 4);
        assert_eq!(
            r.push(1, "http://a.test/sitemap.xml"),
            Err(NotQueued::Known)
        );
        assert_eq!(r.push(1, "http://a.test/t.xml"), Ok(5));
        // On its host only; another host's is dropped, a known one merely known.
        let origin = "http://a.test";
        assert_eq!(r.push_on_host(1, origin, "http://a.test/u.xml"), Ok(6));
        let other = r.push_on_host(1, origin, "http://a.test:8080/u.xml");
        assert_eq!(other, Err(NotQueued::OtherHost));
        let known = r.push_on_host(1, origin, "http://a.test/u.xml");
        assert_eq!(known, Err(NotQueued::Known));
        assert!(other.unwrap_err().dropped() && !known.unwrap_err().dropped());
        assert!(NotQueued::HostCap.dropped());
    }

    #[test]
    fn candidates_by_type_or_path() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(looks_like_sitemap(
            &u("http://a.test/s"),
            Some("application/xml")
        ));
        assert!(looks_like_sitemap(
            &u("http://a.test/s"),
            Some("text/xml; charset=utf-8")
        ));
        assert!(looks_like_sitemap(
            &u("http://a.test/s.xml.gz"),
            Some("application/octet-stream")
        ));
        assert!(looks_like_sitemap(&u("http://a.test/sitemap.xml"), None));
        assert!(!looks_like_sitemap(
            &u("http://a.test/logo.png"),
            Some("image/png")
        ));
    }
}
