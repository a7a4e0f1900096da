//! How a crawl is asked to stop: Ctrl-C or SIGTERM sets a flag the crawl polls.
//!
//! Its own module because both the crawl ([`crawl`](super::crawl)) and a worker of a frontier
//! service ([`crawl_worker`](super::crawl_worker)) stop this way, and `crawl` calls
//! `crawl_worker`: with this function in `crawl`, the two modules imported each other.

use anyhow::{Context, Result};
use crawlrank_crawler::StopSignals;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Sets `stop` on Ctrl-C (SIGINT) or SIGTERM, from a small thread of its own, so that the
/// crawl ends cleanly after the requests in flight. A second signal exits the process at
/// once (the state stays consistent: it is committed transactionally).
pub(super) fn stop_on_signals(stop: Arc<AtomicBool>) -> Result<()> {
    let mut signals = StopSignals::listen()?;
    std::thread::Builder::new()
        .name("crawlrank-signals".into())
        .spawn(move || {
            while signals.wait() {
                if stop.swap(true, Ordering::SeqCst) {
                    eprintln!("\ncrawlrank: stopping now");
                    std::process::exit(130);
                }
                eprintln!(
                    "\ncrawlrank: stopping after the requests in flight (Ctrl-C again to quit at once)"
                );
            }
        })
        .context("cannot start the signal thread")?;
    Ok(())
}
