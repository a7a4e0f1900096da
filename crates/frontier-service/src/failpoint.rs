//! Crash points for the tests of a cluster node's recovery: with `CRAWLRANK_FAILPOINT=<name>`
//! in its environment, the process aborts (as a `kill -9` would stop it, without unwinding or
//! flushing anything) the first time it reaches the point of that name, so that a test can
//! stop a node at an exact instant that a signal sent from outside would hit only by chance:
//!
//! - `after-outbox-commit`: a commit that put items into the outbox is durable, and nothing of
//!   it was published to JetStream yet (nor answered);
//! - `after-outbox-ack`: JetStream acknowledged outbox items, and the outbox still holds them.
//!
//! Unset (as in any real use), each point costs one read of a cached flag. docs/scaling.md
//! describes it as a testing aid.

use std::sync::OnceLock;

/// The crash point named in the environment, read once.
fn armed() -> Option<&'static str> {
    static ARMED: OnceLock<Option<String>> = OnceLock::new();
    ARMED
        .get_or_init(|| std::env::var("CRAWLRANK_FAILPOINT").ok())
        .as_deref()
}

/// Aborts the process if `name` is the crash point the environment names.
pub(crate) fn hit(name: &str) {
    if armed() == Some(name) {
        // Printed, not an event: the process aborts on the next line, before any subscriber
        // could write an event out, and only the crash tests set a failpoint.
        eprintln!("frontier: CRAWLRANK_FAILPOINT={name} reached: aborting");
        std::process::abort();
    }
}
