//! The cache directory: where crawlrank keeps the files it derives from an input.
//!
//! Derived files (an Elias–Fano `.ef` index, a transpose, an arc list imported on the fly,
//! a reference PageRank) must never be written into a folder the user gave us as input: it
//! may be read-only, shared, or simply not ours. Every derived file therefore lives under one
//! cache root, in a sub-directory keyed by the input's canonical path, size and modification
//! time, so that editing an input invalidates what was derived from it.

use anyhow::{Context, Result};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// The environment variable that overrides the cache root.
pub const CACHE_ENV: &str = "CRAWLRANK_CACHE";

/// A cache root directory.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

impl Cache {
    /// A cache rooted at `root` (created on first use).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The default cache: `$CRAWLRANK_CACHE`, else `$XDG_CACHE_HOME/crawlrank`, else
    /// `~/.cache/crawlrank`, else a folder in the system temporary directory.
    pub fn from_env() -> Self {
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let root = env(CACHE_ENV)
            .or_else(|| env("XDG_CACHE_HOME").map(|p| p.join("crawlrank")))
            .or_else(|| env("HOME").map(|p| p.join(".cache").join("crawlrank")))
            .unwrap_or_else(|| std::env::temp_dir().join("crawlrank-cache"));
        Self { root }
    }

    /// The cache root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The cache directory for what is derived from `input` (a file, or a graph basename whose
    /// `.graph` file is `key_file`), created if needed. The name starts with the input's file
    /// name so that a person browsing the cache can tell entries apart.
    pub fn dir_for(&self, input: &Path, key_file: &Path) -> Result<PathBuf> {
        let meta = std::fs::metadata(key_file)
            .with_context(|| format!("cannot read {}", key_file.display()))?;
        let canonical = std::fs::canonicalize(key_file)
            .with_context(|| format!("cannot resolve {}", key_file.display()))?;
        let mut h = DefaultHasher::new();
        canonical.hash(&mut h);
        meta.len().hash(&mut h);
        if let Ok(t) = meta.modified() {
            t.hash(&mut h);
        }
        let stem = input
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "input".into());
        let dir = self.root.join(format!("{stem}-{:016x}", h.finish()));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create cache directory {}", dir.display()))?;
        Ok(dir)
    }
}
