//! `crawlrank seeds-eval`: how good a seed set is (docs/algorithms.md §5, the community-seeds
//! paper's §3.5) — BFS crawls by depth from the seeds and from as many random pages, the
//! distances between the cores the seeds came from, and the graph's average distance.

use super::held::OnGraph;
use crate::provenance::{file_digest, Provenance};
use anyhow::{ensure, Context, Result};
use crawlrank_graph::access::{SequentialSuccessors, Successors, Transpose};
use crawlrank_graph::{open_graph, BvWebGraph, Cache, PageIds};
use crawlrank_seeds::file::{cores_path, read_cores_json, CoreEntry};
use crawlrank_seeds::{check_cores, evaluate, write_outputs, write_table, EvalConfig};
use crawlrank_sim::SimGraph;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub graph: super::held::GraphArgs,
    /// The seeds, one per line: `id` (the graph's own ids: those of an imported arc list, else
    /// 0..n), `id<TAB>url` (as `crawlrank seeds` writes them) or a URL; `#` starts a comment
    /// line. The cores are read from FILE.cores.json when it exists.
    #[arg(long, value_name = "FILE")]
    pub seeds: PathBuf,
    /// Seed of the generator that draws the random seed set compared against (as many pages as
    /// seeds, the same pages as `simulate --seeds N --rng-seed S`) and the distance sample.
    #[arg(
        long,
        value_name = "S",
        default_value_t = 42,
        visible_alias = "rng-seed"
    )]
    pub random_seeds: u64,
    /// Sources of the BFSs that estimate the graph's average distance (0: skip it).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub distance_samples: usize,
    /// Write summary.json, summary.csv, mean-pagerank.svg, pages-per-depth.svg and (with
    /// cores) core-distances.svg into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let graph = open_graph(&args.graph.path, cache)?;
    let n = graph.num_nodes();
    let ids = graph.page_ids()?;
    let seeds = crawlrank_sim::read_seeds(&args.seeds, &graph)?;
    let cores_file = cores_path(&args.seeds);
    let cores = if cores_file.exists() {
        let record = read_cores_json(&cores_file, &ids)?;
        ensure!(
            record.pages == n as u64,
            "{}: its cores were found in a graph of {} pages, but {} has {n}",
            cores_file.display(),
            record.pages,
            args.graph.path.display()
        );
        let cores: Vec<Vec<u32>> = record.cores.iter().map(CoreEntry::pages).collect();
        check_cores(&cores, n).with_context(|| cores_file.display().to_string())?;
        Some(cores)
    } else {
        None
    };
    let found = Found {
        seeds,
        cores,
        cores_file,
        ids,
    };
    args.graph.run(&graph, Evaluation(&args, &graph, found))
}

/// What `run` read before choosing where the graph is held.
struct Found {
    seeds: Vec<u32>,
    cores: Option<Vec<Vec<u32>>>,
    cores_file: PathBuf,
    ids: PageIds,
}

/// The evaluation, run where the graph is held.
struct Evaluation<'a>(&'a Args, &'a BvWebGraph, Found);

impl OnGraph for Evaluation<'_> {
    type Output = ();
    fn on<G: SimGraph>(self, csr: &G) -> Result<()> {
        evaluate_on(self.0, self.1, csr, self.2)
    }
}

/// The evaluation on `g`: the graph decoded, or the compressed graph itself.
fn evaluate_on<G>(args: &Args, graph: &BvWebGraph, g: &G, found: Found) -> Result<()>
where
    G: Successors + SequentialSuccessors + Transpose,
{
    let Found {
        seeds,
        cores,
        cores_file,
        ids,
    } = found;
    let n = g.node_count();
    eprintln!(
        "{}: {n} pages, {} arcs; {} seeds from {}; {}",
        args.graph.path.display(),
        g.arc_count(),
        seeds.len(),
        args.seeds.display(),
        match &cores {
            Some(c) => format!("{} cores from {}", c.len(), cores_file.display()),
            None => format!("no cores ({} not found)", cores_file.display()),
        }
    );
    let started = Instant::now();
    let pagerank = crawlrank_sim::reference_pagerank(graph, g)?;
    eprintln!("  PageRank {:.2?}", started.elapsed());
    let config = EvalConfig {
        rng_seed: args.random_seeds,
        distance_samples: args.distance_samples,
    };
    let name = args.graph.path.display().to_string();
    let eval = evaluate(
        &name,
        g,
        &pagerank,
        &seeds,
        cores.as_deref(),
        &config,
        &mut |step| eprintln!("  {step}"),
    )?;
    eprintln!("  done {:.2?}", started.elapsed());
    write_table(&eval, &mut std::io::stdout().lock())?;
    if let Some(dir) = &args.out {
        let written = write_outputs(&eval, dir, &ids)?;
        let mut provenance = Provenance::new(&args.graph.path)?;
        provenance.set("seeds_file", file_digest(&args.seeds)?);
        if cores.is_some() {
            provenance.set("cores_file", file_digest(&cores_file)?);
        }
        provenance.seeds(&seeds, &ids);
        crate::provenance::stamp_json(&dir.join("summary.json"), &provenance)?;
        let names: Vec<String> = written
            .iter()
            .filter_map(|p| p.file_name())
            .map(|f| f.to_string_lossy().into_owned())
            .collect();
        println!("wrote {}/{}", dir.display(), names.join(", "));
    }
    Ok(())
}
