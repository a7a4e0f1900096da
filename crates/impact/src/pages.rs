//! The pages of a graph as the impact readers look them up: by id, by URL, and by Wikipedia
//! article name.
//!
//! Impact files name pages by id or by URL; clickstream and Wikispeedia files name Wikipedia
//! articles. [`Pages`] answers all three from the graph's ids ([`PageIds`]: the user's own
//! ids when the graph was imported from an arc list with gaps in its ids, else `0..n`) and its
//! `.urls` (LAW's one URL per node). URLs are compared after
//! [`normalize_url`](crawlrank_graph::urls::normalize_url), as everywhere in crawlrank; an
//! article name `N` is the page whose URL is `https://en.wikipedia.org/wiki/N`, compared
//! after percent-decoding, so that the raw names of the clickstream (`Huntington's_disease`)
//! find the URL-encoded names of Wikispeedia (`Huntington%27s_disease`). The maps are built
//! on first use only.

use anyhow::{Context, Result};
use crawlrank_graph::{BvWebGraph, PageIds};
use std::cell::OnceCell;
use std::collections::HashMap;

/// The URL prefix of English Wikipedia articles: `https://en.wikipedia.org/wiki/`.
pub const WIKI_PREFIX: &str = "https://en.wikipedia.org/wiki/";

/// The URL of the English Wikipedia article `name` (kept as given: a URL-encoded name stays
/// encoded), normalised when it parses.
pub fn wiki_url(name: &str) -> String {
    let raw = format!("{WIKI_PREFIX}{name}");
    crawlrank_graph::urls::normalize_url(&raw).unwrap_or(raw)
}

/// The percent-decoded form of an article name or URL path (invalid sequences kept as
/// written, invalid UTF-8 replaced).
pub fn decode_name(name: &str) -> String {
    percent_encoding::percent_decode_str(name)
        .decode_utf8_lossy()
        .into_owned()
}

/// A graph's pages, for lookups by id, URL or article name (see the [module documentation](self)).
#[derive(Debug)]
pub struct Pages {
    n: usize,
    ids: PageIds,
    urls: Option<Vec<String>>,
    by_url: OnceCell<HashMap<String, usize>>,
    by_name: OnceCell<HashMap<String, usize>>,
}

impl Pages {
    /// `n` pages with ids `0..n` and URLs `urls` (line `i` = URL of page `i`), if known.
    pub fn new(n: usize, urls: Option<Vec<String>>) -> Self {
        Self {
            n,
            ids: PageIds::dense(n),
            urls,
            by_url: OnceCell::new(),
            by_name: OnceCell::new(),
        }
    }

    /// These pages named by `ids` (one per page) instead of `0..n`.
    pub fn with_ids(mut self, ids: PageIds) -> Result<Self> {
        anyhow::ensure!(
            ids.len() == self.n,
            "{} ids for {} pages",
            ids.len(),
            self.n
        );
        self.ids = ids;
        Ok(self)
    }

    /// The pages of `graph`, with its ids ([`BvWebGraph::page_ids`]) and its `.urls` when it
    /// has one.
    pub fn from_graph(graph: &BvWebGraph) -> Result<Self> {
        let urls = graph
            .urls()
            .with_context(|| format!("cannot read the URLs of {}", graph.basename().display()))?;
        Self::new(graph.num_nodes(), urls).with_ids(graph.page_ids()?)
    }

    /// The ids users know the pages by.
    pub fn ids(&self) -> &PageIds {
        &self.ids
    }

    /// The id of page `page` (a node of the graph).
    pub fn id(&self, page: usize) -> u64 {
        self.ids.id(page)
    }

    /// Number of pages.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no pages.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The URLs, if the graph has them.
    pub fn urls(&self) -> Option<&[String]> {
        self.urls.as_deref()
    }

    /// Whether page URLs are known.
    pub fn has_urls(&self) -> bool {
        self.urls.is_some()
    }

    /// The URL of page `id`, if known (empty lines of `.urls` give `""`).
    pub fn url(&self, id: usize) -> Option<&str> {
        self.urls
            .as_ref()
            .and_then(|u| u.get(id))
            .map(String::as_str)
    }

    /// The page whose URL is `url` once normalised; `None` when the graph has no URLs, the
    /// URL is not one of its pages, or it does not parse.
    pub fn by_url(&self, url: &str) -> Option<usize> {
        let urls = self.urls.as_ref()?;
        let map = self.by_url.get_or_init(|| {
            let mut m = HashMap::with_capacity(urls.len());
            for (i, u) in urls.iter().enumerate() {
                if !u.is_empty() {
                    m.entry(u.clone()).or_insert(i);
                }
            }
            m
        });
        if let Some(&i) = map.get(url) {
            return Some(i);
        }
        let norm = crawlrank_graph::urls::normalize_url(url).ok()?;
        map.get(&norm).copied()
    }

    /// The page of the English Wikipedia article `name` (raw or URL-encoded; see the
    /// [module documentation](self)).
    pub fn by_article(&self, name: &str) -> Option<usize> {
        let urls = self.urls.as_ref()?;
        let map = self.by_name.get_or_init(|| {
            let mut m = HashMap::new();
            for (i, u) in urls.iter().enumerate() {
                if let Some(rest) = u.strip_prefix(WIKI_PREFIX) {
                    m.entry(decode_name(rest)).or_insert(i);
                }
            }
            m
        });
        map.get(name)
            .or_else(|| map.get(&decode_name(name)))
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_by_url_and_article() {
        let p = Pages::new(
            3,
            Some(vec![
                wiki_url("Huntington%27s_disease"),
                "http://a.example/x".into(),
                String::new(),
            ]),
        );
        assert_eq!(p.by_article("Huntington's_disease"), Some(0));
        assert_eq!(p.by_article("Huntington%27s_disease"), Some(0));
        assert_eq!(p.by_url("HTTP://A.example/x#frag"), Some(1));
        assert_eq!(p.by_url("http://a.example/y"), None);
        assert_eq!(p.by_url(""), None);
        assert_eq!(Pages::new(2, None).by_url("http://a.example/x"), None);
    }
}
