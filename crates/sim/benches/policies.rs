//! Arcs per second of each policy's crawl loop, one thread (issue target: ≥ 20M arcs/s for
//! bfs, fica, ieca, opic, indegree on cnr-2000).
//!
//! Uses LAW cnr-2000 from the shared data folder (`CRAWLRANK_SHARED_DATA`, or
//! `../shared/data` beside the checkout); without it, a random graph of the same size so the
//! bench always runs. Run: `cargo bench -p crawlrank-sim --features benchmarks --bench policies`.

use crawlrank_frontier::PolicyKind;
use crawlrank_graph::{BvWebGraph, Cache, Csr};
use crawlrank_rng::XorShift64;
use crawlrank_sim::{simulate, Reference, SimConfig, SimPolicy};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::sync::Arc;

fn graph() -> (String, Csr) {
    let data = crawlrank_graph::testdata::shared_data_dir();
    let base = data.join("cnr-2000/cnr-2000");
    if base.with_extension("graph").exists() {
        let cache = tempfile::tempdir().expect("temp dir");
        let g = BvWebGraph::open(&base, &Cache::new(cache.path())).expect("cnr-2000 opens");
        return ("cnr-2000".into(), g.to_csr().expect("decodes"));
    }
    eprintln!(
        "cnr-2000 not found under {}; using a random graph of the same size",
        data.display()
    );
    let n = 325_557u64;
    let mut rng = XorShift64::new(0x9E37_79B9_7F4A_7C15);
    let mut arcs = Vec::with_capacity(3_216_152);
    for v in 0..n {
        for _ in 0..10 {
            let x = rng.next_u64();
            arcs.push((v as u32, ((x % n) * (x % 97) / 97) as u32));
        }
    }
    ("random".into(), Csr::from_arcs(n as usize, &arcs))
}

fn bench(c: &mut Criterion) {
    let (name, g) = graph();
    let pr = Arc::new(
        crawlrank_rank::pagerank(&g, &Default::default())
            .expect("pagerank")
            .scores,
    );
    let seeds: Vec<u32> = (0..100u32)
        .map(|i| (i as u64 * 3_257 % g.num_nodes() as u64) as u32)
        .collect();
    let reference = Reference::new(&g, pr, &seeds).expect("reference");
    let config = SimConfig::default();
    let mut group = c.benchmark_group(format!("crawl-loop/{name}"));
    group.sample_size(10);
    let arcs = simulate(
        &g,
        &seeds,
        SimPolicy::Crawl(PolicyKind::Bfs),
        &reference,
        &config,
        &mut |_| {},
    )
    .unwrap()
    .arcs;
    group.throughput(Throughput::Elements(arcs));
    for kind in SimPolicy::all() {
        if matches!(
            kind,
            SimPolicy::Crawl(PolicyKind::BatchPagerank | PolicyKind::PartialPagerank)
        ) {
            continue; // seconds per run; measured by scripts/bench-simulate.sh
        }
        group.bench_function(kind.name(), |b| {
            b.iter(|| simulate(&g, &seeds, kind, &reference, &config, &mut |_| {}).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
