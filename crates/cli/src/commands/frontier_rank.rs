//! `crawlrank frontier-rank`: impact-aware frontier ranking offline (docs/frontier-rank.md, the
//! RW paper) — the frontier of a downloaded set ranked by random, in-degree, PageRank, RW, RW-EG
//! RW-virtual and `learned` (a regression model over the others' scores), measured against the true impacts on a held-out part of the frontier.

use crate::provenance::{file_digest, Provenance};
use anyhow::{Context, Result};
use crawlrank_frontier_rank::report::{write_outputs, write_table};
use crawlrank_frontier_rank::{bfs_downloaded, evaluate_with, Config, Method, Model, OmegaChoice};
use crawlrank_graph::{open_graph, Cache};
use crawlrank_impact::{column_index, read_impact_table, Pages};
use crawlrank_rank::RwConfig;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("d").required(true).args(["downloaded", "downloaded_fraction"])))]
pub struct Args {
    /// The graph: a BVGraph basename or an arc-list file.
    #[arg(long)]
    pub graph: PathBuf,
    /// The downloaded set D, one page per line: `id` (the graph's own ids: those of an
    /// imported arc list, else 0..n), `id<TAB>url` or a URL (`#` comments).
    #[arg(long, value_name = "FILE")]
    pub downloaded: Option<PathBuf>,
    /// Or D = the first X·n pages of a BFS from --seeds random pages (a BFS crawl stopped
    /// there); X in (0, 1].
    #[arg(long, value_name = "X", value_parser = fraction)]
    pub downloaded_fraction: Option<f64>,
    /// Random seed pages of the BFS of --downloaded-fraction (drawn with --rng-seed).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        requires = "downloaded_fraction"
    )]
    pub seeds: usize,
    /// Impact table (docs/impact-input.md): D's values are the observed impact the walks
    /// propagate, F's the truth the evaluation measures against.
    #[arg(long, value_name = "FILE")]
    pub impact: PathBuf,
    /// The impact column: its name in the header or its number (1 = first impact column).
    #[arg(long, value_name = "K", default_value = "1")]
    pub impact_column: String,
    /// Methods, comma-separated: random, indegree, pagerank, rw, rw-eg, rw-virtual, learned (or
    /// all).
    #[arg(long, value_name = "LIST", default_value = "all")]
    pub method: String,
    /// RW-EG's weight ω of real against virtual arcs, in [0, 1], or `tune` (on the training
    /// part, over 0, 0.1, …, 1).
    #[arg(long, value_name = "W|tune", default_value = "0.8", value_parser = omega)]
    pub omega: OmegaChoice,
    /// The model of `learned`: forest (a random forest) or tree (one regression tree).
    #[arg(long, value_name = "M", default_value = "forest", value_parser = model)]
    pub learned_model: Model,
    /// `learned` fits on at most N training pages (a seeded uniform sample of the training
    /// part when it is larger; the forest fits on one thread).
    #[arg(long, value_name = "N", default_value_t = crawlrank_frontier_rank::DEFAULT_MAX_TRAIN, value_parser = clap::value_parser!(usize))]
    pub learned_max_train: usize,
    /// Bootstrap resamples of the training part when tuning ω (0: tune on the training part
    /// itself).
    #[arg(long, value_name = "B", default_value_t = 20)]
    pub bootstrap: usize,
    /// Exponent γ of the out-degree factor of the walks.
    #[arg(long, value_name = "G", default_value_t = 0.0)]
    pub gamma: f64,
    /// Damping α of the walks.
    #[arg(long, value_name = "A", default_value_t = 0.85)]
    pub alpha: f64,
    /// Seed of the random seed pages, the 65/35 split and the random ranking.
    #[arg(long, value_name = "S", default_value_t = 42)]
    pub rng_seed: u64,
    /// Write scores.tsv (the frontier's pages by id, URL, split, impact and each method's
    /// score), summary.json, summary.csv, impact.svg (and omega.svg) into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

fn fraction(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("'{s}' is not a number"))?;
    if v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err(format!(
            "the downloaded fraction must be in (0, 1], not {s}"
        ))
    }
}

fn model(s: &str) -> Result<Model, String> {
    Model::parse(s).map_err(|e| e.to_string())
}

fn omega(s: &str) -> Result<OmegaChoice, String> {
    if s == "tune" {
        return Ok(OmegaChoice::Tune);
    }
    let v: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is neither a number nor 'tune'"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(OmegaChoice::Fixed(v))
    } else {
        Err(format!("omega must be in [0, 1], not {s}"))
    }
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let methods = Method::parse_list(&args.method)?;
    let graph = open_graph(&args.graph, cache)?;
    let n = graph.num_nodes();
    let pages = Pages::from_graph(&graph)?;
    let table = read_impact_table(&args.impact, &pages)?;
    eprintln!("{}", table.report);
    let column = column_index(&args.impact, &table.columns, &args.impact_column)?;
    let csr = graph.to_csr()?;
    let mut provenance = Provenance::new(&args.graph)?;
    provenance.set(
        "impact",
        serde_json::json!({ "file": file_digest(&args.impact)?, "column": table.columns[column] }),
    );
    let downloaded = match (&args.downloaded, args.downloaded_fraction) {
        (Some(file), _) => {
            provenance.set("downloaded", file_digest(file)?);
            crawlrank_sim::read_seeds(file, &graph)
                .with_context(|| format!("cannot read the downloaded set {}", file.display()))?
        }
        (None, Some(x)) => {
            let seeds = crawlrank_seeds::random_seeds(n, args.seeds, args.rng_seed);
            provenance.seeds(&seeds, pages.ids());
            let count = ((x * n as f64).round() as usize).max(1);
            bfs_downloaded(&csr, &seeds, count)
        }
        (None, None) => unreachable!("clap requires one of them"),
    };
    eprintln!(
        "{}: {n} pages, {} arcs; impact column '{}'",
        args.graph.display(),
        csr.num_arcs(),
        table.columns[column]
    );
    let started = Instant::now();
    let pagerank = crawlrank_sim::reference_pagerank(&graph, &csr)?;
    eprintln!("  PageRank of the graph {:.2?}", started.elapsed());
    let config = Config {
        methods,
        omega: args.omega,
        rw: RwConfig {
            alpha: args.alpha,
            gamma: args.gamma,
            ..RwConfig::default()
        },
        rng_seed: args.rng_seed,
        bootstrap: args.bootstrap,
        model: args.learned_model,
        max_train: args.learned_max_train.max(1),
        ..Config::default()
    };
    let walks = config.methods.len()
        + if config.omega == OmegaChoice::Tune {
            crawlrank_frontier_rank::OMEGAS.len()
        } else {
            0
        };
    let bar = crate::progress::bar(Some(walks as u64), "rankings");
    bar.set_prefix("frontier-rank");
    // `learned` also walks the other impact types (downloaded pages' values only).
    let others: Vec<&[f64]> = (0..table.values.len())
        .filter(|&c| c != column)
        .map(|c| table.values[c].as_slice())
        .collect();
    let result = evaluate_with(
        &csr,
        &downloaded,
        &table.values[column],
        &others,
        Some(&pagerank),
        &config,
        &mut |step| {
            bar.set_position(step.done as u64);
            if bar.is_hidden() {
                eprintln!("  {}", step.message);
            } else {
                bar.println(format!("  {}", step.message));
            }
        },
    );
    bar.finish_and_clear();
    let e = result?;
    eprintln!("  done {:.2?}", started.elapsed());
    if e.test_with_impact() == 0 {
        eprintln!("note: no page of the test frontier has impact: the measures are undefined (-)");
    }
    write_table(&e, &mut std::io::stdout().lock())?;
    let name = args.graph.display().to_string();
    let written = write_outputs(&e, &args.out, &name, pages.ids(), pages.urls())?;
    crate::provenance::stamp_json(&args.out.join("summary.json"), &provenance)?;
    let names: Vec<String> = written
        .iter()
        .filter_map(|p| p.file_name())
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    println!("wrote {}/{}", args.out.display(), names.join(", "));
    Ok(())
}
