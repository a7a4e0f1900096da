//! Link extraction and URL rules: from an HTML body to the page's out-links.
//!
//! The policies order pages by their out-links, so the crawler must report them the way the
//! simulator sees a graph's successor lists: absolute, normalised (one URL per page), in page
//! order, without duplicates. HTML is parsed with `lol_html`, a streaming tokenizer that never
//! builds a DOM and copes with any malformed input (it never fails on bad markup, only on a
//! memory limit we set, and then the links found so far are kept).
//!
//! What counts as a link: `<a href>` without `rel=nofollow`; the document base is the first
//! `<base href>` (resolved against the page URL), applied to every link as browsers do, even
//! to links before it; `<meta name=robots content=nofollow>` drops every link (and
//! `noindex` is reported); `<link rel=canonical>` is reported, not followed, since following
//! it would mostly fetch the same content twice. Only `http`/`https` URLs are kept.
//!
//! Spider traps are cut here, before a URL ever gets an id: URLs longer than
//! [`UrlRules::max_url_len`], deeper than [`UrlRules::max_path_depth`] path segments, or with a
//! pathological path ([`pathological`]: a segment or run of segments repeated more than twice
//! in a row) are dropped (and counted as trap links). The per-host page cap needs the whole crawl and lives in the engine.
//!
//! A page keeps at most [`UrlRules::max_links_per_page`] distinct links (Heritrix's
//! `max-outlinks`, 6,000 by default), the first ones in page order; the anchors after the
//! cap is reached are counted ([`PageLinks::over_cap`]), never resolved nor kept. Why: one
//! page of short anchors within the body cap (10 MiB) holds about a million links, each a new
//! URL to store, and the policies' per-page work grows with the links. Links are therefore
//! resolved as the tokenizer finds them and collection stops at the cap: the parse holds at
//! most the cap's worth of URLs whatever the page (it held every anchor's string, then every
//! resolved URL, before the cap applied). Sitemaps have their own bounds (crate::sitemap) and
//! are not capped here.

use std::cell::RefCell;
use url::Url;

/// Limits that keep infinite URL spaces (calendars, session ids in paths) out of the crawl.
#[derive(Debug, Clone)]
pub struct UrlRules {
    /// Longest URL kept, in bytes after normalisation.
    pub max_url_len: usize,
    /// Most path segments kept (`/a/b/c` has 3).
    pub max_path_depth: usize,
    /// Most distinct links kept per HTML page, the first ones in page order
    /// (`--max-links-per-page`).
    pub max_links_per_page: usize,
}

impl Default for UrlRules {
    fn default() -> Self {
        Self {
            max_url_len: 2048,
            max_path_depth: 16,
            max_links_per_page: 6_000,
        }
    }
}

/// Why a URL was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlRefusal {
    /// Not an absolute `http`/`https` URL with a host, or not parseable.
    Invalid,
    /// Longer than `max_url_len` or deeper than `max_path_depth`.
    Trap,
    /// A pathological path: one segment or run of segments repeated more than twice in a
    /// row (see [`pathological`]).
    Pathological,
}

/// Normalises a parsed URL with crawlrank's one normaliser,
/// [`crawlrank_util::urls::normalize_parsed`] (what `normalize_url` does, on an already
/// parsed `Url` to avoid a second parse per link: WHATWG parsing lower-cased scheme and host
/// and dropped the default port; the fragment goes, and percent-escapes are normalised by RFC
/// 3986 §6.2.2, so `/%7Euser` and `/~user` are one URL), then applies the crawl's rules.
fn finish(mut url: Url, rules: &UrlRules) -> Result<String, UrlRefusal> {
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(UrlRefusal::Invalid);
    }
    crawlrank_util::urls::normalize_parsed(&mut url);
    let segments: Vec<&str> = url
        .path_segments()
        .map_or_else(Vec::new, |s| s.filter(|s| !s.is_empty()).collect());
    if segments.len() > rules.max_path_depth {
        return Err(UrlRefusal::Trap);
    }
    if pathological(&segments) {
        return Err(UrlRefusal::Pathological);
    }
    let s: String = url.into();
    if s.len() > rules.max_url_len {
        return Err(UrlRefusal::Trap);
    }
    Ok(s)
}

/// Heritrix's pathological-path rule: whether one segment, or a run of segments, is repeated
/// more than twice in a row (`/a/a/a/`, `/a/b/a/b/a/b/`) — the mark of relative links that
/// resolve into ever deeper copies of the same page, which the depth limit alone lets through
/// for up to `max_path_depth` levels on every branch.
pub fn pathological(segments: &[&str]) -> bool {
    let n = segments.len();
    (1..=n / 3).any(|run| {
        (0..=n - 3 * run).any(|i| {
            segments[i..i + run] == segments[i + run..i + 2 * run]
                && segments[i..i + run] == segments[i + 2 * run..i + 3 * run]
        })
    })
}

/// Normalises an absolute URL (seeds, redirect targets resolved by the caller).
pub fn normalize(s: &str, rules: &UrlRules) -> Result<String, UrlRefusal> {
    let url = Url::parse(s.trim()).map_err(|_| UrlRefusal::Invalid)?;
    finish(url, rules)
}

/// Resolves `href` against `base` and normalises it.
pub fn resolve(base: &Url, href: &str, rules: &UrlRules) -> Result<String, UrlRefusal> {
    let url = base.join(href.trim()).map_err(|_| UrlRefusal::Invalid)?;
    finish(url, rules)
}

/// The politeness key of a URL (`http://a.test:8080`): the crawl state's, re-exported here
/// beside the other URL helpers.
pub use crawlrank_util::hosts::origin_key;

/// What a page yields.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct PageLinks {
    /// Out-links: normalised, first occurrence order, no duplicates (the page itself included
    /// if it links to itself, as a graph would have the self-loop).
    pub links: Vec<String>,
    /// `<link rel=canonical>`, normalised, when it names another URL.
    pub canonical: Option<String>,
    /// `<meta name=robots>` said `nofollow` (then `links` is empty).
    pub nofollow: bool,
    /// `<meta name=robots>` said `noindex`.
    pub noindex: bool,
    /// Links dropped as malformed or not http(s).
    pub invalid: u32,
    /// Links dropped by the trap rules (length, depth).
    pub traps: u32,
    /// Links dropped by the pathological-path rule.
    pub pathological: u32,
    /// Links (`<a href>` without `rel=nofollow`) after the page had
    /// [`UrlRules::max_links_per_page`] distinct links: not resolved, so duplicates and
    /// invalid ones among them are counted too.
    pub over_cap: u32,
    /// `<a rel=nofollow>` links skipped.
    pub nofollow_links: u32,
    /// The HTML parser gave up (memory limit); the links found before are kept.
    pub parse_error: bool,
}

/// Decodes the character references of an attribute value (`lol_html` returns values raw):
/// numeric ones and the named ones that occur in URLs. Unknown names are left as written,
/// as browsers do for most of them in attributes.
pub fn decode_entities(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('&') {
        return s.into();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest[1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '#'))
            .map(|e| e + 1);
        let (name, has_semi) = match end {
            Some(e) if rest.as_bytes()[e] == b';' => (&rest[1..e], true),
            Some(e) => (&rest[1..e], false),
            None => (&rest[1..], false),
        };
        let decoded = if let Some(num) = name.strip_prefix('#') {
            let v = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => num.parse().ok(),
            };
            v.map(|v| {
                char::from_u32(v)
                    .filter(|&c| c != '\0')
                    .unwrap_or('\u{FFFD}')
            })
        } else if has_semi {
            match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some('\u{a0}'),
                _ => None,
            }
        } else {
            None
        };
        match decoded {
            Some(c) if !name.is_empty() => {
                out.push(c);
                rest = &rest[1 + name.len() + usize::from(has_semi)..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out.into()
}

/// What the tokenizer found so far. Links are resolved as they are found, against the base
/// known at the time; the first `<base href>` applies to every link (as browsers do), so one
/// that comes after links re-resolves those kept ([`Found::rebase`]).
struct Found<'a> {
    page_url: &'a Url,
    rules: &'a UrlRules,
    /// The document's base: the first `<base href>` resolved, else the page's URL.
    base: Url,
    /// A `<base href>` was read (later ones are ignored).
    base_seen: bool,
    /// The kept links' `href`s (entities decoded), for a late `<base href>`; dropped once a
    /// base is read, since the base cannot change any more.
    hrefs: Vec<String>,
    /// The kept links, for duplicates.
    seen: std::collections::HashSet<String>,
    canonical: Option<String>,
    out: PageLinks,
}

impl<'a> Found<'a> {
    fn new(page_url: &'a Url, rules: &'a UrlRules) -> Self {
        Self {
            page_url,
            rules,
            base: page_url.clone(),
            base_seen: false,
            hrefs: Vec::new(),
            seen: std::collections::HashSet::new(),
            canonical: None,
            out: PageLinks::default(),
        }
    }

    /// An `<a href>` (`rel=nofollow` ones excluded) while the page has fewer links than the
    /// cap: kept when valid and new, else counted.
    fn link(&mut self, href: &str) {
        let href = decode_entities(href);
        self.keep(&href);
    }

    /// Resolves `href` (entities decoded) against the base and keeps it when new.
    fn keep(&mut self, href: &str) {
        match resolve(&self.base, href, self.rules) {
            Ok(u) => {
                if !self.seen.contains(&u) {
                    self.seen.insert(u.clone());
                    self.out.links.push(u);
                    if !self.base_seen {
                        self.hrefs.push(href.to_owned());
                    }
                }
            }
            Err(UrlRefusal::Invalid) => self.out.invalid += 1,
            Err(UrlRefusal::Trap) => self.out.traps += 1,
            Err(UrlRefusal::Pathological) => self.out.pathological += 1,
        }
    }

    /// The first `<base href>`: the base of every link from now on, and of those kept
    /// before it, which are resolved again (and may now be refused or fall together).
    fn rebase(&mut self, href: &str) {
        if self.base_seen {
            return;
        }
        self.base_seen = true;
        let Ok(base) = self.page_url.join(decode_entities(href).trim()) else {
            self.hrefs = Vec::new();
            return;
        };
        self.base = base;
        let before = std::mem::take(&mut self.hrefs);
        if self.base == *self.page_url || before.is_empty() {
            return;
        }
        self.out.links.clear();
        self.seen.clear();
        for h in &before {
            self.keep(h);
        }
    }
}

/// The selectors [`extract_links`] listens to, parsed once: parsing them for every page (what
/// lol_html's `element!` macro does) was a sixth of the parser's time on small pages.
fn selectors() -> &'static [lol_html::Selector; 4] {
    static SELECTORS: std::sync::OnceLock<[lol_html::Selector; 4]> = std::sync::OnceLock::new();
    SELECTORS.get_or_init(|| {
        [
            "a[href]",
            "base[href]",
            "meta[name][content]",
            "link[rel][href]",
        ]
        // Constant, valid selectors: a parse failure is a typo caught by every test.
        .map(|s| s.parse().expect("a valid CSS selector"))
    })
}

/// An element handler on a pre-parsed selector: lol_html's `element!` without the parse.
fn on_element<'s, 'h>(
    selector: &'s lol_html::Selector,
    handler: impl FnMut(&mut lol_html::html_content::Element<'_, '_>) -> lol_html::HandlerResult + 'h,
) -> (
    std::borrow::Cow<'s, lol_html::Selector>,
    lol_html::ElementContentHandlers<'h>,
) {
    (
        std::borrow::Cow::Borrowed(selector),
        lol_html::ElementContentHandlers::default().element(handler),
    )
}

/// Extracts the out-links of an HTML page fetched from `page_url`. Never fails: bad markup
/// and bad bytes (decoded lossily) yield what can be read.
pub fn extract_links(page_url: &Url, body: &[u8], rules: &UrlRules) -> PageLinks {
    use lol_html::{HtmlRewriter, MemorySettings, Settings};
    let [a_href, base_href, meta_robots, link_rel] = selectors();
    let found = RefCell::new(Found::new(page_url, rules));
    let parse_error = {
        let handlers = vec![
            on_element(a_href, |el| {
                let nofollow = el.get_attribute("rel").is_some_and(|rel| {
                    rel.split_ascii_whitespace()
                        .any(|t| t.eq_ignore_ascii_case("nofollow"))
                });
                let mut f = found.borrow_mut();
                if nofollow {
                    f.out.nofollow_links += 1;
                } else if f.out.links.len() >= f.rules.max_links_per_page {
                    // Past the cap the value is not even copied out of the tokenizer.
                    f.out.over_cap = f.out.over_cap.saturating_add(1);
                } else if let Some(h) = el.get_attribute("href") {
                    f.link(&h);
                }
                Ok(())
            }),
            on_element(base_href, |el| {
                if let Some(h) = el.get_attribute("href") {
                    found.borrow_mut().rebase(&h);
                }
                Ok(())
            }),
            on_element(meta_robots, |el| {
                let is_robots = el
                    .get_attribute("name")
                    .is_some_and(|n| n.trim().eq_ignore_ascii_case("robots"));
                if is_robots {
                    let content = el
                        .get_attribute("content")
                        .unwrap_or_default()
                        .to_ascii_lowercase();
                    let mut f = found.borrow_mut();
                    for t in content.split([',', ' ']).map(str::trim) {
                        match t {
                            "nofollow" | "none" => f.out.nofollow = true,
                            "noindex" => f.out.noindex = true,
                            _ => {}
                        }
                        if t == "none" {
                            f.out.noindex = true;
                        }
                    }
                }
                Ok(())
            }),
            on_element(link_rel, |el| {
                let canonical = el.get_attribute("rel").is_some_and(|rel| {
                    rel.split_ascii_whitespace()
                        .any(|t| t.eq_ignore_ascii_case("canonical"))
                });
                let mut f = found.borrow_mut();
                if canonical && f.canonical.is_none() {
                    f.canonical = el.get_attribute("href");
                }
                Ok(())
            }),
        ];
        let mut settings = Settings::new()
            // Keep going on ambiguous markup: a crawler wants the links, not a faithful rewrite.
            .with_strict(false)
            // A hostile page must not make the parser hold more than this; past it we keep
            // the links read so far.
            .with_memory_settings(MemorySettings::new().with_max_allowed_memory_usage(16 << 20));
        for h in handlers {
            settings = settings.append_element_content_handler(h);
        }
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        // Feed in chunks as a network stream would; a failure stops parsing, nothing else.
        let mut failed = false;
        for chunk in body.chunks(64 * 1024) {
            if rewriter.write(chunk).is_err() {
                failed = true;
                break;
            }
        }
        if !failed && rewriter.end().is_err() {
            failed = true;
        }
        failed
    };
    let found = found.into_inner();
    let mut out = found.out;
    out.parse_error = parse_error;
    out.canonical = found
        .canonical
        .as_deref()
        .and_then(|c| resolve(&found.base, &decode_entities(c), rules).ok())
        .filter(|c| c.as_str() != page_url.as_str());
    if out.nofollow {
        // The page's links are not ours to follow, nor to count.
        out.links = Vec::new();
        out.invalid = 0;
        out.traps = 0;
        out.pathological = 0;
        out.over_cap = 0;
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn pathological_paths_are_traps() {
        let seg = |p: &str| -> Vec<String> {
            p.split('/')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        };
        let is = |p: &str| {
            let v = seg(p);
            pathological(&v.iter().map(String::as_str).collect::<Vec<_>>())
        };
        for p in [
            "/a/a/a/",
            "/lin/a/a/a/x",
            "/d/a/b/a/b/a/b/",
            "/x/1/2/3/1/2/3/1/2/3",
        ] {
            assert!(is(p), "{p}");
        }
        for p in [
            "/a/a/",
            "/a/b/a/b/",
            "/docs/api/docs/api/v2",
            "/2024/01/01/",
            "/",
        ] {
            assert!(!is(p), "{p}");
        }
        let rules = UrlRules::default();
        assert_eq!(
            normalize("http://a.test/lin/a/a/a/", &rules),
            Err(UrlRefusal::Pathological)
        );
        assert!(normalize("http://a.test/lin/a/a/", &rules).is_ok());
    }

    use super::*;

    fn links(html: &str) -> PageLinks {
        extract_links(
            &Url::parse("http://a.test/dir/page.html").unwrap(),
            html.as_bytes(),
            &UrlRules::default(),
        )
    }

    #[test]
    fn resolves_dedups_and_keeps_order() {
        let p = links(
            r#"<a href="b">x</a><A HREF="/c#frag">y</a><a href="b#top">z</a><a href="HTTP://B.TEST:80/">w</a>"#,
        );
        assert_eq!(
            p.links,
            ["http://a.test/dir/b", "http://a.test/c", "http://b.test/"]
        );
    }

    #[test]
    fn spellings_of_one_url_are_one_link_and_agree_with_the_graphs_normaliser() {
        // RFC 3986 §6.2.2.2: `%7E` is `~`, whatever the case of its hex digits.
        let p =
            links(r#"<a href="/~user">a</a><a href="/%7Euser">b</a><a href="/%7euser#x">c</a>"#);
        assert_eq!(p.links, ["http://a.test/~user"]);
        let rules = UrlRules::default();
        let base = Url::parse("http://a.test/dir/page.html").unwrap();
        for u in [
            "HTTP://A.test:80/%7Esmith/./x/../home.html#top",
            "http://a.test/%41%2f%3a?q=%7e%2a&r=%zz",
            "https://a.test:443/p%2Eq/%C3%a9",
            "http://a.test/x?%",
        ] {
            let graph = crawlrank_util::urls::normalize_url(u).unwrap();
            assert_eq!(normalize(u, &rules).unwrap(), graph, "{u}");
            assert_eq!(resolve(&base, u, &rules).unwrap(), graph, "{u}");
        }
    }

    #[test]
    fn base_href_applies_to_every_link() {
        let p = links(r#"<a href="x">x</a><base href="http://c.test/sub/"><a href="y">y</a>"#);
        assert_eq!(p.links, ["http://c.test/sub/x", "http://c.test/sub/y"]);
    }

    #[test]
    fn nofollow_links_and_meta() {
        let p = links(r#"<a rel="external NoFollow" href="/n">n</a><a href="/f">f</a>"#);
        assert_eq!(p.links, ["http://a.test/f"]);
        assert_eq!(p.nofollow_links, 1);
        let p = links(r#"<meta name="ROBOTS" content="noindex, nofollow"><a href="/f">f</a>"#);
        assert!(p.links.is_empty() && p.nofollow && p.noindex);
    }

    #[test]
    fn canonical_is_reported_not_followed() {
        let p = links(r#"<link rel="canonical" href="/canon"><a href="/f">f</a>"#);
        assert_eq!(p.canonical.as_deref(), Some("http://a.test/canon"));
        assert_eq!(p.links, ["http://a.test/f"]);
    }

    #[test]
    fn junk_and_traps_are_counted_not_fatal() {
        let deep = format!("/{}", "d/".repeat(40));
        let long = format!("/{}", "x".repeat(3000));
        let html = format!(
            "<a href='mailto:x@y'>m</a><a href='javascript:void(0)'>j</a><a href='http://[::1'>b</a>\
             <a href='{deep}'>d</a><a href='{long}'>l</a><a href='ok'>ok</a><div><<p></a></b>"
        );
        let mut body = html.into_bytes();
        body.extend_from_slice(&[
            0xff, 0xfe, b'<', b'a', b' ', b'h', b'r', b'e', b'f', b'=', b'z', b'>',
        ]);
        let p = extract_links(
            &Url::parse("http://a.test/").unwrap(),
            &body,
            &UrlRules::default(),
        );
        assert_eq!(p.links, ["http://a.test/ok", "http://a.test/z"]);
        assert_eq!(p.invalid, 3);
        assert_eq!(p.traps, 2);
    }

    #[test]
    fn links_past_the_cap_are_dropped_and_counted() {
        let html: String = (0..10)
            .map(|i| format!("<a href='/l{i}'>x</a><a href='/l{i}#again'>dup</a>"))
            .collect::<String>()
            + "<a href='mailto:x@y'>m</a><a href='/l1'>known</a>";
        let rules = UrlRules {
            max_links_per_page: 4,
            ..UrlRules::default()
        };
        let p = extract_links(
            &Url::parse("http://a.test/").unwrap(),
            html.as_bytes(),
            &rules,
        );
        let kept: Vec<String> = (0..4).map(|i| format!("http://a.test/l{i}")).collect();
        assert_eq!(p.links, kept);
        // The 15 anchors after the fourth distinct link are counted, not resolved: the
        // duplicate, the mailto: and the known one among them too.
        assert_eq!((p.over_cap, p.invalid), (15, 0));
        let all = extract_links(
            &Url::parse("http://a.test/").unwrap(),
            html.as_bytes(),
            &UrlRules::default(),
        );
        assert_eq!((all.links.len(), all.over_cap), (10, 0));
        assert_eq!(UrlRules::default().max_links_per_page, 6_000);
    }

    #[test]
    fn a_late_base_re_resolves_the_links_kept_before_it() {
        let rules = UrlRules {
            max_links_per_page: 2,
            ..UrlRules::default()
        };
        let html = "<a href='x'>x</a><a href='/x'>x</a><a href='y'>y</a>\
                    <base href='http://c.test/'><a href='z'>z</a>";
        let p = extract_links(
            &Url::parse("http://a.test/dir/").unwrap(),
            html.as_bytes(),
            &rules,
        );
        // `x` and `/x` were two links under the page's URL, so `y` came past the cap and was
        // counted; under the base they are one, so `z` is within the cap again.
        assert_eq!(p.links, ["http://c.test/x", "http://c.test/z"]);
        assert_eq!(p.over_cap, 1);
        // A nofollow page reports nothing of its links.
        let p =
            links("<a href='mailto:x'>m</a><a href='/a'>a</a><meta name=robots content=nofollow>");
        assert!(p.links.is_empty() && p.invalid == 0 && p.nofollow);
    }

    #[test]
    fn entities_in_hrefs_are_decoded() {
        let p = links(r#"<a href="/q?a=1&amp;b=2&#38;c=3&#x26;d=4&copy=5&zz;">x</a>"#);
        assert_eq!(p.links, ["http://a.test/q?a=1&b=2&c=3&d=4&copy=5&zz;"]);
        assert_eq!(decode_entities("&#0;&#xZZ;&"), "\u{FFFD}&#xZZ;&");
    }

    #[test]
    fn origin_keys() {
        assert_eq!(
            origin_key("http://a.test/x").as_deref(),
            Some("http://a.test")
        );
        assert_eq!(
            origin_key("https://a.test:8443/x").as_deref(),
            Some("https://a.test:8443")
        );
    }
}
