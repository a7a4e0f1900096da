//! Rebuilding a frontier from the log of the calls made to it.
//!
//! Every policy is a deterministic function of the calls made to its frontier (`seed`, `pop`,
//! `on_crawled`, in their order), so a log of those calls is enough to rebuild the exact
//! frontier — IECA's distances, OPIC's cash, the batch policies' PageRank vectors, even
//! `random`'s generator — without any policy serialising itself. The crawler keeps such a log
//! in its state and replays it on resume; a frontier service can do the same.
//!
//! Each replayed pop is checked against the logged page: a mismatch means the log was written
//! by a build whose policy code differs, and continuing would silently crawl another order,
//! so it is an error. Pages popped but never reported crawled were in flight (or waiting for
//! their host) when the log ended; [`Replayed::pending`] lists them in pop order, for the
//! crawler to fetch first.

use crate::{Frontier, PageId};
use anyhow::{bail, Result};
use std::collections::{BTreeMap, HashMap};

/// One logged call on a frontier.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Logged<'a> {
    /// `frontier.seed(pages)`.
    Seed(&'a [PageId]),
    /// `frontier.pop()` returned this page.
    Popped(PageId),
    /// `frontier.on_crawled(page, links)`.
    Crawled(PageId, &'a [PageId]),
}

/// A frontier rebuilt from a log.
pub struct Replayed {
    /// The frontier after every logged call.
    pub frontier: Frontier,
    /// Popped, never reported crawled, in pop order.
    pub pending: Vec<PageId>,
    /// Pops logged.
    pub popped: u64,
    /// Crawled pages logged.
    pub crawled: u64,
}

/// Rebuilds a frontier one logged call at a time, so that a log is replayed as it is read
/// and never held whole: besides the frontier it keeps only the pages in flight.
pub struct LogReplay {
    frontier: Frontier,
    /// Popped and not yet crawled: by the number of their `Popped` entry (so in pop order),
    /// and the other way round.
    pending: BTreeMap<u64, PageId>,
    pending_at: HashMap<PageId, u64>,
    popped: u64,
    crawled: u64,
}

impl LogReplay {
    /// Starts from `frontier`, which must be new (as the logged crawl's was).
    pub fn new(frontier: Frontier) -> Self {
        Self {
            frontier,
            pending: BTreeMap::new(),
            pending_at: HashMap::new(),
            popped: 0,
            crawled: 0,
        }
    }

    /// Replays log entry number `i` (its number in the log, for the error messages).
    pub fn apply(&mut self, i: u64, call: Logged<'_>) -> Result<()> {
        match call {
            Logged::Seed(pages) => self.frontier.seed(pages),
            Logged::Popped(page) => {
                let got = self.frontier.pop();
                if got != Some(page) {
                    bail!(
                        "replaying the crawl log diverged at event {i}: the log says page {page} was popped, \
                         this build's {} policy pops {got:?}; the log was written by a different \
                         crawlrank version, finish it with that version or start a new one",
                        self.frontier.name()
                    );
                }
                self.popped += 1;
                // A frontier pops a page once; were a log to say twice, the page is still
                // pending once, at its last pop, and the two maps stay in step.
                if let Some(earlier) = self.pending_at.insert(page, i) {
                    self.pending.remove(&earlier);
                }
                self.pending.insert(i, page);
            }
            Logged::Crawled(page, links) => {
                let Some(at) = self.pending_at.remove(&page) else {
                    bail!("the crawl log reports page {page} crawled at event {i} but it was never popped");
                };
                self.pending.remove(&at);
                self.frontier.on_crawled(page, links);
                self.crawled += 1;
            }
        }
        Ok(())
    }

    /// The frontier after the calls applied.
    pub fn finish(self) -> Replayed {
        Replayed {
            frontier: self.frontier,
            pending: self.pending.into_values().collect(),
            popped: self.popped,
            crawled: self.crawled,
        }
    }
}
