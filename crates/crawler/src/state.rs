//! Rebuilding a crawl's frontier from its event log.
//!
//! The log records the calls made to the [`Frontier`] in order; replaying them through the
//! same code yields the same frontier, bit for bit (every policy is deterministic). Each
//! replayed `pop` is checked against the recorded page: a mismatch means the log was written
//! by a build whose policy code differs, and continuing would silently crawl another order,
//! so it is an error. Pages popped but never reported crawled were in flight (or waiting for
//! their host) when the previous run ended; the engine fetches them again, first.

use crate::store::{Event, StateConfig};
use anyhow::{bail, Result};
use crawlrank_frontier::{Frontier, PageId, PolicyConfig, PolicyKind};
use std::collections::{BTreeMap, HashMap};

/// The frontier of a crawl, rebuilt.
pub struct Replayed {
    pub frontier: Frontier,
    /// Popped, never crawled, in pop order.
    pub pending: Vec<PageId>,
    /// Pops recorded (the crawl's page count for `--max-pages`).
    pub popped: u64,
    /// `Crawled` events recorded.
    pub crawled: u64,
}

/// K for batch policies when not given: `ceil(expected / 72)` (SPEC §2: 18M pages / 250,000).
pub fn default_batch(expected_pages: u64) -> u64 {
    expected_pages.div_ceil(72).max(1)
}

/// Builds an empty frontier for a stored configuration.
pub fn new_frontier(c: &StateConfig) -> Result<Frontier> {
    let kind = PolicyKind::parse(&c.policy)?;
    if kind.needs_true_pagerank() {
        bail!(
            "the {} policy needs the whole graph and exists in the simulator only",
            c.policy
        );
    }
    let pc = PolicyConfig {
        batch: c.batch,
        expected_pages: c.expected_pages,
        total_pages: c.total_pages,
        rng_seed: c.rng_seed,
        ..PolicyConfig::default()
    };
    Frontier::with_policy(kind, &pc)
}

/// Rebuilds a frontier one event at a time, so that the log is replayed as it is read and
/// never held whole: what it keeps besides the frontier is only the pages in flight.
pub struct Replayer {
    /// The policy's name, for the divergence message.
    policy: String,
    frontier: Frontier,
    /// Popped and not yet crawled: by the number of their `Popped` event (so in pop order),
    /// and the other way round.
    pending: BTreeMap<u64, PageId>,
    pending_at: HashMap<PageId, u64>,
    popped: u64,
    crawled: u64,
}

impl Replayer {
    /// Starts from an empty frontier for `config`.
    pub fn new(config: &StateConfig) -> Result<Self> {
        Ok(Self {
            policy: config.policy.clone(),
            frontier: new_frontier(config)?,
            pending: BTreeMap::new(),
            pending_at: HashMap::new(),
            popped: 0,
            crawled: 0,
        })
    }

    /// Replays event number `i` (its number in the log, for the error messages).
    pub fn apply(&mut self, i: u64, event: &Event) -> Result<()> {
        match event {
            Event::Seed(ids) => self.frontier.seed(ids),
            Event::Popped(id) => {
                let got = self.frontier.pop();
                if got != Some(*id) {
                    bail!(
                        "replaying the crawl log diverged at event {i}: the log says page {id} was popped, \
                         this build's {} policy pops {got:?}; the state was written by a different \
                         crawlrank version, finish it with that version or start a new state directory",
                        self.policy
                    );
                }
                self.popped += 1;
                // A frontier pops a page once; were a log to say twice, the page is still
                // pending once, at its last pop, and the two maps stay in step.
                if let Some(earlier) = self.pending_at.insert(*id, i) {
                    self.pending.remove(&earlier);
                }
                self.pending.insert(i, *id);
            }
            Event::Crawled { id, links, .. } => {
                let Some(at) = self.pending_at.remove(id) else {
                    bail!("the crawl log reports page {id} crawled at event {i} but it was never popped");
                };
                self.pending.remove(&at);
                self.frontier.on_crawled(*id, links);
                self.crawled += 1;
            }
        }
        Ok(())
    }

    /// The frontier after the events applied.
    pub fn finish(self) -> Replayed {
        Replayed {
            frontier: self.frontier,
            pending: self.pending.into_values().collect(),
            popped: self.popped,
            crawled: self.crawled,
        }
    }
}

/// Replays a log, read as `(number, event)` pairs (as [`Store::events`](crate::store::Store::events)
/// yields them), into a new frontier for `config`. The first error, of reading or of
/// replaying, ends it.
pub fn replay(
    config: &StateConfig,
    events: impl IntoIterator<Item = Result<(u64, Event)>>,
) -> Result<Replayed> {
    let mut replayer = Replayer::new(config)?;
    for event in events {
        let (i, event) = event?;
        replayer.apply(i, &event)?;
    }
    Ok(replayer.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Outcome;

    /// A log as the store yields it.
    fn numbered(log: &[Event]) -> impl Iterator<Item = Result<(u64, Event)>> + '_ {
        (0..).zip(log.iter().cloned()).map(Ok)
    }

    fn cfg(policy: &str) -> StateConfig {
        StateConfig {
            policy: policy.into(),
            batch: 2,
            expected_pages: 6,
            total_pages: 6,
            rng_seed: 3,
        }
    }

    #[test]
    fn replay_reproduces_the_frontier_and_finds_pending_pages() {
        // 0 -> 1,2 ; 1 -> 3 ; 2 -> 3,4 ; 3 -> 5
        let succ: Vec<Vec<u32>> = vec![vec![1, 2], vec![3], vec![3, 4], vec![5], vec![], vec![]];
        for policy in ["bfs", "fica", "opic", "ieca", "random", "batch-pagerank"] {
            let c = cfg(policy);
            let mut f = new_frontier(&c).unwrap();
            let mut log = vec![Event::Seed(vec![0])];
            f.seed(&[0]);
            // Two in flight at a time, completed out of order.
            let mut inflight = Vec::new();
            for _ in 0..3 {
                while inflight.len() < 2 {
                    let Some(p) = f.pop() else { break };
                    log.push(Event::Popped(p));
                    inflight.push(p);
                }
                let Some(p) = inflight.pop() else { break };
                f.on_crawled(p, &succ[p as usize]);
                log.push(Event::Crawled {
                    id: p,
                    outcome: Outcome::Html,
                    status: 200,
                    links: succ[p as usize].clone(),
                });
            }
            let r = replay(&c, numbered(&log)).unwrap();
            assert_eq!(r.pending, inflight, "{policy}");
            assert_eq!(r.frontier.len(), f.len(), "{policy}");
            let mut f2 = r.frontier;
            for p in 0..6 {
                assert_eq!(f.score(p), f2.score(p), "{policy}");
            }
            while let Some(p) = f.pop() {
                assert_eq!(f2.pop(), Some(p), "{policy}");
            }
        }
    }

    #[test]
    fn a_diverging_log_is_refused() {
        let log = vec![Event::Seed(vec![0, 1]), Event::Popped(1)];
        let err = replay(&cfg("bfs"), numbered(&log)).err().unwrap();
        assert!(err.to_string().contains("diverged at event 1"), "{err}");
        let log = vec![
            Event::Seed(vec![0]),
            Event::Crawled {
                id: 0,
                outcome: Outcome::Html,
                status: 200,
                links: vec![],
            },
        ];
        assert!(replay(&cfg("bfs"), numbered(&log)).is_err());
        assert!(new_frontier(&cfg("omniscient")).is_err());
    }

    #[test]
    fn a_read_error_ends_the_replay() {
        let log = [
            Ok((0, Event::Seed(vec![0]))),
            Err(anyhow::anyhow!("the crawl state is unreadable")),
            Ok((2, Event::Popped(0))),
        ];
        let err = replay(&cfg("bfs"), log).err().unwrap();
        assert!(err.to_string().contains("unreadable"), "{err}");
    }
}
