//! The crawl loop, once: seed, then pop and report each page's out-links until the frontier
//! is empty (docs/algorithms.md §2).
//!
//! The simulator and the tests run crawls through [`drive`]; a real crawler makes the same
//! calls on [`Frontier`] in the same order, with fetches in flight between a page's `pop` and
//! its `on_crawled`. Like webgraph-rs's visits, the loop owns the bookkeeping and hands each
//! crawled page to a callback, which may stop the crawl.

use crate::{Frontier, PageId};
use std::ops::ControlFlow;

/// Crawls from `seeds` until the frontier is empty or `visit` breaks: pops a page, asks
/// `out_links` for its links, reports them to the frontier, then calls `visit(page, links)`.
/// Returns the number of pages crawled.
pub fn drive<'g, L, V>(
    frontier: &mut Frontier,
    seeds: &[PageId],
    mut out_links: L,
    mut visit: V,
) -> u64
where
    L: FnMut(PageId) -> &'g [PageId],
    V: FnMut(PageId, &[PageId]) -> ControlFlow<()>,
{
    frontier.seed(seeds);
    let mut crawled = 0;
    while let Some(p) = frontier.pop() {
        let links = out_links(p);
        frontier.on_crawled(p, links);
        crawled += 1;
        if visit(p, links).is_break() {
            break;
        }
    }
    crawled
}

/// The crawl order of `graph` from `seeds`: [`drive`] to the end, collecting the pages.
pub fn crawl_order(
    graph: &crawlrank_graph::Csr,
    frontier: &mut Frontier,
    seeds: &[PageId],
) -> Vec<PageId> {
    let mut order = Vec::new();
    drive(
        frontier,
        seeds,
        |p| graph.successors(p as usize),
        |p, _| {
            order.push(p);
            ControlFlow::Continue(())
        },
    );
    order
}
