//! PageRank of LAW's cnr-2000 against webgraph-algo's independent implementation.
//!
//! Skips (with a message) when the shared data folder is absent, so that a checkout without
//! `../shared/data` still passes its tests.

use crawlrank_graph::testdata::shared_data_or_skip;
use crawlrank_graph::{BvWebGraph, Cache};
use crawlrank_rank::{PageRank, PageRankConfig};
use webgraph::traits::SequentialLabeling;
use webgraph_algo::rank::pagerank::{preds, Mode};

fn l1(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum()
}

#[test]
fn cnr_2000_agrees_with_webgraph_algo() {
    let Some(data) = shared_data_or_skip("cnr-2000/cnr-2000-t.graph") else {
        return;
    };
    let dir = data.join("cnr-2000");
    // A private cache: the test must never write beside the shared data.
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(cache_dir.path());
    let graph = BvWebGraph::open(&dir.join("cnr-2000"), &cache).unwrap();
    let transpose_bv = BvWebGraph::open(&dir.join("cnr-2000-t"), &cache).unwrap();
    assert_eq!(graph.num_nodes(), 325_557);
    assert_eq!(graph.num_arcs(), 3_216_152);

    // Ours, from the in-memory transpose, at the threshold of docs/algorithms.md §4.
    let csr = graph.to_csr().unwrap();
    let transpose = csr.transpose();
    let solver = PageRank::new(&transpose, &crawlrank_rank::pagerank::outdegrees(&csr)).unwrap();
    assert_eq!(solver.num_dangling(), 78_056);
    let ours = solver.run(&PageRankConfig::default(), None).unwrap();
    assert!(
        ours.converged,
        "{} iterations, L1 change {}",
        ours.iterations, ours.l1_change
    );
    assert!((ours.scores.iter().sum::<f64>() - 1.0).abs() < 1e-12);

    // webgraph-algo's parallel Gauss–Seidel, weakly preferential (uniform dangling
    // distribution, as docs/algorithms.md §4), to a much tighter bound than ours.
    let bv_t = transpose_bv.bv();
    assert_eq!(bv_t.num_nodes(), csr.num_nodes());
    let mut reference = webgraph_algo::rank::pagerank::PageRank::new(bv_t);
    reference.alpha(0.85).mode(Mode::WeaklyPreferential);
    reference.run(preds::L1Norm::try_from(1e-13).unwrap());
    let reference = reference.rank();

    let distance = l1(&ours.scores, reference);
    eprintln!(
        "cnr-2000: {} iterations, last L1 change {:.2e}, L1 distance to webgraph-algo {:.2e}",
        ours.iterations, ours.l1_change, distance
    );
    assert!(distance < 1e-8, "L1 distance to webgraph-algo: {distance}");

    // Tightening our own threshold closes the gap further: the two implementations converge
    // to the same vector, not merely to nearby ones.
    let tight = solver
        .run(
            &PageRankConfig {
                threshold: 1e-14,
                ..Default::default()
            },
            None,
        )
        .unwrap();
    let tight_distance = l1(&tight.scores, reference);
    assert!(
        tight_distance < 1e-11,
        "tight L1 distance to webgraph-algo: {tight_distance}"
    );
    // The answer at docs/algorithms.md §4's threshold is within 1e-9 of the converged vector.
    assert!(l1(&ours.scores, &tight.scores) < 1e-9);
}
