//! The search log of an impact-aware crawl (`--policy rw|rw-eg|learned --impact FILE`,
//! docs/algorithms.md §6): the impact of pages, by URL, that the crawl's policy learns of as it
//! downloads them.
//!
//! The file is an impact table keyed by URL (docs/impact-input.md; crawlrank-graph's
//! [`read_url_impacts`]); the crawler keeps only the 64-bit fingerprint of each URL with a
//! positive impact ([`fingerprint`], the URL table's) and the value, so a log of millions of rows
//! costs about 16 bytes a page. When the engine discovers a URL it reports the URL's impact to
//! the frontier ([`Frontier::set_impact`](crawlrank_frontier::Frontier::set_impact)), before the
//! page can be crawled; a resumed crawl reports those of every URL it already knows before it
//! replays its log.
//!
//! [`digest`](SearchLog::digest) identifies the log's content (its pages and values, in any row
//! order); the crawl stores it, and a resumed crawl must be given a log with the same digest —
//! another search log would make the replayed frontier differ from the one that ran.

use anyhow::{bail, Result};
use crawlrank_crawl_state::fingerprint;
use crawlrank_graph::impact_table::{column_index, read_url_impacts};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Impacts by URL fingerprint (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct SearchLog {
    /// The file read.
    pub path: PathBuf,
    /// The impact column used.
    pub column: String,
    by_fingerprint: HashMap<u64, f64>,
    /// What reading the file found, for the user.
    pub summary: String,
    /// A digest of the (URL, impact) pairs with a positive impact.
    pub digest: u64,
}

impl SearchLog {
    /// Reads `path`'s impact `column` (its name, or its number from 1; `None`: the first).
    pub fn read(path: &Path, column: Option<&str>) -> Result<Self> {
        let table = read_url_impacts(path)?;
        let c = column_index(path, &table.columns, column.unwrap_or("1"))?;
        let mut by_fingerprint = HashMap::new();
        let mut pairs = Vec::new();
        for (url, &v) in table.urls.iter().zip(&table.values[c]) {
            if v > 0.0 {
                let fp = fingerprint(url);
                by_fingerprint.insert(fp, v);
                pairs.push((fp, v.to_bits()));
            }
        }
        if pairs.is_empty() {
            bail!(
                "{}: no URL has a positive impact in column '{}': nothing to rank by",
                path.display(),
                table.columns[c]
            );
        }
        pairs.sort_unstable();
        let mut bytes = Vec::with_capacity(pairs.len() * 16);
        for (fp, v) in &pairs {
            bytes.extend_from_slice(&fp.to_le_bytes());
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        Ok(Self {
            path: path.to_path_buf(),
            column: table.columns[c].clone(),
            summary: format!(
                "{}; column '{}': {} URLs with impact",
                table.report,
                table.columns[c],
                pairs.len()
            ),
            by_fingerprint,
            digest: xxhash_rust::xxh3::xxh3_64(&bytes),
        })
    }

    /// The impact of the page whose URL has fingerprint `fp`, if positive.
    pub fn impact(&self, fp: u64) -> Option<f64> {
        self.by_fingerprint.get(&fp).copied()
    }

    /// URLs with a positive impact.
    pub fn len(&self) -> usize {
        self.by_fingerprint.len()
    }

    /// Whether no URL has impact (never, for a log that was read).
    pub fn is_empty(&self) -> bool {
        self.by_fingerprint.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_read_by_column_with_a_digest_of_their_content() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.tsv");
        std::fs::write(
            &a,
            "url\tclicks\tviews\nhttp://a.test/x\t1\t5\nhttp://a.test/y\t0\t2\n",
        )
        .unwrap();
        let log = SearchLog::read(&a, None).unwrap();
        assert_eq!((log.column.as_str(), log.len()), ("clicks", 1));
        assert_eq!(log.impact(fingerprint("http://a.test/x")), Some(1.0));
        assert_eq!(log.impact(fingerprint("http://a.test/y")), None);
        let views = SearchLog::read(&a, Some("views")).unwrap();
        assert_eq!(views.impact(fingerprint("http://a.test/y")), Some(2.0));
        assert_eq!(SearchLog::read(&a, Some("2")).unwrap().digest, views.digest);
        assert_ne!(views.digest, log.digest);
        // The same pairs in another order (and spelling) have the same digest.
        let b = dir.path().join("b.csv");
        std::fs::write(&b, "http://A.test/y#f,2\nhttp://a.test/x,5\n").unwrap();
        assert_eq!(SearchLog::read(&b, None).unwrap().digest, views.digest);
        for (col, want) in [("3", "1 impact column"), ("hits", "the columns")] {
            let e = SearchLog::read(&b, Some(col)).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
        assert!(SearchLog::read(&dir.path().join("none.tsv"), None).is_err());
    }
}
