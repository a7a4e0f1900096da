//! The measures on hand-made orders, against values worked out by hand.

use crawlrank_frontier::{Impacts, PolicyKind};
use crawlrank_graph::Csr;
use crawlrank_sim::checkpoints::checkpoints;
use crawlrank_sim::measures::measure;
use crawlrank_sim::SimPolicy;
use crawlrank_sim::{simulate, PolicyRun, Reference, SimConfig};
use crawlrank_testkit as testkit;
use std::sync::Arc;
use std::time::Duration;

fn hand_run(order: Vec<u32>, scores: Vec<f64>) -> PolicyRun {
    PolicyRun {
        policy: SimPolicy::Crawl(PolicyKind::Bfs),
        order,
        final_scores: scores,
        batch: 1,
        crawl_time: Duration::ZERO,
        arcs: 0,
        peak_frontier: 0,
        peak_rss_bytes: None,
    }
}

#[test]
fn throughput_mass_and_tau_by_hand() {
    // 0 → 1, 2, 3: all reachable from 0. A hand-made "PageRank": hot order is 1, 2, 3, 0.
    let g = testkit::star(3).with_nodes(5).csr();
    let pr = Arc::new(vec![0.1, 0.4, 0.3, 0.2, 0.0]);
    let reference = Reference::new(&g, pr, &[0]).unwrap();
    assert_eq!(reference.reachable, 4);
    assert_eq!(reference.hot_rank, vec![3, 0, 1, 2, u32::MAX]);
    assert!((reference.reachable_mass - 1.0).abs() < 1e-12);

    let m = measure(
        &hand_run(vec![0, 1, 2, 3], vec![0.0, -1.0, -2.0, -3.0]),
        &reference,
    )
    .unwrap();
    // k = ceil(j·4/100): 1 for j ≤ 25, 2 for j ≤ 50, 3 for j ≤ 75, 4 after.
    assert_eq!(m.checkpoints[24], 1);
    assert_eq!(m.checkpoints[25], 2);
    assert_eq!(m.checkpoints[99], 4);
    // k = 1: {0} ∩ {1} = ∅; k = 2: {0,1} ∩ {1,2} = {1}; k = 3: {0,1,2} ∩ {1,2,3} = {1,2}.
    assert_eq!(m.throughput[0], 0.0);
    assert_eq!(m.throughput[49], 0.5);
    assert!((m.throughput[74] - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(m.throughput[99], 1.0);
    assert!((m.mass[0] - 0.1).abs() < 1e-12);
    assert!((m.mass[49] - 0.5).abs() < 1e-12);
    assert!((m.mass[74] - 0.8).abs() < 1e-12);
    assert!((m.mass[99] - 1.0).abs() < 1e-12);
    // Windows: j = 1 holds page 0; j = 26 page 1; j = 51 page 2; j = 76 page 3; others none.
    assert!((m.mean_pagerank[0] - 0.1).abs() < 1e-12);
    assert!((m.mean_pagerank[25] - 0.4).abs() < 1e-12);
    assert_eq!(m.mean_pagerank[1], 0.0);
    // Crawl-position scores vs PR: page 0 is discordant with the 3 others, the rest agree.
    assert!(m.kendall_tau.abs() < 1e-12);

    // The best order finds every hot page at once.
    let best = measure(
        &hand_run(vec![1, 2, 3, 0], vec![0.4, 0.3, 0.2, 0.1]),
        &reference,
    )
    .unwrap();
    assert!(best.throughput.iter().all(|&t| t == 1.0));
    assert!((best.kendall_tau - 1.0).abs() < 1e-12);
}

#[test]
fn impact_relative_to_the_ideal_order_by_hand() {
    // 0 → 1, 2, 3; page 4 is unreachable (its impact counts in no ideal). Impacts 0: 1,
    // 1: 0, 2: 4, 3: 3, 4: 100; the ideal order is 2, 3, 0, 1.
    let g = testkit::star(3).with_nodes(5).csr();
    let pr = Arc::new(vec![0.1, 0.4, 0.3, 0.2, 0.0]);
    let reference = Reference::new(&g, pr, &[0])
        .unwrap()
        .with_impact(Impacts::new(vec![1.0, 0.0, 4.0, 3.0, 100.0]))
        .unwrap();
    let ideal = &reference.impact.as_ref().unwrap().ideal;
    assert_eq!(
        (ideal[0], ideal[25], ideal[50], ideal[99]),
        (4.0, 7.0, 8.0, 8.0)
    );
    let m = measure(&hand_run(vec![0, 1, 2, 3], vec![0.0; 4]), &reference).unwrap();
    let c = m.impact.unwrap();
    // k = 1: 1/4; k = 2: (1+0)/7; k = 3: (1+0+4)/8; k = 4: 8/8.
    assert_eq!(
        (c[0], c[25], c[50], c[99]),
        (0.25, 1.0 / 7.0, 5.0 / 8.0, 1.0)
    );
    let best = measure(&hand_run(vec![2, 3, 0, 1], vec![0.0; 4]), &reference).unwrap();
    assert!(best.impact.unwrap().iter().all(|&v| v == 1.0));
    // Without impacts there is no such curve; with none in R it is an error.
    let plain = Reference::new(&g, Arc::new(vec![0.2; 5]), &[0]).unwrap();
    let m = measure(&hand_run(vec![0, 1, 2, 3], vec![0.0; 4]), &plain).unwrap();
    assert!(m.impact.is_none());
    let e = plain
        .with_impact(Impacts::new(vec![0.0, 0.0, 0.0, 0.0, 5.0]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no page reachable"), "{e}");
}

#[test]
fn checkpoints_cover_r() {
    assert_eq!(checkpoints(100), (1..=100).collect::<Vec<u64>>());
    let c = checkpoints(325_557);
    assert_eq!(c[14], 48_834); // ceil(15·325557/100)
    assert_eq!(c[99], 325_557);
}

#[test]
fn a_simulation_crawls_all_of_r_and_omniscient_is_best() {
    // A small web: a ring with chords so everything is reachable, plus unreachable pages.
    let g = testkit::ring_with_chords(300, &[(7, 3)])
        .with_nodes(400)
        .with_arcs((0..300).filter(|v| v % 5 == 0).map(|v| (v, 42)))
        .with_arcs((300..400).map(|v| (v, 0)))
        .csr();
    let pr = Arc::new(
        crawlrank_rank::pagerank(&g, &Default::default())
            .unwrap()
            .scores,
    );
    // A synthetic search log for rw and rw-eg: every seventh page has an impact.
    let impact = Impacts::new((0..400).map(|v| (v % 7 == 0) as u8 as f64).collect());
    let reference = Reference::new(&g, pr, &[0, 150])
        .unwrap()
        .with_impact(impact.clone())
        .unwrap();
    assert_eq!(reference.reachable, 300);
    let cfg = SimConfig {
        impact: Some(impact),
        ..SimConfig::default()
    };
    let mut mass_at_10 = Vec::new();
    for kind in SimPolicy::all() {
        let run = simulate(&g, &[0, 150], kind, &reference, &cfg, &mut |_| {}).unwrap();
        assert_eq!(run.order.len(), 300, "{kind}");
        let m = measure(&run, &reference).unwrap();
        assert!((m.mass[99] - 1.0).abs() < 1e-9);
        assert!((m.impact.unwrap()[99] - 1.0).abs() < 1e-9);
        mass_at_10.push((kind, m.mass[9]));
    }
    let best = mass_at_10
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    assert_eq!(best.0, SimPolicy::Omniscient, "{mass_at_10:?}");
}

#[test]
fn bad_seeds_are_errors() {
    let g = Csr::from_arcs(3, &[(0, 1)]);
    let pr = Arc::new(vec![0.3, 0.4, 0.3]);
    let e = Reference::new(&g, pr.clone(), &[]).unwrap_err().to_string();
    assert!(e.contains("empty"), "{e}");
    let e = Reference::new(&g, pr, &[7]).unwrap_err().to_string();
    assert!(e.contains("seed 7"), "{e}");
}

#[test]
fn omniscient_follows_the_true_pagerank() {
    // A star: 0 → 1..5, every leaf → 5, so 5 is the most important leaf.
    let g = testkit::star(5).with_arcs((1..5).map(|v| (v, 5))).csr();
    let pr = Arc::new(
        crawlrank_rank::pagerank(&g, &Default::default())
            .unwrap()
            .scores,
    );
    let reference = Reference::new(&g, pr, &[0]).unwrap();
    let run = simulate(
        &g,
        &[0],
        SimPolicy::Omniscient,
        &reference,
        &SimConfig::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(run.order[..2], [0, 5]);
    assert_eq!(run.order.len(), 6);
}

#[test]
fn the_simulator_lists_every_crawl_policy_and_omniscient() {
    let all = SimPolicy::parse_list_with("all", true).unwrap();
    assert_eq!(all.len(), PolicyKind::ALL.len() + 1);
    assert_eq!(all.last(), Some(&SimPolicy::Omniscient));
    // Without impacts `all` leaves out the policies that need them, and naming one is an error.
    let without = SimPolicy::parse_list("all").unwrap();
    assert_eq!(without.len(), all.len() - 3);
    assert!(without.iter().all(|k| !k.needs_impact()));
    let e = SimPolicy::parse_list("bfs,rw-eg").unwrap_err().to_string();
    assert!(e.contains("rw-eg") && e.contains("--impact"), "{e}");
    assert_eq!(
        SimPolicy::parse_list_with("rw,rw-eg", true).unwrap(),
        vec![
            SimPolicy::Crawl(PolicyKind::Rw),
            SimPolicy::Crawl(PolicyKind::RwEg)
        ]
    );
    assert_eq!(
        SimPolicy::parse_list("fica, omniscient,fica").unwrap(),
        vec![SimPolicy::Crawl(PolicyKind::Fica), SimPolicy::Omniscient]
    );
    let err = SimPolicy::parse_list("fica,pagerankz")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("pagerankz") && err.contains("omniscient"),
        "{err}"
    );
    assert!(SimPolicy::parse_list("").is_err());
}
