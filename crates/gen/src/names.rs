//! Host names, paths and URLs, produced directly in lexicographic order.
//!
//! Node order is LAW's natural order: URLs sorted lexicographically, so the pages of a host
//! are contiguous. Since every path starts with `/` and `/` never occurs in a host name,
//! sorting `http://HOST/PATH` is sorting by `HOST/` and then by path; hosts are therefore
//! sorted once by `name + "/"` and, inside a host, paths are *enumerated* in sorted order
//! (no sort, no buffering): the home page `/` first, then the directories `/dirN/…` with
//! their numbers in lexicographic order (`dir1 < dir10 < dir11 < dir2`), each directory's
//! index page `/dirN/` before its pages `/dirN/pageM.html`, and last the root pages
//! `/pageM.html` (`d < p`).

use std::io::Write;

/// The numbers `1..=n` in the lexicographic order of their decimal representations
/// (`1, 10, 11, …, 19, 2, 20, …`), in O(1) amortised time each.
#[derive(Debug, Clone)]
pub struct LexNumbers {
    n: u64,
    cur: u64,
    left: u64,
}

impl LexNumbers {
    /// The numbers `1..=n` (none when `n` is 0).
    pub fn new(n: u64) -> Self {
        Self { n, cur: 1, left: n }
    }
}

impl Iterator for LexNumbers {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let out = self.cur;
        if self.cur.saturating_mul(10) <= self.n {
            self.cur *= 10;
        } else {
            while self.cur % 10 == 9 || self.cur + 1 > self.n {
                self.cur /= 10;
            }
            self.cur += 1;
        }
        Some(out)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

/// Reserved top-level domains (RFC 2606), so that no generated URL names a real host, with
/// the probability that a registrable domain uses each.
pub const TLDS: [(&str, f64); 3] = [("example", 0.6), ("test", 0.3), ("invalid", 0.1)];

/// Labels given to the hosts of a registrable domain, in order of creation (after these,
/// `hostN`). A domain's first host is `www.` or, sometimes, the bare domain.
pub const HOST_LABELS: [&str; 20] = [
    "www", "blog", "news", "docs", "shop", "mail", "forum", "wiki", "static", "dev", "en", "it",
    "fr", "de", "m", "api", "support", "lists", "people", "research",
];

/// The name of a host: `[label.]siteD.tld`.
pub fn host_name(label: &str, domain: u64, tld: &str) -> String {
    if label.is_empty() {
        format!("site{domain}.{tld}")
    } else {
        format!("{label}.site{domain}.{tld}")
    }
}

/// The label of the `m`-th host (from 0) of a domain whose first host is bare or `www`.
pub fn host_label(m: u64, bare_first: bool) -> String {
    let i = if bare_first {
        if m == 0 {
            return String::new();
        }
        m - 1
    } else {
        m
    };
    match HOST_LABELS.get(i as usize) {
        Some(l) => (*l).to_string(),
        None => format!("host{i}"),
    }
}

/// Writes the URLs of one host, in order: `/`, then every directory (`dir_sizes[j]` pages:
/// the index `/dirN/` and `dir_sizes[j] − 1` pages), then `root_pages` pages `/pageM.html`.
pub fn write_host_urls(
    w: &mut impl Write,
    host: &str,
    dir_sizes: &[u64],
    root_pages: u64,
) -> std::io::Result<()> {
    let mut prefix = Vec::with_capacity(host.len() + 32);
    prefix.extend_from_slice(b"http://");
    prefix.extend_from_slice(host.as_bytes());
    w.write_all(&prefix)?;
    w.write_all(b"/\n")?;
    let mut num = itoa::Buffer::new();
    let mut dir = Vec::with_capacity(prefix.len() + 32);
    for (size, d) in dir_sizes
        .iter()
        .zip(LexNumbers::new(dir_sizes.len() as u64))
    {
        dir.clear();
        dir.extend_from_slice(&prefix);
        dir.extend_from_slice(b"/dir");
        dir.extend_from_slice(num.format(d).as_bytes());
        dir.push(b'/');
        w.write_all(&dir)?;
        w.write_all(b"\n")?;
        for p in LexNumbers::new(size.saturating_sub(1)) {
            w.write_all(&dir)?;
            w.write_all(b"page")?;
            w.write_all(num.format(p).as_bytes())?;
            w.write_all(b".html\n")?;
        }
    }
    for p in LexNumbers::new(root_pages) {
        w.write_all(&prefix)?;
        w.write_all(b"/page")?;
        w.write_all(num.format(p).as_bytes())?;
        w.write_all(b".html\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lex_numbers_are_sorted_as_strings() {
        for n in [0u64, 1, 9, 10, 11, 99, 100, 101, 1234] {
            let got: Vec<u64> = LexNumbers::new(n).collect();
            let mut want: Vec<u64> = (1..=n).collect();
            want.sort_by_key(|x| x.to_string());
            assert_eq!(got, want, "n = {n}");
        }
    }

    #[test]
    fn host_urls_are_sorted_and_distinct() {
        let mut out = Vec::new();
        write_host_urls(&mut out, "www.site3.example", &[1, 5, 12, 3], 11).unwrap();
        let text = String::from_utf8(out).unwrap();
        let urls: Vec<&str> = text.lines().collect();
        assert_eq!(urls.len(), 1 + 1 + 5 + 12 + 3 + 11);
        assert_eq!(urls[0], "http://www.site3.example/");
        assert_eq!(urls[1], "http://www.site3.example/dir1/");
        assert!(urls.windows(2).all(|w| w[0] < w[1]), "{urls:#?}");
        assert_eq!(*urls.last().unwrap(), "http://www.site3.example/page9.html");
    }

    #[test]
    fn labels() {
        assert_eq!(host_label(0, false), "www");
        assert_eq!(host_label(0, true), "");
        assert_eq!(host_label(1, true), "www");
        assert_eq!(host_label(25, false), "host25");
        assert_eq!(host_name("", 12, "test"), "site12.test");
        assert_eq!(host_name("a", 12, "test"), "a.site12.test");
    }
}
