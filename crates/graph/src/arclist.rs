//! Any graph as a text arc list, for NetworkX, pandas, igraph and friends.
//!
//! The format is one arc per line, source then destination separated by a tab, no header:
//!
//! - ids (default): `SRC<TAB>DST`, the pages' ids, sources in increasing order and each
//!   node's successors in increasing order (BVGraph order). The ids are the user's
//!   ([`page_ids`](crate::page_ids)): an arc list imported with gaps in its ids (or starting
//!   at 1) comes out with the very ids it had, through the import's `BASENAME.ids`; a graph
//!   without `.ids` has ids `0..n`.
//! - URLs: `SRC_URL<TAB>DST_URL`, each node named by its line of the graph's `.urls`. Every
//!   node that has an arc must have a URL without a tab in it (an empty line, a node without a
//!   known URL, is an error rather than a node named by the empty string).
//!
//! Either form reads back with `crawlrank import` (as an arc list or as URL pairs) and with
//! `networkx.read_edgelist(path, delimiter="\t", create_using=networkx.DiGraph)`. Isolated
//! nodes and the number of nodes are not in an arc list.
//!
//! The arcs are streamed from the graph's sequential iterator to the file: memory does not
//! grow with the arcs (URLs, when asked for, are held in memory, one string per node). The
//! file is written atomically ([`atomic`]): it appears whole or not at all.

use crate::atomic;
use crate::bv::is_bvgraph;
use crate::cache::Cache;
use crate::page_ids::PageIds;
use crate::source;
use crate::urls;
use anyhow::{bail, ensure, Context, Result};
use lender::prelude::*;
use std::io::Write;
use std::path::Path;
use webgraph::prelude::*;

/// What an arc list holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArcsWritten {
    /// Nodes of the graph (not all of them need appear in the list).
    pub nodes: usize,
    /// Arcs written, one per line.
    pub arcs: u64,
}

/// How an arc list names the nodes.
enum Names<'a, S> {
    /// By node, `0..n`.
    Nodes,
    /// By the pages' ids.
    Ids(&'a PageIds),
    /// By URL, one per node.
    Urls(&'a [S]),
}

/// Writes the arcs of `graph` to `out` (see the [module documentation](self)): node ids, or,
/// with `urls` (one per node), URL pairs.
pub fn write_arcs<S: AsRef<str>>(
    graph: &impl SequentialGraph,
    urls: Option<&[S]>,
    out: &Path,
) -> Result<ArcsWritten> {
    match urls {
        Some(urls) => write_named(graph, Names::Urls(urls), out),
        None => write_named::<&str>(graph, Names::Nodes, out),
    }
}

/// Writes the arcs of `graph` to `out`, each node named by its id in `ids` (one per node).
pub fn write_arcs_with_ids(
    graph: &impl SequentialGraph,
    ids: &PageIds,
    out: &Path,
) -> Result<ArcsWritten> {
    write_named::<&str>(graph, Names::Ids(ids), out)
}

fn write_named<S: AsRef<str>>(
    graph: &impl SequentialGraph,
    names: Names<'_, S>,
    out: &Path,
) -> Result<ArcsWritten> {
    let nodes = graph.num_nodes();
    let named = match &names {
        Names::Nodes => nodes,
        Names::Ids(ids) => ids.len(),
        Names::Urls(urls) => urls.len(),
    };
    ensure!(
        named == nodes,
        "cannot write {}: {named} {} for a graph of {nodes} nodes",
        out.display(),
        if matches!(names, Names::Urls(_)) {
            "URLs"
        } else {
            "ids"
        }
    );
    let mut arcs = 0u64;
    atomic::write_file(out, |w| {
        // A node is named only on its arcs: a node without arcs needs no URL.
        let mut it = graph.iter();
        let mut buf = itoa::Buffer::new();
        while let Some((src, succ)) = it.next() {
            for dst in succ {
                write_name(w, &names, src, &mut buf)?;
                w.write_all(b"\t")?;
                write_name(w, &names, dst, &mut buf)?;
                w.write_all(b"\n")?;
                arcs += 1;
            }
        }
        Ok(())
    })
    .with_context(|| format!("cannot write the arc list {}", out.display()))?;
    Ok(ArcsWritten { nodes, arcs })
}

/// Writes the name of `node`: its URL, or its id.
fn write_name<W: Write, S: AsRef<str>>(
    w: &mut W,
    names: &Names<'_, S>,
    node: usize,
    buf: &mut itoa::Buffer,
) -> Result<()> {
    let name = match names {
        Names::Urls(urls) => url_of(urls, node)?,
        Names::Ids(ids) => buf.format(ids.id(node)),
        Names::Nodes => buf.format(node),
    };
    w.write_all(name.as_bytes())?;
    Ok(())
}

/// The URL of `node`, if it can name the node in a tab-separated line.
fn url_of<S: AsRef<str>>(urls: &[S], node: usize) -> Result<&str> {
    let url = urls[node].as_ref();
    if url.is_empty() {
        bail!(
            "node {node} has no URL (line {} of the URL list is empty), so the arcs cannot be \
             written as URL pairs",
            node + 1
        );
    }
    if url.contains('\t') {
        bail!(
            "the URL of node {node} (line {} of the URL list) contains a tab, which would break \
             the tab-separated arc list",
            node + 1
        );
    }
    Ok(url)
}

/// Writes the arcs of the graph `graph` — as `--graph` takes it: a BVGraph basename or an
/// arc-list file ([`source::open_graph`]) — to `out`, as the pages' ids (the user's, through
/// the graph's `.ids` when it has one) or, with `with_urls`, as URL pairs from the graph's
/// `.urls`. Nothing is written beside the graph: an arc-list
/// input is imported into `cache`.
pub fn convert(graph: &Path, cache: &Cache, with_urls: bool, out: &Path) -> Result<ArcsWritten> {
    if with_urls && !is_bvgraph(graph) && graph.is_file() {
        bail!(
            "{} is an arc list, which has no URLs: convert it without URLs, or import it with \
             its URLs first (`crawlrank import --urls`, or URL pairs)",
            graph.display()
        );
    }
    let g = source::open_graph(graph, cache)?;
    if !with_urls {
        return write_arcs_with_ids(g.bv(), &g.page_ids()?, out);
    }
    let Some(path) = urls::find_urls(g.basename()) else {
        bail!(
            "the graph {} has no URLs ({} not found, nor .urls.gz): convert it without URLs",
            graph.display(),
            urls::urls_path(g.basename()).display()
        );
    };
    let names = g
        .urls()?
        .with_context(|| format!("{} disappeared", path.display()))?;
    write_arcs(g.bv(), Some(&names), out).with_context(|| {
        format!(
            "cannot write the arcs of {} with the URLs of {}",
            graph.display(),
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph() -> VecGraph {
        let mut g = VecGraph::empty(4);
        g.add_arcs([(2, 0), (0, 2), (0, 1), (3, 3)]);
        g
    }

    #[test]
    fn ids_and_urls() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("arcs.tsv");
        let w = write_arcs::<&str>(&graph(), None, &out).unwrap();
        assert_eq!(w, ArcsWritten { nodes: 4, arcs: 4 });
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "0\t1\n0\t2\n2\t0\n3\t3\n"
        );
        let urls = ["http://a/", "http://b/", "http://c/", "http://d/x y"];
        write_arcs(&graph(), Some(&urls[..]), &out).unwrap();
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "http://a/\thttp://b/\nhttp://a/\thttp://c/\nhttp://c/\thttp://a/\n\
             http://d/x y\thttp://d/x y\n"
        );
    }

    #[test]
    fn ids_name_the_nodes_by_the_users_ids() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("arcs.tsv");
        let ids = PageIds::from_sorted(vec![3, 10, 11, 40], "t").unwrap();
        write_arcs_with_ids(&graph(), &ids, &out).unwrap();
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "3\t10\n3\t11\n11\t3\n40\t40\n"
        );
        let short = PageIds::dense(3);
        let e = format!(
            "{:#}",
            write_arcs_with_ids(&graph(), &short, &out).unwrap_err()
        );
        assert!(e.contains("3 ids for a graph of 4 nodes"), "{e}");
    }

    #[test]
    fn unusable_urls_are_errors_and_leave_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("arcs.tsv");
        let cases: [(&[&str], &str); 3] = [
            (
                &["http://a/", "", "http://c/", "http://d/"],
                "node 1 has no URL",
            ),
            (
                &["http://a/", "http://b/", "http://c/\tx", "http://d/"],
                "contains a tab",
            ),
            (&["http://a/"], "1 URLs for a graph of 4 nodes"),
        ];
        for (urls, expected) in cases {
            let err = format!("{:#}", write_arcs(&graph(), Some(urls), &out).unwrap_err());
            assert!(err.contains(expected), "{err}");
            assert!(!out.exists());
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // A node without a URL is fine when it has no arcs.
        let urls = ["http://a/", "http://b/", "http://c/", ""];
        let mut g = VecGraph::empty(4);
        g.add_arcs([(0, 1), (1, 2)]);
        assert_eq!(write_arcs(&g, Some(&urls[..]), &out).unwrap().arcs, 2);
    }
}
