//! A crawl split between frontiers (a cluster's nodes, each holding the pages `id % N` gives
//! it): what a crawled page passes along a link held elsewhere ([`Offer`]) travels to that
//! frontier, which applies it as the one frontier would have. On a tree every page's score is
//! independent of the crawl order (a page's one parent is always crawled before it), so the
//! split crawl must give each page exactly the one-frontier score; on any graph OPIC's cash
//! must sum to 1 at every step, the cash in flight counted.

use crawlrank_frontier::{Frontier, Offer, PageId, PolicyConfig, PolicyKind};
use std::collections::VecDeque;

/// A deterministic pseudo-random number below `n`.
fn lcg(x: &mut u64, n: u64) -> u64 {
    *x = x
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (*x >> 33) % n
}

/// A random tree of `n` pages rooted at 0 (each page's parent has a smaller id), as
/// out-link lists.
fn tree(n: usize, seed: u64) -> Vec<Vec<PageId>> {
    let mut x = seed;
    let mut links = vec![Vec::new(); n];
    for child in 1..n {
        let parent = lcg(&mut x, child as u64) as usize;
        links[parent].push(child as PageId);
    }
    links
}

/// A random graph of `n` pages, out-degrees 0 to 5 (self-loops and cycles included), page 0
/// linking to every tenth page so that most are reached.
fn graph(n: usize, seed: u64) -> Vec<Vec<PageId>> {
    let mut x = seed;
    (0..n)
        .map(|p| {
            let mut out: Vec<PageId> = (0..lcg(&mut x, 6))
                .map(|_| lcg(&mut x, n as u64) as PageId)
                .collect();
            if p == 0 {
                out.extend((1..n as PageId).step_by(10));
            }
            out.sort_unstable();
            out.dedup();
            out
        })
        .collect()
}

fn config(n: usize) -> PolicyConfig {
    PolicyConfig {
        // One batch for the whole crawl: t stays 0 and δ at its start, so that a page's score
        // on a tree does not depend on when its parent was crawled.
        batch: 10 * n as u64,
        ..PolicyConfig::for_crawl(n as u64, n as u64)
    }
}

/// Every page's score after a one-frontier crawl from page 0.
fn one_frontier(kind: PolicyKind, links: &[Vec<PageId>]) -> Vec<Option<f64>> {
    let mut f = Frontier::with_policy(kind, &config(links.len())).unwrap();
    f.seed(&[0]);
    let mut steps = 0;
    while let Some(p) = f.pop() {
        f.on_crawled(p, &links[p as usize]);
        steps += 1;
        assert!(steps <= links.len(), "a page was popped twice");
    }
    (0..links.len() as PageId).map(|p| f.score(p)).collect()
}

/// A crawl from page 0 split between `nodes` frontiers that take turns, global page `p` held
/// by frontier `p % nodes` as its page `p / nodes`; offers are delivered `delay` turns after
/// they were sent. `check` sees the frontiers and the offers in flight after every turn.
/// Returns every page's score where it is held.
fn split(
    kind: PolicyKind,
    links: &[Vec<PageId>],
    nodes: usize,
    delay: usize,
    mut check: impl FnMut(&[Frontier], &VecDeque<(usize, usize, PageId, Offer)>),
) -> Vec<Option<f64>> {
    let n = links.len();
    let local = |p: PageId| (p as usize % nodes, p / nodes as PageId);
    let mut fs: Vec<Frontier> = (0..nodes)
        .map(|_| Frontier::with_policy(kind, &config(n)).unwrap())
        .collect();
    fs[0].seed(&[0]);
    // (turn due, node, local page, offer)
    let mut flight: VecDeque<(usize, usize, PageId, Offer)> = VecDeque::new();
    let mut idle = 0;
    for turn in 0..20 * n {
        while flight.front().is_some_and(|f| f.0 <= turn) {
            let (_, node, page, offer) = flight.pop_front().unwrap();
            fs[node].receive(page, &offer);
        }
        let node = turn % nodes;
        let crawled: u64 = fs.iter().map(Frontier::crawled).sum();
        let elsewhere = crawled - fs[node].crawled();
        fs[node].set_crawled_elsewhere(elsewhere);
        match fs[node].pop() {
            Some(lp) => {
                idle = 0;
                let p = lp * nodes as PageId + node as PageId;
                let (mine, theirs): (Vec<PageId>, Vec<PageId>) = links[p as usize]
                    .iter()
                    .partition(|&&u| u as usize % nodes == node);
                let mine: Vec<PageId> = mine.into_iter().map(|u| local(u).1).collect();
                let offer = fs[node].on_crawled_split(lp, &mine, theirs.len());
                for u in theirs {
                    let (owner, lu) = local(u);
                    let offer = offer.expect("every policy tested passes an offer along");
                    flight.push_back((turn + delay, owner, lu, offer));
                }
            }
            None if flight.is_empty() => {
                idle += 1;
                if idle > nodes {
                    break;
                }
            }
            None => {}
        }
        check(&fs, &flight);
    }
    assert!(flight.is_empty(), "the crawl did not end within its turns");
    (0..n as PageId)
        .map(|p| {
            let (node, lp) = local(p);
            fs[node].score(lp)
        })
        .collect()
}

#[test]
fn on_a_tree_a_split_crawl_scores_every_page_as_one_frontier_does() {
    let links = tree(400, 7);
    for kind in [
        PolicyKind::Fica,
        PolicyKind::Ieca,
        PolicyKind::FicaPlus,
        PolicyKind::Opic,
        PolicyKind::Backlink,
        PolicyKind::Indegree,
    ] {
        let one = one_frontier(kind, &links);
        for (nodes, delay) in [(3, 0), (3, 5), (4, 17)] {
            let three = split(kind, &links, nodes, delay, |_, _| {});
            for (p, (a, b)) in one.iter().zip(&three).enumerate() {
                let (a, b) = (a.unwrap(), b.unwrap());
                assert!(
                    (a - b).abs() <= 1e-12 * a.abs().max(1.0),
                    "{kind} on {nodes} frontiers (offers {delay} turns late): page {p} scores \
                     {b}, one frontier {a}"
                );
            }
        }
    }
}

#[test]
fn opic_cash_sums_to_one_at_every_step_of_a_split_crawl() {
    let n = 600;
    let links = graph(n, 11);
    let nodes = 3;
    let mut steps = 0;
    split(PolicyKind::Opic, &links, nodes, 4, |fs, flight| {
        // Frontier k holds the pages k, k + 3, …: its local pages 0..ceil((n − k)/3).
        let mut total = 0.0;
        for (k, f) in fs.iter().enumerate() {
            let held_pages = (n - k).div_ceil(nodes) as u32;
            let ledger = f.cash(held_pages).unwrap();
            total += ledger.held + ledger.sent - ledger.received;
        }
        let in_flight: f64 = flight.iter().map(|f| f.3.cash).sum();
        let sent: f64 = fs.iter().map(|f| f.cash(0).unwrap().sent).sum();
        let received: f64 = fs.iter().map(|f| f.cash(0).unwrap().received).sum();
        assert!(
            (total - 1.0).abs() < 1e-9,
            "step {steps}: the cash sums to {total}"
        );
        assert!(
            (sent - received - in_flight).abs() < 1e-9,
            "step {steps}: sent − received is {}, the offers in flight hold {in_flight}",
            sent - received
        );
        steps += 1;
    });
    assert!(steps > n / 2, "the crawl took only {steps} steps");
}

#[test]
fn the_batch_clock_counts_the_pages_crawled_elsewhere() {
    // K = 4: a frontier that crawled 1 page while others crawled 6 is at t = 1, and its next
    // page is a boundary (t moves on to 2) even though 8 is not where its own count is.
    let kind = PolicyKind::Fica;
    let config = PolicyConfig {
        batch: 4,
        ..PolicyConfig::for_crawl(100, 100)
    };
    let mut f = Frontier::with_policy(kind, &config).unwrap();
    f.seed(&[0]);
    let p = f.pop().unwrap();
    f.set_crawled_elsewhere(6);
    let offer = f.on_crawled_split(p, &[1], 2).unwrap();
    assert_eq!(offer.t, 1);
    assert_eq!(offer.outdegree, 3);
    assert_eq!(f.crawled(), 1);
    assert_eq!(f.crawled_elsewhere(), 6);
    // The local link got what a remote one gets: D = α·log 3 + (1 − α)·0, α = exp(−0.1).
    let alpha = (-0.1f64).exp();
    assert!((f.score(1).unwrap() + alpha * 3f64.log10()).abs() < 1e-15);
}
