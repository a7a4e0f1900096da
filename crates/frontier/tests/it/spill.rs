//! Spilling the frontier's cold part to disk does not change any policy's crawl
//! order: every policy, with a tiny hot part so that it spills, refills and compacts all the
//! time, crawls random graphs exactly as it does in memory.

use crate::common::{config, random_graph};
use crawlrank_frontier::{Frontier, PageId, PolicyConfig, PolicyKind, SpillConfig};
use crawlrank_graph::Csr;

/// The crawl order, and the most cold entries the frontier held at once.
fn crawl(
    kind: PolicyKind,
    config: &PolicyConfig,
    g: &Csr,
    seeds: &[PageId],
) -> (Vec<PageId>, usize) {
    let mut f = Frontier::with_policy(kind, config).unwrap();
    f.seed(seeds);
    let mut order = Vec::new();
    let mut most_cold = 0;
    while let Some(p) = f.pop() {
        f.on_crawled(p, g.successors(p as usize));
        order.push(p);
        if let Some(s) = f.spill_status() {
            assert_eq!(s.write_failures, 0, "{kind}: {s:?}");
            assert_eq!(s.hot + s.cold, f.len());
            most_cold = most_cold.max(s.cold);
        }
    }
    (order, most_cold)
}

#[test]
fn every_policy_crawls_in_the_same_order_when_its_queue_spills() {
    let parent = tempfile::tempdir().unwrap();
    let heap_policies = [
        PolicyKind::Fica,
        PolicyKind::FicaPlus,
        PolicyKind::Ieca,
        PolicyKind::Opic,
        PolicyKind::Indegree,
        PolicyKind::PartialPagerank,
    ];
    for (graph_seed, n) in [(1u64, 400usize), (2, 1_500)] {
        let g = random_graph(n, 4, graph_seed);
        let seeds: Vec<PageId> = vec![3, 17, (n / 2) as u32];
        for &kind in PolicyKind::ALL {
            for batch in [1, 7, (n as u64).div_ceil(72)] {
                if kind == PolicyKind::Learned && batch < 10 {
                    continue; // a forest fit every few pages is slow and spills nothing
                }
                let in_memory = config(batch, n as u64);
                let spilling = PolicyConfig {
                    spill: Some(SpillConfig {
                        dir: parent.path().to_path_buf(),
                        hot_capacity: 8,
                        run_records: 16,
                        max_runs: 4,
                    }),
                    ..in_memory.clone()
                };
                let (want, _) = crawl(kind, &in_memory, &g, &seeds);
                let (got, most_cold) = crawl(kind, &spilling, &g, &seeds);
                assert_eq!(got, want, "{kind}, n = {n}, K = {batch}");
                if heap_policies.contains(&kind) {
                    assert!(most_cold > 20, "{kind} spilled ({most_cold} cold at most)");
                } else {
                    assert_eq!(most_cold, 0, "{kind} has no priority queue to spill");
                }
            }
        }
    }
    // Every heap removed its spill directory when its frontier was dropped.
    assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
}
