//! What `--graph` means: a BVGraph basename, or an arc-list file imported on the fly.
//!
//! Researchers hold graphs in both forms, and asking them to run `import` by hand before
//! every experiment on a small arc list is friction. An arc list named on the command line
//! is imported once into the cache (keyed by its path, size and modification time) and the
//! import is reused until the file changes. Ids that are not `0..n` are numbered densely
//! inside, and the import's `imported.ids` in the cache lets every command read and write
//! the arc list's own ids ([`BvWebGraph::page_ids`], [`page_ids`](crate::page_ids)).

use crate::bv::{is_bvgraph, BvWebGraph};
use crate::cache::Cache;
use crate::import::{self, ImportFormat, ImportOptions};
use anyhow::{bail, Context, Result};
use std::path::Path;

/// Opens `arg` as a graph: a BVGraph basename (`X`, `X.graph` or `X.properties`), or a file
/// holding an arc list (`src dst` per line), imported into `cache` on first use.
pub fn open_graph(arg: &Path, cache: &Cache) -> Result<BvWebGraph> {
    if is_bvgraph(arg) {
        return BvWebGraph::open(arg, cache);
    }
    if !arg.is_file() {
        bail!(
            "{} is neither a BVGraph basename (no {}.graph and .properties) nor an arc-list file",
            arg.display(),
            arg.display()
        );
    }
    let dir = cache.dir_for(arg, arg)?;
    let basename = dir.join("imported");
    if !is_bvgraph(&basename) {
        let opts = ImportOptions {
            format: ImportFormat::Arcs,
            write_ef: false,
            ..ImportOptions::default()
        };
        import::import(arg, &basename, &opts)
            .with_context(|| format!("cannot read {} as an arc list", arg.display()))?;
    }
    BvWebGraph::open(&basename, cache)
}
