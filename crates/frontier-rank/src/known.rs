//! The downloaded set `D`, its frontier `F` and the graph a crawler knows (docs/algorithms.md §6).
//!
//! A crawler that has downloaded `D` knows the out-links of those pages and nothing of the pages
//! they point to: `F` = the pages linked from `D` and not in it, `V = D ∪ F`, and the known graph
//! holds `D`'s out-links (all inside `V` by construction) while `F` pages have none. Pages of `V`
//! are renumbered compactly — `D` first, then `F`, each in increasing original id — so that
//! "ties to the smaller original id" is "ties to the smaller compact id" within `F`.

use anyhow::{ensure, Result};
use crawlrank_graph::access::Successors;
use crawlrank_graph::visit::Bfs;
use crawlrank_graph::Csr;
use std::ops::ControlFlow;

/// `D`, `F` and the known graph over `V = D ∪ F` (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct KnownGraph {
    /// Original id of each page of `V`: the `downloaded` pages of `D` first, then `F`, each
    /// part in increasing id.
    pub pages: Vec<u32>,
    /// `|D|`: compact ids `0..downloaded` are `D`, the rest `F`.
    pub downloaded: usize,
    /// `D`'s out-links, over compact ids (`F` pages have none).
    pub graph: Csr,
    /// Its transpose.
    pub transpose: Csr,
}

impl KnownGraph {
    /// A known graph given in compact ids already (page `i` is `i`): the first `downloaded`
    /// pages of `graph` are `D`, the rest `F`. For tests of the methods and measures.
    #[cfg(test)]
    pub(crate) fn compact(graph: Csr, downloaded: usize) -> Self {
        KnownGraph {
            pages: (0..graph.num_nodes() as u32).collect(),
            downloaded,
            transpose: graph.transpose(),
            graph,
        }
    }

    /// Builds `D` (the given pages of `full`, repeats ignored), `F` and the known graph. An empty
    /// `D`, a page id outside `full`, or an empty `F` (`D` links only to itself) is an error.
    pub fn new<G: Successors>(full: &G, downloaded: &[u32]) -> Result<Self> {
        let n = full.node_count();
        let mut buf = Vec::new();
        ensure!(!downloaded.is_empty(), "the downloaded set D is empty");
        if let Some(&bad) = downloaded.iter().find(|&&p| p as usize >= n) {
            anyhow::bail!("downloaded page {bad} is not in the graph ({n} pages)");
        }
        const NONE: u32 = u32::MAX;
        let mut compact = vec![NONE; n];
        let mut d: Vec<u32> = downloaded.to_vec();
        d.sort_unstable();
        d.dedup();
        for (i, &p) in d.iter().enumerate() {
            compact[p as usize] = i as u32;
        }
        let mut f: Vec<u32> = Vec::new();
        for &p in &d {
            for &q in full.successors_in(p as usize, &mut buf) {
                if compact[q as usize] == NONE {
                    compact[q as usize] = u32::MAX - 1; // seen, numbered below
                    f.push(q);
                }
            }
        }
        ensure!(
            !f.is_empty(),
            "the frontier F is empty: the {} downloaded pages link to no page outside them",
            d.len()
        );
        f.sort_unstable();
        for (i, &p) in f.iter().enumerate() {
            compact[p as usize] = (d.len() + i) as u32;
        }
        let mut lists: Vec<Vec<u32>> = Vec::with_capacity(d.len() + f.len());
        for &p in &d {
            let mut l: Vec<u32> = full
                .successors_in(p as usize, &mut buf)
                .iter()
                .map(|&q| compact[q as usize])
                .collect();
            l.sort_unstable();
            l.dedup();
            lists.push(l);
        }
        lists.resize(d.len() + f.len(), Vec::new());
        let graph = Csr::from_lists(lists);
        let transpose = graph.transpose();
        let downloaded = d.len();
        d.extend_from_slice(&f);
        Ok(Self {
            pages: d,
            downloaded,
            graph,
            transpose,
        })
    }

    /// `|V|`.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether `V` is empty (never, for a built graph).
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// `|F|`.
    pub fn frontier_len(&self) -> usize {
        self.pages.len() - self.downloaded
    }

    /// Original ids of the pages of `F`, in increasing order (compact ids `downloaded..`).
    pub fn frontier(&self) -> &[u32] {
        &self.pages[self.downloaded..]
    }

    /// Original ids of the pages of `D`, in increasing order.
    pub fn downloaded_pages(&self) -> &[u32] {
        &self.pages[..self.downloaded]
    }

    /// `values` (one per page of the full graph) over `V`, in compact order.
    pub fn restrict(&self, values: &[f64]) -> Vec<f64> {
        self.pages.iter().map(|&p| values[p as usize]).collect()
    }
}

/// The first `count` pages (or all it reaches, if fewer) of a breadth-first search of `full`
/// from `seeds`: the downloaded set of a BFS crawl stopped after `count` pages.
pub fn bfs_downloaded<G: Successors>(full: &G, seeds: &[u32], count: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(count);
    if count == 0 {
        return out;
    }
    Bfs::new(full.node_count()).visit_until(full, seeds, |v, _| {
        out.push(v);
        if out.len() >= count {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0→1, 0→2, 1→3, 2→3, 2→4, 3→0, 4→5, 5→6.
    fn hand() -> Csr {
        Csr::from_arcs(
            7,
            &[
                (0, 1),
                (0, 2),
                (1, 3),
                (2, 3),
                (2, 4),
                (3, 0),
                (4, 5),
                (5, 6),
            ],
        )
    }

    #[test]
    fn d_f_and_the_known_graph_on_a_hand_graph() {
        let k = KnownGraph::new(&hand(), &[2, 0, 2]).unwrap();
        // D = {0, 2}; F = {1, 3, 4}; 5, 6 unknown.
        assert_eq!(k.downloaded_pages(), &[0, 2]);
        assert_eq!(k.frontier(), &[1, 3, 4]);
        assert_eq!(k.len(), 5);
        assert_eq!(k.frontier_len(), 3);
        // compact: 0→0, 2→1, 1→2, 3→3, 4→4.
        assert_eq!(k.graph.successors(0), &[1, 2]); // 0 → 2, 1
        assert_eq!(k.graph.successors(1), &[3, 4]); // 2 → 3, 4
        for v in 2..5 {
            assert!(
                k.graph.successors(v).is_empty(),
                "F pages have no out-links"
            );
        }
        assert_eq!(k.transpose.successors(3), &[1]);
        assert_eq!(
            k.restrict(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
            vec![0.0, 2.0, 1.0, 3.0, 4.0]
        );
    }

    #[test]
    fn bad_downloaded_sets() {
        let g = hand();
        assert!(KnownGraph::new(&g, &[])
            .unwrap_err()
            .to_string()
            .contains("empty"));
        assert!(KnownGraph::new(&g, &[9]).is_err());
        // 6 links nowhere: F is empty.
        let e = KnownGraph::new(&g, &[6]).unwrap_err().to_string();
        assert!(e.contains("frontier F is empty"), "{e}");
    }

    #[test]
    fn bfs_downloaded_stops_after_count_pages() {
        let g = hand();
        assert_eq!(bfs_downloaded(&g, &[0], 3), vec![0, 1, 2]);
        assert_eq!(bfs_downloaded(&g, &[4], 10), vec![4, 5, 6]);
        assert!(bfs_downloaded(&g, &[0], 0).is_empty());
    }
}
