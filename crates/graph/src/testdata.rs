//! Where the real web graphs used by tests and benchmarks live.
//!
//! The LAW and other research graphs are not part of the repository (a user's clone has none):
//! they sit in a `shared/data` folder beside the checkout, or wherever
//! `$CRAWLRANK_SHARED_DATA` points. Tests that need them skip with a message when the folder
//! is absent; benchmarks fall back to a generated graph.

use std::path::{Path, PathBuf};

/// The environment variable that points at the shared data folder.
pub const SHARED_DATA_ENV: &str = "CRAWLRANK_SHARED_DATA";

/// `$CRAWLRANK_SHARED_DATA`, else `shared/data` beside the checkout.
pub fn shared_data_dir() -> PathBuf {
    match std::env::var_os(SHARED_DATA_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        // This crate is `<checkout>/crates/graph`.
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    }
}

/// The shared data folder when it holds `relative` (e.g. `cnr-2000/cnr-2000.graph`); otherwise
/// prints that the caller is skipped, and why, and returns `None`.
pub fn shared_data_or_skip(relative: &str) -> Option<PathBuf> {
    let dir = shared_data_dir();
    if dir.join(relative).exists() {
        Some(dir)
    } else {
        eprintln!(
            "skipping: {} not found (set {SHARED_DATA_ENV} to the folder holding the shared graphs)",
            dir.join(relative).display()
        );
        None
    }
}
