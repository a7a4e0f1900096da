//! In-degree as a ranking: the simplest baseline of the RW paper and the final score of the
//! backlink and in-degree policies, returned as `f64` scores so that every ranking can be
//! compared (Kendall's τ, top-k) through the same code.

use crawlrank_graph::access::{indegrees_of, SequentialSuccessors};

/// The number of arcs entering every page, as a score (one sequential pass: a [`Csr`] in
/// memory or the compressed graph).
///
/// [`Csr`]: crawlrank_graph::Csr
pub fn indegree<G: SequentialSuccessors>(graph: &G) -> Vec<f64> {
    indegrees_of(graph).into_iter().map(f64::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawlrank_graph::Csr;

    #[test]
    fn counts_incoming_arcs() {
        let g = Csr::from_arcs(4, &[(0, 1), (2, 1), (3, 1), (1, 0), (2, 2)]);
        assert_eq!(indegree(&g), vec![1.0, 3.0, 1.0, 0.0]);
        assert!(indegree(&Csr::from_arcs(0, &[])).is_empty());
    }
}
