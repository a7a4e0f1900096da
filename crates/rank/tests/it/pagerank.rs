//! PageRank's public API: reference values, validation, warm starts, edge cases.

use crawlrank_graph::Csr;
use crawlrank_rank::pagerank::{outdegrees, pagerank_from};
use crawlrank_rank::{pagerank, PageRank, PageRankConfig};
use crawlrank_testkit::{five_pages, FIVE_PAGES_PAGERANK};

fn assert_close(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < tol, "{a:?} vs {b:?}");
    }
}

#[test]
fn five_page_example() {
    let r = pagerank(&five_pages().csr(), &PageRankConfig::default()).unwrap();
    assert_close(&r.scores, &FIVE_PAGES_PAGERANK, 1e-6);
    assert!((r.scores.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert!(r.converged);
}

#[test]
fn reusing_a_transpose_and_warm_starting() {
    let g = five_pages().csr();
    let t = g.transpose();
    let solver = PageRank::new(&t, &outdegrees(&g)).unwrap();
    let cold = solver.run(&PageRankConfig::default(), None).unwrap();
    assert_close(&cold.scores, &FIVE_PAGES_PAGERANK, 1e-6);
    // The solver can also count outdegrees from the transpose itself.
    let same = PageRank::from_transpose(&t)
        .run(&PageRankConfig::default(), None)
        .unwrap();
    assert_eq!(same, cold);
    // Starting from the answer (unnormalised: warm starts are rescaled) converges at once.
    let start: Vec<f64> = cold.scores.iter().map(|s| s * 3.0).collect();
    let warm = pagerank_from(&g, &PageRankConfig::default(), Some(&start)).unwrap();
    assert_close(&warm.scores, &cold.scores, 1e-10);
    assert!(
        warm.iterations < cold.iterations / 2,
        "{} vs {}",
        warm.iterations,
        cold.iterations
    );
}

#[test]
fn results_are_deterministic_across_thread_counts() {
    // Three blocks' worth of a random graph; the block Gauss–Seidel must not depend on timing.
    let n = 10_000u32;
    let mut s = 99u64;
    let arcs: Vec<(u32, u32)> = (0..60_000)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as u32 % n, (s >> 10) as u32 % n)
        })
        .collect();
    let g = Csr::from_arcs(n as usize, &arcs);
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| pagerank(&g, &PageRankConfig::default()).unwrap())
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
}

#[test]
fn invalid_configurations_are_errors() {
    let g = five_pages().csr();
    let bad = |preference: Vec<f64>| {
        let cfg = PageRankConfig {
            preference: Some(preference),
            ..Default::default()
        };
        format!("{:#}", pagerank(&g, &cfg).unwrap_err())
    };
    let msg = bad(vec![0.2; 4]);
    assert!(
        msg.contains("preference") && msg.contains("4 entries"),
        "{msg}"
    );
    bad(vec![0.5, 0.5, 0.5, -0.5, 0.0]);
    bad(vec![0.3, 0.3, 0.3, 0.3, 0.3]);
    bad(vec![f64::NAN, 0.25, 0.25, 0.25, 0.25]);
    for cfg in [
        PageRankConfig {
            damping: 1.0,
            ..Default::default()
        },
        PageRankConfig {
            damping: -0.1,
            ..Default::default()
        },
        PageRankConfig {
            threshold: f64::NAN,
            ..Default::default()
        },
        PageRankConfig {
            max_iterations: 0,
            ..Default::default()
        },
    ] {
        assert!(pagerank(&g, &cfg).is_err(), "{cfg:?}");
    }
    assert!(pagerank_from(&g, &PageRankConfig::default(), Some(&[1.0; 3])).is_err());
    assert!(pagerank_from(&g, &PageRankConfig::default(), Some(&[0.0; 5])).is_err());
    let t = g.transpose();
    assert!(PageRank::new(&t, &[1, 1, 1]).is_err());
    assert!(PageRank::new(&t, &[1, 1, 1, 1, 1]).is_err());
}

#[test]
fn a_valid_preference_vector_is_accepted() {
    let cfg = PageRankConfig {
        preference: Some(vec![1.0, 0.0, 0.0, 0.0, 0.0]),
        threshold: 1e-15,
        ..Default::default()
    };
    let r = pagerank(&five_pages().csr(), &cfg).unwrap();
    assert!((r.scores.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    // Page 3 has no in-links and no teleport mass: only the uniform share of the dangling
    // page 4's mass reaches it (weakly preferential), so x₃ = α·x₄/n.
    assert!(r.scores[3] > 0.0);
    assert!(
        (r.scores[3] - 0.85 * r.scores[4] / 5.0).abs() < 1e-12,
        "{:?}",
        r.scores
    );
}

#[test]
fn empty_and_arcless_graphs() {
    let empty = Csr::from_arcs(0, &[]);
    let r = pagerank(&empty, &PageRankConfig::default()).unwrap();
    assert!(r.scores.is_empty());
    assert_eq!(r.iterations, 0);
    // Every page dangling: the uniform vector.
    let r = pagerank(&Csr::from_arcs(4, &[]), &PageRankConfig::default()).unwrap();
    assert_close(&r.scores, &[0.25; 4], 1e-15);
}

#[test]
fn max_iterations_caps_the_work() {
    let cfg = PageRankConfig {
        max_iterations: 3,
        threshold: 0.0,
        ..Default::default()
    };
    let r = pagerank(&five_pages().csr(), &cfg).unwrap();
    assert_eq!(r.iterations, 3);
    assert!(!r.converged);
    assert!((r.scores.iter().sum::<f64>() - 1.0).abs() < 1e-12);
}
