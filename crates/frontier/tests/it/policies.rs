//! Every policy on hand graphs whose crawl order can be worked out by hand, and properties
//! every policy must have on random graphs.

use crate::common::{config, random_graph};
use crawlrank_frontier::policies::ieca::log_pc_coefficient;
use crawlrank_frontier::policies::opic::Opic;
use crawlrank_frontier::{
    crawl_order, BatchClock, Crawled, Frontier, Impacts, Link, Offer, PageId, PageTable, Policy,
    PolicyConfig, PolicyKind, Target,
};
use crawlrank_graph::Csr;
use crawlrank_testkit as testkit;

fn run(kind: PolicyKind, g: &Csr, seeds: &[PageId], batch: u64) -> Vec<PageId> {
    let c = config(batch, g.num_nodes() as u64);
    let mut f = Frontier::with_policy(kind, &c).unwrap();
    crawl_order(g, &mut f, seeds)
}

/// FICA's Figure 1: p → q, r; q → s, t, u; r → v, w; s → four pages.
fn figure1() -> (Csr, Vec<&'static str>) {
    let names = vec![
        "p", "q", "r", "s", "t", "u", "v", "w", "s1", "s2", "s3", "s4",
    ];
    let arcs = [
        (0, 1),
        (0, 2),
        (1, 3),
        (1, 4),
        (1, 5),
        (2, 6),
        (2, 7),
        (3, 8),
        (3, 9),
        (3, 10),
        (3, 11),
    ];
    (Csr::from_arcs(names.len(), &arcs), names)
}

#[test]
fn fica_crawls_figure_1_in_the_papers_order() {
    let (g, names) = figure1();
    // With t = 0 throughout (α = 1) and with the clock ticking at every page (K = 1).
    for batch in [1_000, 1] {
        let order: Vec<_> = run(PolicyKind::Fica, &g, &[0], batch)
            .iter()
            .map(|&p| names[p as usize])
            .collect();
        assert_eq!(
            &order[..8],
            &["p", "q", "r", "v", "w", "s", "t", "u"],
            "K = {batch}"
        );
    }
    // Breadth-first goes level by level instead (FICA §3: p, q, r, s, t, …).
    let bfs: Vec<_> = run(PolicyKind::Bfs, &g, &[0], 1)
        .iter()
        .map(|&p| names[p as usize])
        .collect();
    assert_eq!(&bfs[..8], &["p", "q", "r", "s", "t", "u", "v", "w"]);
}

#[test]
fn fica_distances_are_the_papers_formula() {
    let (g, _) = figure1();
    let c = config(1, 12);
    let mut f = Frontier::with_policy(PolicyKind::Fica, &c).unwrap();
    f.seed(&[0]);
    let p = f.pop().unwrap();
    f.on_crawled(p, g.successors(0)); // t = 1
    let a1 = (-0.1f64).exp();
    let dq = a1 * 2f64.log10();
    assert!((f.score(1).unwrap() + dq).abs() < 1e-12);
    let q = f.pop().unwrap();
    assert_eq!(q, 1);
    f.on_crawled(q, g.successors(1)); // t = 2
    let a2 = (-0.2f64).exp();
    let ds = a2 * 3f64.log10() + (1.0 - a2) * dq;
    assert!((f.score(3).unwrap() + ds).abs() < 1e-12);
}

#[test]
fn backlink_and_indegree_prefer_pages_with_more_crawled_parents() {
    // 0 → 1,2,3 ; 1 → 3,4 ; 2 → 4,5 ; 3 → 5 ; 4 → 5.
    let g = Csr::from_arcs(
        6,
        &[
            (0, 1),
            (0, 2),
            (0, 3),
            (1, 3),
            (1, 4),
            (2, 4),
            (2, 5),
            (3, 5),
            (4, 5),
        ],
    );
    // indegree, online: after 0: 1,2,3 (1 each) → 1; then 3 has 2 → 3; then 2; 4 (2) ; 5.
    assert_eq!(
        run(PolicyKind::Indegree, &g, &[0], 100),
        vec![0, 1, 3, 2, 4, 5]
    );
    // backlink with K = 2: after 0,1 are crawled, reorder: 3 (2 parents) before 2, 4.
    assert_eq!(
        run(PolicyKind::Backlink, &g, &[0], 2),
        vec![0, 1, 3, 2, 4, 5]
    );
    // backlink without reorders is breadth-first.
    assert_eq!(
        run(PolicyKind::Backlink, &g, &[0], 100),
        run(PolicyKind::Bfs, &g, &[0], 100)
    );
}

#[test]
fn opic_follows_cash() {
    // 0 → 1,2 ; 1 → 2 ; 2 → 3 ; 3 (dangling). n = 4: each page starts with 0.25.
    let g = Csr::from_arcs(4, &[(0, 1), (0, 2), (1, 2), (2, 3)]);
    let c = config(100, 4);
    let mut f = Frontier::with_policy(PolicyKind::Opic, &c).unwrap();
    let order = crawl_order(&g, &mut f, &[0]);
    // After 0: cash(1) = cash(2) = 0.375, a tie won by 1 (found first); after 1: cash(2) = 0.75;
    // after 2: cash(3) = 1. Each page banks the cash it holds when crawled.
    assert_eq!(order, vec![0, 1, 2, 3]);
    let (mut opic, pages) = f.into_parts();
    let scores = opic.final_scores(&order, &pages);
    for (s, e) in scores.iter().zip([0.25, 0.375, 0.75, 1.0]) {
        assert!((s - e).abs() < 1e-12, "{scores:?}");
    }
}

#[test]
fn ieca_p_c_coefficient_follows_eq_8() {
    assert!((log_pc_coefficient(2.0, 1.0) - 2f64.log10()).abs() < 1e-15);
    assert!((log_pc_coefficient(-2.0, -1.0) - 2f64.log10()).abs() < 1e-15);
    // Opposite signs: (dj − di)/|di| = (1 − (−1))/1 = 2.
    assert!((log_pc_coefficient(1.0, -1.0) - 2f64.log10()).abs() < 1e-15);
    assert_eq!(log_pc_coefficient(3.0, 0.0), 0.0);
    assert_eq!(log_pc_coefficient(-1.0, 1.0), 0.0); // f = −2 ≤ 0
    assert_eq!(log_pc_coefficient(0.0, 1.0), 0.0); // f = 0
}

#[test]
fn ieca_distances_follow_alg_1() {
    // 0 → 1, 2 ; 1 → 2, 3 ; seeds [0]. K = 100 (t = 0, α = 1, δ = 0.35 throughout).
    let g = Csr::from_arcs(4, &[(0, 1), (0, 2), (1, 2), (1, 3)]);
    let c = config(100, 4);
    let mut f = Frontier::with_policy(PolicyKind::Ieca, &c).unwrap();
    f.seed(&[0]);
    let d = 0.35;
    assert_eq!(f.pop(), Some(0));
    f.on_crawled(0, g.successors(0));
    let d1 = (1.0 - d) * 0.3 + 2f64.log10();
    assert!((f.score(1).unwrap() + d1).abs() < 1e-12);
    assert!((f.score(2).unwrap() + d1).abs() < 1e-12);
    assert_eq!(f.pop(), Some(1)); // tie: first discovered
    f.on_crawled(1, g.successors(1));
    // 2 is queued: replaced by the eq. 10 value (α = 1).
    let d2 = (1.0 - d) * (2f64.log10() + (1.0 - d) * d1) - d * log_pc_coefficient(d1, d1);
    assert!((f.score(2).unwrap() + d2).abs() < 1e-12);
    let d3 = (1.0 - d) * d1 + 2f64.log10();
    assert!((f.score(3).unwrap() + d3).abs() < 1e-12);
}

#[test]
fn batch_pagerank_follows_pagerank() {
    // A star: 0 → 1..5, every leaf → 5, so 5 is the most important leaf.
    let g = testkit::star(5).with_arcs((1..5).map(|v| (v, 5))).csr();
    // K = 1: the known graph is PageRanked after the seed; the leaves tie and keep their order.
    let o = run(PolicyKind::BatchPagerank, &g, &[0], 1);
    assert_eq!(
        o,
        vec![0, 1, 5, 2, 3, 4],
        "after 1 is crawled, 5 has two parents"
    );
    let o = run(PolicyKind::PartialPagerank, &g, &[0], 1);
    assert_eq!(o[..3], [0, 1, 5]);
}

#[test]
fn every_policy_crawls_each_reachable_page_once_after_a_parent_deterministically() {
    for (graph_seed, n) in [(1u64, 300usize), (2, 1_000), (3, 2_000)] {
        let g = random_graph(n, 4, graph_seed);
        let seeds: Vec<PageId> = vec![3, 17, 3, (n / 2) as u32];
        let reach = crawlrank_graph::visit::reachable_from(&g, &seeds);
        let r = reach.iter().filter(|&&b| b).count();
        for &kind in PolicyKind::ALL {
            for batch in [1, 7, (r as u64).div_ceil(72)] {
                if kind == PolicyKind::Learned && batch < 10 && n > 300 {
                    // A forest fit every few pages: the 300-page web covers small K.
                    continue;
                }
                let order = run(kind, &g, &seeds, batch);
                assert_eq!(order.len(), r, "{kind}: every reachable page, K = {batch}");
                let mut pos = vec![usize::MAX; n];
                for (i, &p) in order.iter().enumerate() {
                    assert!(reach[p as usize], "{kind}: {p} is not reachable");
                    assert_eq!(pos[p as usize], usize::MAX, "{kind}: {p} crawled twice");
                    pos[p as usize] = i;
                }
                // Distinct seeds come first in file order for FIFO policies; for all, every
                // non-seed page is linked from a page crawled before it.
                let t = g.transpose();
                for (i, &p) in order.iter().enumerate() {
                    if seeds.contains(&p) {
                        continue;
                    }
                    assert!(
                        t.successors(p as usize)
                            .iter()
                            .any(|&q| pos[q as usize] < i),
                        "{kind}: {p} crawled before any parent"
                    );
                }
                assert_eq!(order, run(kind, &g, &seeds, batch), "{kind}: deterministic");
            }
        }
    }
}

#[test]
fn opic_conserves_cash_at_every_step() {
    let n = 500;
    let g = random_graph(n, 3, 9);
    let mut pages = PageTable::default();
    let mut opic = Opic::new(n as u64);
    for s in [0, 1, 2, 1] {
        if pages.discover(s) {
            opic.push_seed(s, &pages);
        }
    }
    let mut crawled = 0;
    let mut links = Vec::new();
    while let Some(p) = opic.pop(&pages) {
        pages.mark_popped(p);
        crawled += 1;
        let clock = BatchClock {
            crawled,
            batch: 10,
            t: crawled / 10,
            boundary: crawled % 10 == 0,
        };
        // What the frontier hands a policy: each link marked by what it pointed at.
        links.clear();
        for &u in g.successors(p as usize) {
            links.push(Link {
                page: u,
                target: pages.classify(u),
            });
        }
        opic.crawled(p, &links, &pages, &clock);
        let cash: f64 = (0..n as PageId).map(|q| opic.cash(q)).sum();
        assert!(
            (cash + opic.virtual_cash() - 1.0).abs() < 1e-9,
            "after {crawled} pages: {cash}"
        );
    }
    assert!(crawled > 100);
    assert!(opic.virtual_cash() > 0.0, "the graph has dangling pages");
}

#[test]
fn unknown_policies_are_listed_and_the_simulators_reference_is_not_a_policy() {
    let err = PolicyKind::parse("pagerankz").unwrap_err().to_string();
    assert!(
        err.contains("pagerankz") && err.contains("batch-pagerank") && err.contains("ieca"),
        "{err}"
    );
    assert!(PolicyKind::parse("omniscient").is_err());
    for &k in PolicyKind::ALL {
        assert_eq!(PolicyKind::parse(k.name()).unwrap(), k);
        assert!(!k.about().is_empty());
    }
}

#[test]
fn every_policy_sees_each_link_marked_as_the_frontier_found_it() {
    /// Each crawled page with the links the policy was handed.
    type Handed = std::sync::Arc<std::sync::Mutex<Vec<(PageId, Vec<Link>)>>>;
    // A policy that records what it is handed and leaves the order to `inner`.
    struct Recorder {
        inner: Box<dyn Policy>,
        seen: Handed,
    }
    impl Policy for Recorder {
        fn name(&self) -> &'static str {
            self.inner.name()
        }
        fn push_seed(&mut self, page: PageId, pages: &PageTable) {
            self.inner.push_seed(page, pages);
        }
        fn pop(&mut self, pages: &PageTable) -> Option<PageId> {
            self.inner.pop(pages)
        }
        fn crawled_split(&mut self, crawled: &Crawled<'_>, pages: &PageTable) -> Option<Offer> {
            let handed = (crawled.page, crawled.links.to_vec());
            self.seen.lock().unwrap().push(handed);
            self.inner.crawled_split(crawled, pages)
        }
        fn score(&self, page: PageId, pages: &PageTable) -> Option<f64> {
            self.inner.score(page, pages)
        }
        fn len(&self) -> usize {
            self.inner.len()
        }
    }
    // 0 → 1, 2 ; 1 → 0, 1, 2, 3: the self-loop and the link back are to popped pages.
    let g = Csr::from_arcs(4, &[(0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (1, 3)]);
    let recorder = Recorder {
        inner: PolicyKind::Bfs.build(&PolicyConfig::default()).unwrap(),
        seen: Handed::default(),
    };
    let seen = recorder.seen.clone();
    let mut f = Frontier::new(Box::new(recorder), 1);
    assert_eq!(crawl_order(&g, &mut f, &[0]), vec![0, 1, 2, 3]);
    let link = |page, target| Link { page, target };
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen[0],
        (0, vec![link(1, Target::New), link(2, Target::New)])
    );
    assert_eq!(
        seen[1],
        (
            1,
            vec![
                link(0, Target::Popped),
                link(1, Target::Popped),
                link(2, Target::Queued),
                link(3, Target::New)
            ]
        )
    );
    assert_eq!(f.pages().seq(3), 3, "first-discovery order");
}

#[test]
fn rw_puts_first_the_frontier_page_linked_from_a_page_with_impact() {
    // 0 → 1, 2; 1 → 3; 2 → 4. Page 2 has impact, 1 none. K = 3: after crawling 0, 1, 2 the
    // queue is [3, 4] in discovery order; the reorder's walk carries 2's impact to 4.
    let g = Csr::from_arcs(5, &[(0, 1), (0, 2), (1, 3), (2, 4)]);
    let c = PolicyConfig {
        impact: Some(Impacts::new(vec![0.0, 0.0, 10.0, 0.0, 0.0])),
        ..config(3, 5)
    };
    for kind in [PolicyKind::Rw, PolicyKind::RwEg] {
        let mut f = Frontier::with_policy(kind, &c).unwrap();
        assert_eq!(crawl_order(&g, &mut f, &[0]), [0, 1, 2, 4, 3], "{kind}");
        assert!(f.score(4).unwrap() > f.score(3).unwrap(), "{kind}");
    }
    assert_eq!(run(PolicyKind::Bfs, &g, &[0], 3), [0, 1, 2, 3, 4]);
    // With the impact on page 1 instead, the discovery order stays.
    let swapped = PolicyConfig {
        impact: Some(Impacts::new(vec![0.0, 10.0])),
        ..config(3, 5)
    };
    let mut f = Frontier::with_policy(PolicyKind::Rw, &swapped).unwrap();
    assert_eq!(crawl_order(&g, &mut f, &[0]), [0, 1, 2, 3, 4]);
}

#[test]
fn rw_eg_follows_virtual_arcs_to_the_siblings_of_pages_with_impact() {
    // 0 → 1, 2, 6; 1 → 4; 2 → 5; 6 → 1, 3. Page 1 has impact. K = 4: after crawling 0, 1,
    // 2, 6 the queue is [4, 5, 3] in discovery order. 3 is co-cited with 1 (both linked from
    // 6); 4 and 5 are linked from one page each, which links nowhere else.
    let g = Csr::from_arcs(7, &[(0, 1), (0, 2), (0, 6), (1, 4), (2, 5), (6, 1), (6, 3)]);
    let with_omega = |omega| PolicyConfig {
        impact: Some(Impacts::new(vec![0.0, 10.0])),
        omega,
        ..config(4, 7)
    };
    let order = |kind, omega| {
        let mut f = Frontier::with_policy(kind, &with_omega(omega)).unwrap();
        crawl_order(&g, &mut f, &[0])
    };
    assert_eq!(run(PolicyKind::Bfs, &g, &[0], 4), [0, 1, 2, 6, 4, 5, 3]);
    // Real arcs only: 4 (linked from 1) first; 5 and 3 get ε-weighted shares, 3's halved.
    assert_eq!(order(PolicyKind::Rw, 0.5), [0, 1, 2, 6, 4, 5, 3]);
    // Virtual arcs only: 1's impact reaches its co-cited sibling 3; 4 and 5 tie (teleport).
    assert_eq!(order(PolicyKind::RwEg, 0.0), [0, 1, 2, 6, 3, 4, 5]);
    // RW is RW-EG with ω = 1.
    assert_eq!(order(PolicyKind::RwEg, 1.0), order(PolicyKind::Rw, 0.3));
}

#[test]
fn learned_follows_rw_eg_until_it_can_learn_then_its_model() {
    let g = random_graph(2_000, 4, 9);
    let n = g.num_nodes();
    let seeds = [3u32, 17];
    let r = crawlrank_graph::visit::reachable_from(&g, &seeds)
        .iter()
        .filter(|&&b| b)
        .count() as u64;
    let batch = r.div_ceil(72);
    // Only a seed has impact: seeds are crawled before any reorder, so no training example
    // has a positive impact and learned orders by its RW-EG feature, as rw-eg does.
    let mut seed_only = vec![0.0; n];
    seed_only[3] = 50.0;
    let c = PolicyConfig {
        impact: Some(Impacts::new(seed_only)),
        ..config(batch, n as u64)
    };
    let order = |kind, c: &PolicyConfig| {
        let mut f = Frontier::with_policy(kind, c).unwrap();
        crawl_order(&g, &mut f, &seeds)
    };
    assert_eq!(order(PolicyKind::Learned, &c), order(PolicyKind::RwEg, &c));
    // Impact grows with a page's true in-degree, which the known in-degree and PageRank only
    // estimate: the model learns it from crawled pages and gathers more impact early than
    // random, and than bfs.
    let t = g.transpose();
    let impact: Vec<f64> = (0..n).map(|v| (t.outdegree(v) as f64).powi(2)).collect();
    let c = PolicyConfig {
        impact: Some(Impacts::new(impact.clone())),
        ..config(batch, n as u64)
    };
    let early = |kind| -> f64 {
        let o = order(kind, &c);
        o[..o.len() / 4].iter().map(|&p| impact[p as usize]).sum()
    };
    let (learned, random, bfs) = (
        early(PolicyKind::Learned),
        early(PolicyKind::Random),
        early(PolicyKind::Bfs),
    );
    // Measured: 41,499 against 29,579 and 33,466.
    assert!(
        learned > 1.3 * random && learned > 1.15 * bfs,
        "{learned} vs {random}, {bfs}"
    );
    assert_eq!(
        order(PolicyKind::Learned, &c),
        order(PolicyKind::Learned, &c)
    );
}

#[test]
fn rw_policies_need_impacts_and_check_omega() {
    for kind in PolicyKind::ALL {
        let built = Frontier::with_policy(*kind, &PolicyConfig::default());
        assert_eq!(built.is_err(), kind.needs_impact(), "{kind}");
        if let Err(e) = built {
            assert!(e.to_string().contains("impact"), "{e}");
        }
    }
    let bad = PolicyConfig {
        impact: Some(Impacts::new(vec![1.0])),
        omega: 1.5,
        ..PolicyConfig::default()
    };
    assert!(Frontier::with_policy(PolicyKind::RwEg, &bad).is_err());
    let negative = PolicyConfig {
        impact: Some(Impacts::new(vec![1.0, -2.0])),
        ..PolicyConfig::default()
    };
    let e = Frontier::with_policy(PolicyKind::Rw, &negative)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("page 1"), "{e}");
}
