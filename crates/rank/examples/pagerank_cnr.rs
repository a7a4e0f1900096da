//! Loads a BVGraph (LAW's cnr-2000 by default), runs crawlrank's PageRank and prints where the
//! time goes. `scripts/bench-pagerank.sh` times it beside NetworKit and webgraph-rs, and uses
//! `--dump-arcs` to hand NetworKit the same graph as an edge list.
//!
//! ```text
//! cargo run --release -p crawlrank-rank --example pagerank_cnr -- \
//!     [--graph BASENAME] [--threshold T] [--out FILE] [--dump-arcs FILE] [--cache DIR]
//! ```

use anyhow::{bail, Context, Result};
use crawlrank_graph::{BvWebGraph, Cache};
use crawlrank_rank::pagerank::outdegrees;
use crawlrank_rank::{PageRank, PageRankConfig};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

struct Args {
    graph: PathBuf,
    threshold: f64,
    out: Option<PathBuf>,
    dump_arcs: Option<PathBuf>,
    cache: Option<PathBuf>,
}

fn parse_args() -> Result<Args> {
    let default_graph =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/cnr-2000/cnr-2000");
    let mut args = Args {
        graph: default_graph,
        threshold: 1e-10,
        out: None,
        dump_arcs: None,
        cache: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--graph" => args.graph = value()?.into(),
            "--threshold" => {
                let v = value()?;
                args.threshold = v.parse().with_context(|| format!("bad threshold {v:?}"))?;
            }
            "--out" => args.out = Some(value()?.into()),
            "--dump-arcs" => args.dump_arcs = Some(value()?.into()),
            "--cache" => args.cache = Some(value()?.into()),
            other => bail!(
                "unknown argument {other:?}; usage: pagerank_cnr [--graph BASENAME] \
                 [--threshold T] [--out FILE] [--dump-arcs FILE] [--cache DIR]"
            ),
        }
    }
    Ok(args)
}

fn main() -> Result<()> {
    let args = parse_args()?;
    let cache = args.cache.map_or_else(Cache::from_env, Cache::new);
    let start = Instant::now();
    let graph = BvWebGraph::open(&args.graph, &cache)?;
    let csr = graph.to_csr()?;
    let loaded = start.elapsed();

    if let Some(path) = &args.dump_arcs {
        let file = std::fs::File::create(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        let mut w = BufWriter::new(file);
        for (s, d) in csr.arcs() {
            writeln!(w, "{s} {d}")?;
        }
        w.flush()?;
        eprintln!("wrote {} arcs to {}", csr.num_arcs(), path.display());
        return Ok(());
    }

    let t = Instant::now();
    let transpose = csr.transpose();
    let solver = PageRank::new(&transpose, &outdegrees(&csr))?;
    let prepared = t.elapsed();

    let t = Instant::now();
    let config = PageRankConfig {
        threshold: args.threshold,
        ..Default::default()
    };
    let result = solver.run(&config, None)?;
    let computed = t.elapsed();

    let t = Instant::now();
    if let Some(path) = &args.out {
        let file = std::fs::File::create(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        let mut w = BufWriter::new(file);
        for s in &result.scores {
            writeln!(w, "{s}")?;
        }
        w.flush()?;
    }
    let written = t.elapsed();

    println!(
        "{}: {} nodes, {} arcs, {} dangling, {} threads",
        graph.basename().display(),
        csr.num_nodes(),
        csr.num_arcs(),
        solver.num_dangling(),
        rayon::current_num_threads()
    );
    println!(
        "load {:.3}s  transpose {:.3}s  pagerank {:.3}s ({} iterations, L1 change {:.2e})  \
         write {:.3}s  total {:.3}s",
        loaded.as_secs_f64(),
        prepared.as_secs_f64(),
        computed.as_secs_f64(),
        result.iterations,
        result.l1_change,
        written.as_secs_f64(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
