//! A host per page, from a graph's `.urls`, for host pruning, politeness and per-host
//! statistics.
//!
//! [`Hosts`] numbers the distinct host names of a list of URLs (one URL per node, as in a
//! `.urls` file) in order of first appearance, so that in a graph numbered in lexicographic
//! URL order (LAW's order, and what `crawlrank import` produces for URL pairs) host ids
//! increase with node ids and each host's pages are contiguous.
//!
//! - The host is the URL's host name, lower-cased and without the port or user info
//!   (`http://User@WWW.Example.com:8080/x` → `www.example.com`); `http` and `https` pages of
//!   one host share it. IP addresses are hosts like any other (`[::1]` keeps its brackets).
//! - A line that is not a URL with a host (empty, unparseable, `mailto:`…) belongs to a single
//!   extra host named [`INVALID_HOST`], created on the first such line; such pages are counted
//!   in [`Hosts::num_invalid_pages`].
//! - [`Hosts::by_domain`] gives the same mapping at the level of registrable domains (eTLD+1
//!   from the Public Suffix List via the `psl` crate: `a.example.co.uk` and `b.example.co.uk`
//!   both map to `example.co.uk`). A host that is an IP address, has no public suffix
//!   (`localhost`, `intranet`) or is itself a public suffix (`blogspot.com`) is its own domain.
//!
//! Memory is 4 bytes per node plus the host names.

use crate::urls::UrlReader;
use anyhow::Result;
use std::collections::HashMap;
use std::path::Path;

/// The name of the host that collects pages whose URL has no valid host.
pub const INVALID_HOST: &str = "(invalid)";

/// A host id for every node, and the hosts' names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hosts {
    host_of: Vec<u32>,
    names: Vec<String>,
    pages: Vec<u64>,
    invalid: Option<u32>,
    num_invalid: u64,
}

/// Builds [`Hosts`] one URL at a time.
#[derive(Debug, Default)]
struct Builder {
    hosts: Hosts,
    ids: HashMap<String, u32>,
}

impl Builder {
    fn push_name(&mut self, name: Option<&str>) {
        let h = match name {
            Some(name) => match self.ids.get(name) {
                Some(&h) => h,
                None => {
                    let h = self.hosts.names.len() as u32;
                    self.ids.insert(name.to_owned(), h);
                    self.hosts.names.push(name.to_owned());
                    self.hosts.pages.push(0);
                    h
                }
            },
            None => {
                self.hosts.num_invalid += 1;
                match self.hosts.invalid {
                    Some(h) => h,
                    None => {
                        let h = self.hosts.names.len() as u32;
                        self.hosts.invalid = Some(h);
                        self.hosts.names.push(INVALID_HOST.to_owned());
                        self.hosts.pages.push(0);
                        h
                    }
                }
            }
        };
        self.hosts.pages[h as usize] += 1;
        self.hosts.host_of.push(h);
    }

    fn push_url(&mut self, url: &str) {
        match fast_host(url) {
            Some(h) => self.push_name(Some(h)),
            None => self.push_name(host_name(url).as_deref()),
        }
    }
}

impl Hosts {
    /// The hosts of `urls`, node `i` having URL number `i`.
    pub fn from_urls<I, S>(urls: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut b = Builder::default();
        for u in urls {
            b.push_url(u.as_ref());
        }
        b.hosts
    }

    /// The hosts of the URLs in a `.urls` file (plain or gzip-compressed), read as a stream.
    pub fn from_urls_file(path: &Path) -> Result<Self> {
        let mut r = UrlReader::open(path)?;
        let mut b = Builder::default();
        while let Some(u) = r.next_url()? {
            b.push_url(u);
        }
        Ok(b.hosts)
    }

    /// Number of nodes (URLs) mapped.
    pub fn num_nodes(&self) -> usize {
        self.host_of.len()
    }

    /// Number of distinct hosts (including the invalid host, if any page has no valid host).
    pub fn num_hosts(&self) -> usize {
        self.names.len()
    }

    /// The host of `node`.
    #[inline]
    pub fn host(&self, node: usize) -> u32 {
        self.host_of[node]
    }

    /// The host of every node.
    pub fn host_of(&self) -> &[u32] {
        &self.host_of
    }

    /// The name of `host`.
    pub fn name(&self, host: u32) -> &str {
        &self.names[host as usize]
    }

    /// The names of all hosts, by host id.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The number of pages (nodes) of `host`.
    pub fn pages(&self, host: u32) -> u64 {
        self.pages[host as usize]
    }

    /// The number of pages of every host, by host id.
    pub fn pages_per_host(&self) -> &[u64] {
        &self.pages
    }

    /// The id of the [`INVALID_HOST`], if some URL had no valid host.
    pub fn invalid_host(&self) -> Option<u32> {
        self.invalid
    }

    /// The number of pages whose URL has no valid host.
    pub fn num_invalid_pages(&self) -> u64 {
        self.num_invalid
    }

    /// The same pages grouped by registrable domain (eTLD+1) instead of host: "host" ids of
    /// the result are domain ids, numbered in order of first appearance, and names are domain
    /// names. The invalid host stays invalid.
    pub fn by_domain(&self) -> Hosts {
        let mut out = Hosts {
            num_invalid: self.num_invalid,
            ..Hosts::default()
        };
        let mut ids: HashMap<String, u32> = HashMap::new();
        let domain_of_host: Vec<u32> = self
            .names
            .iter()
            .enumerate()
            .map(|(h, name)| {
                let key = (self.invalid != Some(h as u32)).then(|| registrable_domain(name));
                let existing = match &key {
                    Some(d) => ids.get(d).copied(),
                    None => out.invalid,
                };
                existing.unwrap_or_else(|| {
                    let id = out.names.len() as u32;
                    match key {
                        Some(d) => {
                            out.names.push(d.clone());
                            ids.insert(d, id);
                        }
                        None => {
                            out.names.push(INVALID_HOST.to_owned());
                            out.invalid = Some(id);
                        }
                    }
                    out.pages.push(0);
                    id
                })
            })
            .collect();
        for (h, &p) in self.pages.iter().enumerate() {
            out.pages[domain_of_host[h] as usize] += p;
        }
        out.host_of = self
            .host_of
            .iter()
            .map(|&h| domain_of_host[h as usize])
            .collect();
        out
    }
}

/// The host of a URL as [`Hosts`] defines it: WHATWG-parsed, lower-case, without port or
/// user info; `None` for a string that is not a URL with a host.
pub fn host_name(url: &str) -> Option<String> {
    if let Some(h) = fast_host(url) {
        return Some(h.to_owned());
    }
    let u = url::Url::parse(url.trim()).ok()?;
    u.host_str().filter(|h| !h.is_empty()).map(str::to_owned)
}

/// [`origin_key`] by slicing, for an http(s) URL that [`fast_host`] reads; a default port
/// (80, 443) is left out as the parser leaves it out.
fn fast_origin(url: &str) -> Option<String> {
    let (scheme, host, port) = fast_parts(url)?;
    let default = match scheme {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let mut origin = String::with_capacity(scheme.len() + 3 + host.len() + 6);
    origin.push_str(scheme);
    origin.push_str("://");
    origin.push_str(host);
    if let Some(p) = port.filter(|&p| p != default) {
        use std::fmt::Write;
        let _ = write!(origin, ":{p}");
    }
    Some(origin)
}

/// The host of a URL by plain string slicing, or `None` when the URL is not in the simple
/// form this can be sure about (the caller then parses it): see [`fast_parts`].
fn fast_host(url: &str) -> Option<&str> {
    fast_parts(url).map(|(_, host, _)| host)
}

/// A URL's scheme, host and port (`None`: none given, or empty) read in one pass over its
/// bytes, when the URL is in the simple form every crawl's URLs take once normalised: a
/// lower-case scheme, `://`, a host of lower-case ASCII letters, digits, dots, hyphens and
/// underscores that is not an IPv4 address in another notation nor holds a punycode label
/// the parser would check, and an optional port of digits the parser accepts (up to 65535),
/// then the end or `/`, `?`, `#`. `None` for anything else: user info, brackets, upper
/// case, a backslash, a tab or a space, non-ASCII — the parser decides those.
fn fast_parts(url: &str) -> Option<(&str, &str, Option<u16>)> {
    let b = url.as_bytes();
    let mut i = 0;
    while i < b.len()
        && (b[i].is_ascii_lowercase() || b[i].is_ascii_digit() || b"+-.".contains(&b[i]))
    {
        i += 1;
    }
    // A file URL's host `localhost` is no host to the parser.
    if i == 0 || !b[i..].starts_with(b"://") || &b[..i] == b"file" {
        return None;
    }
    let start = i + 3;
    let mut end = b.len();
    let mut colon = None;
    for (j, &c) in b.iter().enumerate().skip(start) {
        match c {
            b'/' | b'?' | b'#' => {
                end = j;
                break;
            }
            b':' if colon.is_none() => colon = Some(j),
            b'0'..=b'9' => {}
            // After the port's colon, digits only.
            _ if colon.is_some() => return None,
            b'a'..=b'z' | b'.' | b'-' | b'_' => {}
            _ => return None,
        }
    }
    let host_end = colon.unwrap_or(end);
    let host = &url[start..host_end];
    let port = match colon {
        // A port the parser refuses (past 65535) makes the URL invalid: not for slicing.
        Some(c) if c + 1 < end => Some(url[c + 1..end].parse::<u16>().ok()?),
        _ => None,
    };
    if host.is_empty() {
        return None;
    }
    let last = host.rsplit('.').next().unwrap_or(host);
    // A numeric or hexadecimal last label makes WHATWG read the host as an IPv4 address (in
    // some non-canonical notation, or refuse it), and a punycode label is checked: the
    // parser decides.
    if last.bytes().all(|c| c.is_ascii_digit()) && !is_dotted_quad(host)
        || last.starts_with("0x")
        || host.starts_with("xn--")
        || host.contains(".xn--")
    {
        return None;
    }
    Some((&url[..i], host, port))
}

fn is_dotted_quad(host: &str) -> bool {
    host.parse::<std::net::Ipv4Addr>().is_ok()
}

/// Whether a host name looks like a real Internet host: an IP address, `localhost`, or a name
/// of at least two labels ending in a suffix of the Public Suffix List (so in a real top-level
/// domain). `www1` and `www1.hollins` (typos for `www1.hollins.edu`) are not.
pub fn is_plausible_host(host: &str) -> bool {
    if host.starts_with('[') || is_dotted_quad(host) || host == "localhost" {
        return true;
    }
    let host = host.strip_suffix('.').unwrap_or(host);
    host.contains('.') && psl::suffix(host.as_bytes()).is_some_and(|s| s.is_known())
}

/// Counts the URLs whose host is not [plausible](is_plausible_host) (unparseable URLs
/// excluded).
pub fn implausible_hosts<S: AsRef<str>>(urls: &[S]) -> u64 {
    urls.iter()
        .filter(|u| match fast_host(u.as_ref()) {
            Some(h) => !is_plausible_host(h),
            None => host_name(u.as_ref()).is_some_and(|h| !is_plausible_host(&h)),
        })
        .count() as u64
}

/// The registrable domain (eTLD+1) of a host name: `www.bbc.co.uk` → `bbc.co.uk`. An IP
/// address, a name without a public suffix (`localhost`) or a public suffix itself
/// (`blogspot.com`, `co.uk`) is returned unchanged.
pub fn registrable_domain(host: &str) -> String {
    if host.starts_with('[') || is_dotted_quad(host) {
        return host.to_owned();
    }
    match psl::domain_str(host) {
        Some(d) if !d.is_empty() => d.to_owned(),
        _ => host.to_owned(),
    }
}

/// The politeness key of a URL: scheme, host and port (`http://a.test:8080`). Two URLs with
/// the same key are served by the same server as far as the crawler can tell.
///
/// An http(s) URL in the simple form every crawl's URLs take once normalised is read by
/// slicing ([`fast_host`]); any other is parsed. The two agree on every URL (tested): a
/// frontier node computes this for each URL it takes in and again for each call it replays
/// at a restart, where parsing was a fifth of the time.
pub fn origin_key(url: &str) -> Option<String> {
    if let Some(origin) = fast_origin(url) {
        return Some(origin);
    }
    let u = url::Url::parse(url).ok()?;
    let host = u.host_str()?;
    Some(match u.port() {
        Some(p) => format!("{}://{}:{}", u.scheme(), host, p),
        None => format!("{}://{}", u.scheme(), host),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_and_slow_host_agree() {
        for u in [
            "http://www.example.com/",
            "https://www.example.com:8443/a?b#c",
            "http://User@WWW.Example.com:8080/x",
            "http://192.168.0.1/",
            "http://0x7f.1/",
            "http://[::1]:80/",
            "HTTP://A.B/",
            "http://münchen.de/",
        ] {
            let slow = url::Url::parse(u).unwrap().host_str().map(str::to_owned);
            assert_eq!(host_name(u), slow, "{u}");
        }
        assert_eq!(
            fast_host("http://www.example.com:80/x"),
            Some("www.example.com")
        );
        assert_eq!(fast_host("http://0x7f.1/"), None);
        assert_eq!(host_name("mailto:a@b.c"), None);
        assert_eq!(host_name("not a url"), None);
    }

    /// The slicing and the parser agree on hosts and origins, on URLs in the usual form and
    /// on every oddity that form might hide.
    #[test]
    fn fast_and_slow_origin_agree() {
        let slow_origin = |u: &str| {
            let p = url::Url::parse(u).ok()?;
            let host = p.host_str()?;
            Some(match p.port() {
                Some(port) => format!("{}://{}:{}", p.scheme(), host, port),
                None => format!("{}://{}", p.scheme(), host),
            })
        };
        let slow_host = |u: &str| {
            url::Url::parse(u)
                .ok()?
                .host_str()
                .filter(|h| !h.is_empty())
                .map(str::to_owned)
        };
        let mut fast_taken = 0;
        for u in [
            "http://www.example.com/",
            "http://www.example.com",
            "http://a.test/p?q#f",
            "http://a.test?q",
            "http://a.test#f",
            "http://a.test:80/",
            "http://a.test:0080/",
            "http://a.test:8080/x",
            "http://a.test:/x",
            "http://a.test:65535/",
            "http://a.test:65536/",
            "http://a.test:99999999999999999999/",
            "https://a.test:443/",
            "https://a.test:80/",
            "http://a_b.test/",
            "http://a-b.test/",
            "http://a..test/",
            "http://a.test./",
            "http://.a.test/",
            "http://1.2.3.4/",
            "http://1.2.3.4:8080/",
            "http://1.2.3/",
            "http://01.2.3.4/",
            "http://a.1/",
            "http://a.1./",
            "http://a.0x1f/",
            "http://0x7f.0.0.1/",
            "http://xn--mnchen-3ya.de/",
            "http://xn--abc.de/",
            "http://xn--/",
            "http://a.xn--p1ai/",
            "http://a.com\\b/",
            "http://a.c\tom/",
            "http://a.com/\tx",
            "http:// a.com/",
            " http://a.com/",
            "http://a.com/ ",
            "http://user@a.com/",
            "http://a.com:8080@b.com/",
            "http://[::1]/",
            "http:/a.com/",
            "http:a.com/",
            "http:///a.com/",
            "http://A.com/",
            "HTTP://a.com/",
            "ftp://a.com:21/",
            "ws://a.com:80/",
            "foo://a.com/",
            "foo://A.com:80/",
            "http://a.com:8a/",
            "http://a%2ecom/",
            "http://münchen.de/",
            "http://a.com:-1/",
            "http://-/",
            "http://a/",
            "http://9/",
            "file://localhost/x",
            "file://a.com/x",
            "svn+ssh://a.com/x",
            "foo://1.2/",
        ] {
            assert_eq!(origin_key(u), slow_origin(u), "origin of {u:?}");
            assert_eq!(host_name(u.trim()), slow_host(u.trim()), "host of {u:?}");
            fast_taken += usize::from(fast_origin(u).is_some());
        }
        assert!(fast_taken >= 15, "the usual URLs are sliced: {fast_taken}");

        // And on 50,000 authorities drawn from the characters that matter (a fixed seed).
        let alphabet = [
            "a", "b", "z", "x", "n", "0", "1", "9", ".", "-", "_", ":", "/", "?", "#", "@", "[",
            "]", "\\", "\t", " ", "%", "A", "ü", "xn--", "0x", "80", "443", "65536",
        ];
        let schemes = ["http", "https", "file", "foo", "HTTP", "ws", ""];
        let mut rng = crawlrank_rng::XorShift64::new(0x2545_f491_4f6c_dd1d);
        let mut draw = |n: usize| (rng.next_u64() % n as u64) as usize;
        for _ in 0..50_000 {
            let mut u = format!("{}://", schemes[draw(schemes.len())]);
            for _ in 0..draw(10) {
                u.push_str(alphabet[draw(alphabet.len())]);
            }
            if draw(2) == 0 {
                u.push_str("/p");
            }
            assert_eq!(origin_key(&u), slow_origin(&u), "origin of {u:?}");
            assert_eq!(host_name(&u), slow_host(u.trim()), "host of {u:?}");
        }
    }
}
