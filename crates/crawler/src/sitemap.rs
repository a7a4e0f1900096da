//! Sitemaps (sitemaps.org protocol 0.9) as a source of URLs.
//!
//! A site lists its pages in `/sitemap.xml` and in the files its robots.txt names on
//! `Sitemap:` lines; pages linked from nowhere are found only there. With `--sitemaps` (on by
//! default on the command line) the crawl seeds, for every seed host, `/sitemap.xml` and the
//! robots.txt `Sitemap:` files. A sitemap is then a page of the crawl like any other — popped in
//! policy order, fetched under politeness, logged and replayed — whose out-links are its
//! entries; a sitemap index's entries are further sitemaps. *Why a page*: the policies, the
//! event log and the budget need no special case, and the exported graph shows where each URL
//! came from. A `/sitemap.xml` that does not exist costs one request (a 404) per seed host.
//!
//! [`parse_sitemap`] reads a fetched body with `quick-xml` (a maintained streaming parser: a
//! 50 MB file is never held as a tree), after gunzipping it when it starts with the gzip magic.
//! Hostile input is bounded, counted and never fatal:
//! - the protocol's limits: at most [`MAX_ENTRIES`] entries and [`MAX_BYTES`] uncompressed
//!   bytes per file (a gzip bomb stops there); entries past them are dropped and counted;
//! - entries on another host than the sitemap are dropped and counted (the protocol lets a
//!   sitemap list only URLs of its own site; cross-site sitemaps need the other site's
//!   robots.txt, which a crawl cannot check here);
//! - malformed XML ends the parse with what was read so far, and is counted;
//! - an index inside an index inside an index… is ordinary link following: each level is one
//!   more page, bounded by the per-host URL cap and the trap rules like any chain of links.

use crate::links::{normalize, UrlRefusal, UrlRules};
use crate::scope::host_name;
use quick_xml::events::Event;
use std::io::Read;
use url::Url;

/// Most entries read from one sitemap file (the protocol's limit).
pub const MAX_ENTRIES: usize = 50_000;

/// Most uncompressed bytes read from one sitemap file (the protocol's limit: 50 MiB).
pub const MAX_BYTES: usize = 50 << 20;

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
