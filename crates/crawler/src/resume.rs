//! Resuming a crawl: its frontier rebuilt from the state's event log.
//!
//! The log records the calls the engine made on its [`Frontier`]; the frontier crate's
//! [`LogReplay`] replays them through the same code, checking every pop, so the frontier comes
//! back bit for bit. Pages popped but never reported crawled were in flight (or waiting for
//! their host) when the previous run ended; the engine fetches them again, first.
//!
//! Every page id an event names is checked against the URL table's length before the frontier
//! sees it: the frontier sizes its page table by the largest id, so one corrupt event could
//! otherwise ask for gigabytes; it is an error naming the event instead.

use crate::store::Event;
use anyhow::{bail, ensure, Result};
use crawlrank_frontier::{Frontier, LogReplay, Logged, PageId, PolicySpec, Replayed};

/// The logged frontier call an event records.
pub fn logged(event: &Event) -> Logged<'_> {
    match event {
        Event::Seed(ids) => Logged::Seed(ids),
        Event::Popped(id) => Logged::Popped(*id),
        Event::Crawled { id, links, .. } => Logged::Crawled(*id, links),
    }
}

/// The first page id of `event` that is not below `urls`.
fn unknown_page(event: &Event, urls: u64) -> Option<PageId> {
    let bad = |id: &PageId| u64::from(*id) >= urls;
    match event {
        Event::Seed(ids) => ids.iter().find(|id| bad(id)).copied(),
        Event::Popped(id) => Some(*id).filter(bad),
        Event::Crawled { id, links, .. } => {
            std::iter::once(id).chain(links).find(|id| bad(id)).copied()
        }
    }
}

/// Replays a log, read as `(number, event)` pairs (as [`Store::events`](crate::store::Store::events)
/// yields them), into a new frontier for `spec`, which first learns the `impacts` of the pages
/// the crawl knows (the impact-aware policies read them as pages are crawled). Every page id,
/// of an impact or of an event, must be one of the state's `urls` URLs (ids `0..urls`). The
/// first error, of reading, of an id or of replaying, ends it.
pub fn replay(
    spec: &PolicySpec,
    urls: u64,
    impacts: &[(PageId, f64)],
    events: impl IntoIterator<Item = Result<(u64, Event)>>,
) -> Result<Replayed> {
    let mut frontier = Frontier::from_spec(spec)?;
    for &(page, impact) in impacts {
        ensure!(
            u64::from(page) < urls,
            "the crawl state gives an impact to page {page}, but holds {urls} URLs (corrupt state)"
        );
        frontier.set_impact(page, impact);
    }
    let mut replay = LogReplay::new(frontier);
    for event in events {
        let (i, event) = event?;
        if let Some(id) = unknown_page(&event, urls) {
            bail!("event {i} of the crawl state names page {id}, but the state holds {urls} URLs (corrupt state)");
        }
        replay.apply(i, logged(&event))?;
    }
    Ok(replay.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawlrank_fetch::page::Outcome;
    use crawlrank_frontier::{PolicyConfig, PolicyKind};

    /// A log as the store yields it.
    fn numbered(log: &[Event]) -> impl Iterator<Item = Result<(u64, Event)>> + '_ {
        (0..).zip(log.iter().cloned()).map(Ok)
    }

    fn cfg(policy: &str) -> PolicySpec {
        PolicySpec {
            kind: PolicyKind::parse(policy).unwrap(),
            config: PolicyConfig {
                batch: 2,
                rng_seed: 3,
                ..PolicyConfig::for_crawl(6, 6)
            },
        }
    }

    #[test]
    fn replay_reproduces_the_frontier_and_finds_pending_pages() {
        // 0 -> 1,2 ; 1 -> 3 ; 2 -> 3,4 ; 3 -> 5
        let succ: Vec<Vec<u32>> = vec![vec![1, 2], vec![3], vec![3, 4], vec![5], vec![], vec![]];
        for policy in ["bfs", "fica", "opic", "ieca", "random", "batch-pagerank"] {
            let c = cfg(policy);
            let mut f = Frontier::from_spec(&c).unwrap();
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
            let r = replay(&c, 6, &[], numbered(&log)).unwrap();
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
        let err = replay(&cfg("bfs"), 6, &[], numbered(&log)).err().unwrap();
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
        assert!(replay(&cfg("bfs"), 6, &[], numbered(&log)).is_err());
        assert!(
            PolicyKind::parse("omniscient").is_err(),
            "a crawl cannot name it"
        );
    }

    #[test]
    fn a_read_error_ends_the_replay() {
        let log = [
            Ok((0, Event::Seed(vec![0]))),
            Err(anyhow::anyhow!("the crawl state is unreadable")),
            Ok((2, Event::Popped(0))),
        ];
        let err = replay(&cfg("bfs"), 6, &[], log).err().unwrap();
        assert!(err.to_string().contains("unreadable"), "{err}");
    }

    #[test]
    fn an_event_naming_a_page_the_state_does_not_hold_is_refused_before_the_frontier_sees_it() {
        // A corrupt link id near 2^32 would have the frontier size its page table for it.
        let log = vec![
            Event::Seed(vec![0]),
            Event::Popped(0),
            Event::Crawled {
                id: 0,
                outcome: Outcome::Html,
                status: 200,
                links: vec![1, u32::MAX - 1],
            },
        ];
        let err = replay(&cfg("bfs"), 6, &[], numbered(&log)).err().unwrap();
        let msg = err.to_string();
        assert!(
            msg.contains("event 2") && msg.contains("page 4294967294"),
            "{msg}"
        );
        let log = vec![Event::Seed(vec![0, 6])];
        let err = replay(&cfg("bfs"), 6, &[], numbered(&log)).err().unwrap();
        assert!(err.to_string().contains("page 6"), "{err}");
        let err = replay(&cfg("bfs"), 6, &[(9, 1.0)], numbered(&[]))
            .err()
            .unwrap();
        assert!(err.to_string().contains("page 9"), "{err}");
    }
}
