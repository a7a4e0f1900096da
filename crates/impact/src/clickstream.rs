//! Wikimedia's clickstream: monthly counts of (referrer, article) pairs of English Wikipedia,
//! read as search impact and link clicks per article.
//!
//! The RW paper's impact is what users of a search engine do with a page; Wikimedia publishes
//! the nearest public thing. Each row of a clickstream dump
//! (`dumps.wikimedia.org/other/clickstream/`) is `prev<TAB>curr<TAB>type<TAB>n`: `n` requests
//! in the month for article `curr` coming from `prev`, an article or one of `other-search`,
//! `other-empty`, `other-internal`, `other-external`, `other-other`; `type` is `link`,
//! `external` or `other`. Pairs with `n ≤ 10` are not published. This module reads:
//!
//! - **search impact**: for each article, the sum of `n` over rows with `prev = other-search`
//!   (search-engine referrals) — the paper's impact;
//! - **link clicks**: for each article, the sum of `n` over `link` rows into it, and each such
//!   row as an arc `(prev, curr, n)`, kept as a list for later use.
//!
//! Files may be gzip-compressed, tab-separated (the dumps) or comma-separated with optional
//! double quotes, with an optional header line (`prev curr type n`) and, when the header or the
//! first row has five fields, a leading index column (pandas' CSV, as in `shared/data/clickstream-sample`). `#`
//! lines and blank lines are skipped. A row with a different number of fields or an `n` that
//! is not a non-negative integer is an error naming `file:line`.
//!
//! Articles are kept by name ([`Clickstream`]); [`Clickstream::on_pages`] maps them to the
//! pages of a graph whose URLs are `https://en.wikipedia.org/wiki/<name>` (see
//! [`Pages::by_article`]), counting and naming the articles it does not have.

use crate::pages::Pages;
use crate::table::EXAMPLES;
use anyhow::{bail, ensure, Result};
use crawlrank_graph::text::{is_comment, shorten, Delimiter, Lines};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The `prev` of search-engine referrals.
pub const OTHER_SEARCH: &str = "other-search";

/// One `link` row: `n` clicks from article `from` to article `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClickArc {
    /// The article holding the link.
    pub from: String,
    /// The article linked to.
    pub to: String,
    /// Clicks in the month.
    pub n: u64,
}

/// A clickstream file read by article name (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Clickstream {
    /// Search impact per article (sum of `n` of its `other-search` rows), by name.
    pub search: Vec<(String, u64)>,
    /// Link clicks per target article (sum of `n` of its `link` rows), by name.
    pub link_clicks: Vec<(String, u64)>,
    /// Every `link` row, in file order.
    pub links: Vec<ClickArc>,
    /// What reading found.
    pub report: ClickstreamReport,
}

/// What reading a clickstream file found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClickstreamReport {
    /// The file read.
    pub path: PathBuf,
    /// Data rows.
    pub rows: u64,
    /// Rows from `other-search`.
    pub search_rows: u64,
    /// Rows of type `link`.
    pub link_rows: u64,
    /// Other rows (other referrers, `external` and `other` types), not used.
    pub other_rows: u64,
    /// Sum of `n` over `other-search` rows.
    pub search_total: u64,
    /// Sum of `n` over `link` rows.
    pub link_total: u64,
}

impl std::fmt::Display for ClickstreamReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} rows: {} other-search ({} referrals), {} link ({} clicks), {} others unused",
            self.path.display(),
            self.rows,
            self.search_rows,
            self.search_total,
            self.link_rows,
            self.link_total,
            self.other_rows
        )
    }
}

/// A clickstream on the pages of a graph ([`Clickstream::on_pages`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClickstreamImpact {
    /// Search impact per page.
    pub search: Vec<f64>,
    /// Link clicks into each page.
    pub clicks: Vec<f64>,
    /// `link` rows between two pages of the graph: `(from, to, n)`.
    pub arcs: Vec<(usize, usize, u64)>,
    /// Distinct articles with search impact or link clicks that the graph does not have.
    pub unknown_articles: u64,
    /// The first few of them, by name.
    pub unknown_examples: Vec<String>,
    /// `link` rows with an endpoint the graph does not have (not in `arcs`).
    pub arcs_unknown: u64,
}

/// Reads the clickstream `path` (see the [module documentation](self)).
pub fn read_clickstream(path: &Path) -> Result<Clickstream> {
    let mut lines = Lines::open(path)?;
    let mut report = ClickstreamReport {
        path: path.to_path_buf(),
        ..Default::default()
    };
    let mut search: HashMap<String, u64> = HashMap::new();
    let mut clicks: HashMap<String, u64> = HashMap::new();
    let mut links = Vec::new();
    let mut layout: Option<(Delimiter, usize)> = None; // delimiter, fields per row
    while let Some((at, line)) = lines.next_line()? {
        if is_comment(line) {
            continue;
        }
        let delim = match layout {
            Some((d, _)) => d,
            None => match Delimiter::detect(line) {
                Some(d) => d,
                None => bail!(
                    "{at}: '{}' is not a clickstream row (prev, curr, type, n separated by tabs or commas)",
                    shorten(line)
                ),
            },
        };
        let fields = match delim.split(line) {
            Ok(f) => f,
            Err(why) => bail!("{at}: {why}"),
        };
        let width = match layout {
            Some((_, w)) => w,
            None => {
                ensure!(
                    fields.len() == 4 || fields.len() == 5,
                    "{at}: {} fields: a clickstream row is prev, curr, type, n (optionally after an index column)",
                    fields.len()
                );
                layout = Some((delim, fields.len()));
                let names: Vec<String> = fields[fields.len() - 4..]
                    .iter()
                    .map(|f| f.trim().to_ascii_lowercase())
                    .collect();
                if names == ["prev", "curr", "type", "n"] {
                    continue; // the header
                }
                fields.len()
            }
        };
        ensure!(
            fields.len() == width,
            "{at}: {} fields where the file has {width}",
            fields.len()
        );
        let f = &fields[width - 4..];
        let (prev, curr, kind, n) = (f[0].as_str(), f[1].as_str(), f[2].trim(), f[3].trim());
        let Ok(n) = n.parse::<u64>() else {
            bail!("{at}: count '{}' is not a non-negative integer", shorten(n));
        };
        ensure!(!curr.is_empty(), "{at}: the article (curr) is empty");
        report.rows += 1;
        if prev == OTHER_SEARCH {
            report.search_rows += 1;
            report.search_total += n;
            *search.entry(curr.to_owned()).or_default() += n;
        } else if kind == "link" {
            report.link_rows += 1;
            report.link_total += n;
            *clicks.entry(curr.to_owned()).or_default() += n;
            links.push(ClickArc {
                from: prev.to_owned(),
                to: curr.to_owned(),
                n,
            });
        } else {
            report.other_rows += 1;
        }
    }
    ensure!(report.rows > 0, "{}: no clickstream rows", path.display());
    let sorted = |m: HashMap<String, u64>| {
        let mut v: Vec<_> = m.into_iter().collect();
        v.sort_unstable();
        v
    };
    Ok(Clickstream {
        search: sorted(search),
        link_clicks: sorted(clicks),
        links,
        report,
    })
}

impl Clickstream {
    /// The search impact and link clicks on the pages of a graph whose URLs are Wikipedia
    /// article URLs. An error if the graph has no URLs or none of the articles is in it.
    pub fn on_pages(&self, pages: &Pages) -> Result<ClickstreamImpact> {
        ensure!(
            pages.has_urls(),
            "{}: articles are found through the graph's URLs, and the graph has none",
            self.report.path.display()
        );
        let n = pages.len();
        let mut out = ClickstreamImpact {
            search: vec![0.0; n],
            clicks: vec![0.0; n],
            ..Default::default()
        };
        let mut unknown: Vec<&str> = Vec::new();
        let mut found = 0u64;
        for (list, dest) in [
            (&self.search, &mut out.search),
            (&self.link_clicks, &mut out.clicks),
        ] {
            for (name, v) in list {
                match pages.by_article(name) {
                    Some(p) => {
                        dest[p] += *v as f64;
                        found += 1;
                    }
                    None => unknown.push(name),
                }
            }
        }
        unknown.sort_unstable();
        unknown.dedup();
        out.unknown_articles = unknown.len() as u64;
        out.unknown_examples = unknown
            .iter()
            .take(EXAMPLES)
            .map(|s| s.to_string())
            .collect();
        for a in &self.links {
            match (pages.by_article(&a.from), pages.by_article(&a.to)) {
                (Some(f), Some(t)) => out.arcs.push((f, t, a.n)),
                _ => out.arcs_unknown += 1,
            }
        }
        ensure!(
            found > 0,
            "{}: none of its articles is a page of the graph (e.g. {})",
            self.report.path.display(),
            out.unknown_examples.join(", ")
        );
        Ok(out)
    }
}
