//! The seed sets a community-seeds run is compared against: uniformly random pages (the paper's
//! baseline) and the best pages by PageRank (what a user with a ranking would try first).

use crawlrank_rng::Xoshiro256StarStar;

/// `n` distinct random pages of a graph of `nodes` pages (or all of them, if it has fewer), in
/// draw order, from a xoshiro256** generator seeded with `rng_seed`: the same on every machine.
pub fn random_seeds(nodes: usize, n: usize, rng_seed: u64) -> Vec<u32> {
    let mut rng = Xoshiro256StarStar::new(rng_seed);
    distinct_pages(nodes, n.min(nodes), |k| rng.below(k))
}

/// `want` distinct pages of a graph of `nodes` pages (`want <= nodes`), in draw order, drawn
/// with `below(k)` (uniform in `0..k`) and redrawn on a repeat: the random samples of the
/// baseline and of the evaluation, each with its own generator.
pub(crate) fn distinct_pages(
    nodes: usize,
    want: usize,
    mut below: impl FnMut(u64) -> u64,
) -> Vec<u32> {
    let mut chosen = std::collections::HashSet::with_capacity(want);
    let mut pages = Vec::with_capacity(want);
    while pages.len() < want {
        let p = below(nodes as u64) as u32;
        if chosen.insert(p) {
            pages.push(p);
        }
    }
    pages
}

/// The `n` pages of highest `pagerank`, best first (ties: smaller id first).
pub fn top_pagerank_seeds(pagerank: &[f64], n: usize) -> Vec<u32> {
    crawlrank_rank::top_k(pagerank, n)
        .into_iter()
        .map(|(p, _)| p as u32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_seeds_are_distinct_and_reproducible() {
        let a = random_seeds(100, 10, 7);
        assert_eq!(a.len(), 10);
        assert_eq!(a, random_seeds(100, 10, 7));
        let mut s = a.clone();
        s.sort();
        s.dedup();
        assert_eq!(s.len(), 10);
        assert_eq!(random_seeds(3, 10, 1).len(), 3);
    }

    #[test]
    fn top_pagerank_breaks_ties_by_id() {
        assert_eq!(top_pagerank_seeds(&[0.1, 0.3, 0.3, 0.2], 3), vec![1, 2, 3]);
    }
}
