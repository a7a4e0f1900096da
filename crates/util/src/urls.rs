//! URLs: LAW's `.urls` convention and the normalisation crawlrank applies to every URL it reads.
//!
//! A graph `BASENAME` may come with `BASENAME.urls` (or `BASENAME.urls.gz`): a text file with
//! exactly one line per node, line `i` (counting from 0) holding the URL of node `i`. This is
//! the convention of the Laboratory for Web Algorithmics' datasets, and what
//! `crawlrank import` writes. Lines are kept as they are (only the line terminator,
//! `\n` or `\r\n`, is removed): an empty line is a node without a known URL.
//!
//! [`normalize_url`] is WHATWG URL parsing (the `url` crate, as browsers do it), which already
//! lower-cases the scheme and the host, converts international host names to punycode, drops
//! the default port, resolves `.` and `..` path segments and turns an empty path into `/`; on
//! top of that ([`normalize_parsed`]) the fragment is dropped, since `page#a` and `page#b` are
//! the same page, and percent-escapes are normalised as RFC 3986 §6.2.2 says every URI
//! normaliser may: an escape of an unreserved character (`A-Z a-z 0-9 - . _ ~`) is decoded
//! (§6.2.2.2: `/%7Euser` is `/~user`) and the hex digits of the other escapes are upper-cased
//! (§6.2.2.1: `%3a` is `%3A`), in the path and the query. These are the same resource by the
//! RFC, and without them one page could enter a crawl twice under two spellings. Query strings
//! otherwise, reserved characters and their escapes (`%2F` stays `%2F`) and trailing slashes
//! are left alone: changing them can change the page a server returns.
//!
//! This is the one normaliser of crawlrank: the crawler's links, seeds and redirects
//! (`crawlrank_crawler::links`), the test web, imports and seed files all go through
//! [`normalize_parsed`], so a URL has one spelling everywhere.

use crate::basename::with_ext;
use crate::text::read_line;
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// The `.urls` file of a graph basename (`X` → `X.urls`).
pub fn urls_path(basename: &Path) -> PathBuf {
    with_ext(basename, "urls")
}

/// The `.urls` file of `basename` if there is one: `X.urls`, else `X.urls.gz`.
pub fn find_urls(basename: &Path) -> Option<PathBuf> {
    let plain = urls_path(basename);
    if plain.is_file() {
        return Some(plain);
    }
    let gz = with_ext(basename, "urls.gz");
    gz.is_file().then_some(gz)
}

/// Normalises an absolute URL (see the [module documentation](self)). URLs without a host
/// (`mailto:`, `file:///…`, `data:`) are rejected: they are not web pages a crawler can fetch.
///
/// ```
/// use crawlrank_util::urls::normalize_url;
/// assert_eq!(normalize_url("HTTP://Example.COM:80/a/./b/../c#top").unwrap(), "http://example.com/a/c");
/// assert_eq!(normalize_url("https://example.com").unwrap(), "https://example.com/");
/// assert!(normalize_url("example.com").is_err());
/// ```
pub fn normalize_url(s: &str) -> Result<String> {
    let mut url = match url::Url::parse(s) {
        Ok(u) => u,
        Err(e) => bail!("'{}' is not a valid absolute URL ({e})", shorten(s)),
    };
    if url.host_str().is_none_or(str::is_empty) {
        bail!("'{}' has no host", shorten(s));
    }
    normalize_parsed(&mut url);
    Ok(url.into())
}

/// Normalises an already parsed URL in place (see the [module documentation](self)): drops
/// its fragment and normalises the percent-escapes of its path and query (RFC 3986 §6.2.2.1
/// and §6.2.2.2). Parsing (`url::Url::parse`, `Url::join`) did the rest.
///
/// ```
/// let mut u = url::Url::parse("http://a.test/%7Euser/%41%2f%3a?q=%7e%2a#f").unwrap();
/// crawlrank_util::urls::normalize_parsed(&mut u);
/// assert_eq!(u.as_str(), "http://a.test/~user/A%2F%3A?q=~%2A");
/// ```
pub fn normalize_parsed(url: &mut url::Url) {
    url.set_fragment(None);
    if let Some(path) = normalize_escapes(url.path()) {
        url.set_path(&path);
    }
    if let Some(query) = url.query().and_then(normalize_escapes) {
        url.set_query(Some(&query));
    }
}

/// `s` with its escapes of unreserved characters decoded and the hex digits of the others
/// upper-cased; `None` when that changes nothing (the common case: no `%` at all).
fn normalize_escapes(s: &str) -> Option<String> {
    if !s.contains('%') {
        return None;
    }
    let b = s.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = String::with_capacity(s.len());
    let mut changed = false;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                let c = h << 4 | l;
                if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~') {
                    out.push(c as char);
                    changed = true;
                } else {
                    let (h, l) = (b[i + 1].to_ascii_uppercase(), b[i + 2].to_ascii_uppercase());
                    changed |= h != b[i + 1] || l != b[i + 2];
                    out.extend(['%', h as char, l as char]);
                }
                i += 3;
                continue;
            }
        }
        // Copy up to the next '%' (a '%' not followed by two hex digits is kept as it is).
        let next = s[i + 1..].find('%').map_or(b.len(), |j| i + 1 + j);
        out.push_str(&s[i..next]);
        i = next;
    }
    changed.then_some(out)
}

/// Like [`normalize_url`], but also accepts a bare host name with an optional path, as blog
/// and site lists often give them (`foo.com`, `12thharmonic.com/wordpress`), by prefixing
/// `http://`. A bare name must contain a dot before its first `/` and no spaces.
///
/// ```
/// use crawlrank_util::urls::normalize_url_or_host;
/// assert_eq!(normalize_url_or_host("100MonkeysTyping.com").unwrap(), "http://100monkeystyping.com/");
/// assert_eq!(normalize_url_or_host("a.org/blog").unwrap(), "http://a.org/blog");
/// assert!(normalize_url_or_host("Alice Smith").is_err());
/// ```
pub fn normalize_url_or_host(s: &str) -> Result<String> {
    let t = s.trim();
    if t.contains("://") {
        return normalize_url(t);
    }
    let host = t.split(['/', '?']).next().unwrap_or("");
    let host_like = !host.is_empty()
        && host.contains('.')
        && !host.starts_with('.')
        && !t.chars().any(char::is_whitespace)
        && host
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']'));
    if !host_like {
        bail!("'{}' is neither a URL nor a host name", shorten(s));
    }
    normalize_url(&format!("http://{t}"))
}

/// `s`, cut to at most 100 characters for error messages.
pub fn shorten(s: &str) -> String {
    const MAX: usize = 100;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

/// Opens a possibly gzip-compressed file (recognised by its magic number, not its name).
pub fn open_maybe_gz(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    Ok(open_input(path)?.0)
}

/// Opens a possibly gzip-compressed file and tells whether it was compressed.
pub fn open_input(path: &Path) -> Result<(Box<dyn BufRead + Send>, bool)> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut r = BufReader::with_capacity(1 << 20, file);
    let gz = {
        let head = r
            .fill_buf()
            .with_context(|| format!("cannot read {}", path.display()))?;
        head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b
    };
    Ok(if gz {
        let dec = flate2::bufread::MultiGzDecoder::new(r);
        (Box::new(BufReader::with_capacity(1 << 20, dec)), true)
    } else {
        (Box::new(r), false)
    })
}

/// A streaming reader of a `.urls` file (plain or gzip-compressed): yields the URL of node 0,
/// node 1, … one line at a time, so that a billion-node file need not be held in memory.
pub struct UrlReader {
    path: PathBuf,
    inner: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    line: u64,
}

impl UrlReader {
    /// Opens a `.urls` file (`X.urls` or `X.urls.gz`; the file itself, not the basename).
    pub fn open(path: &Path) -> Result<Self> {
        Ok(Self {
            path: path.to_path_buf(),
            inner: open_maybe_gz(path)?,
            buf: Vec::new(),
            line: 0,
        })
    }

    /// The next URL, or `None` at the end of the file.
    pub fn next_url(&mut self) -> Result<Option<&str>> {
        let n = read_line(&mut self.inner, &mut self.buf)
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some(s)),
            Err(_) => bail!(
                "{}: line {}: the URL is not valid UTF-8",
                self.path.display(),
                self.line
            ),
        }
    }
}

impl Iterator for UrlReader {
    type Item = Result<String>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_url().map(|o| o.map(str::to_owned)).transpose()
    }
}

/// Reads a whole `.urls` file (plain or gzip-compressed) into memory, one string per node.
/// For very large graphs prefer [`UrlReader`].
pub fn read_urls(path: &Path) -> Result<Vec<String>> {
    UrlReader::open(path)?.collect()
}

/// Reads the URLs of graph `basename` (`X.urls` or `X.urls.gz`), checking that there is one
/// per node when `num_nodes` is given.
pub fn read_graph_urls(basename: &Path, num_nodes: Option<usize>) -> Result<Vec<String>> {
    let path = find_urls(basename).with_context(|| {
        format!(
            "{} has no URLs ({} not found)",
            basename.display(),
            urls_path(basename).display()
        )
    })?;
    let urls = read_urls(&path)?;
    if let Some(n) = num_nodes {
        if urls.len() != n {
            bail!(
                "{} has {} lines but the graph has {n} nodes",
                path.display(),
                urls.len()
            );
        }
    }
    Ok(urls)
}

/// Writes one URL per line to `w` (the `.urls` format). Characters that would break the
/// one-line-per-node rule (`\n`, `\r`) are replaced by spaces.
pub fn write_urls_to<W: Write, S: AsRef<str>>(
    w: &mut W,
    urls: impl IntoIterator<Item = S>,
) -> std::io::Result<()> {
    for u in urls {
        let u = u.as_ref();
        if u.contains(['\n', '\r']) {
            w.write_all(u.replace(['\n', '\r'], " ").as_bytes())?;
        } else {
            w.write_all(u.as_bytes())?;
        }
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// Writes a `.urls` file atomically (it appears only once complete).
pub fn write_urls<S: AsRef<str>>(path: &Path, urls: impl IntoIterator<Item = S>) -> Result<()> {
    crate::atomic::write_file(path, |w| {
        write_urls_to(w, urls).with_context(|| format!("cannot write {}", path.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation() {
        for (url, want) in [
            ("HTTP://WWW.Example.com:80/", "http://www.example.com/"),
            (
                "https://example.com:443/x?b=1&a=2#frag",
                "https://example.com/x?b=1&a=2",
            ),
            ("http://example.com:8080", "http://example.com:8080/"),
            (
                "http://example.com/a/b/../../c/./d",
                "http://example.com/c/d",
            ),
            ("  http://example.com/x  ", "http://example.com/x"),
            ("http://münchen.de/", "http://xn--mnchen-3ya.de/"),
            ("http://[::1]:8080/a", "http://[::1]:8080/a"),
        ] {
            assert_eq!(normalize_url(url).unwrap(), want, "{url}");
        }
        for url in [
            "mailto:a@b.c",
            "file:///tmp/x",
            "/relative/path",
            "http://a b/",
        ] {
            assert!(normalize_url(url).is_err(), "{url}");
        }
        for (url, want) in [
            ("Foo.COM", "http://foo.com/"),
            (
                "12thharmonic.com/wordpress",
                "http://12thharmonic.com/wordpress",
            ),
            ("https://Foo.com/x#y", "https://foo.com/x"),
        ] {
            assert_eq!(normalize_url_or_host(url).unwrap(), want, "{url}");
        }
        for host in ["localhost", "not a host.com"] {
            assert!(normalize_url_or_host(host).is_err(), "{host}");
        }
    }

    #[test]
    fn rfc_3986_normalisation_cases() {
        fn n(s: &str) -> String {
            normalize_url(s).unwrap()
        }
        // §6.2.2: case, percent-encoding and dot segments together.
        assert_eq!(
            n("HTTP://www.Example.com/./b/../b/%63/%7bfoo%7d"),
            "http://www.example.com/b/c/%7Bfoo%7D"
        );
        // §6.2.2.1: the hex digits of an escape are upper-cased.
        assert_eq!(
            n("http://a.test/a%3ab%2fc%c3%a9"),
            "http://a.test/a%3Ab%2Fc%C3%A9"
        );
        // §6.2.2.2: an escape of an unreserved character is that character.
        assert_eq!(
            n("http://example.com/%7Esmith/home.html"),
            "http://example.com/~smith/home.html"
        );
        assert_eq!(n("http://a.test/%7euser"), n("http://a.test/~user"));
        assert_eq!(
            n("http://a.test/%41%5A%61%7A%30%39%2D%2E%5F%7E"),
            "http://a.test/AZaz09-._~"
        );
        // Reserved characters keep their escapes: decoding them changes the URL's meaning.
        for kept in [
            "%2F", "%3F", "%23", "%25", "%26", "%3D", "%2B", "%20", "%C3%A9",
        ] {
            let u = format!("http://a.test/x{kept}y?k={kept}");
            assert_eq!(n(&u), u, "{kept}");
        }
        // The query too, and a '%' that is not an escape is left as it is.
        assert_eq!(
            n("http://a.test/p?a=%7e%41&b=%3d#f"),
            "http://a.test/p?a=~A&b=%3D"
        );
        assert_eq!(n("http://a.test/100%/x%zz%4"), "http://a.test/100%/x%zz%4");
        assert_eq!(n("http://a.test/%"), "http://a.test/%");
        // An escaped dot is a dot, whether the parser took it for a dot segment or not.
        assert_eq!(n("http://a.test/a/%2e%2E/b"), "http://a.test/b");
        assert_eq!(n("http://a.test/a%2Eb/c%2e"), "http://a.test/a.b/c.");
        // §6.2.2.3 (RFC 3986 §5.4 examples) and §6.2.3 (scheme-based): one spelling each.
        assert_eq!(n("http://a/a/b/c/./../../g"), "http://a/a/g");
        assert_eq!(n("http://a/mid/content=5/../6"), "http://a/mid/6");
        assert_eq!(n("http://a/b/c/d;p?q/../g"), "http://a/b/c/d;p?q/../g");
        for same in [
            "http://example.com",
            "http://example.com/",
            "http://example.com:/",
            "http://example.com:80/",
            "http://EXAMPLE.com/#top",
        ] {
            assert_eq!(n(same), "http://example.com/", "{same}");
        }
        // Normalising is idempotent.
        for u in [
            "http://a.test/%7Esmith/%2f?q=%7e%3a",
            "http://a.test/x%zz%",
            "http://a.test/%25%37%45",
        ] {
            let once = n(u);
            assert_eq!(n(&once), once, "{u}");
        }
        // `%25` is '%' and stays escaped: `%257E` is not `~`.
        assert_eq!(n("http://a.test/%257E"), "http://a.test/%257E");
    }

    #[test]
    fn urls_files_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("g");
        let urls = ["http://a.com/", "", "http://b.com/x\ny"];
        write_urls(&urls_path(&base), urls).unwrap();
        let back = read_graph_urls(&base, Some(3)).unwrap();
        assert_eq!(back, ["http://a.com/", "", "http://b.com/x y"]);
        assert!(read_graph_urls(&base, Some(4)).is_err());
        // CRLF line ends are accepted.
        std::fs::write(urls_path(&base), "http://a.com/\r\nhttp://b.com/\r\n").unwrap();
        assert_eq!(
            read_urls(&urls_path(&base)).unwrap(),
            ["http://a.com/", "http://b.com/"]
        );
    }
}
