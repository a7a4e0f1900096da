//! PageRank throughput: LAW cnr-2000 when the shared data is present, else a generated
//! URL-ordered-like graph of similar shape (so that `cargo bench -p crawlrank-rank --features
//! benchmarks` always has something to time).
//! Only the iteration is timed; `scripts/bench-pagerank.sh` times whole commands against
//! NetworKit and webgraph-rs.

use crawlrank_graph::{BvWebGraph, Cache, Csr};
use crawlrank_rank::pagerank::outdegrees;
use crawlrank_rank::{hits, HitsConfig, PageRank, PageRankConfig};
use crawlrank_rng::SplitMix64;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::time::Duration;

/// cnr-2000 (with a throw-away cache) or, failing that, a random graph with mostly local arcs.
fn load() -> (String, Csr) {
    let data = crawlrank_graph::testdata::shared_data_dir();
    let base = data.join("cnr-2000/cnr-2000");
    if base.with_extension("graph").is_file() {
        let cache = tempfile::tempdir().expect("a temporary directory");
        let g = BvWebGraph::open(&base, &Cache::new(cache.path()))
            .and_then(|g| g.to_csr())
            .expect("cnr-2000 loads");
        return ("cnr-2000".into(), g);
    }
    eprintln!(
        "cnr-2000 not found under {}: benchmarking a generated graph",
        data.display()
    );
    let n = 200_000u32;
    let mut rng = SplitMix64::new(0x5eed);
    let mut next = || rng.next_u64();
    let mut arcs = Vec::new();
    for v in 0..n {
        for _ in 0..next() % 20 {
            let r = next();
            // Mostly arcs to nearby pages (same "host"), some anywhere.
            let d = if r % 4 == 0 {
                (r >> 8) as u32 % n
            } else {
                (v + (r >> 8) as u32 % 64) % n
            };
            arcs.push((v, d));
        }
    }
    ("random-200k".into(), Csr::from_arcs(n as usize, &arcs))
}

fn bench(c: &mut Criterion) {
    let (name, g) = load();
    let t = g.transpose();
    let solver = PageRank::new(&t, &outdegrees(&g)).expect("consistent graph");
    let mut group = c.benchmark_group("rank");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.bench_function(format!("pagerank-1e-10/{name}"), |b| {
        b.iter(|| {
            black_box(
                solver
                    .run(&PageRankConfig::default(), None)
                    .expect("converges"),
            )
        })
    });
    group.bench_function(format!("transpose/{name}"), |b| {
        b.iter(|| black_box(g.transpose()))
    });
    group.bench_function(format!("hits-60/{name}"), |b| {
        b.iter(|| black_box(hits(&g, &t, &HitsConfig::default()).expect("valid graph")))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
