//! The ids users see for the pages of a graph, and the one parser of ids read from users.
//!
//! Inside crawlrank the nodes of a graph are always numbered densely, `0..n`: rankings, crawl
//! policies and the simulator index arrays by node. The user's ids need not be dense: an arc
//! list whose ids have gaps (SNAP's web graphs, a subgraph cut out of a bigger one) or start at
//! 1 is renumbered by its import, in increasing order of original id, and the import writes
//! `BASENAME.ids`, line `i` holding the original id of node `i`. [`PageIds`] reads that table
//! back, so that every id a command reads (a seeds file, a downloaded set, an impact table
//! keyed by id) is turned into its node, and every id a command writes (scores, crawl orders,
//! seeds, arc lists) is the user's id again. A graph without `.ids` — any BVGraph, an arc list
//! whose ids are exactly `0..n`, an import with `--keep-ids` — has ids equal to its nodes.
//!
//! The rule, for users: **a page's id is the id the user gave it**. An id that is not a page of
//! the graph is an error naming where it was read and the id, never another page.
//!
//! A `.ids` file is checked when read: one non-negative integer per line, as many lines as the
//! graph has nodes, strictly increasing (the order the import writes). A file that breaks any
//! of these is an error, not a table that would shift every id after a bad line.
//!
//! Memory: nothing for dense ids, 8 bytes per node otherwise; an id is turned into its node by
//! binary search over the sorted table.

use crate::import::lines::{self, IdError, LineReader};
use anyhow::{anyhow, bail, Result};
use std::fmt::Display;
use std::path::Path;

/// The ids users see for the pages of a graph (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageIds {
    table: Table,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Table {
    /// Node `i` has id `i`.
    Dense(usize),
    /// Node `i` has id `ids[i]`; sorted, distinct, not `0..n`.
    Sorted(Vec<u64>),
}

impl PageIds {
    /// `n` pages whose ids are their nodes, `0..n`.
    pub fn dense(n: usize) -> Self {
        Self {
            table: Table::Dense(n),
        }
    }

    /// The pages whose ids are `ids` (node `i` has id `ids[i]`), which must be strictly
    /// increasing; `what` names their source in the error.
    pub fn from_sorted(ids: Vec<u64>, what: impl Display) -> Result<Self> {
        if let Some(i) = ids.windows(2).position(|w| w[0] >= w[1]) {
            bail!(
                "{what}: the ids are not strictly increasing: id {} (node {}) follows {} \
                 (node {i})",
                ids[i + 1],
                i + 1,
                ids[i]
            );
        }
        Ok(Self::from_checked(ids))
    }

    fn from_checked(ids: Vec<u64>) -> Self {
        // Strictly increasing and ending at n - 1: exactly 0..n.
        let dense = ids.last().is_none_or(|&last| last == ids.len() as u64 - 1);
        Self {
            table: if dense {
                Table::Dense(ids.len())
            } else {
                Table::Sorted(ids)
            },
        }
    }

    /// Reads the `.ids` file `path` of a graph of `num_nodes` nodes, checking it (see the
    /// [module documentation](self)).
    pub fn read(path: &Path, num_nodes: usize) -> Result<Self> {
        let mut r = LineReader::open(path)?;
        let mut ids: Vec<u64> = Vec::with_capacity(num_nodes);
        while r.advance()? {
            let line = r.current();
            let t = trim(line);
            let id = match lines::parse_id(t) {
                Ok(id) => id,
                Err(e) => {
                    return Err(r.err(format!(
                        "{} (a .ids file holds the original id of each node, one per line)",
                        id_problem(e, t)
                    )))
                }
            };
            if let Some(&prev) = ids.last() {
                if id <= prev {
                    return Err(r.err(format!(
                        "id {id} is not above the id {prev} of the line before: the ids of a \
                         .ids file are strictly increasing (the file is corrupt)"
                    )));
                }
            }
            if ids.len() == num_nodes {
                bail!(
                    "{}: more than {num_nodes} ids, but the graph has {num_nodes} nodes: the \
                     file belongs to another graph",
                    path.display()
                );
            }
            ids.push(id);
        }
        if ids.len() != num_nodes {
            bail!(
                "{}: {} ids, but the graph has {num_nodes} nodes: the file belongs to another \
                 graph or is truncated",
                path.display(),
                ids.len()
            );
        }
        Ok(Self::from_checked(ids))
    }

    /// The ids of the graph `basename` of `num_nodes` nodes: its `BASENAME.ids` when there is
    /// one, else `0..num_nodes`.
    pub fn of_graph(basename: &Path, num_nodes: usize) -> Result<Self> {
        let path = crate::basename::with_ext(basename, "ids");
        if path.is_file() {
            Self::read(&path, num_nodes)
        } else {
            Ok(Self::dense(num_nodes))
        }
    }

    /// Number of pages.
    pub fn len(&self) -> usize {
        match &self.table {
            Table::Dense(n) => *n,
            Table::Sorted(v) => v.len(),
        }
    }

    /// Whether there are no pages.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the ids are the nodes themselves (`0..n`).
    pub fn is_dense(&self) -> bool {
        matches!(self.table, Table::Dense(_))
    }

    /// The id of `node` (which must be below [`len`](Self::len)).
    #[inline]
    pub fn id(&self, node: usize) -> u64 {
        match &self.table {
            Table::Dense(n) => {
                debug_assert!(node < *n);
                node as u64
            }
            Table::Sorted(v) => v[node],
        }
    }

    /// The node of the page with id `id`, if the graph has one.
    #[inline]
    pub fn node(&self, id: u64) -> Option<usize> {
        match &self.table {
            Table::Dense(n) => (id < *n as u64).then_some(id as usize),
            Table::Sorted(v) => v.binary_search(&id).ok(),
        }
    }

    /// The ids of `nodes`, in the same order.
    pub fn ids_of<'a>(&'a self, nodes: &'a [u32]) -> impl Iterator<Item = u64> + 'a {
        nodes.iter().map(|&v| self.id(v as usize))
    }

    /// The range of the ids, as words for messages: `ids 0 to 20` (`no pages` when empty).
    fn range(&self) -> String {
        match self.len() {
            0 => "no pages".into(),
            n => format!(
                "{} pages, ids {} to {}{}",
                n,
                self.id(0),
                self.id(n - 1),
                if self.is_dense() { "" } else { " with gaps" }
            ),
        }
    }

    /// Parses `text` — a page id read from the user at `at` (e.g. `seeds.txt:3`) — and returns
    /// its node. An id that is not a page of the graph, a negative id and anything that is not
    /// a non-negative integer are errors naming `at` and the text: every command that reads ids
    /// from users reads them here.
    pub fn parse(&self, text: &str, at: impl Display) -> Result<usize> {
        let id = parse_id(text, &at)?;
        match self.node(id) {
            Some(node) => Ok(node),
            None => bail!(
                "{at}: id {id} is not a page of the graph (it has {}){}",
                self.range(),
                if self.is_dense() {
                    ""
                } else {
                    "; an id in no arc of an arc list is not a page, unless the list is \
                     imported with --keep-ids"
                }
            ),
        }
    }
}

/// Parses `text`, a page id read from the user at `at`, without looking it up: for readers
/// that count ids the graph does not have rather than reject them (impact tables). Negative
/// ids and anything that is not a non-negative integer are errors naming `at` and the text.
pub fn parse_id(text: &str, at: impl Display) -> Result<u64> {
    let t = text.trim();
    lines::parse_id(t.as_bytes()).map_err(|e| anyhow!("{at}: {}", id_problem(e, t.as_bytes())))
}

/// Whether `text` is meant as a number (it starts with a digit, a sign or a point) rather than a
/// name such as a URL: such text goes to [`PageIds::parse`], which says what is wrong with it.
pub fn looks_numeric(text: &str) -> bool {
    !text.trim().is_empty() && !lines::is_word(text.trim().as_bytes())
}

/// Why `t` is not a page id.
fn id_problem(e: IdError, t: &[u8]) -> String {
    let f = lines::show(t);
    match e {
        IdError::Negative => format!("'{f}' is not a page id: ids are not negative"),
        IdError::NotInteger => {
            format!("'{f}' is not a page id: ids are non-negative integers")
        }
        IdError::TooLarge => {
            format!("'{f}' is not a page id: ids are integers in 0..=2^63-1")
        }
    }
}

fn trim(line: &[u8]) -> &[u8] {
    let start = line
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &line[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(r: Result<impl std::fmt::Debug>) -> String {
        format!("{:#}", r.unwrap_err())
    }

    #[test]
    fn dense_and_sparse_tables_map_both_ways() {
        let d = PageIds::dense(3);
        assert!(d.is_dense());
        assert_eq!((d.id(2), d.node(2), d.node(3)), (2, Some(2), None));

        let s = PageIds::from_sorted(vec![0, 5, 10, 20], "t").unwrap();
        assert!(!s.is_dense());
        assert_eq!(s.len(), 4);
        let ids: Vec<u64> = (0..4).map(|v| s.id(v)).collect();
        assert_eq!(ids, [0, 5, 10, 20]);
        let nodes: Vec<_> = [0, 5, 10, 20, 1, 7, 21].map(|i| s.node(i)).to_vec();
        assert_eq!(
            nodes,
            [Some(0), Some(1), Some(2), Some(3), None, None, None]
        );
        assert_eq!(s.ids_of(&[3, 0]).collect::<Vec<_>>(), [20, 0]);

        // A table that is exactly 0..n is dense.
        assert!(PageIds::from_sorted(vec![0, 1, 2], "t").unwrap().is_dense());
        assert!(PageIds::from_sorted(vec![], "t").unwrap().is_dense());
        let e = err(PageIds::from_sorted(vec![1, 3, 3], "t"));
        assert!(e.contains("not strictly increasing"), "{e}");
    }

    #[test]
    fn the_parser_names_the_place_and_the_text() {
        let s = PageIds::from_sorted(vec![0, 5, 10, 20], "t").unwrap();
        assert_eq!(s.parse("20", "f:1").unwrap(), 3);
        assert_eq!(s.parse(" 5 ", "f:1").unwrap(), 1);
        let e = err(s.parse("7", "seeds.txt:3"));
        assert!(
            e.starts_with("seeds.txt:3: id 7 is not a page of the graph")
                && e.contains("ids 0 to 20 with gaps"),
            "{e}"
        );
        let e = err(s.parse("-5", "f:2"));
        assert!(e.contains("f:2") && e.contains("'-5'") && e.contains("negative"));
        let e = err(s.parse("2.5", "f:4"));
        assert!(e.contains("f:4") && e.contains("'2.5'") && e.contains("integers"));
        let e = err(s.parse("99999999999999999999", "f:5"));
        assert!(e.contains("0..=2^63-1"), "{e}");
        let e = err(PageIds::dense(4).parse("4", "f:6"));
        assert!(e.contains("id 4 is not a page") && e.contains("4 pages, ids 0 to 3"));
        assert_eq!(parse_id(" 7", "f:7").unwrap(), 7);
        assert!(err(parse_id("-7", "f:7")).starts_with("f:7: '-7' is not a page id"));
        assert!(looks_numeric("12") && looks_numeric("-1") && looks_numeric(".5"));
        assert!(!looks_numeric("http://a/") && !looks_numeric("") && !looks_numeric("x1"));
    }

    #[test]
    fn ids_files_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("g.ids");
        std::fs::write(&p, "0\n5\n10\n20\n").unwrap();
        let t = PageIds::read(&p, 4).unwrap();
        assert_eq!(t.node(20), Some(3));
        std::fs::write(&p, "0\n1\n2\n").unwrap();
        assert!(PageIds::read(&p, 3).unwrap().is_dense());
        let cases = [
            ("0\n5\n10\n20\n", 3, "more than 3 ids"),
            ("0\n5\n10\n", 4, "3 ids, but the graph has 4 nodes"),
            ("0\n10\n5\n20\n", 4, "line 3: id 5 is not above the id 10"),
            ("0\n5\n5\n20\n", 4, "line 3: id 5 is not above"),
            ("0\n-5\n", 2, "line 2: '-5' is not a page id"),
            ("0\nx\n", 2, "line 2: 'x' is not a page id"),
        ];
        for (text, n, want) in cases {
            std::fs::write(&p, text).unwrap();
            let e = err(PageIds::read(&p, n));
            assert!(e.contains("g.ids") && e.contains(want), "{want}: {e}");
        }
        // No .ids: the nodes themselves.
        let base = dir.path().join("h");
        assert_eq!(PageIds::of_graph(&base, 2).unwrap(), PageIds::dense(2));
    }
}
