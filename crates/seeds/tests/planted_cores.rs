//! Extract-Seeds on hand-made graphs with planted bipartite cores: the cores found, their cover
//! density, the order of the rounds, the removal and the seeds, checked exactly.

use crawlrank_graph::Csr;
use crawlrank_rank::HitsConfig;
use crawlrank_seeds::{
    extract_seeds, prune_same_host, CoreRule, Extraction, SeedsConfig, StopReason,
};

fn complete(hubs: &[u32], authorities: &[u32]) -> Vec<(u32, u32)> {
    hubs.iter()
        .flat_map(|&h| authorities.iter().map(move |&a| (h, a)))
        .collect()
}

/// K_{4,3} (hubs 0–3, authorities 10–12), K_{2,2} (hubs 4, 5, authorities 13, 14), and two
/// stray hubs: 6 → 10 and 7 → 13. Pages 8, 9 and 15 have no arcs.
fn two_cores() -> Csr {
    let mut arcs = complete(&[0, 1, 2, 3], &[10, 11, 12]);
    arcs.extend(complete(&[4, 5], &[13, 14]));
    arcs.extend([(6, 10), (7, 13)]);
    Csr::from_arcs(16, &arcs)
}

fn run(g: &Csr, count: usize, rule: CoreRule) -> Extraction {
    let config = SeedsConfig {
        count,
        rule,
        hits: HitsConfig::default(),
    };
    let mut seen = Vec::new();
    let x = extract_seeds(g, &config, &mut |r| seen.push(r.round)).unwrap();
    assert_eq!(seen, (1..=x.rounds.len()).collect::<Vec<_>>());
    x
}

const DENSITY_100: CoreRule = CoreRule::CoverDensity {
    min_density: 100.0,
    max_hubs: 999,
};

#[test]
fn cover_density_finds_the_larger_core_first_then_the_smaller() {
    let x = run(&two_cores(), 5, DENSITY_100);
    assert_eq!(x.rounds.len(), 2);
    let first = &x.rounds[0].core;
    assert_eq!(first.authorities, vec![10, 11, 12]);
    assert_eq!(first.hubs, vec![0, 1, 2, 3]); // hub 6 (links to 10 only) refused
    assert_eq!(first.arcs, 12);
    assert_eq!(first.cover_density(), 100.0);
    assert_eq!(first.seed, Some(0));
    let second = &x.rounds[1].core;
    assert_eq!(second.authorities, vec![13, 14]);
    assert_eq!(second.hubs, vec![4, 5]); // hub 7 refused
    assert_eq!(second.arcs, 4);
    assert_eq!(second.seed, Some(4));
    // The arcs of 6 → 10 and 7 → 13 went with their authorities: nothing is left.
    assert_eq!(x.seeds, vec![0, 4]);
    assert_eq!(x.stop, StopReason::NoArcsLeft);
    assert!(x.rounds.iter().all(|r| r.hits_iterations == 60));
}

#[test]
fn the_count_stops_the_rounds() {
    let x = run(&two_cores(), 1, DENSITY_100);
    assert_eq!(x.seeds, vec![0]);
    assert_eq!(x.rounds.len(), 1);
    assert_eq!(x.stop, StopReason::CountReached);
}

#[test]
fn fixed_size_grows_one_hub_and_one_authority_at_a_time() {
    let rule = CoreRule::FixedSize {
        size: 4,
        new_members: 1,
    };
    let x = run(&two_cores(), 5, rule);
    assert_eq!(x.rounds.len(), 2);
    let first = &x.rounds[0].core;
    // A = {10}; + hub 0, + authority 11; size 3 < 4: + hub 1, + authority 12; size 5.
    assert_eq!(first.authorities, vec![10, 11, 12]);
    assert_eq!(first.hubs, vec![0, 1]);
    assert_eq!(first.arcs, 6);
    assert_eq!(first.cover_density(), 100.0);
    assert_eq!(first.seed, Some(0));
    // Hubs 2 and 3 lost every arc with the first core; the second is K_{2,2}.
    let second = &x.rounds[1].core;
    assert_eq!(second.authorities, vec![13, 14]);
    assert_eq!(second.hubs, vec![4, 5]);
    assert_eq!(second.arcs, 4);
    assert_eq!(x.seeds, vec![0, 4]);
    assert_eq!(x.stop, StopReason::NoArcsLeft);

    let two_at_a_time = CoreRule::FixedSize {
        size: 4,
        new_members: 2,
    };
    let x = run(&two_cores(), 1, two_at_a_time);
    // A = {10}; + hubs 0, 1; + authorities 11, 12: size 5 (the paper's loop may overshoot).
    assert_eq!(x.rounds[0].core.hubs, vec![0, 1]);
    assert_eq!(x.rounds[0].core.authorities, vec![10, 11, 12]);
}

/// K_{3,3} (hubs 0–2, authorities 3–5) without the arc 2 → 5.
fn almost_complete() -> Csr {
    let arcs: Vec<_> = complete(&[0, 1, 2], &[3, 4, 5])
        .into_iter()
        .filter(|&a| a != (2, 5))
        .collect();
    Csr::from_arcs(6, &arcs)
}

#[test]
fn cover_density_bound_decides_what_joins() {
    let x = run(&almost_complete(), 1, DENSITY_100);
    let core = &x.rounds[0].core;
    assert_eq!(core.hubs, vec![0, 1, 2]);
    assert_eq!(core.authorities, vec![3, 4]); // 5 would make it 8 arcs of 9
    assert_eq!(core.cover_density(), 100.0);

    let loose = CoreRule::CoverDensity {
        min_density: 80.0,
        max_hubs: 999,
    };
    let x = run(&almost_complete(), 1, loose);
    let core = &x.rounds[0].core;
    assert_eq!(core.hubs, vec![0, 1, 2]);
    assert_eq!(core.authorities, vec![3, 4, 5]);
    assert_eq!(core.arcs, 8);
    assert!((core.cover_density() - 800.0 / 9.0).abs() < 1e-12);

    let capped = CoreRule::CoverDensity {
        min_density: 100.0,
        max_hubs: 2,
    };
    let x = run(&almost_complete(), 1, capped);
    // The iteration that brought the second hub still tries an authority; then it stops.
    assert_eq!(x.rounds[0].core.hubs, vec![0, 1]);
    assert_eq!(x.rounds[0].core.authorities, vec![3, 4]);
}

#[test]
fn a_core_without_hubs_gives_no_seed_but_is_removed() {
    // A self-loop on 0 (its only hub would be itself, and hubs and authorities are disjoint)
    // and the arc 1 → 2: HITS ties them, and the smaller id goes first.
    let g = Csr::from_arcs(3, &[(0, 0), (1, 2)]);
    let x = run(&g, 3, DENSITY_100);
    assert_eq!(x.rounds.len(), 2);
    assert_eq!(x.rounds[0].core.authorities, vec![0]);
    assert!(x.rounds[0].core.hubs.is_empty());
    assert_eq!(x.rounds[0].core.seed, None);
    assert_eq!(x.rounds[0].core.cover_density(), 0.0);
    assert_eq!(x.rounds[1].core.hubs, vec![1]);
    assert_eq!(x.seeds, vec![1]);
    assert_eq!(x.stop, StopReason::NoArcsLeft);
}

#[test]
fn pruning_hides_a_core_inside_one_host() {
    // K_{3,3} inside host 0 (pages 0–5) and K_{2,2} across hosts 1 and 2 (hubs 6, 7 on host 1,
    // authorities 8, 9 on host 2).
    let mut arcs = complete(&[0, 1, 2], &[3, 4, 5]);
    arcs.extend(complete(&[6, 7], &[8, 9]));
    let g = Csr::from_arcs(10, &arcs);
    let unpruned = run(&g, 1, DENSITY_100);
    assert_eq!(unpruned.seeds, vec![0]);
    let hosts = [0, 0, 0, 0, 0, 0, 1, 1, 2, 2];
    let pruned = prune_same_host(&g, &hosts).unwrap();
    assert_eq!(pruned.num_arcs(), 4);
    let x = run(&pruned, 5, DENSITY_100);
    assert_eq!(x.seeds, vec![6]);
    assert_eq!(x.rounds[0].core.authorities, vec![8, 9]);
    assert_eq!(x.stop, StopReason::NoArcsLeft);
}

#[test]
fn bad_parameters_are_errors() {
    let g = two_cores();
    let bad = |rule, count| {
        let config = SeedsConfig {
            count,
            rule,
            hits: HitsConfig::default(),
        };
        format!("{:#}", extract_seeds(&g, &config, &mut |_| {}).unwrap_err())
    };
    for d in [0.0, -1.0, 100.5, f64::NAN] {
        let e = bad(
            CoreRule::CoverDensity {
                min_density: d,
                max_hubs: 9,
            },
            1,
        );
        assert!(e.contains("--cover-density must be in (0, 100]"), "{e}");
    }
    assert!(bad(DENSITY_100, 0).contains("--count"));
    let e = bad(
        CoreRule::FixedSize {
            size: 1,
            new_members: 1,
        },
        1,
    );
    assert!(e.contains("--core-size"), "{e}");
    let empty = Csr::from_arcs(4, &[]);
    let config = SeedsConfig {
        count: 1,
        rule: DENSITY_100,
        hits: HitsConfig::default(),
    };
    let e = extract_seeds(&empty, &config, &mut |_| {}).unwrap_err();
    assert!(format!("{e:#}").contains("no arcs"), "{e:#}");
}
