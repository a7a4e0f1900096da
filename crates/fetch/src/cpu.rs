//! The CPU work of fetching — parsing pages, sitemaps and robots.txt, building WARC records —
//! on a pool of one thread per core, off the async I/O threads ([`run`]).
//!
//! Why not tokio's `spawn_blocking`: its pool is made for blocking *I/O* and starts another
//! thread whenever a task finds every thread busy (up to 512). With 64 fetches finishing at
//! once the crawler ran about 70 threads on 2 cores; the profile showed their context
//! switches and wake-ups, and each new thread's cold allocator, where the work itself is a
//! millisecond of parsing (docs/performance.md, "Against spider"). CPU-bound work wants one
//! thread per core and a queue. DNS lookups, which wait on the network, stay on
//! `spawn_blocking`.
//!
//! The pool is process-wide (the engine's fetches and a worker's share it) and built on first
//! use with as many threads as the process may run on (`available_parallelism`, which honours
//! CPU affinity and cgroup quotas). A task that panics (a bug in a parser we depend on) comes
//! back as [`Panicked`], as a panicking `spawn_blocking` task comes back as a `JoinError`:
//! the caller counts it, the crawl goes on.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// A task of the pool panicked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Panicked;

/// The pool, or `None` when its threads could not be started (then tasks run on tokio's
/// blocking pool, as before the pool existed: slower, never wrong).
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("crawlrank-cpu-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `f` on the CPU pool and waits for it without blocking the async thread.
pub async fn run<T, F>(f: F) -> Result<T, Panicked>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let Some(pool) = pool() else {
        return tokio::task::spawn_blocking(f).await.map_err(|_| Panicked);
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    pool.spawn(move || {
        // Caught here, not by rayon, whose default for a panicking `spawn` is to abort.
        let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
    });
    match rx.await {
        Ok(Ok(v)) => Ok(v),
        _ => Err(Panicked),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_task_runs_off_the_async_thread_and_returns_its_value() {
        let here = std::thread::current().id();
        let (there, v) = run(|| (std::thread::current().id(), 6 * 7)).await.unwrap();
        assert_eq!(v, 42);
        assert_ne!(there, here);
    }

    #[tokio::test]
    async fn a_panicking_task_is_an_error_and_the_pool_goes_on() {
        let r: Result<(), Panicked> = run(|| panic!("a parser bug")).await;
        assert_eq!(r, Err(Panicked));
        assert_eq!(run(|| 1).await, Ok(1));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_tasks_at_once_all_finish() {
        let tasks: Vec<_> = (0..500u64)
            .map(|i| tokio::spawn(run(move || i * i)))
            .collect();
        let mut sum = 0;
        for t in tasks {
            sum += t.await.unwrap().unwrap();
        }
        assert_eq!(sum, (0..500u64).map(|i| i * i).sum::<u64>());
    }
}
