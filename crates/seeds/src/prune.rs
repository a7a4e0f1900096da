//! Host pruning (docs/algorithms.md §5): the paper runs HITS on the graph without the arcs
//! between pages of one host, because those are mostly navigation (menus, "home" links) and would
//! make every site its own little hub-and-authority community. Pages stay; arcs go.
//!
//! This is the one copy of a graph the seed extraction makes: it is done once, before the first
//! round, and the pruned graph is usually a small fraction of the original (88% of a generated
//! web's arcs are within a host; the paper's UK-2002 kept 22.7 of 298 million arcs). The rounds
//! that follow remove pages by masking, never by copying.

use anyhow::{ensure, Result};
use crawlrank_graph::Csr;

/// `graph` without its arcs `u → v` where `host_of[u] == host_of[v]`; the pages and the order of
/// the remaining successors are kept.
pub fn prune_same_host(graph: &Csr, host_of: &[u32]) -> Result<Csr> {
    let n = graph.num_nodes();
    ensure!(
        host_of.len() == n,
        "the host list names {} pages but the graph has {n}",
        host_of.len()
    );
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0u64);
    let mut succ = Vec::new();
    for u in 0..n {
        let hu = host_of[u];
        succ.extend(
            graph
                .successors(u)
                .iter()
                .copied()
                .filter(|&v| host_of[v as usize] != hu),
        );
        offsets.push(succ.len() as u64);
    }
    succ.shrink_to_fit();
    Csr::from_parts(offsets, succ)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arcs_within_a_host_go_pages_stay() {
        // Hosts: {0, 1} and {2, 3}, page 4 alone.
        let g = Csr::from_arcs(
            5,
            &[
                (0, 1),
                (0, 2),
                (1, 0),
                (1, 3),
                (2, 3),
                (3, 4),
                (4, 4),
                (4, 0),
            ],
        );
        let p = prune_same_host(&g, &[0, 0, 1, 1, 2]).unwrap();
        assert_eq!(p.num_nodes(), 5);
        let arcs: Vec<_> = p.arcs().collect();
        assert_eq!(arcs, vec![(0, 2), (1, 3), (3, 4), (4, 0)]);
        assert!(prune_same_host(&g, &[0, 0]).is_err());
    }
}
