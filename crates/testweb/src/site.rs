//! The pages of the test web: one URL per graph node, the reverse index from a request's host
//! and path to its node, and the HTML of a node's page.
//!
//! Why a table of our own rather than a `HashMap<String, u32>`: the server must hold graphs of
//! millions of pages, so URLs live in one `String` with offsets (no per-URL allocation) and the
//! reverse index is a sorted vector of `(hash, node)` pairs, 12 bytes per node, checked against
//! the table on lookup. Every node gets exactly one URL and every URL names exactly one node,
//! so `url(node_of(u)) == u` always holds and a crawler's output can be compared with the graph.

use anyhow::{bail, Result};
use crawlrank_graph::Csr;
use crawlrank_rng::splitmix64;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::Arc;

/// The domain of every generated host (`.test` is reserved by RFC 2606: it never resolves).
pub const TEST_DOMAIN: &str = "crawlrank.test";

/// The generated URL of `node`: `http://h{node / pages_per_host}.crawlrank.test/p{node}.html`.
///
/// Consecutive ids share a host in blocks of `pages_per_host`, as in LAW graphs (whose ids are
/// sorted by URL, so a host's pages are contiguous); a graph of `n` nodes therefore spreads
/// over `ceil(n / pages_per_host)` hosts, enough for a polite crawler to keep many in flight.
pub fn generated_url(node: u32, pages_per_host: u32) -> String {
    format!(
        "http://h{}.{TEST_DOMAIN}/p{node}.html",
        node / pages_per_host.max(1)
    )
}

/// Splits an absolute URL into `(origin, host, path_and_query)`: the origin is
/// `scheme://authority` (port included), the host is the authority without user info and
/// port, the path keeps its query and loses its fragment (`/` when empty). `None` when `url`
/// has no `://`.
pub(crate) fn split_url(url: &str) -> Option<(&str, &str, &str)> {
    let scheme_end = url.find("://")?;
    let rest = &url[scheme_end + 3..];
    let auth_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let origin = &url[..scheme_end + 3 + auth_len];
    let mut path = &rest[auth_len..];
    if let Some(i) = path.find('#') {
        path = &path[..i];
    }
    if path.is_empty() {
        path = "/";
    }
    Some((origin, host_of_authority(&rest[..auth_len]), path))
}

/// The host of an authority (`user@host:port` → `host`; `[::1]:80` → `[::1]`).
pub(crate) fn host_of_authority(a: &str) -> &str {
    let a = a.rsplit_once('@').map_or(a, |(_, h)| h);
    if a.starts_with('[') {
        return a.find(']').map_or(a, |i| &a[..=i]);
    }
    a.split_once(':').map_or(a, |(h, _)| h)
}

/// FNV-1a over host and path: deterministic across runs and processes (unlike `RandomState`),
/// and fast on the short strings URLs are.
fn key_hash(host: &str, path: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in host.as_bytes().iter().chain(&[0xff]).chain(path.as_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The URL table, reverse index and renderer of the graph's pages.
pub(crate) struct Site {
    graph: Arc<Csr>,
    /// URL of node `i` is `text[starts[i]..starts[i + 1]]`.
    text: String,
    starts: Vec<u64>,
    /// `(key_hash(host, path), node)`, sorted.
    index: Vec<(u64, u32)>,
    hosts: HashSet<Box<str>>,
    /// How many nodes got a generated URL because theirs was missing, invalid or a duplicate.
    pub fallbacks: usize,
}

impl Site {
    /// Builds the table. With `urls`, node `i` is served at the normalised `urls[i]`; a node
    /// whose URL is empty, invalid, not `http(s)`, or a duplicate of an earlier node's gets its
    /// generated URL instead, so every node stays reachable under a unique URL. Every URL,
    /// the graph's and the generated ones, then gets the one scheme the server speaks for the
    /// graph's pages: `https://` when `https`, else `http://`.
    pub fn new(
        graph: Arc<Csr>,
        urls: Option<Vec<String>>,
        pages_per_host: u32,
        https: bool,
    ) -> Result<Site> {
        let n = graph.num_nodes();
        if n > u32::MAX as usize {
            bail!("the graph has {n} nodes; the test web serves at most 2^32 - 1");
        }
        if pages_per_host == 0 {
            bail!("pages per host must be at least 1");
        }
        let mut fallbacks = 0;
        let chosen: Vec<String> = match urls {
            None => (0..n as u32)
                .map(|v| generated_url(v, pages_per_host))
                .collect(),
            Some(urls) => {
                if urls.len() != n {
                    bail!("the graph has {n} nodes but {} URLs", urls.len());
                }
                let mut normal: Vec<Option<String>> = urls
                    .iter()
                    .map(|u| {
                        let u = crawlrank_graph::urls::normalize_url(u).ok()?;
                        (u.starts_with("http://") || u.starts_with("https://")).then_some(u)
                    })
                    .collect();
                // Duplicates (two nodes, one URL — the scheme aside, since all are served
                // under one) keep the first node; later ones fall back.
                let mut seen: HashMap<(&str, &str), u32> = HashMap::with_capacity(n);
                let mut dup = vec![false; n];
                for (v, u) in normal.iter().enumerate() {
                    if let Some((_, host, path)) = u.as_deref().and_then(split_url) {
                        if seen.insert((host, path), v as u32).is_some() {
                            dup[v] = true;
                        }
                    }
                }
                drop(seen);
                for (v, u) in normal.iter_mut().enumerate() {
                    if u.is_none() || dup[v] {
                        *u = Some(generated_url(v as u32, pages_per_host));
                        fallbacks += 1;
                    }
                }
                normal.into_iter().map(Option::unwrap_or_default).collect()
            }
        };
        let mut text = String::with_capacity(chosen.iter().map(|u| u.len() + 1).sum());
        let mut starts = Vec::with_capacity(n + 1);
        starts.push(0u64);
        let mut index = Vec::with_capacity(n);
        let mut hosts = HashSet::new();
        for (v, u) in chosen.iter().enumerate() {
            let start = text.len();
            let (_, rest) = u.split_once("://").expect("chosen URLs are http(s)");
            text.push_str(if https { "https://" } else { "http://" });
            text.push_str(rest);
            starts.push(text.len() as u64);
            let (_, host, path) = split_url(&text[start..]).expect("chosen URLs are absolute");
            index.push((key_hash(host, path), v as u32));
            if !hosts.contains(host) {
                hosts.insert(host.into());
            }
        }
        drop(chosen);
        index.sort_unstable();
        let site = Site {
            graph,
            text,
            starts,
            index,
            hosts,
            fallbacks,
        };
        // A fallback URL could only clash with a graph URL under crawlrank.test; refuse rather
        // than serve one URL for two nodes.
        for w in site.index.windows(2) {
            if w[0].0 == w[1].0 && site.key(w[0].1) == site.key(w[1].1) {
                bail!(
                    "nodes {} and {} would both be served at {}",
                    w[0].1,
                    w[1].1,
                    site.url(w[0].1)
                );
            }
        }
        Ok(site)
    }

    pub fn graph(&self) -> &Arc<Csr> {
        &self.graph
    }

    pub fn num_nodes(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn num_hosts(&self) -> usize {
        self.hosts.len()
    }

    pub fn has_host(&self, host: &str) -> bool {
        self.hosts.contains(host)
    }

    /// The URL of `node` (panics when out of range, like slice indexing).
    pub fn url(&self, node: u32) -> &str {
        let v = node as usize;
        &self.text[self.starts[v] as usize..self.starts[v + 1] as usize]
    }

    fn key(&self, node: u32) -> (&str, &str) {
        let (_, h, p) = split_url(self.url(node)).expect("table URLs are absolute");
        (h, p)
    }

    /// The node served at `host` (lower case, no port) and `path` (with query).
    pub fn lookup(&self, host: &str, path: &str) -> Option<u32> {
        let h = key_hash(host, path);
        let first = self.index.partition_point(|&(k, _)| k < h);
        self.index[first..]
            .iter()
            .take_while(|&&(k, _)| k == h)
            .map(|&(_, v)| v)
            .find(|&v| self.key(v) == (host, path))
    }

    /// The node whose URL is `url` (scheme and port ignored, host case-insensitive).
    pub fn node_of(&self, url: &str) -> Option<u32> {
        let (_, host, path) = split_url(url)?;
        if host.bytes().any(|b| b.is_ascii_uppercase()) {
            self.lookup(&host.to_ascii_lowercase(), path)
        } else {
            self.lookup(host, path)
        }
    }

    /// The HTML page of `v`: its successors as `<a href>`s in graph order, then `extra`
    /// absolute links (the trap index, when configured).
    pub fn render(&self, v: u32, extra: &[&str]) -> Vec<u8> {
        let succ = self.graph.successors(v as usize);
        let mut out = String::with_capacity(256 + 72 * (succ.len() + extra.len()));
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>crawlrank test page {v}</title>\n</head>\n<body>\n<h1>Page {v}</h1>\n\
             <p>{} links.</p>\n<ul>\n",
            succ.len()
        );
        let from = self.url(v);
        for (i, &s) in succ.iter().enumerate() {
            let h = splitmix64(u64::from(v) << 32 | i as u64);
            out.push_str(if h % 11 == 5 {
                "<li><a class=\"l\" "
            } else {
                "<li><a "
            });
            write_href(&mut out, from, self.url(s), h);
            let _ = writeln!(out, ">page {s}</a></li>");
        }
        for (i, e) in extra.iter().enumerate() {
            out.push_str("<li><a ");
            write_href(
                &mut out,
                from,
                e,
                splitmix64(!(u64::from(v) << 32 | i as u64)),
            );
            out.push_str(">more</a></li>\n");
        }
        out.push_str("</ul>\n</body>\n</html>\n");
        out.into_bytes()
    }
}

/// Writes `href="…"` for a link from `from` to `to`, in a form chosen by `h`: absolute,
/// protocol-relative (`//host/p`), root-relative (`/p`), directory-relative (`p`, `./p`) —
/// the relative forms only when they resolve back to `to` — with `'` quotes now and then and
/// `&` escaped as `&amp;`, so the crawler's attribute decoding and URL resolution are both
/// exercised. Deterministic per (page, link position).
pub(crate) fn write_href(out: &mut String, from: &str, to: &str, h: u64) {
    let q = if h % 7 == 3 { '\'' } else { '"' };
    out.push_str("href=");
    out.push(q);
    escape_attr(out, &link_form(from, to, h));
    out.push(q);
}

fn link_form(from: &str, to: &str, h: u64) -> String {
    let (Some((f_origin, _, f_path)), Some((t_origin, _, t_path))) =
        (split_url(from), split_url(to))
    else {
        return to.to_owned();
    };
    let f_scheme = &f_origin[..f_origin.find("://").unwrap_or(0)];
    let t_scheme_end = t_origin.find("://").unwrap_or(0);
    let protocol_relative = || to[t_scheme_end + 1..].to_owned();
    if f_origin != t_origin {
        return if h % 3 == 1 && f_scheme == &t_origin[..t_scheme_end] {
            protocol_relative()
        } else {
            to.to_owned()
        };
    }
    let dir_relative = || {
        let f_dir = &f_path[..f_path
            .split('?')
            .next()
            .unwrap_or("")
            .rfind('/')
            .map_or(0, |i| i + 1)];
        let rel = t_path.strip_prefix(f_dir)?;
        let first_seg = rel.split(['/', '?']).next().unwrap_or("");
        (!rel.is_empty() && !rel.starts_with(['/', '?']) && !first_seg.contains(':')).then_some(rel)
    };
    match h % 5 {
        0 => to.to_owned(),
        1 => t_path.to_owned(),
        2 => dir_relative().map_or_else(|| t_path.to_owned(), str::to_owned),
        3 => dir_relative().map_or_else(protocol_relative, |r| format!("./{r}")),
        _ => protocol_relative(),
    }
}

/// HTML attribute escaping (the five characters that matter in a quoted attribute).
pub(crate) fn escape_attr(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_host() {
        assert_eq!(
            split_url("http://a.b:8/x?y#z"),
            Some(("http://a.b:8", "a.b", "/x?y"))
        );
        assert_eq!(
            split_url("http://u@[::1]:8"),
            Some(("http://u@[::1]:8", "[::1]", "/"))
        );
        assert_eq!(split_url("nope"), None);
    }

    #[test]
    fn link_forms_resolve_back() {
        let pages = [
            "http://a.test/d/e/p1.html",
            "http://a.test/d/e/p2.html?x=1&y=2",
            "http://a.test/d/q.html",
            "http://a.test/",
            "http://a.test:81/d/e/p1.html",
            "https://b.test/z",
            "http://c.test/",
        ];
        for from in pages {
            for to in pages {
                for h in 0..200 {
                    let form = link_form(from, to, h);
                    let base = url::Url::parse(from).unwrap();
                    assert_eq!(
                        base.join(&form).unwrap().as_str(),
                        to,
                        "{from} -> {to} as {form}"
                    );
                }
            }
        }
    }
}
