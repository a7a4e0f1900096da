//! `crawlrank frontier-rank`: impact-aware frontier ranking offline (docs/frontier-rank.md, the
//! RW paper) — the frontier of a downloaded set ranked by random, in-degree, PageRank, RW, RW-EG
//! RW-virtual and `learned` (a regression model over the others' scores), measured against the true impacts on a held-out part of the frontier.

use super::held::OnGraph;
use crate::provenance::{file_digest, Provenance};
use anyhow::{Context, Result};
use crawlrank_frontier_rank::repeat::{
    paired, write_paired_headline, write_repeat_outputs, write_repeat_table,
};
use crawlrank_frontier_rank::report::{write_outputs, write_table, Labels};
use crawlrank_frontier_rank::{bfs_downloaded, evaluate_with, Config, Method, Model, OmegaChoice};
use crawlrank_graph::access::{SequentialSuccessors, Successors, Transpose};
use crawlrank_graph::{open_graph, BvWebGraph, Cache};
use crawlrank_impact::{column_index, read_impact_table, Pages};
use crawlrank_rank::RwConfig;
use crawlrank_sim::SimGraph;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("d").required(true).args(["downloaded", "downloaded_fraction"])))]
pub struct Args {
    #[command(flatten)]
    pub graph: super::held::GraphArgs,
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
    /// Repeat the experiment N times, with rng seeds --rng-seed, --rng-seed + 1, …: N splits
    /// of the frontier (and with --downloaded-fraction N seed sets of the BFS too), each run
    /// the single run with that rng seed; report mean ± 95% interval per method and x, and
    /// paired comparisons (paired.csv).
    #[arg(long, value_name = "N", conflicts_with = "rng_seeds")]
    pub repeat: Option<usize>,
    /// Repeat the experiment with these rng seeds, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',', num_args = 1)]
    pub rng_seeds: Option<Vec<u64>>,
    /// With --repeat/--rng-seeds: compare every method with this one only, not every pair.
    #[arg(long, value_name = "METHOD")]
    pub baseline: Option<String>,
    /// The x range of impact.svg, in % of the test frontier: LOW,HIGH (default 0,10).
    #[arg(long, value_name = "LOW,HIGH", value_parser = x_range)]
    pub x_range: Option<(f64, f64)>,
    /// Write scores.tsv (the frontier's pages by id, URL, split, impact and each method's
    /// score), summary.json, summary.csv, impact.svg (and omega.svg) into DIR; repeated,
    /// also summary-stats.csv and paired.csv (and no scores.tsv).
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

fn x_range(s: &str) -> Result<(f64, f64), String> {
    let parsed = s
        .split_once(',')
        .and_then(|(a, b)| Some((a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?)));
    match parsed {
        Some((a, b)) if a.is_finite() && b.is_finite() && a >= 0.0 && a < b && b <= 100.0 => {
            Ok((a, b))
        }
        _ => Err(format!(
            "'{s}' is not an x range LOW,HIGH with 0 <= LOW < HIGH <= 100"
        )),
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
    let rng_seeds =
        super::simulate::rng_seed_list(args.repeat, args.rng_seeds.as_deref(), args.rng_seed)?;
    let baseline = match (&args.baseline, &rng_seeds) {
        (None, _) => None,
        (Some(_), None) => anyhow::bail!(
            "--baseline compares methods over runs: it needs --repeat N or --rng-seeds LIST"
        ),
        (Some(b), Some(_)) => {
            let m = Method::parse(b)?;
            Some(methods.iter().position(|&x| x == m).with_context(|| {
                format!(
                    "--baseline {b} is not among the methods (--method {})",
                    args.method
                )
            })?)
        }
    };
    let graph = open_graph(&args.graph.path, cache)?;
    let pages = Pages::from_graph(&graph)?;
    let table = read_impact_table(&args.impact, &pages)?;
    eprintln!("{}", table.report);
    let column = column_index(&args.impact, &table.columns, &args.impact_column)?;
    let plan = Plan {
        methods,
        rng_seeds,
        baseline,
    };
    let impact = (table, column);
    let ranking = Ranking(&args, &graph, plan, pages, impact);
    args.graph.run(&graph, ranking)
}

/// What the arguments ask for, checked before the graph is opened.
struct Plan {
    methods: Vec<Method>,
    rng_seeds: Option<Vec<u64>>,
    baseline: Option<usize>,
}

/// The evaluation, run where the graph is held.
struct Ranking<'a>(&'a Args, &'a BvWebGraph, Plan, Pages, ImpactColumn);

/// The impact table and the column evaluated.
type ImpactColumn = (crawlrank_impact::ImpactTable, usize);

impl OnGraph for Ranking<'_> {
    type Output = ();
    fn on<G: SimGraph>(self, csr: &G) -> Result<()> {
        rank_on(self.0, self.1, csr, self.2, self.3, self.4)
    }
}

/// The evaluation on `csr`: the graph decoded, or the compressed graph itself; `impact` is
/// the impact table and the column evaluated.
fn rank_on<G>(
    args: &Args,
    graph: &BvWebGraph,
    csr: &G,
    plan: Plan,
    pages: Pages,
    (table, column): ImpactColumn,
) -> Result<()>
where
    G: Successors + SequentialSuccessors + Transpose,
{
    let Plan {
        methods,
        rng_seeds,
        baseline,
    } = plan;
    let n = graph.num_nodes();
    let mut provenance = Provenance::new(&args.graph.path)?;
    provenance.set(
        "impact",
        serde_json::json!({ "file": file_digest(&args.impact)?, "column": table.columns[column] }),
    );
    // D for an rng seed: the file's pages (read once, the same for every run), or a BFS from
    // random seeds drawn with it.
    let from_file = match &args.downloaded {
        Some(file) => Some(
            crawlrank_sim::read_seeds(file, graph)
                .with_context(|| format!("cannot read the downloaded set {}", file.display()))?,
        ),
        None => None,
    };
    let downloaded_for = |rng_seed: u64| -> (Vec<u32>, Option<Vec<u32>>) {
        match (&from_file, args.downloaded_fraction) {
            (Some(pages), _) => (pages.clone(), None),
            (None, Some(x)) => {
                let seeds = crawlrank_seeds::random_seeds(n, args.seeds, rng_seed);
                let count = ((x * n as f64).round() as usize).max(1);
                (bfs_downloaded(csr, &seeds, count), Some(seeds))
            }
            (None, None) => unreachable!("clap requires one of them"),
        }
    };
    if let Some(file) = &args.downloaded {
        provenance.set("downloaded", file_digest(file)?);
    } else {
        provenance.set(
            "downloaded_fraction",
            serde_json::json!({ "fraction": args.downloaded_fraction, "seeds": args.seeds }),
        );
    }
    eprintln!(
        "{}: {n} pages, {} arcs; impact column '{}'",
        args.graph.path.display(),
        csr.arc_count(),
        table.columns[column]
    );
    let started = Instant::now();
    let pagerank = crawlrank_sim::reference_pagerank(graph, csr)?;
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
    // `learned` also walks the other impact types (downloaded pages' values only).
    let others: Vec<&[f64]> = (0..table.values.len())
        .filter(|&c| c != column)
        .map(|c| table.values[c].as_slice())
        .collect();
    let graph_name = args.graph.path.display().to_string();
    let labels = Labels {
        graph: &graph_name,
        impact_column: &table.columns[column],
        x_range: args.x_range,
    };
    let runs = rng_seeds.clone().unwrap_or_else(|| vec![args.rng_seed]);
    let bar = crate::progress::bar(Some((walks * runs.len()) as u64), "rankings");
    bar.set_prefix("frontier-rank");
    let mut evaluations = Vec::with_capacity(runs.len());
    let mut seed_sets = Vec::new();
    for &rng_seed in &runs {
        let (downloaded, seeds) = downloaded_for(rng_seed);
        if let Some(seeds) = seeds {
            seed_sets.push(pages.ids().ids_of(&seeds).collect::<Vec<u64>>());
        }
        let config = Config {
            rng_seed,
            ..config.clone()
        };
        let offset = evaluations.len() * walks;
        let e = evaluate_with(
            csr,
            &downloaded,
            &table.values[column],
            &others,
            Some(&pagerank),
            &config,
            &mut |step| {
                bar.set_position((offset + step.done) as u64);
                let message = if runs.len() > 1 {
                    format!("  [rng seed {rng_seed}] {}", step.message)
                } else {
                    format!("  {}", step.message)
                };
                if bar.is_hidden() {
                    eprintln!("{message}");
                } else {
                    bar.println(message);
                }
            },
        )
        .with_context(|| format!("the run with rng seed {rng_seed}"))?;
        evaluations.push(e);
    }
    bar.finish_and_clear();
    eprintln!("  done {:.2?}", started.elapsed());
    match seed_sets.len() {
        0 => {}
        1 => {
            provenance.set("seed_ids", serde_json::json!(seed_sets[0]));
        }
        _ => {
            provenance.set("seed_ids_per_run", serde_json::json!(seed_sets));
        }
    }
    let mut stdout = std::io::stdout().lock();
    let written = if rng_seeds.as_ref().is_some_and(|s| s.len() > 1) {
        write_repeat_table(&evaluations, &mut stdout)?;
        let rows = paired(&evaluations, baseline);
        write_paired_headline(&rows, 10, &mut stdout)?;
        write_repeat_outputs(&evaluations, &rows, &args.out, &labels)?
    } else {
        let e = &evaluations[0];
        if e.test_with_impact() == 0 {
            eprintln!(
                "note: no page of the test frontier has impact: the measures are undefined (-)"
            );
        }
        write_table(e, &mut stdout)?;
        write_outputs(e, &args.out, &labels, pages.ids(), pages.urls())?
    };
    crate::provenance::stamp_json(&args.out.join("summary.json"), &provenance)?;
    let names: Vec<String> = written
        .iter()
        .filter_map(|p| p.file_name())
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    println!("wrote {}/{}", args.out.display(), names.join(", "));
    Ok(())
}
