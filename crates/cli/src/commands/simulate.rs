//! `crawlrank simulate`: replay crawls of a known graph with each policy and score them.

use super::held::OnGraph;
use crate::progress;
use crate::provenance::{file_digest, Provenance};
use anyhow::{ensure, Result};
use crawlrank_frontier::{Impacts, PolicyConfig};
use crawlrank_graph::{open_graph, BvWebGraph, Cache, PageIds};
use crawlrank_seeds::Pruning;
use crawlrank_sim::{
    paired, run_experiment, run_repeated, write_comparison, write_comparison_csv, write_outputs,
    write_paired_headline, write_repeat_outputs, write_repeat_table, write_table, Experiment,
    ExperimentEvent, SeedChoice, SimConfig, SimGraph, SimPolicy, Summary,
};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub graph: super::held::GraphArgs,
    /// Policies, comma-separated, or `all`.
    #[arg(long, default_value = "all")]
    pub policy: String,
    /// Where the crawls start: `N` random pages (drawn with --rng-seed), or `community:N`, N
    /// seeds extracted from the graph's communities (as `crawlrank seeds` does, with its
    /// defaults), every policy then crawled again from N random seeds and the two compared.
    #[arg(
        long,
        value_name = "N|community:N",
        default_value = "100",
        value_parser = parse_seeds,
        conflicts_with = "seeds_file"
    )]
    pub seeds: SeedsArg,
    /// Seed pages, one per line: page ids (the graph's own ids: those of an imported arc
    /// list, else 0..n), URLs when the graph has them, or `id<TAB>url` as `crawlrank seeds`
    /// writes them.
    #[arg(long, value_name = "FILE")]
    pub seeds_file: Option<PathBuf>,
    /// Also crawl every policy from as many random seeds (--rng-seed) and compare the two seed
    /// sets (implied by `--seeds community:N`).
    #[arg(long)]
    pub compare_random: bool,
    /// Seed of the random generator (random seeds, the `random` policy).
    #[arg(long, default_value_t = 42)]
    pub rng_seed: u64,
    /// Batch size K (default ceil(R/72), R = pages reachable from the seeds).
    #[arg(long, value_name = "K")]
    pub batch: Option<u64>,
    /// L1 threshold of the PageRank the batch policies compute at every reorder.
    #[arg(long, value_name = "L1", default_value_t = PolicyConfig::BATCH_PAGERANK_THRESHOLD)]
    pub batch_pagerank_threshold: f64,
    /// Impact table (docs/impact-input.md): the search log of the policies rw, rw-eg and learned (each
    /// crawled page's impact), and the truth of the impact measure every policy is then scored
    /// by (impact crawled relative to the ideal order).
    #[arg(long, value_name = "FILE")]
    pub impact: Option<PathBuf>,
    /// The impact column: its name in the header or its number (1 = first impact column).
    #[arg(long, value_name = "K", default_value = "1", requires = "impact")]
    pub impact_column: String,
    /// rw-eg's (and learned's RW-EG feature's) weight ω of the real arcs against the virtual ones, in [0, 1].
    #[arg(long, value_name = "W", default_value_t = PolicyConfig::OMEGA, value_parser = omega)]
    pub omega: f64,
    /// Exponent γ of the out-degree factor of rw's and rw-eg's walks (≥ 0).
    #[arg(long, value_name = "G", default_value_t = PolicyConfig::GAMMA)]
    pub gamma: f64,
    /// β of fica, fica-plus and ieca: their learning rate decays as α = exp(−β·t), t the
    /// number of reorders so far (FICA's β sweep; > 0).
    #[arg(long, value_name = "B", default_value_t = PolicyConfig::BETA, value_parser = positive)]
    pub beta: f64,
    /// ieca's and fica-plus's balance δ before the first reorder (in [0, 1]); δ then falls
    /// to delta-initial − delta-slope as the crawl reaches R pages.
    #[arg(long, value_name = "D", default_value_t = PolicyConfig::DELTA_INITIAL)]
    pub delta_initial: f64,
    /// How far ieca's and fica-plus's δ falls over the crawl: δ = delta-initial −
    /// delta-slope·min(1, crawled/R) at every reorder (δ must stay in [0, 1]).
    #[arg(long, value_name = "S", default_value_t = PolicyConfig::DELTA_SLOPE)]
    pub delta_slope: f64,
    /// The percentages of R crawled the table (and summary.json's *_at) reports,
    /// comma-separated, each in 1..=100.
    #[arg(long, value_name = "P,P,…", default_value = "5,10,15,25,45", value_parser = parse_percents)]
    pub checkpoints: Percents,
    /// Repeat the experiment over N random seed sets, drawn with rng seeds --rng-seed,
    /// --rng-seed + 1, …, --rng-seed + N − 1 (each run is the single run with that rng seed),
    /// and report mean ± 95% interval per policy and checkpoint and paired comparisons.
    #[arg(long, value_name = "N", conflicts_with = "rng_seeds")]
    pub repeat: Option<usize>,
    /// Repeat the experiment with these rng seeds, comma-separated (as --repeat does with
    /// consecutive ones).
    #[arg(long, value_name = "LIST", value_delimiter = ',', num_args = 1)]
    pub rng_seeds: Option<Vec<u64>>,
    /// With --repeat/--rng-seeds: compare every policy with this one only, not every pair.
    #[arg(long, value_name = "POLICY")]
    pub baseline: Option<String>,
    /// Write summary.json, summary.csv, throughput.svg and mass.svg (and impact.svg) into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write DIR/<policy>.order: the crawled pages' ids, one per line, in crawl order.
    #[arg(long, requires = "out")]
    pub save_orders: bool,
}

/// The value of `--seeds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedsArg {
    /// `N` random pages.
    Random(usize),
    /// `community:N`.
    Community(usize),
}

/// The value of `--checkpoints`: percentages in 1..=100, increasing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Percents(pub Vec<usize>);

pub fn parse_percents(s: &str) -> Result<Percents, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let p: usize = part
            .trim_end_matches('%')
            .parse()
            .map_err(|_| format!("'{part}' is not a whole percentage"))?;
        if !(1..=100).contains(&p) {
            return Err(format!(
                "a checkpoint must be in 1..=100 (percent of R), not {p}"
            ));
        }
        if out.contains(&p) {
            return Err(format!("the checkpoint {p} is given twice"));
        }
        out.push(p);
    }
    if out.is_empty() {
        return Err("give at least one checkpoint, e.g. 5,10,15,25,45".into());
    }
    out.sort_unstable();
    Ok(Percents(out))
}

/// A finite number > 0.
pub fn positive(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("'{s}' is not a number"))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("must be a finite number > 0, not {s}"))
    }
}

pub fn omega(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("'{s}' is not a number"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("omega must be in [0, 1], not {s}"))
    }
}

/// The impact column `column` (a header name or a 1-based number) of the impact table `path`
/// over the pages of `graph`, and the column's name.
fn read_impacts(path: &Path, column: &str, graph: &BvWebGraph) -> Result<(Impacts, String)> {
    let pages = crawlrank_impact::Pages::from_graph(graph)?;
    let mut table = crawlrank_impact::read_impact_table(path, &pages)?;
    eprintln!("{}", table.report);
    let index = crawlrank_impact::column_index(path, &table.columns, column)?;
    let name = table.columns[index].clone();
    Ok((Impacts::new(table.values.swap_remove(index)), name))
}

fn parse_seeds(s: &str) -> Result<SeedsArg, String> {
    let (community, n) = match s.strip_prefix("community:") {
        Some(n) => (true, n),
        None => (false, s),
    };
    let n: usize = n
        .parse()
        .map_err(|_| format!("'{s}' is neither a number of seeds N nor community:N"))?;
    if n == 0 {
        return Err("the number of seeds must be at least 1".into());
    }
    Ok(if community {
        SeedsArg::Community(n)
    } else {
        SeedsArg::Random(n)
    })
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let policies = SimPolicy::parse_list_with(&args.policy, args.impact.is_some())?;
    ensure!(args.batch != Some(0), "--batch must be at least 1");
    ensure!(
        args.gamma.is_finite() && args.gamma >= 0.0,
        "--gamma must be a finite number ≥ 0, not {}",
        args.gamma
    );
    let random = |count| SeedChoice::Random {
        count,
        rng_seed: args.rng_seed,
    };
    let seeds = match (&args.seeds_file, args.seeds) {
        (Some(f), _) => SeedChoice::File(f.clone()),
        (None, SeedsArg::Random(n)) => random(n),
        (None, SeedsArg::Community(n)) => SeedChoice::Community {
            config: crate::commands::seeds::default_config(n),
            pruning: Pruning::Auto,
        },
    };
    let rng_seeds = repeat_rng_seeds(&args)?;
    let baseline = match &args.baseline {
        None => None,
        Some(b) => {
            ensure!(
                rng_seeds.is_some(),
                "--baseline compares policies over seed sets: it needs --repeat N or --rng-seeds LIST"
            );
            let index = policies.iter().position(|p| p.name() == b.trim());
            Some(index.ok_or_else(|| {
                let names: Vec<&str> = policies.iter().map(|p| p.name()).collect();
                anyhow::anyhow!(
                    "--baseline {b} is not among the policies simulated ({})",
                    names.join(", ")
                )
            })?)
        }
    };
    let graph = open_graph(&args.graph.path, cache)?;
    let ids = graph.page_ids()?;
    let mut provenance = Provenance::new(&args.graph.path)?;
    if let Some(file) = &args.seeds_file {
        provenance.set("seeds_file", file_digest(file)?);
    }
    let (impact, impact_column) = match &args.impact {
        Some(path) => {
            let (impact, name) = read_impacts(path, &args.impact_column, &graph)?;
            provenance.set(
                "impact",
                serde_json::json!({ "file": file_digest(path)?, "column": name }),
            );
            (Some(impact), Some(name))
        }
        None => (None, None),
    };
    let config = SimConfig {
        batch: args.batch,
        rng_seed: args.rng_seed,
        batch_pagerank_threshold: args.batch_pagerank_threshold,
        impact,
        omega: args.omega,
        gamma: args.gamma,
        beta: args.beta,
        delta_initial: args.delta_initial,
        delta_slope: args.delta_slope,
        percents: args.checkpoints.0.clone(),
    };
    PolicyConfig {
        beta: config.beta,
        delta_initial: config.delta_initial,
        delta_slope: config.delta_slope,
        ..PolicyConfig::default()
    }
    .check()?;
    let prepared = Prepared {
        policies,
        seeds,
        rng_seeds,
        baseline,
        config,
        impact_column,
        provenance,
        ids,
    };
    args.graph.run(&graph, Simulation(&args, &graph, prepared))
}

/// What `run` prepared before choosing where the graph is held.
struct Prepared {
    policies: Vec<SimPolicy>,
    seeds: SeedChoice,
    rng_seeds: Option<Vec<u64>>,
    baseline: Option<usize>,
    config: SimConfig,
    impact_column: Option<String>,
    provenance: Provenance,
    ids: PageIds,
}

/// The experiment, run where the graph is held.
struct Simulation<'a>(&'a Args, &'a BvWebGraph, Prepared);

impl OnGraph for Simulation<'_> {
    type Output = ();
    fn on<G: SimGraph>(self, csr: &G) -> Result<()> {
        simulate_on(self.0, self.1, csr, self.2)
    }
}

/// The experiment on `csr`: the graph decoded, or the compressed graph itself.
fn simulate_on<G: SimGraph>(
    args: &Args,
    graph: &BvWebGraph,
    csr: &G,
    prepared: Prepared,
) -> Result<()> {
    let (ids, mut provenance) = (&prepared.ids, prepared.provenance);
    let random = |count| SeedChoice::Random {
        count,
        rng_seed: args.rng_seed,
    };
    if let Some(rng_seeds) = prepared.rng_seeds {
        // Each seed set is drawn from its own rng seed inside the repeated run; the
        // provenance names the rng seeds, and every run in summary.json its seeds.
        let experiment = Experiment {
            seeds: prepared.seeds,
            policies: prepared.policies,
            config: prepared.config,
        };
        let repeats = Repeats {
            rng_seeds: &rng_seeds,
            baseline: prepared.baseline,
            impact_column: prepared.impact_column,
        };
        run_repeated_and_report(args, graph, csr, &experiment, repeats, ids)?;
        if let Some(dir) = &args.out {
            provenance.set("rng_seeds", serde_json::json!(rng_seeds));
            crate::provenance::stamp_json(&dir.join("summary.json"), &provenance)?;
        }
        return Ok(());
    }
    // The seeds are drawn here, once, so that the provenance can name them.
    let (seed_pages, seed_source) = prepared.seeds.resolve(graph, csr)?;
    let experiment = Experiment {
        seeds: SeedChoice::Pages(seed_pages.clone()),
        policies: prepared.policies.clone(),
        config: prepared.config.clone(),
    };
    let mut summary = run_with_progress(graph, csr, &experiment)?;
    // Outputs name the graph as the user did (an arc list, not its imported copy in the cache).
    summary.graph = args.graph.path.display().to_string();
    summary.impact_column = prepared.impact_column.clone();
    summary.seed_source = seed_source;
    provenance.set("resolved", resolved(args, &summary));
    let (compared, label) = match (&args.seeds_file, args.seeds) {
        (Some(_), _) => (args.compare_random, "file"),
        (None, SeedsArg::Community(_)) => (true, "community"),
        (None, SeedsArg::Random(_)) => {
            ensure!(
                !args.compare_random,
                "--compare-random needs --seeds-file or --seeds community:N"
            );
            (false, "")
        }
    };
    if !compared {
        report(&summary, args.out.as_deref(), args.save_orders, ids)?;
        if let Some(dir) = &args.out {
            provenance.seeds(&seed_pages, ids);
            write_provenance(&provenance, &summary, dir, args.save_orders)?;
        }
        return Ok(());
    }
    // The paper's experiment: the same policies from as many random seeds, side by side.
    let (random_pages, random_source) = random(summary.seeds).resolve(graph, csr)?;
    let baseline = Experiment {
        seeds: SeedChoice::Pages(random_pages.clone()),
        policies: prepared.policies,
        config: prepared.config,
    };
    eprintln!("the same policies from {} random seeds:", summary.seeds);
    let mut random_summary = run_with_progress(graph, csr, &baseline)?;
    random_summary.graph = args.graph.path.display().to_string();
    random_summary.impact_column = prepared.impact_column;
    random_summary.seed_source = random_source;
    let mut out = std::io::stdout().lock();
    writeln!(out, "from {label} seeds:")?;
    write_table(&summary, &mut out)?;
    writeln!(out, "\nfrom random seeds:")?;
    write_table(&random_summary, &mut out)?;
    writeln!(out, "\n{label} vs random seeds:")?;
    write_comparison(&summary, label, &random_summary, "random", &mut out)?;
    if let Some(dir) = &args.out {
        write_outputs(&summary, &dir.join(label), args.save_orders, ids)?;
        write_outputs(&random_summary, &dir.join("random"), args.save_orders, ids)?;
        let mut p = provenance.clone();
        p.seeds(&seed_pages, ids);
        write_provenance(&p, &summary, &dir.join(label), args.save_orders)?;
        p.seeds(&random_pages, ids);
        p.set("resolved", resolved(args, &random_summary));
        write_provenance(&p, &random_summary, &dir.join("random"), args.save_orders)?;
        write_comparison_csv(
            &summary,
            label,
            &random_summary,
            "random",
            &dir.join("comparison.csv"),
        )?;
        writeln!(
            out,
            "wrote {0}/{label}/, {0}/random/ (summary.json, summary.csv, plots) and {0}/comparison.csv",
            dir.display()
        )?;
    }
    Ok(())
}

/// The values the run chose that no option states: K when `--batch` is not given, FICA's β,
/// IECA's δ schedule, the seeds' description.
fn resolved(args: &Args, summary: &Summary) -> serde_json::Value {
    serde_json::json!({
        "batch": args.batch.unwrap_or_else(|| crawlrank_frontier::default_batch(summary.reachable)),
        "reachable": summary.reachable,
        "fica_beta": PolicyConfig::BETA,
        "ieca_seed_distance": crawlrank_frontier::policies::ieca::SEED_DISTANCE,
        "ieca_delta": "0.35 until the first reorder, then 0.35 - 0.28 * crawled / R at every batch boundary",
        "seed_source": summary.seed_source,
    })
}

/// Adds `provenance` to what [`write_outputs`] wrote into `dir`: `summary.json`'s
/// `provenance` field and, with `save_orders`, `orders.json` beside the `.order` files (one id
/// per line, nothing else, so the sidecar holds what produced them).
fn write_provenance(
    provenance: &Provenance,
    summary: &Summary,
    dir: &Path,
    save_orders: bool,
) -> Result<()> {
    crate::provenance::stamp_json(&dir.join("summary.json"), provenance)?;
    if save_orders {
        let orders: serde_json::Map<String, serde_json::Value> = summary
            .results
            .iter()
            .map(|r| {
                (
                    r.run.policy.name().to_string(),
                    format!("{}.order", r.run.policy).into(),
                )
            })
            .collect();
        let mut extra = serde_json::Map::new();
        extra.insert("orders".into(), orders.into());
        crate::provenance::write_sidecar(&dir.join("orders.json"), provenance, extra)?;
    }
    Ok(())
}

/// The rng seeds of a repeated experiment (`--repeat N` or `--rng-seeds LIST`), `None` for a
/// single run.
fn repeat_rng_seeds(args: &Args) -> Result<Option<Vec<u64>>> {
    let Some(seeds) = rng_seed_list(args.repeat, args.rng_seeds.as_deref(), args.rng_seed)? else {
        return Ok(None);
    };
    ensure!(
        args.seeds_file.is_none()
            && matches!(args.seeds, SeedsArg::Random(_))
            && !args.compare_random,
        "--repeat and --rng-seeds draw a new random seed set per run: they need random seeds \
         (--seeds N), not --seeds-file, --seeds community:N or --compare-random"
    );
    Ok(Some(seeds))
}

/// The rng seeds of `--repeat N` (`start`, `start + 1`, …) or `--rng-seeds LIST` (distinct),
/// `None` when neither is given; `simulate` and `frontier-rank` share the rule.
pub(crate) fn rng_seed_list(
    repeat: Option<usize>,
    list: Option<&[u64]>,
    start: u64,
) -> Result<Option<Vec<u64>>> {
    Ok(Some(match (repeat, list) {
        (None, None) => return Ok(None),
        (Some(0), _) => anyhow::bail!("--repeat must be at least 1"),
        (Some(n), _) => (0..n as u64)
            .map(|i| {
                start.checked_add(i).ok_or_else(|| {
                    anyhow::anyhow!("--rng-seed {start} + {i} overflows a 64-bit rng seed")
                })
            })
            .collect::<Result<Vec<_>>>()?,
        (None, Some(list)) => {
            ensure!(!list.is_empty(), "--rng-seeds needs at least one rng seed");
            for (i, s) in list.iter().enumerate() {
                ensure!(
                    !list[..i].contains(s),
                    "--rng-seeds lists rng seed {s} twice: the two runs would be the same"
                );
            }
            list.to_vec()
        }
    }))
}

/// What a repeated experiment runs over and reports against.
struct Repeats<'a> {
    /// One run per rng seed.
    rng_seeds: &'a [u64],
    /// The policy every other is compared with (`--baseline`), else every pair.
    baseline: Option<usize>,
    /// The impact column's name, with `--impact`.
    impact_column: Option<String>,
}

/// Runs the experiment once per rng seed and reports it: with one rng seed exactly as a single
/// run, with more the intervals and the paired comparisons.
fn run_repeated_and_report<G: SimGraph>(
    args: &Args,
    graph: &BvWebGraph,
    csr: &G,
    experiment: &Experiment,
    repeats: Repeats,
    ids: &PageIds,
) -> Result<()> {
    let Repeats {
        rng_seeds,
        baseline,
        impact_column,
    } = repeats;
    eprintln!(
        "{}: {} pages, {} arcs; {} seed sets of random seeds, {} policies, run in parallel",
        graph.basename().display(),
        csr.node_count(),
        csr.arc_count(),
        rng_seeds.len(),
        experiment.policies.len(),
    );
    let start = std::time::Instant::now();
    let mut runs = run_repeated(graph, csr, experiment, rng_seeds, args.save_orders, &|s| {
        eprintln!(
            "  rng seed {}: R = {}, done at {:.2?}",
            s.rng_seed,
            s.reachable,
            start.elapsed()
        )
    })?;
    // Outputs name the graph as the user did (an arc list, not its imported copy in the cache).
    for run in &mut runs {
        run.graph = args.graph.path.display().to_string();
        run.impact_column = impact_column.clone();
    }
    if let [one] = runs.as_slice() {
        return report(one, args.out.as_deref(), args.save_orders, ids);
    }
    let rows = paired(&runs, baseline);
    let mut out = std::io::stdout().lock();
    write_repeat_table(&runs, &mut out)?;
    writeln!(out)?;
    write_paired_headline(&rows, runs.len(), &mut out)?;
    if let Some(dir) = &args.out {
        write_repeat_outputs(&runs, &rows, dir, args.save_orders, ids)?;
        writeln!(
            out,
            "wrote {}/summary.json, summary.csv, summary-stats.csv, paired.csv, throughput.svg, mass.svg",
            dir.display()
        )?;
    }
    Ok(())
}

fn report(summary: &Summary, out: Option<&Path>, save_orders: bool, ids: &PageIds) -> Result<()> {
    write_table(summary, &mut std::io::stdout().lock())?;
    if let Some(dir) = out {
        write_outputs(summary, dir, save_orders, ids)?;
        let impact = if summary.results.iter().any(|r| r.measures.impact.is_some()) {
            ", impact.svg"
        } else {
            ""
        };
        println!(
            "wrote {}/summary.json, summary.csv, throughput.svg, mass.svg{impact}",
            dir.display()
        );
    }
    Ok(())
}

/// Runs an experiment with a progress bar per policy and a line per finished policy on
/// stderr.
pub fn run_with_progress<G: SimGraph>(
    graph: &BvWebGraph,
    csr: &G,
    experiment: &Experiment,
) -> Result<Summary> {
    let mut reachable = 0;
    let mut bar: Option<indicatif::ProgressBar> = None;
    let summary = run_experiment(graph, csr, experiment, &mut |event| match event {
        ExperimentEvent::Ready {
            seeds,
            reachable: r,
            batch,
        } => {
            reachable = r;
            eprintln!(
                "{}: {} pages, {} arcs, {seeds} seeds, R = {r}, K = {batch}",
                graph.basename().display(),
                csr.node_count(),
                csr.arc_count(),
            );
        }
        ExperimentEvent::PolicyStarted(policy) => {
            let b = progress::bar(Some(reachable), "pages");
            b.set_prefix(policy.name());
            bar = Some(b);
        }
        ExperimentEvent::Crawled(_, done) => {
            if let Some(b) = &bar {
                b.set_position(done);
            }
        }
        ExperimentEvent::PolicyDone(run) => {
            if let Some(b) = bar.take() {
                b.finish_and_clear();
            }
            eprintln!("  {:<17} {:.2?}", run.policy.name(), run.crawl_time);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    summary
}
