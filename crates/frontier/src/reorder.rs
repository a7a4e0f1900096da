//! Where a split reorder ([`Policy::begin_reorder`]) runs: inline, or on one thread the frontier
//! owns ([`Frontier::set_background_reorders`](crate::Frontier::set_background_reorders)).
//!
//! Why: `learned` refits a random forest at every reorder, a second or more on a large crawl,
//! and the crawler's engine thread would otherwise stop receiving fetched pages for that long.
//! Why one long-lived thread and not the crawler's CPU pool: the job is one single-threaded
//! fit; on the pool it would hold one of the few threads that parse pages, and this crate has
//! no pool of its own to borrow. One thread, one job at a time: the next boundary waits for
//! the last reorder anyway (its order is built on the last one's).
//!
//! Why the order cannot change: the frontier pops nothing while a job runs (its `pop` waits
//! for it), and the policy is told only of pages crawled, seeds and impacts meanwhile, which
//! it keeps aside and applies after the job's output, as they would have come after an inline
//! reorder. A job that panics panics the caller when its output is collected, as an inline
//! reorder would have.

use crate::{PageTable, Policy};
use anyhow::{Context, Result};
use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::time::{Duration, Instant};

/// The long part of a reorder, made by [`Policy::begin_reorder`] from a copy of what it reads;
/// it may run on another thread.
pub type ReorderJob = Box<dyn FnOnce() -> ReorderOutput + Send>;

/// What a [`ReorderJob`] computed, for its policy's [`Policy::finish_reorder`] (which knows its
/// type).
pub type ReorderOutput = Box<dyn Any + Send>;

/// What the background reorders cost, and how much of it the caller spent on other work.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReorderStats {
    /// Reorders run on the frontier's thread.
    pub background: u64,
    /// Their jobs' time, each from its hand-over to the thread to its end, summed.
    pub busy: Duration,
    /// The time the caller waited for them (in `pop`, at the next boundary, in `settle`):
    /// `busy − waited` is the time it did other work meanwhile.
    pub waited: Duration,
    /// Pages reported crawled while a reorder ran.
    pub crawled_during: u64,
}

type Outcome = (std::thread::Result<ReorderOutput>, Duration);

/// The frontier's thread: jobs in, outputs (or panics) with their time out.
struct Worker {
    /// Each job with the instant it was handed over: its time counts from there, so that
    /// the time the caller went on meanwhile (`busy − waited`) is never more than it was.
    jobs: Sender<(ReorderJob, Instant)>,
    done: Receiver<Outcome>,
}

/// Runs split reorders inline, or on the frontier's thread, one at a time.
#[derive(Default)]
pub(crate) struct Reorders {
    worker: Option<Worker>,
    /// A job was sent and its output not applied yet.
    pending: bool,
    stats: ReorderStats,
}

impl Reorders {
    /// Starts or stops the thread (the caller has no reorder pending).
    pub(crate) fn set_background(&mut self, on: bool) -> Result<()> {
        debug_assert!(!self.pending);
        if !on {
            self.worker = None; // the thread ends when its job channel closes
            return Ok(());
        }
        if self.worker.is_some() {
            return Ok(());
        }
        let (jobs, inbox) = channel::<(ReorderJob, Instant)>();
        let (outbox, done) = channel::<Outcome>();
        std::thread::Builder::new()
            .name("crawlrank-reorder".into())
            .spawn(move || {
                for (job, handed_over) in inbox {
                    // Caught here and raised again where the output is collected.
                    let out = catch_unwind(AssertUnwindSafe(job));
                    if outbox.send((out, handed_over.elapsed())).is_err() {
                        break;
                    }
                }
            })
            .context("cannot start the frontier's reorder thread")?;
        self.worker = Some(Worker { jobs, done });
        Ok(())
    }

    /// Runs `job`: on the thread when there is one, else at once.
    pub(crate) fn start(&mut self, job: ReorderJob, policy: &mut dyn Policy, pages: &PageTable) {
        debug_assert!(!self.pending);
        let job = match &self.worker {
            Some(w) => match w.jobs.send((job, Instant::now())) {
                Ok(()) => {
                    self.pending = true;
                    self.stats.background += 1;
                    return;
                }
                // The thread is gone (it cannot be: it catches its jobs' panics): inline.
                Err(e) => e.0 .0,
            },
            None => job,
        };
        policy.finish_reorder(job(), pages);
    }

    /// Counts a page reported crawled.
    pub(crate) fn count_crawled(&mut self) {
        self.stats.crawled_during += u64::from(self.pending);
    }

    /// Applies the pending job's output if it is there; whether one is still running.
    pub(crate) fn poll(&mut self, policy: &mut dyn Policy, pages: &PageTable) -> bool {
        if !self.pending {
            return false;
        }
        let w = self.worker.as_ref().expect("a pending job has a thread");
        match w.done.try_recv() {
            Ok(outcome) => {
                self.apply(outcome, policy, pages);
                false
            }
            Err(TryRecvError::Empty) => true,
            Err(TryRecvError::Disconnected) => panic!("the frontier's reorder thread ended"),
        }
    }

    /// Waits for the pending job, if any, and applies its output.
    pub(crate) fn wait(&mut self, policy: &mut dyn Policy, pages: &PageTable) {
        if !self.pending {
            return;
        }
        let w = self.worker.as_ref().expect("a pending job has a thread");
        let started = Instant::now();
        let outcome = w
            .done
            .recv()
            .unwrap_or_else(|_| panic!("the frontier's reorder thread ended"));
        self.stats.waited += started.elapsed();
        self.apply(outcome, policy, pages);
    }

    fn apply(&mut self, (out, took): Outcome, policy: &mut dyn Policy, pages: &PageTable) {
        self.pending = false;
        self.stats.busy += took;
        match out {
            Ok(output) => policy.finish_reorder(output, pages),
            Err(panic) => resume_unwind(panic),
        }
    }

    pub(crate) fn stats(&self) -> ReorderStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use crate::policies::simple::Bfs;
    use crate::{BatchClock, Frontier, Link, PageId, PageTable, Policy, ReorderJob, ReorderOutput};
    use std::sync::mpsc::{channel, Receiver, Sender};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    /// A FIFO (`bfs`) whose reorder reverses the queue, in a job that waits for the test's go:
    /// a reorder as long as the test wants. Pages found while it runs queue behind the reversed
    /// ones, as they would after an inline reorder.
    struct Gated {
        fifo: Bfs,
        gate: Arc<Mutex<Receiver<()>>>,
    }

    impl Policy for Gated {
        fn name(&self) -> &'static str {
            "gated"
        }
        // The reorder is what this policy is for; the rest is `bfs`'s.
        fn begin_reorder(&mut self, _: &PageTable, _: &BatchClock) -> Option<ReorderJob> {
            let snapshot: Vec<PageId> = self.fifo.queue.iter().copied().collect();
            let gate = self.gate.clone();
            Some(Box::new(move || {
                gate.lock().unwrap().recv().unwrap();
                let reversed: Vec<PageId> = snapshot.into_iter().rev().collect();
                Box::new(reversed) as ReorderOutput
            }))
        }
        fn finish_reorder(&mut self, output: ReorderOutput, _: &PageTable) {
            let reversed = output.downcast::<Vec<PageId>>().unwrap();
            for (slot, p) in self.fifo.queue.iter_mut().zip(reversed.iter()) {
                *slot = *p;
            }
        }
        fn push_seed(&mut self, page: PageId, pages: &PageTable) {
            self.fifo.push_seed(page, pages);
        }
        fn pop(&mut self, pages: &PageTable) -> Option<PageId> {
            self.fifo.pop(pages)
        }
        fn crawled(&mut self, page: PageId, links: &[Link], pages: &PageTable, clock: &BatchClock) {
            self.fifo.crawled(page, links, pages, clock);
        }
        fn score(&self, _: PageId, _: &PageTable) -> Option<f64> {
            None
        }
        fn len(&self) -> usize {
            self.fifo.len()
        }
    }

    fn frontier() -> (Frontier, Sender<()>) {
        let (go, gate) = channel();
        let policy = Gated {
            fifo: Bfs::default(),
            gate: Arc::new(Mutex::new(gate)),
        };
        (Frontier::new(Box::new(policy), 2), go)
    }

    /// Crawls a little tree (seeds 0, 1, 2, each with two children) to the end on `f`, with
    /// enough gate openings queued on `go` for every reorder it starts; the crawl order.
    fn crawl_tree(f: &mut Frontier, go: &Sender<()>) -> Vec<PageId> {
        for _ in 0..10 {
            go.send(()).unwrap();
        }
        f.seed(&[0, 1, 2]);
        let mut order = Vec::new();
        while let Some(p) = f.pop() {
            order.push(p);
            let links: Vec<PageId> = if p < 3 { vec![10 + p, 20 + p] } else { vec![] };
            f.on_crawled(p, &links);
        }
        order
    }

    /// The crawl of `drive`'s order over a little tree, with the reorders inline.
    fn inline_order() -> Vec<PageId> {
        let (mut f, go) = frontier();
        crawl_tree(&mut f, &go)
    }

    /// Feeds `f` the calls of a crawl with three pages in flight at the first boundary (K = 2),
    /// reported out of pop order, the third while the reorder runs; then pops to the end.
    /// Returns the crawl order.
    fn crawl_with_overlap(f: &mut Frontier, go: &Sender<()>, background: bool) -> Vec<PageId> {
        let links = |p: PageId| if p < 3 { vec![10 + p, 20 + p] } else { vec![] };
        let open_gate = || (0..10).for_each(|_| go.send(()).unwrap());
        if !background {
            open_gate();
        }
        f.seed(&[0, 1, 2]);
        let mut order = vec![f.pop().unwrap(), f.pop().unwrap(), f.pop().unwrap()];
        assert_eq!(order, [0, 1, 2]);
        f.on_crawled(1, &links(1));
        f.on_crawled(0, &links(0)); // the boundary
        if background {
            // The job waits at its gate: the reorder stays pending however long one waits,
            // and the page still in flight is taken in meanwhile (the crawl goes on).
            for _ in 0..3 {
                std::thread::sleep(Duration::from_millis(20));
                assert!(f.reorder_pending());
            }
            f.on_crawled(2, &links(2));
            assert!(f.reorder_pending());
            assert_eq!(f.len(), 6);
            assert_eq!(f.reorder_stats().crawled_during, 1);
            open_gate();
        } else {
            f.on_crawled(2, &links(2));
        }
        while let Some(p) = f.pop() {
            assert!(!f.reorder_pending());
            order.push(p);
            f.on_crawled(p, &links(p));
        }
        order
    }

    #[test]
    fn a_background_reorder_lets_pages_in_and_keeps_the_order() {
        let (mut inline, go) = frontier();
        let want = crawl_with_overlap(&mut inline, &go, false);
        // The first reorder reversed [11, 21, 10, 20].
        assert_eq!(want[3], 20);
        let (mut f, go) = frontier();
        f.set_background_reorders(true).unwrap();
        assert_eq!(crawl_with_overlap(&mut f, &go, true), want);
        let stats = f.reorder_stats();
        assert!(stats.background >= 1, "{stats:?}");
        assert!(stats.busy >= Duration::from_millis(60), "{stats:?}");
        assert_eq!(inline.reorder_stats().background, 0);
    }

    #[test]
    fn drive_order_is_the_same_in_the_background() {
        let want = inline_order();
        let (mut f, go) = frontier();
        f.set_background_reorders(true).unwrap();
        let order = crawl_tree(&mut f, &go);
        assert_eq!(order, want);
        assert!(f.reorder_stats().background > 0);
    }
}
