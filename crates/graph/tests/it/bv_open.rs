//! Opening BVGraphs: Java-written LAW data, our own output, derived files in the cache, and
//! every way a graph on disk can be broken.

use crawlrank_graph::bv::{self, with_ext, BvWebGraph};
use crawlrank_graph::testdata::shared_data_or_skip;
use crawlrank_graph::{Cache, Csr};
use crawlrank_testkit::{five_pages, modular_chords};
use std::path::{Path, PathBuf};
use webgraph::prelude::*;

/// Writes `g` as a BVGraph at `dir/name` and returns the basename.
fn write(dir: &Path, name: &str, g: &Csr) -> PathBuf {
    let base = dir.join(name);
    let mut vg = VecGraph::empty(g.num_nodes());
    vg.add_arcs(g.arcs().map(|(s, d)| (s as usize, d as usize)));
    bv::write_bvgraph(&vg, &base).unwrap();
    base
}

/// A cache in a fresh temporary folder, for a test of its own; the folder goes when the returned
/// guard is dropped, so keep it as long as the cache.
fn temp_cache() -> (tempfile::TempDir, Cache) {
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(cache_dir.path());
    (cache_dir, cache)
}

/// Replaces `from` by `to` in the `.properties` of the graph at `base`, and returns the file's
/// text as it was.
fn edit_properties(base: &Path, from: &str, to: &str) -> String {
    let path = with_ext(base, "properties");
    let props = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, props.replace(from, to)).unwrap();
    props
}

/// The five-page example with a sixth page: 6 nodes, 11 arcs.
fn sample() -> Csr {
    five_pages()
        .with_nodes(6)
        .with_arcs([(4, 5), (5, 0), (5, 1)])
        .csr()
}

#[test]
fn cnr2000_opens_without_writing_beside_it() {
    let Some(data) = shared_data_or_skip("cnr-2000/cnr-2000.graph") else {
        return;
    };
    let base = data.join("cnr-2000/cnr-2000");
    let (cache_dir, cache) = temp_cache();
    let g = BvWebGraph::open(&base, &cache).unwrap();
    assert_eq!(g.num_nodes(), 325_557);
    assert_eq!(g.num_arcs(), 3_216_152);
    assert!(
        !with_ext(&base, "ef").exists(),
        "the .ef must go to the cache"
    );
    assert!(g.cache_dir().starts_with(cache_dir.path()));
    let csr = g.to_csr().unwrap();
    let loops = (0..csr.num_nodes())
        .filter(|&v| csr.successors(v).contains(&(v as u32)))
        .count();
    let dangling = (0..csr.num_nodes())
        .filter(|&v| csr.outdegree(v) == 0)
        .count();
    assert_eq!((loops, dangling), (87_442, 78_056));
    // Random access agrees with the sequential decode.
    for v in [0usize, 1, 4_242, 325_556] {
        let s: Vec<u32> = g.bv().successors(v).map(|x| x as u32).collect();
        assert_eq!(s, csr.successors(v));
    }
    // LAW's transpose beside the graph is used as is, and it is the transpose.
    assert_eq!(
        g.transpose_basename().unwrap(),
        data.join("cnr-2000/cnr-2000-t")
    );
    let t = g.open_transpose(&cache).unwrap().to_csr().unwrap();
    assert_eq!(t, csr.transpose());
    // A second open reuses the verified cache entry.
    assert_eq!(
        BvWebGraph::open(&base, &cache).unwrap().num_arcs(),
        3_216_152
    );
}

/// Opens the graph at `base` through `cache`, checks that it decodes to `g` and its transpose to
/// `g`'s, and returns it.
fn open_as(base: &Path, cache: &Cache, g: &Csr) -> BvWebGraph {
    let opened = BvWebGraph::open(base, cache).unwrap();
    assert_eq!(
        opened.to_csr().unwrap(),
        *g,
        "the graph at {}",
        base.display()
    );
    let t = opened.open_transpose(cache).unwrap().to_csr().unwrap();
    assert_eq!(t, g.transpose(), "the transpose of {}", base.display());
    opened
}

/// [`sample`] written as a BVGraph in a fresh folder, with a fresh cache to open it through.
struct WrittenSample {
    dir: tempfile::TempDir,
    cache_dir: tempfile::TempDir,
    cache: Cache,
    g: Csr,
    base: PathBuf,
}

impl WrittenSample {
    /// Writes the sample at the basename `name`.
    fn new(name: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (cache_dir, cache) = temp_cache();
        let g = sample();
        let base = write(dir.path(), name, &g);
        Self {
            dir,
            cache_dir,
            cache,
            g,
            base,
        }
    }
}

#[test]
fn our_graphs_round_trip_and_transpose_into_the_cache() {
    let s = WrittenSample::new("sample");
    let opened = open_as(&with_ext(&s.base, "graph"), &s.cache, &s.g);
    let tb = opened.transpose_basename().unwrap();
    assert!(
        tb.starts_with(s.cache_dir.path()),
        "transpose built in the cache, got {}",
        tb.display()
    );
    let names: Vec<_> = std::fs::read_dir(s.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names.len(),
        3,
        "nothing but the graph's own files in its folder: {names:?}"
    );
}

/// Several processes or threads wanting the same missing transpose at once build it once:
/// the others wait for it and use its files, never replacing them with a build of their own.
#[test]
fn a_transpose_wanted_at_once_is_built_once() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let (_cache_dir, cache) = temp_cache();
    // Large enough (10^6 arcs) that a build takes longer than the callers take to start.
    let g = modular_chords(
        100_000,
        &[
            (1, 1),
            (7, 3),
            (13, 5),
            (31, 7),
            (97, 11),
            (3, 2),
            (5, 4),
            (11, 6),
            (17, 8),
            (19, 9),
        ],
    )
    .csr();
    let base = write(dir.path(), "shared", &g);
    let start = std::sync::Barrier::new(4);
    let seen: Vec<(PathBuf, u64)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let opened = BvWebGraph::open(&base, &cache).unwrap();
                    start.wait();
                    let tb = opened.transpose_basename().unwrap();
                    let inode = std::fs::metadata(with_ext(&tb, "graph")).unwrap().ino();
                    (tb, inode)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let last = std::fs::metadata(with_ext(&seen[0].0, "graph"))
        .unwrap()
        .ino();
    for (tb, inode) in &seen {
        assert_eq!(tb, &seen[0].0);
        assert_eq!(
            *inode, last,
            "a later build replaced the transpose a caller was given"
        );
    }
    open_as(&base, &cache, &g);
}

#[test]
fn basenames_with_dots_work() {
    let s = WrittenSample::new("web.v1");
    assert!(s.dir.path().join("web.v1.graph").is_file());
    open_as(&s.base, &s.cache, &s.g);
}

fn open_err(base: &Path) -> String {
    let cache_dir = tempfile::tempdir().unwrap();
    let err = BvWebGraph::open(base, &Cache::new(cache_dir.path())).unwrap_err();
    format!("{err:#}")
}

#[test]
fn missing_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let msg = open_err(&dir.path().join("nothing"));
    assert!(msg.contains("nothing.graph is missing"), "{msg}");
    let base = write(dir.path(), "g", &sample());
    std::fs::remove_file(with_ext(&base, "properties")).unwrap();
    assert!(open_err(&base).contains("g.properties is missing"));
}

#[test]
fn truncated_graph_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    // A graph big enough that truncation cuts through real data.
    let chords: Vec<(u32, u32)> = (1..8).map(|k| (7, k * 13)).collect();
    let base = write(dir.path(), "big", &modular_chords(2_000, &chords).csr());
    let gf = with_ext(&base, "graph");
    let bytes = std::fs::read(&gf).unwrap();
    std::fs::write(&gf, &bytes[..bytes.len() / 2]).unwrap();
    let msg = open_err(&base);
    assert!(
        msg.contains("corrupt") || msg.contains("truncated"),
        "{msg}"
    );
}

#[test]
fn corrupt_bytes_are_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let n = 500u32;
    let chords: Vec<(u32, u32)> = (1..6).map(|k| (31, k * 17)).collect();
    let base = write(dir.path(), "g", &modular_chords(n, &chords).csr());
    let gf = with_ext(&base, "graph");
    let clean = std::fs::read(&gf).unwrap();
    // Flip bytes at many places; every open must either fail cleanly or (if the damage
    // happens to decode consistently) yield a graph that passed verification.
    for at in (0..clean.len()).step_by(clean.len() / 40 + 1) {
        let mut bytes = clean.clone();
        bytes[at] ^= 0xA5;
        std::fs::write(&gf, &bytes).unwrap();
        let cache_dir = tempfile::tempdir().unwrap();
        if let Ok(g) = BvWebGraph::open(&base, &Cache::new(cache_dir.path())) {
            let csr = g.to_csr().unwrap();
            assert!(csr.arcs().all(|(_, d)| d < n));
        }
    }
}

#[test]
fn bad_properties_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "g", &sample());
    edit_properties(&base, "arcs=11", "arcs=12");
    assert!(
        open_err(&base).contains("declare 12"),
        "{}",
        open_err(&base)
    );
    std::fs::write(
        with_ext(&base, "properties"),
        "this is not a properties file\n",
    )
    .unwrap();
    assert!(open_err(&base).contains("properties"));
}

#[test]
fn the_verified_mark_vouches_for_every_file_it_checked() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "g", &sample());
    let (_cache_dir, cache) = temp_cache();
    assert_eq!(BvWebGraph::open(&base, &cache).unwrap().num_arcs(), 11);
    // The same .graph, another .properties: checked again (and refused), not loaded on the
    // strength of the first check.
    let props = edit_properties(&base, "arcs=11", "arcs=12");
    let err = format!("{:#}", BvWebGraph::open(&base, &cache).unwrap_err());
    assert!(err.contains("declare 12"), "{err}");
    // Put back: it opens again.
    std::fs::write(with_ext(&base, "properties"), &props).unwrap();
    assert_eq!(BvWebGraph::open(&base, &cache).unwrap().num_arcs(), 11);
    // An .offsets that appears after the check is checked too.
    let of = with_ext(&base, "offsets");
    let offsets = std::fs::read(&of).unwrap();
    std::fs::write(&of, &offsets[..offsets.len() / 2]).unwrap();
    let err = format!("{:#}", BvWebGraph::open(&base, &cache).unwrap_err());
    assert!(err.contains("offsets"), "{err}");
}

#[test]
fn a_node_count_the_bitstream_cannot_hold_is_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "g", &sample());
    // 4·10^9 nodes would be 32 GB of offsets for a bitstream of a few bytes.
    edit_properties(&base, "nodes=6", "nodes=4000000000");
    let msg = open_err(&base);
    assert!(msg.contains("declare 4000000000 nodes"), "{msg}");
}
