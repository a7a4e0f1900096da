//! The work directory the import and convert tests share: a temporary folder with a cache of
//! its own and an output folder, so that a test can check that nothing but its outputs was
//! written there (derived files belong in the cache).

use crawlrank_graph::testdata::shared_data_or_skip;
use crawlrank_graph::{BvWebGraph, Cache, Csr};
use crawlrank_testkit::{file_names, write_file};
use std::path::{Path, PathBuf};

/// A temporary work directory: inputs at its root, outputs in `out/`, the cache in `cache/`.
pub struct Env {
    dir: tempfile::TempDir,
    pub cache: Cache,
}

impl Env {
    /// A fresh work directory with an empty cache and output folder.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().join("cache"));
        std::fs::create_dir(dir.path().join("out")).unwrap();
        Self { dir, cache }
    }

    /// Writes `text` as the input file `name` (at the root) and returns its path.
    pub fn input(&self, name: &str, text: &str) -> PathBuf {
        write_file(self.dir.path(), name, text)
    }

    /// The path of `name` at the root, beside the inputs (not written).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The output folder.
    pub fn out_dir(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    /// The path of the output `name`.
    pub fn out(&self, name: &str) -> PathBuf {
        self.out_dir().join(name)
    }

    /// Opens the graph at `base` with this directory's cache and decodes it.
    pub fn open(&self, base: &Path) -> Csr {
        BvWebGraph::open(base, &self.cache)
            .unwrap()
            .to_csr()
            .unwrap()
    }

    /// Entries of the output folder, sorted.
    pub fn out_entries(&self) -> Vec<String> {
        file_names(&self.out_dir())
    }
}

/// The shared data file `relative` and a fresh work directory; `None` (after saying why the
/// test is skipped) when the shared data is absent.
pub fn shared_input(relative: &str) -> Option<(PathBuf, Env)> {
    let data = shared_data_or_skip(relative)?;
    Some((data.join(relative), Env::new()))
}
