//! Imports a graph with the library alone (what `crawlrank import` does, without the CLI), for
//! benchmarks: `cargo run --release -p crawlrank-graph --example import -- INPUT BASENAME
//! [SORT_MEMORY_MIB]`. Prints the report and the throughput.

use crawlrank_graph::import::{import_with_progress, ImportOptions, ImportPhase};
use std::path::PathBuf;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(input), Some(out)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: import INPUT BASENAME [SORT_MEMORY_MIB]");
    };
    let mut opts = ImportOptions::default();
    if let Some(m) = args.next() {
        opts.sort_memory = m.parse::<usize>()? << 20;
    }
    let start = Instant::now();
    let mut phase = None;
    let report = import_with_progress(
        &PathBuf::from(input),
        &PathBuf::from(out),
        &opts,
        &mut |p| {
            if phase != Some(p.phase) {
                phase = Some(p.phase);
                eprintln!("{:>8.1}s {:?}", start.elapsed().as_secs_f64(), p.phase);
            }
        },
    )?;
    let secs = start.elapsed().as_secs_f64();
    if phase == Some(ImportPhase::Finish) {
        eprintln!("{secs:>8.1}s done");
    }
    println!("{report:#?}");
    println!(
        "{} input arcs in {secs:.1} s: {:.2} M arcs/s; {:.3} bits/arc",
        report.input_arcs,
        report.input_arcs as f64 / secs / 1e6,
        report.graph_bytes as f64 * 8.0 / report.arcs.max(1) as f64
    );
    Ok(())
}
