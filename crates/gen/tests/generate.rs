//! The generator end to end: determinism, the files it writes, their statistics, bad input.

use crawlrank_gen::{generate, generate_with_params, GenConfig, ModelParams, SyntheticWeb};
use crawlrank_graph::bv::with_ext;
use crawlrank_graph::stats::GraphStats;
use crawlrank_graph::{BvWebGraph, Cache, Csr};
use crawlrank_testkit::{file_names, write_file};
use lender::prelude::*;
use std::path::{Path, PathBuf};
use webgraph::prelude::*;

const EXTS: [&str; 5] = ["graph", "offsets", "properties", "ef", "urls"];

fn read_all(base: &Path) -> Vec<Vec<u8>> {
    EXTS.iter()
        .map(|e| std::fs::read(with_ext(base, e)).unwrap())
        .collect()
}

fn cfg(pages: u64, seed: u64) -> GenConfig {
    GenConfig {
        pages,
        hosts: None,
        outdegree: 10.0,
        seed,
    }
}

/// Host ids from a `.urls` file, checking that hosts are contiguous.
fn hosts_of(urls: &str) -> Vec<u32> {
    let mut ids = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut last: Option<&str> = None;
    for line in urls.lines() {
        let rest = line.strip_prefix("http://").expect("http:// URL");
        let host = rest.split('/').next().unwrap();
        if last != Some(host) {
            assert!(
                seen.insert(host.to_string()),
                "host {host} is not contiguous"
            );
            last = Some(host);
        }
        ids.push(seen.len() as u32 - 1);
    }
    ids
}

#[test]
fn same_seed_same_files_other_seed_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b.v1"); // a dot in the basename must not be cut
    let c = dir.path().join("c");
    let ra = generate(&cfg(20_000, 7), &a).unwrap();
    let rb = generate(&cfg(20_000, 7), &b).unwrap();
    generate(&cfg(20_000, 8), &c).unwrap();
    assert_eq!(read_all(&a), read_all(&b));
    let (fa, fc) = (read_all(&a), read_all(&c));
    assert_ne!(fa[0], fc[0], "another seed, another graph");
    assert_ne!(fa[4], fc[4], "another seed, other URLs");
    assert_eq!((ra.arcs, ra.hosts), (rb.arcs, rb.hosts));
    assert!(ra.to_string().starts_with("20000 pages, "), "{ra}");
    assert_eq!(ra.files, EXTS.map(|e| with_ext(&a, e)).to_vec());
    // Nothing but the outputs is left in the directory (no staging, no work files).
    let names = file_names(dir.path());
    assert_eq!(names.len(), 15, "{names:?}");
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
}

#[test]
fn output_does_not_depend_on_the_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut params = ModelParams::default();
    params.chunk_pages = 4_000; // several chunks compressed in parallel
    let run = |threads: usize, name: &str| -> PathBuf {
        let base = dir.path().join(name);
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| generate_with_params(&cfg(30_000, 3), &params, &base).unwrap());
        base
    };
    let one = run(1, "one");
    let two = run(2, "two");
    let three = run(3, "three");
    assert_eq!(read_all(&one), read_all(&two));
    assert_eq!(read_all(&one), read_all(&three));
}

#[test]
fn graph_opens_verified_and_matches_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("web");
    let config = cfg(30_000, 11);
    let report = generate(&config, &base).unwrap();
    let cache = Cache::new(dir.path().join("cache"));
    let g = BvWebGraph::open(&base, &cache).unwrap();
    assert_eq!(g.num_nodes(), 30_000);
    assert_eq!(g.num_arcs(), report.arcs);
    // The model, iterated directly, is the graph that was compressed.
    let web = SyntheticWeb::new(&config).unwrap();
    let decoded = g.to_csr().unwrap();
    assert_eq!(Csr::from_sequential(&web).unwrap(), decoded);
    // Random access through our own `.ef` agrees too.
    let own = webgraph::graphs::bvgraph::BvGraph::with_basename(&base)
        .endianness::<dsi_bitstream::prelude::BE>()
        .load()
        .unwrap();
    for v in [0usize, 1, 12_345, 29_999] {
        let s: Vec<u32> = own.successors(v).map(|x| x as u32).collect();
        assert_eq!(s, decoded.successors(v));
    }
    // Starting the model in the middle of a host regenerates that host's prefix.
    for from in [0usize, 1, 777, 15_000, 29_999] {
        let mut it = web.iter_from(from);
        let (v, succ) = it.next().unwrap();
        assert_eq!(v, from);
        let s: Vec<u32> = succ.into_iter().map(|x| x as u32).collect();
        assert_eq!(s, decoded.successors(from));
    }
    assert!(web.iter_from(30_000).next().is_none());
}

#[test]
fn urls_one_per_node_sorted_hosts_contiguous() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("web");
    let report = generate(&cfg(50_000, 5), &base).unwrap();
    let text = std::fs::read_to_string(with_ext(&base, "urls")).unwrap();
    let urls: Vec<&str> = text.lines().collect();
    assert_eq!(urls.len(), 50_000);
    assert!(text.ends_with('\n'));
    assert!(
        urls.windows(2).all(|w| w[0] < w[1]),
        "URLs are strictly increasing (LAW's lexicographic order, no duplicates)"
    );
    let hosts = hosts_of(&text);
    assert_eq!(*hosts.last().unwrap() as u64 + 1, report.hosts);
    // Every host starts with its home page, and names use reserved TLDs.
    let mut last = u32::MAX;
    for (url, &h) in urls.iter().zip(&hosts) {
        if h != last {
            assert_eq!(url.matches('/').count(), 3, "{url} should be a home page");
            assert!(url.ends_with('/'));
            let host = &url["http://".len()..url.len() - 1];
            assert!(
                [".example", ".test", ".invalid"]
                    .iter()
                    .any(|t| host.ends_with(t)),
                "{host}"
            );
            last = h;
        }
    }
    // Some registrable domains have several hosts.
    let domains: std::collections::HashSet<&str> = urls
        .iter()
        .map(|u| {
            let host = u["http://".len()..].split('/').next().unwrap();
            let parts: Vec<&str> = host.rsplitn(3, '.').collect();
            &host[host.len() - parts[0].len() - parts[1].len() - 1..]
        })
        .collect();
    assert_eq!(domains.len() as u64, report.domains);
    assert!(report.domains < report.hosts);
}

#[test]
fn statistics_look_like_a_crawl() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("web");
    generate(&cfg(100_000, 1), &base).unwrap();
    let g = BvWebGraph::open(&base, &Cache::new(dir.path().join("cache"))).unwrap();
    let text = std::fs::read_to_string(with_ext(&base, "urls")).unwrap();
    let hosts = hosts_of(&text);
    let csr = g.to_csr().unwrap();
    let s = GraphStats::compute(g.bv(), Some(&hosts))
        .unwrap()
        .with_reachability(&csr, 20, 0);
    eprintln!("{s}");
    let n = s.nodes as f64;
    let mean = s.outdegree.mean();
    assert!((9.5..=10.5).contains(&mean), "mean outdegree {mean}");
    let dangling = s.dangling_fraction();
    assert!((0.17..=0.27).contains(&dangling), "dangling {dangling}");
    let intra = s.intra_host_fraction().unwrap();
    assert!((0.75..=0.92).contains(&intra), "intra-host {intra}");
    assert!(s.self_loops as f64 / n < 0.05, "self-loops should be rare");
    assert!(
        s.zero_indegree as f64 / n < 0.01,
        "crawled pages were all linked from somewhere"
    );
    // Heavy tails.
    assert!(
        s.indegree.max as f64 > 100.0 * mean,
        "max in-degree {}",
        s.indegree.max
    );
    assert!(
        s.outdegree.max as f64 > 30.0 * mean,
        "max outdegree {}",
        s.outdegree.max
    );
    let tail = s.indegree.tail.unwrap();
    assert!((1.6..=2.6).contains(&tail.alpha), "in-degree tail {tail:?}");
    let h = s.hosts.as_ref().unwrap();
    assert!(
        h.host_sizes.max > 20 * (h.host_sizes.sum / h.hosts),
        "host sizes: {:?}",
        h.host_sizes
    );
    assert!(h.host_sizes.min <= 2);
    // A bow tie: some starts reach most of the graph, dangling ones reach nothing else.
    let r = s.reachability.unwrap();
    assert!(r.max_fraction > 0.5 && r.min_fraction < 0.01, "{r:?}");
}

#[test]
fn mean_outdegree_follows_the_configuration() {
    for (d, hosts) in [
        (0.0, None),
        (2.0, None),
        (25.0, None),
        (10.0, Some(1)),
        (10.0, Some(4_000)),
    ] {
        let c = GenConfig {
            pages: 20_000,
            hosts,
            outdegree: d,
            seed: 2,
        };
        let web = SyntheticWeb::new(&c).unwrap();
        let mut arcs = 0u64;
        let mut it = web.iter();
        while let Some((_, s)) = it.next() {
            arcs += s.into_iter().count() as u64;
        }
        let mean = arcs as f64 / 20_000.0;
        assert!(
            (mean - d).abs() <= 0.05 * d + 1e-9,
            "asked {d} (hosts {hosts:?}), got {mean}"
        );
        assert_eq!(web.num_hosts() as u64, c.num_hosts());
    }
}

#[test]
fn tiny_webs() {
    let dir = tempfile::tempdir().unwrap();
    for (pages, hosts) in [
        (1, None),
        (2, None),
        (5, Some(5)),
        (7, Some(1)),
        (300, Some(300)),
    ] {
        let base = dir.path().join(format!("tiny-{pages}"));
        let c = GenConfig {
            pages,
            hosts,
            ..GenConfig::default()
        };
        let r = generate(&c, &base).unwrap();
        assert_eq!(r.pages, pages);
        let g = BvWebGraph::open(&base, &Cache::new(dir.path().join("cache"))).unwrap();
        assert_eq!(g.num_nodes() as u64, pages);
        let urls = std::fs::read_to_string(with_ext(&base, "urls")).unwrap();
        assert_eq!(urls.lines().count() as u64, pages);
    }
}

#[test]
fn bad_configurations_are_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("bad");
    let bad = [
        GenConfig {
            pages: 0,
            ..GenConfig::default()
        },
        GenConfig {
            pages: u64::MAX,
            ..GenConfig::default()
        },
        GenConfig {
            outdegree: -1.0,
            ..GenConfig::new(100)
        },
        GenConfig {
            outdegree: f64::NAN,
            ..GenConfig::new(100)
        },
        GenConfig {
            outdegree: f64::INFINITY,
            ..GenConfig::new(100)
        },
        GenConfig {
            outdegree: 1e9,
            ..GenConfig::new(100)
        },
        GenConfig {
            hosts: Some(0),
            ..GenConfig::new(100)
        },
        GenConfig {
            hosts: Some(101),
            ..GenConfig::new(100)
        },
    ];
    for c in &bad {
        let e = generate(c, &base).unwrap_err();
        assert!(!e.to_string().is_empty());
        assert!(SyntheticWeb::new(c).is_err());
    }
    let mut p = ModelParams::default();
    p.copy = 1.5;
    assert!(generate_with_params(&GenConfig::new(100), &p, &base).is_err());
    let mut p = ModelParams::default();
    p.outdegree_tail = f64::NAN;
    assert!(generate_with_params(&GenConfig::new(100), &p, &base).is_err());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
    // An output path that cannot be created is an error too.
    write_file(dir.path(), "file", b"x");
    assert!(generate(&GenConfig::new(100), &dir.path().join("file/sub/web")).is_err());
}
