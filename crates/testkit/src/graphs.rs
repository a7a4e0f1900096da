//! The hand-made graphs shared by the tests: a worked PageRank example, rings with chords
//! (every page reachable, a few pages more linked than others), and the tiny shapes —
//! stars, paths, cycles — that the tests of traversals and rankings reason about.

use crawlrank_graph::Csr;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A graph small enough to write by hand: `nodes` nodes (`0..nodes`) and `arcs` in the order
/// given (duplicates and self-loops allowed; a [`Csr`] built from it sorts and deduplicates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmallGraph {
    /// The number of nodes; nodes without arcs count too.
    pub nodes: usize,
    /// The arcs `(source, target)`, every end below `nodes`.
    pub arcs: Vec<(u32, u32)>,
}

impl SmallGraph {
    /// A graph of `nodes` nodes with `arcs`. Panics if an arc names a node `>= nodes`.
    pub fn new(nodes: usize, arcs: impl IntoIterator<Item = (u32, u32)>) -> Self {
        let g = SmallGraph {
            nodes,
            arcs: arcs.into_iter().collect(),
        };
        g.check();
        g
    }

    fn check(&self) {
        if let Some(&(s, d)) = self
            .arcs
            .iter()
            .find(|&&(s, d)| s as usize >= self.nodes || d as usize >= self.nodes)
        {
            panic!("arc ({s}, {d}) names a node outside 0..{}", self.nodes);
        }
    }

    /// The same graph with `nodes` nodes: the new ones, if any, have no arcs. Panics if
    /// `nodes` is smaller than the current count.
    pub fn with_nodes(mut self, nodes: usize) -> Self {
        assert!(
            nodes >= self.nodes,
            "with_nodes({nodes}) would drop nodes of a graph of {}",
            self.nodes
        );
        self.nodes = nodes;
        self
    }

    /// The same graph with `arcs` appended. Panics if an arc names a node `>= nodes`.
    pub fn with_arcs(mut self, arcs: impl IntoIterator<Item = (u32, u32)>) -> Self {
        self.arcs.extend(arcs);
        self.check();
        self
    }

    /// The graph as a [`Csr`] (successor lists sorted, duplicate arcs removed).
    pub fn csr(&self) -> Csr {
        Csr::from_arcs(self.nodes, &self.arcs)
    }

    /// The arcs as text, one `source target` line each, in order: the input format of
    /// `crawlrank import` and `--graph FILE.txt`. Nodes without arcs after the last node named
    /// by an arc do not appear in the text.
    pub fn arc_list(&self) -> String {
        let mut text = String::new();
        for (s, d) in &self.arcs {
            text.push_str(&format!("{s} {d}\n"));
        }
        text
    }

    /// Writes [`arc_list`](Self::arc_list) to `dir/name` and returns that path.
    pub fn write_arc_list(&self, dir: &Path, name: &str) -> PathBuf {
        crate::write_file(dir, name, self.arc_list())
    }
}

/// The five-page PageRank example of docs/algorithms.md §7.1: `0 → 1, 2`; `1 → 2`; `2 → 0, 2, 4`; `3 → 0, 2`;
/// `4` dangling (and a self-loop on `2`), in the arc order `(0,1) (0,2) (1,2) (2,0) (2,2)
/// (3,0) (3,2) (2,4)`. Its PageRank is [`FIVE_PAGES_PAGERANK`].
pub fn five_pages() -> SmallGraph {
    SmallGraph::new(
        5,
        [
            (0, 1),
            (0, 2),
            (1, 2),
            (2, 0),
            (2, 2),
            (3, 0),
            (3, 2),
            (2, 4),
        ],
    )
}

/// The PageRank of [`five_pages`] with damping 0.85, uniform teleportation and dangling mass
/// spread uniformly, to 6 decimals (NetworkX, igraph and NetworKit agree on it).
pub const FIVE_PAGES_PAGERANK: [f64; 5] = [0.202830, 0.146339, 0.413422, 0.060136, 0.177272];

/// `n` pages where page `v` links to `(a·v + b) mod n` for each `(a, b)` of `chords`, in that
/// order: a deterministic graph of any size with every outdegree `chords.len()` (before
/// duplicates are removed) and uneven in-degrees when some `a` is not invertible mod `n`.
pub fn modular_chords(n: u32, chords: &[(u32, u32)]) -> SmallGraph {
    let mut arcs = Vec::with_capacity(n as usize * chords.len());
    for v in 0..n {
        for &(a, b) in chords {
            let w = (u64::from(a) * u64::from(v) + u64::from(b)) % u64::from(n);
            arcs.push((v, w as u32));
        }
    }
    SmallGraph::new(n as usize, arcs)
}

/// A ring of `n` pages with chords: page `v` links to `v + 1`, then to `a·v + b` for each
/// `(a, b)` of `chords`, all mod `n` (so [`modular_chords`] with `(1, 1)` first). Every page
/// is reachable from every page, so a crawl from any seed reaches all `n`.
pub fn ring_with_chords(n: u32, chords: &[(u32, u32)]) -> SmallGraph {
    let mut all = Vec::with_capacity(chords.len() + 1);
    all.push((1, 1));
    all.extend_from_slice(chords);
    modular_chords(n, &all)
}

/// A star: page 0 links to each of the pages `1..=leaves`, which have no arcs.
pub fn star(leaves: u32) -> SmallGraph {
    SmallGraph::new(leaves as usize + 1, (1..=leaves).map(|w| (0, w)))
}

/// A path `0 → 1 → … → n−1`: the deepest graph of its size, for traversals that must not
/// recurse.
pub fn path(n: u32) -> SmallGraph {
    SmallGraph::new(n as usize, (1..n).map(|w| (w - 1, w)))
}

/// A cycle `0 → 1 → … → n−1 → 0`: one strongly connected component of `n` nodes.
pub fn cycle(n: u32) -> SmallGraph {
    let closing = (n > 0).then(|| (n - 1, 0));
    path(n).with_arcs(closing)
}

/// The pages reachable from page `start` of a web given as each page's out-links
/// (`links[p]`), `start` included: what a complete crawl from that page fetches, for the
/// crawls of generated webs to be checked against.
pub fn reachable_from(links: &[Vec<usize>], start: usize) -> HashSet<usize> {
    let mut seen = HashSet::from([start]);
    let mut todo = vec![start];
    while let Some(p) = todo.pop() {
        for &l in &links[p] {
            if seen.insert(l) {
                todo.push(l);
            }
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(five_pages().csr().num_arcs(), 8);
        assert_eq!(
            ring_with_chords(5, &[(2, 1)]).arcs,
            [
                (0, 1),
                (0, 1),
                (1, 2),
                (1, 3),
                (2, 3),
                (2, 0),
                (3, 4),
                (3, 2),
                (4, 0),
                (4, 4)
            ]
        );
        assert_eq!(star(3), SmallGraph::new(4, [(0, 1), (0, 2), (0, 3)]));
        assert_eq!(path(3).arcs, [(0, 1), (1, 2)]);
        assert_eq!(cycle(3).arcs, [(0, 1), (1, 2), (2, 0)]);
        assert_eq!(cycle(0).nodes, 0);
        assert_eq!(five_pages().arc_list().lines().next(), Some("0 1"));
        assert_eq!(star(1).with_nodes(3).csr().num_nodes(), 3);
    }

    #[test]
    #[should_panic(expected = "outside")]
    fn arcs_must_name_nodes() {
        SmallGraph::new(2, [(0, 2)]);
    }
}
