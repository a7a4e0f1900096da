//! Writing a BVGraph as an output: the files LAW's own tools open, appearing all together.
//!
//! `import`, `generate` and the crawl's `export` each create a graph for the user, and they
//! all write it the same way, through a [`GraphWriter`]:
//!
//! - `BASENAME.graph`, `.offsets` and `.properties`, compressed with webgraph's Java-compatible
//!   defaults (big-endian, window 7, …);
//! - `BASENAME.ef`, the Elias–Fano index of the offsets that webgraph-rs (and so LAW's
//!   `webgraph` Python bindings) needs beside a graph for random access — the very file
//!   webgraph-rs's `webgraph build ef` writes, built from the `.offsets`;
//! - companions such as `BASENAME.urls` (LAW's one URL per node) and `BASENAME.ids`.
//!
//! Everything is written in a private staging directory beside the output and moved into
//! place by [`GraphWriter::commit`] only when complete, `.properties` last
//! ([`StagedBasename`]), so an error leaves nothing that looks like a result. Companions that
//! an earlier graph of the same basename had and this one lacks (`.ef`, `.urls`, `.urls.gz`,
//! `.ids`) are removed on commit, so that they are never taken for the new graph's.
//!
//! This module is for outputs only. Files derived from an *input* graph (its `.ef`, its
//! transpose) go to the [`Cache`](crate::cache::Cache), never beside the input.

use crate::atomic::StagedBasename;
use crate::basename::{basename_of, with_ext};
use crate::bv::{self, Properties};
use anyhow::{ensure, Context, Result};
use dsi_bitstream::prelude::BE;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use webgraph::prelude::*;

/// Companions of a graph that a new graph of the same basename replaces or removes.
const COMPANIONS: [&str; 4] = ["ef", "urls", "urls.gz", "ids"];

/// The order in which [`GraphWriter::commit`] lists the files it wrote; others follow by name.
const FILE_ORDER: [&str; 7] = [
    "graph",
    "offsets",
    "properties",
    "ef",
    "urls",
    "urls.gz",
    "ids",
];

/// What compressing a graph produced.
#[derive(Debug, Clone)]
pub struct Compressed {
    /// The graph's `.properties` (nodes, arcs, compression parameters).
    pub properties: Properties,
    /// Length of the `.graph` bitstream in bits (the file is padded to whole words).
    pub bits: u64,
}

/// A BVGraph being written at a basename (see the [module documentation](self)).
#[derive(Debug)]
pub struct GraphWriter {
    target: PathBuf,
    staged: StagedBasename,
    ef: bool,
}

impl GraphWriter {
    /// Starts writing the graph `out`: a basename (`DIR/NAME`; a trailing `.graph` or
    /// `.properties` is accepted and removed). Nothing appears at `out` before
    /// [`commit`](Self::commit).
    pub fn new(out: &Path) -> Result<Self> {
        let target = basename_of(out);
        ensure!(
            target.file_name().is_some_and(|n| !n.is_empty()),
            "{} is not a valid output basename",
            out.display()
        );
        let staged = StagedBasename::new(&target)?;
        Ok(Self {
            target,
            staged,
            ef: true,
        })
    }

    /// Leaves out the `.ef` index: for graphs written into the cache, whose index
    /// [`BvWebGraph::open`](crate::bv::BvWebGraph::open) builds and verifies itself.
    pub fn without_ef(mut self) -> Self {
        self.ef = false;
        self
    }

    /// The final basename of the graph.
    pub fn basename(&self) -> &Path {
        &self.target
    }

    /// Where to stage the file `BASENAME` + `suffix` (e.g. `".urls"`) that the caller writes
    /// itself; it is moved into place with the graph.
    pub fn staged_path(&self, suffix: &str) -> PathBuf {
        self.staged.path(suffix)
    }

    /// A private temporary directory on the output's filesystem (beside the output, not in
    /// the staging area) for a compressor's scratch files; removed when dropped.
    pub fn scratch_dir(&self) -> Result<tempfile::TempDir> {
        let dir = self
            .staged
            .basename()
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .context("the staging directory has no parent")?;
        tempfile::Builder::new()
            .prefix(".crawlrank-scratch-")
            .tempdir_in(&dir)
            .with_context(|| format!("cannot create a scratch directory in {}", dir.display()))
    }

    /// Compresses `graph` sequentially into the staged `.graph`, `.offsets` and
    /// `.properties`.
    pub fn compress(&self, graph: impl SequentialGraph) -> Result<Compressed> {
        let base = self.staged.basename();
        let bits = bv::write_bvgraph(graph, &base)
            .with_context(|| format!("cannot write the graph {}", self.target.display()))?;
        let properties = bv::read_properties(&with_ext(&base, "properties"))?;
        Ok(Compressed { properties, bits })
    }

    /// Compresses `graph` in parallel, a chunk per lender, on the current `rayon` pool, with
    /// the compressor's temporary files in `tmp_dir` (default: the system temporary
    /// directory). A graph compressed in parallel is as valid as one compressed sequentially,
    /// but its bitstream may differ at the chunk boundaries.
    pub fn par_compress<G>(&self, graph: G, tmp_dir: Option<&Path>) -> Result<Compressed>
    where
        G: for<'a> IntoParLenders<ParLender: NodeLabelsLender<'a, Label = usize>> + Send,
    {
        // webgraph derives file names with `Path::with_extension`, which would cut a basename
        // containing a dot: compress under a plain name in a work directory, then move.
        let staging = self
            .staged
            .basename()
            .parent()
            .context("the staging directory has no path")?
            .to_path_buf();
        let work = tempfile::Builder::new()
            .prefix(".bvcomp-")
            .tempdir_in(&staging)
            .with_context(|| format!("cannot create a work directory in {}", staging.display()))?;
        let tmp = work.path().join("graph");
        let mut comp = BvComp::with_basename(&tmp);
        if let Some(d) = tmp_dir {
            comp = comp.tmp_dir(d);
        }
        // `par_comp` waits for its workers by polling with `rayon::yield_now`, which spins when
        // called from outside the pool and would take a core from the workers: run it on a
        // pool thread, where waiting means doing one of the compression jobs.
        let bits = rayon::scope(|_| comp.par_comp::<BE, _>(graph))
            .with_context(|| format!("cannot compress the graph {}", self.target.display()))?;
        for ext in ["graph", "offsets", "properties"] {
            let (from, to) = (with_ext(&tmp, ext), self.staged.path(&format!(".{ext}")));
            std::fs::rename(&from, &to)
                .with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?;
        }
        let properties = bv::read_properties(&self.staged.path(".properties"))?;
        Ok(Compressed { properties, bits })
    }

    /// Stages `BASENAME.urls`, one URL per node (see [`urls`](crate::urls)).
    pub fn write_urls<S: AsRef<str>>(&self, urls: impl IntoIterator<Item = S>) -> Result<()> {
        self.write_companion(".urls", |w| crate::urls::write_urls_to(w, urls))
    }

    /// Stages the companion file `BASENAME` + `suffix` (e.g. `".ids"`), written by `fill`.
    pub fn write_companion(
        &self,
        suffix: &str,
        fill: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
    ) -> Result<()> {
        let path = self.staged.path(suffix);
        let f = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        let mut w = BufWriter::with_capacity(1 << 20, f);
        fill(&mut w)
            .and_then(|_| w.flush())
            .with_context(|| format!("cannot write {}", path.display()))
    }

    /// Writes the `.ef` index (unless [`without_ef`](Self::without_ef)), moves every staged
    /// file into place, removes stale companions, and returns the files of the graph in a
    /// fixed order (`.graph`, `.offsets`, `.properties`, `.ef`, `.urls`, `.ids`, others by
    /// name).
    pub fn commit(self) -> Result<Vec<PathBuf>> {
        let props_file = self.staged.path(".properties");
        ensure!(
            props_file.is_file(),
            "internal error: {} was committed before its graph was compressed",
            self.target.display()
        );
        if self.ef {
            let props = bv::read_properties(&props_file)?;
            webgraph::graphs::bvgraph::store_ef_with_data(
                props.nodes,
                self.staged.path(".graph"),
                self.staged.path(".offsets"),
                self.staged.path(".ef"),
                &mut dsi_progress_logger::no_logging![],
            )
            .with_context(|| {
                format!(
                    "cannot write the .ef index of {} from its .offsets",
                    self.target.display()
                )
            })?;
        }
        let name = self
            .target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut exts: Vec<String> = self
            .staged
            .commit()?
            .iter()
            .filter_map(|p| {
                let file = p.file_name()?.to_string_lossy().into_owned();
                Some(file.strip_prefix(&name)?.strip_prefix('.')?.to_owned())
            })
            .collect();
        exts.sort_by_key(|e| {
            let rank = FILE_ORDER.iter().position(|o| o == e);
            (rank.unwrap_or(FILE_ORDER.len()), e.clone())
        });
        for stale in COMPANIONS {
            let p = with_ext(&self.target, stale);
            if !exts.iter().any(|e| e == stale) && p.exists() {
                std::fs::remove_file(&p)
                    .with_context(|| format!("cannot remove the stale {}", p.display()))?;
            }
        }
        Ok(exts.iter().map(|e| with_ext(&self.target, e)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Cache;
    use crate::BvWebGraph;

    fn arcs() -> VecGraph {
        let mut g = VecGraph::empty(4);
        g.add_arcs([(0, 1), (0, 2), (1, 2), (2, 0), (3, 3)]);
        g
    }

    /// The successors of every node, read with webgraph's own loader from the files beside
    /// `base` (what webgraph-rs and its Python bindings do), not through crawlrank's cache.
    fn read_beside(base: &Path) -> Vec<Vec<usize>> {
        let g = webgraph::graphs::bvgraph::BvGraph::with_basename(base)
            .endianness::<BE>()
            .load()
            .unwrap();
        (0..g.num_nodes())
            .map(|v| g.successors(v).collect())
            .collect()
    }

    const EXPECTED: [&[usize]; 4] = [&[1, 2], &[2], &[0], &[3]];

    #[test]
    fn sequential_and_parallel_outputs_have_their_ef_and_urls_beside_them() {
        let dir = tempfile::tempdir().unwrap();
        // (Dot-free names: webgraph's own loader cuts a basename at its last dot.)
        for (name, parallel) in [("seq", false), ("par", true)] {
            let out = dir.path().join(name);
            let w = GraphWriter::new(&with_ext(&out, "graph")).unwrap();
            assert_eq!(w.basename(), out);
            let c = if parallel {
                w.par_compress(&arcs(), None).unwrap()
            } else {
                w.compress(arcs()).unwrap()
            };
            assert_eq!((c.properties.nodes, c.properties.arcs), (4, 5));
            let bytes = std::fs::metadata(w.staged_path(".graph")).unwrap().len();
            assert!(c.bits > 0 && c.bits <= 8 * bytes);
            w.write_urls(["http://a.test/", "http://a.test/1", "", "http://b.test/"])
                .unwrap();
            assert!(!with_ext(&out, "graph").exists(), "nothing before commit");
            let files = w.commit().unwrap();
            let exts = ["graph", "offsets", "properties", "ef", "urls"];
            assert_eq!(files, exts.map(|e| with_ext(&out, e)));
            assert_eq!(read_beside(&out), EXPECTED);
        }
        // Only the outputs and no leftover staging or scratch directory.
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names.len(), 10, "{names:?}");
        assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
    }

    #[test]
    fn a_new_graph_removes_the_companions_it_lacks_and_the_cache_opens_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("g.v1");
        for stale in ["urls", "urls.gz", "ids", "ef"] {
            std::fs::write(with_ext(&out, stale), "old\n").unwrap();
        }
        let w = GraphWriter::new(&out).unwrap().without_ef();
        w.compress(arcs()).unwrap();
        let files = w.commit().unwrap();
        assert_eq!(
            files,
            ["graph", "offsets", "properties"].map(|e| with_ext(&out, e))
        );
        for stale in ["urls", "urls.gz", "ids", "ef"] {
            assert!(!with_ext(&out, stale).exists(), "{stale} left behind");
        }
        let cache = Cache::new(dir.path().join("cache"));
        let g = BvWebGraph::open(&out, &cache).unwrap();
        assert_eq!(g.num_arcs(), 5);
        assert!(
            !with_ext(&out, "ef").exists(),
            "the cache keeps the input's .ef"
        );
    }

    #[test]
    fn an_abandoned_or_uncompressed_graph_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("g");
        let w = GraphWriter::new(&out).unwrap();
        w.write_urls(["http://a.test/"]).unwrap();
        let err = format!("{:#}", w.commit().unwrap_err());
        assert!(err.contains("before its graph was compressed"), "{err}");
        drop(GraphWriter::new(&out).unwrap());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let err = format!("{:#}", GraphWriter::new(Path::new("")).unwrap_err());
        assert!(err.contains("not a valid output basename"), "{err}");
    }
}
