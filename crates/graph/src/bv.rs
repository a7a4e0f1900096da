//! Opening BVGraphs — Java WebGraph's or webgraph-rs's — safely, with derived files in the cache.
//!
//! The `webgraph` crate loads a random-access BVGraph from `BASENAME.graph`,
//! `BASENAME.properties` and an Elias–Fano index `BASENAME.ef`, all beside each other. Java
//! WebGraph writes no `.ef` (only `.offsets`), and the folder holding a graph may not be ours
//! to write into, so [`BvWebGraph::open`] builds the `.ef` in the [`Cache`] next to symbolic
//! links to the input's files and loads the graph from there.
//!
//! `webgraph`'s decoders trust their input: a truncated or corrupt bitstream makes them panic.
//! The first time a graph is seen we therefore check it end to end — every offset against the
//! bitstream, every outdegree and successor against the node count, the arc count against the
//! properties — and remember in the cache that it passed. Afterwards opening is instantaneous.
//! The memory is remembered for the files as they were checked: the marker names the size and
//! modification time of the `.graph`, the `.properties` and the `.offsets`, and a graph whose
//! files differ from it in any way is checked again. Nothing the `.properties` declares is
//! trusted before the check either: a node count larger than the bitstream could hold (each
//! node takes at least one bit) is an error before anything is allocated for it.

use crate::cache::Cache;
use crate::csr::Csr;
use crate::hosts::Hosts;
use crate::page_ids::PageIds;
use crate::urls;
use anyhow::{bail, ensure, Context, Result};
use dsi_bitstream::prelude::*;
use lender::prelude::*;
use std::path::{Path, PathBuf};
use webgraph::graphs::bvgraph::{self, BvGraph, BvGraphSeq, DynCodesDecoderFactory, EF};
use webgraph::prelude::*;
use webgraph::utils::MmapHelper;

// The path rules moved to `basename`; they stay reachable here, where callers found them.
pub use crate::basename::{basename_of, with_ext};

/// The concrete random-access BVGraph type crawlrank loads: big-endian, codes read from the
/// properties, graph and index memory-mapped.
pub type BvRandom = BvGraph<DynCodesDecoderFactory<BE, MmapHelper<u32>, EF>>;

/// Suffix LAW and webgraph use for a graph's transpose (`cnr-2000` → `cnr-2000-t`).
pub const TRANSPOSE_SUFFIX: &str = "-t";

/// The file, in a graph's cache directory, that says its files passed the check: one line per
/// file it vouches for ([`verified_fingerprint`]).
const VERIFIED_MARKER: &str = "verified-v1";

/// What the verified marker vouches for: the `.graph`, `.properties` and `.offsets` of
/// `basename` as they are now — each file's size and modification time (or that it is
/// absent), and the `.properties`' own text, which is small and may change without changing
/// its size within one tick of the file system's clock.
fn verified_fingerprint(basename: &Path) -> Result<String> {
    use std::hash::{Hash, Hasher};
    let mut out = String::new();
    for ext in ["graph", "properties", "offsets"] {
        let path = with_ext(basename, ext);
        match std::fs::metadata(&path) {
            Ok(m) => {
                let mtime = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                out.push_str(&format!("{ext} {} {mtime}", m.len()));
                if ext == "properties" {
                    let text = std::fs::read(&path)
                        .with_context(|| format!("cannot read {}", path.display()))?;
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    text.hash(&mut h);
                    out.push_str(&format!(" {:016x}", h.finish()));
                }
                out.push('\n');
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                out.push_str(&format!("{ext} absent\n"));
            }
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }
    Ok(out)
}

/// A random-access BVGraph, opened from a basename, with its cache directory.
pub struct BvWebGraph {
    basename: PathBuf,
    cache_dir: PathBuf,
    graph: BvRandom,
}

impl std::fmt::Debug for BvWebGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BvWebGraph")
            .field("basename", &self.basename)
            .field("nodes", &self.graph.num_nodes())
            .field("arcs", &self.graph.num_arcs())
            .finish()
    }
}

/// Whether `basename` names a BVGraph (its `.graph` and `.properties` exist).
pub fn is_bvgraph(basename: &Path) -> bool {
    let b = basename_of(basename);
    with_ext(&b, "graph").is_file() && with_ext(&b, "properties").is_file()
}

impl BvWebGraph {
    /// Opens the BVGraph `basename` (with or without the `.graph` extension), verifying it and
    /// building its `.ef` index in `cache` the first time.
    pub fn open(basename: &Path, cache: &Cache) -> Result<Self> {
        let basename = basename_of(basename);
        let graph_file = with_ext(&basename, "graph");
        let props_file = with_ext(&basename, "properties");
        for f in [&graph_file, &props_file] {
            if !f.is_file() {
                bail!(
                    "{} is not a BVGraph: {} is missing",
                    basename.display(),
                    f.display()
                );
            }
        }
        let props = read_properties(&props_file)?;
        if props.endianness != "big" {
            bail!(
                "{}: {}-endian BVGraphs are not supported; recompress it big-endian (the Java \
                 and webgraph-rs default)",
                props_file.display(),
                props.endianness
            );
        }
        let cache_dir = cache.dir_for(&basename, &graph_file)?;
        let cached = cache_dir.join(dotless_name(&basename)?);
        link_into(&graph_file, &with_ext(&cached, "graph"))?;
        link_into(&props_file, &with_ext(&cached, "properties"))?;

        let verified = cache_dir.join(VERIFIED_MARKER);
        let fingerprint = verified_fingerprint(&basename)?;
        let vouched = std::fs::read_to_string(&verified).is_ok_and(|m| m == fingerprint);
        if !vouched || !with_ext(&cached, "ef").exists() {
            let offsets = verify_and_collect_offsets(&basename, &cached, &props)?;
            write_ef(&with_ext(&cached, "ef"), &offsets, graph_bits(&graph_file)?)?;
            crate::atomic::write_file(&verified, |w| {
                use std::io::Write;
                Ok(w.write_all(fingerprint.as_bytes())?)
            })?;
        }
        let graph = BvGraph::with_basename(&cached)
            .load()
            .with_context(|| format!("cannot load the BVGraph {}", basename.display()))?;
        Ok(Self {
            basename,
            cache_dir,
            graph,
        })
    }

    /// The basename the user named.
    pub fn basename(&self) -> &Path {
        &self.basename
    }

    /// This graph's own directory in the cache, for files derived from it.
    pub fn cache_dir(&self) -> &Path {
        &self.cache_dir
    }

    /// The cache this graph was opened from (the parent of [`cache_dir`](Self::cache_dir)).
    pub fn cache(&self) -> Cache {
        Cache::new(self.cache_dir.parent().unwrap_or(&self.cache_dir))
    }

    /// The underlying `webgraph` graph (random access and sequential iteration).
    pub fn bv(&self) -> &BvRandom {
        &self.graph
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.graph.num_nodes()
    }

    /// Number of arcs.
    pub fn num_arcs(&self) -> u64 {
        self.graph.num_arcs()
    }

    /// The URL of every node, from `BASENAME.urls` (or `.urls.gz`), when the graph has them.
    pub fn urls(&self) -> Result<Option<Vec<String>>> {
        if urls::find_urls(&self.basename).is_none() {
            return Ok(None);
        }
        urls::read_graph_urls(&self.basename, Some(self.num_nodes())).map(Some)
    }

    /// The ids users see for the pages (see [`page_ids`](crate::page_ids)): from
    /// `BASENAME.ids` (checked) when the graph has one, else the nodes `0..n` themselves.
    pub fn page_ids(&self) -> Result<PageIds> {
        PageIds::of_graph(&self.basename, self.num_nodes())
    }

    /// The host of every node, from the URLs, when the graph has them.
    pub fn hosts(&self) -> Result<Option<Hosts>> {
        Ok(self.urls()?.map(Hosts::from_urls))
    }

    /// Decodes the whole graph into a compact in-memory [`Csr`] (4 bytes per arc, 8 per node).
    pub fn to_csr(&self) -> Result<Csr> {
        Csr::from_sequential(&self.graph)
    }

    /// The basename of this graph's transpose: `BASENAME-t` beside it when that exists and
    /// has the same numbers of nodes and arcs (LAW's convention), otherwise one built in the
    /// cache with webgraph's external-memory sort.
    pub fn transpose_basename(&self) -> Result<PathBuf> {
        let mut beside = self.basename.as_os_str().to_owned();
        beside.push(TRANSPOSE_SUFFIX);
        let beside = PathBuf::from(beside);
        if is_bvgraph(&beside) {
            let p = read_properties(&with_ext(&beside, "properties"))?;
            if p.nodes == self.num_nodes() && p.arcs == self.num_arcs() {
                return Ok(beside);
            }
        }
        let built = self.cache_dir.join(format!(
            "{}{TRANSPOSE_SUFFIX}",
            dotless_name(&self.basename)?
        ));
        if !is_bvgraph(&built) {
            // Processes sharing the cache (a `--hostfile` run's, several commands at once)
            // take turns: the first builds, the others wait and find it built. Without the
            // lock each would sort the whole graph again and replace the others' files.
            let lock_path = with_ext(&built, "lock");
            let lock = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock_path)
                .with_context(|| format!("cannot create {}", lock_path.display()))?;
            lock.lock()
                .with_context(|| format!("cannot lock {}", lock_path.display()))?;
            if !is_bvgraph(&built) {
                write_transpose(&self.graph, &built)?;
            }
        }
        Ok(built)
    }

    /// Opens this graph's transpose (see [`transpose_basename`](Self::transpose_basename)).
    pub fn open_transpose(&self, cache: &Cache) -> Result<BvWebGraph> {
        BvWebGraph::open(&self.transpose_basename()?, cache)
    }
}

/// What crawlrank needs from a `.properties` file.
#[derive(Debug, Clone)]
pub struct Properties {
    /// Number of nodes (below 2³²−1).
    pub nodes: usize,
    /// Number of arcs.
    pub arcs: u64,
    /// Byte order of the bitstream, `"big"` or `"little"` (`"big"` when the file names none).
    pub endianness: String,
    /// Compression window: how many previous lists a list may be copied from.
    pub window: usize,
    /// Minimum length of an interval of consecutive successors.
    pub min_interval: usize,
}

/// Reads and checks a BVGraph `.properties` file.
pub fn read_properties(path: &Path) -> Result<Properties> {
    let (nodes, arcs, flags) = bvgraph::parse_properties::<BE>(path)
        .with_context(|| format!("{} is not a valid BVGraph properties file", path.display()))?;
    let endianness =
        bvgraph::get_endianness(path.with_extension("")).unwrap_or_else(|_| "big".to_string());
    ensure!(
        nodes < u32::MAX as usize,
        "{}: {nodes} nodes; crawlrank supports up to 2^32-1 nodes",
        path.display()
    );
    Ok(Properties {
        nodes,
        arcs,
        endianness,
        window: flags.compression_window,
        min_interval: flags.min_interval_length,
    })
}

fn graph_bits(graph_file: &Path) -> Result<u64> {
    Ok(8 * std::fs::metadata(graph_file)
        .with_context(|| format!("cannot read {}", graph_file.display()))?
        .len())
}

/// Symlinks `src` to `dst` (replacing a stale link), so the cache can hold an `.ef` beside
/// the input's bitstream without copying it.
fn link_into(src: &Path, dst: &Path) -> Result<()> {
    let src =
        std::fs::canonicalize(src).with_context(|| format!("cannot resolve {}", src.display()))?;
    if let Ok(existing) = std::fs::read_link(dst) {
        if existing == src {
            return Ok(());
        }
    }
    // The link is made under a name of its own, then renamed over `dst`: a rename replaces
    // atomically, so several threads or processes opening the same graph at once never meet a
    // moment with no link, nor each other's half-made one (removing `dst` first and linking
    // after raced: one caller's link made another's fail with "File exists").
    #[cfg(unix)]
    {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut tmp = dst.as_os_str().to_owned();
        tmp.push(format!(".link-{}-{n}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&src, &tmp)
            .and_then(|()| std::fs::rename(&tmp, dst))
            .inspect_err(|_| {
                let _ = std::fs::remove_file(&tmp);
            })
            .with_context(|| format!("cannot link {} into the cache", src.display()))?;
    }
    #[cfg(not(unix))]
    let _ = std::fs::remove_file(dst);
    #[cfg(not(unix))]
    std::fs::copy(&src, dst)
        .with_context(|| format!("cannot copy {} into the cache", src.display()))?;
    Ok(())
}

/// Runs `f`, turning a panic inside `webgraph`'s decoders into an error, and keeps the panic
/// message off the terminal (the error we return says what happened).
fn guard<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(prev);
    match r {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("decoder failure");
            bail!("{what}: the bitstream is corrupt or truncated ({msg})")
        }
    }
}

/// Checks the BVGraph `basename` end to end and returns the bit offset of every node (n + 1
/// values). `loadable` is a dot-free basename linking to the same files, for webgraph.
fn verify_and_collect_offsets(
    basename: &Path,
    loadable: &Path,
    props: &Properties,
) -> Result<Vec<u64>> {
    let graph_file = with_ext(basename, "graph");
    let bits = graph_bits(&graph_file)?;
    let n = props.nodes;
    let what = format!("BVGraph {}", basename.display());
    ensure!(
        n == 0 || bits > 0,
        "{what}: {} is empty but the properties declare {n} nodes",
        graph_file.display()
    );
    // The offsets below take 8 bytes a node: a node count only the properties vouch for is
    // checked against the bitstream's real size first (every node's outdegree takes a bit
    // at least), so a corrupt `.properties` is an error, not an allocation of gigabytes.
    ensure!(
        n as u64 <= bits,
        "{what}: the properties declare {n} nodes but {} holds {bits} bits, fewer than one a \
         node (corrupt or mismatched .properties)",
        graph_file.display()
    );
    let seq = BvGraphSeq::with_basename(loadable)
        .endianness::<BE>()
        .load()
        .with_context(|| format!("cannot open {what}"))?;

    // Pass 1: outdegrees and bit positions, without materialising successor lists (so that a
    // garbage outdegree cannot make the decoder allocate wildly).
    let offsets = guard(&what, || {
        let mut it = seq.offset_deg_iter();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut arcs = 0u64;
        for node in 0..n {
            let pos = it.get_pos();
            ensure!(
                pos <= bits,
                "{what}: node {node} starts past the end of {} (truncated file?)",
                graph_file.display()
            );
            offsets.push(pos);
            let d = it.next_degree()?;
            ensure!(
                d <= n,
                "{what}: node {node} has outdegree {d} but the graph has {n} nodes (corrupt file)"
            );
            arcs += d as u64;
        }
        let end = it.get_pos();
        ensure!(
            end <= bits,
            "{what}: the bitstream ends before the last node (truncated {})",
            graph_file.display()
        );
        offsets.push(end);
        ensure!(
            arcs == props.arcs,
            "{what}: the bitstream holds {arcs} arcs but the properties declare {}",
            props.arcs
        );
        Ok(offsets)
    })?;

    // The Java `.offsets` file, when present, must agree with the bitstream.
    let offsets_file = with_ext(basename, "offsets");
    if offsets_file.is_file() {
        guard(&format!("{}", offsets_file.display()), || {
            let mut r = buf_bit_reader::from_path::<BE, u32>(&offsets_file)?;
            let mut acc = 0u64;
            for (node, &expected) in offsets.iter().enumerate() {
                acc += r.read_gamma().with_context(|| {
                    format!("{} ends at node {node} (truncated)", offsets_file.display())
                })?;
                ensure!(
                    acc == expected,
                    "{} disagrees with {} at node {node}: one of them is corrupt",
                    offsets_file.display(),
                    graph_file.display()
                );
            }
            Ok(())
        })?;
    }

    // Pass 2: successors in range and strictly increasing.
    guard(&what, || {
        let mut it = seq.iter();
        while let Some((node, succ)) = it.next() {
            let mut prev: Option<usize> = None;
            for s in succ {
                ensure!(
                    s < n,
                    "{what}: node {node} links to {s}, outside 0..{n} (corrupt file)"
                );
                ensure!(
                    prev.is_none_or(|p| p < s),
                    "{what}: successors of node {node} are not strictly increasing (corrupt file)"
                );
                prev = Some(s);
            }
        }
        Ok(())
    })?;
    Ok(offsets)
}

/// Serialises the Elias–Fano index of `offsets` to `ef_path`, atomically.
fn write_ef(ef_path: &Path, offsets: &[u64], bits: u64) -> Result<()> {
    let upper = offsets.last().copied().unwrap_or(0).max(bits);
    let mut efb = sux::dict::EliasFanoBuilder::new(offsets.len(), upper);
    for &o in offsets {
        efb.push(o);
    }
    let ef = bvgraph::ef_from_builder(efb).context("cannot build the Elias–Fano index")?;
    crate::atomic::write_file(ef_path, |w| {
        // SAFETY: epserde serialisation of a plain owned structure.
        unsafe { epserde::ser::Serialize::serialize(&ef, w) }
            .with_context(|| format!("cannot write {}", ef_path.display()))?;
        Ok(())
    })
}

/// Writes the transpose of `graph` as a BVGraph at `basename`, sorting arcs in external memory
/// in the system temporary directory (memory stays bounded on billion-arc graphs).
pub fn write_transpose(graph: &impl SequentialGraph, basename: &Path) -> Result<()> {
    let staged = crate::atomic::StagedBasename::new(basename)?;
    let sorted = webgraph::transform::transpose_seq(
        graph,
        webgraph::utils::MemoryUsage::default(),
        &mut dsi_progress_logger::no_logging![],
    )
    .context("cannot sort the arcs of the transpose")?;
    write_bvgraph(sorted, &staged.basename())?;
    staged.commit().map(drop)
}

/// Compresses a sequential graph to a BVGraph at `basename` (`.graph`, `.offsets`,
/// `.properties`) with the Java defaults. Callers stage `basename` for atomicity.
pub fn write_bvgraph(graph: impl SequentialGraph, basename: &Path) -> Result<u64> {
    // webgraph derives file names with `Path::with_extension`, which would turn `g.v1` into
    // `g.graph`: compress under a dot-free name and rename.
    let plain = basename.with_file_name(dotless_name(basename)?);
    let bits = BvComp::with_basename(&plain)
        .comp_graph::<BE>(graph)
        .with_context(|| format!("cannot compress the graph to {}", basename.display()))?;
    if plain != basename {
        for ext in ["graph", "offsets", "properties"] {
            let (from, to) = (with_ext(&plain, ext), with_ext(basename, ext));
            std::fs::rename(&from, &to)
                .with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?;
        }
    }
    Ok(bits)
}

/// The file name of `basename` with dots replaced, for paths webgraph builds itself.
fn dotless_name(basename: &Path) -> Result<String> {
    let name = basename
        .file_name()
        .with_context(|| format!("{} is not a graph basename", basename.display()))?;
    Ok(name.to_string_lossy().replace('.', "_"))
}
