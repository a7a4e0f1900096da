//! What a crawled page passes along an out-link that another frontier holds.
//!
//! A frontier cluster (crawlrank-frontier-service's nodes) splits a crawl's pages between
//! frontiers: a page's report is applied at the frontier that holds the page, and some of its
//! out-links belong to other frontiers. A policy hands each child something when its parent is
//! crawled — FICA's and IECA's distance, OPIC's cash share, a back-link — and for a link held
//! elsewhere that has to travel with the link: [`Frontier::on_crawled_split`] counts such links
//! in the page's out-degree and returns the [`Offer`] each of them gets (the same for every
//! link of a page, in every policy here), and [`Frontier::receive`] applies it where the link's
//! page is held, as [`Policy::crawled`] would have applied it to a link of its own. The result
//! per link is the one-frontier policy's for the same parent state; what a cluster changes is
//! the order in which parents are crawled (docs/algorithms.md §3.11).
//!
//! [`Frontier::on_crawled_split`]: crate::Frontier::on_crawled_split
//! [`Frontier::receive`]: crate::Frontier::receive
//! [`Policy::crawled`]: crate::Policy::crawled

/// The state of a crawled page that its policy passes to each out-link: every field a policy
/// here reads, those a policy does not use left at their default. Plain numbers, so that it
/// can be written on a wire and in a log and read back bit for bit.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Offer {
    /// `O(p)`: the page's out-links, wherever they are held.
    pub outdegree: u64,
    /// FICA's, FICA+'s and IECA's distance `d_p` of the page when it was crawled.
    pub distance: f64,
    /// The batch clock's `t = crawled div K` when the page was crawled (FICA's and IECA's
    /// learning rate `α = exp(−β·t)`).
    pub t: u64,
    /// IECA's balance δ when the page was crawled.
    pub delta: f64,
    /// OPIC's cash share `cash(p)/O(p)`: it has left the page, and counts as the link's once
    /// received.
    pub cash: f64,
}

/// OPIC's cash as one frontier holds it ([`crate::Frontier::cash`]): with the cash every
/// frontier sent and received, the crawl's total across frontiers is
/// `Σ held + Σ sent − Σ received` plus `1/n` per page no frontier knows yet, which is 1 at any
/// instant (docs/algorithms.md §3.11).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CashLedger {
    /// The cash of the pages `0..pages` (pages never touched hold `1/n`), plus the virtual
    /// page's.
    pub held: f64,
    /// Cash sent along out-links held by other frontiers ([`Offer::cash`] times those links).
    pub sent: f64,
    /// Cash received from other frontiers' pages.
    pub received: f64,
}
