//! `crawlrank simulate`: replay crawls of a known graph with each policy and score them.

use crate::progress;
use anyhow::{ensure, Result};
use crawlrank_frontier::{Impacts, PolicyConfig};
use crawlrank_graph::{open_graph, BvWebGraph, Cache, Csr, PageIds};
use crawlrank_seeds::Pruning;
use crawlrank_sim::{
    paired, run_experiment, run_repeated, write_comparison, write_comparison_csv, write_outputs,
    write_paired_headline, write_repeat_outputs, write_repeat_table, write_table, Experiment,
    ExperimentEvent, SeedChoice, SimConfig, SimPolicy, Summary,
};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph: a BVGraph basename or an arc-list file.
    #[arg(long)]
    pub graph: PathBuf,
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

pub fn omega(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("'{s}' is not a number"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("omega must be in [0, 1], not {s}"))
    }
}

/// The impact column `column` (a header name or a 1-based number) of the impact table `path`
/// over the pages of `graph`.
fn read_impacts(path: &Path, column: &str, graph: &BvWebGraph) -> Result<Impacts> {
    let pages = crawlrank_impact::Pages::from_graph(graph)?;
    let mut table = crawlrank_impact::read_impact_table(path, &pages)?;
    eprintln!("{}", table.report);
    let index = crawlrank_impact::column_index(path, &table.columns, column)?;
    Ok(Impacts::new(table.values.swap_remove(index)))
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
    let graph = open_graph(&args.graph, cache)?;
    let ids = graph.page_ids()?;
    let impact = match &args.impact {
        Some(path) => Some(read_impacts(path, &args.impact_column, &graph)?),
        None => None,
    };
    let config = SimConfig {
        batch: args.batch,
        rng_seed: args.rng_seed,
        batch_pagerank_threshold: args.batch_pagerank_threshold,
        impact,
        omega: args.omega,
        gamma: args.gamma,
    };
    let csr = graph.to_csr()?;
    let experiment = Experiment {
        seeds,
        policies: policies.clone(),
        config: config.clone(),
    };
    if let Some(rng_seeds) = rng_seeds {
        return run_repeated_and_report(
            &args,
            &graph,
            &csr,
            &experiment,
            &rng_seeds,
            baseline,
            &ids,
        );
    }
    let summary = run_with_progress(&graph, &csr, &experiment)?;
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
        return report(&summary, args.out.as_deref(), args.save_orders, &ids);
    }
    // The paper's experiment: the same policies from as many random seeds, side by side.
    let baseline = Experiment {
        seeds: random(summary.seeds),
        policies,
        config,
    };
    eprintln!("the same policies from {} random seeds:", summary.seeds);
    let random_summary = run_with_progress(&graph, &csr, &baseline)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "from {label} seeds:")?;
    write_table(&summary, &mut out)?;
    writeln!(out, "\nfrom random seeds:")?;
    write_table(&random_summary, &mut out)?;
    writeln!(out, "\n{label} vs random seeds:")?;
    write_comparison(&summary, label, &random_summary, "random", &mut out)?;
    if let Some(dir) = &args.out {
        write_outputs(&summary, &dir.join(label), args.save_orders, &ids)?;
        write_outputs(&random_summary, &dir.join("random"), args.save_orders, &ids)?;
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

/// The rng seeds of a repeated experiment (`--repeat N` or `--rng-seeds LIST`), `None` for a
/// single run.
fn repeat_rng_seeds(args: &Args) -> Result<Option<Vec<u64>>> {
    let seeds = match (args.repeat, &args.rng_seeds) {
        (None, None) => return Ok(None),
        (Some(0), _) => anyhow::bail!("--repeat must be at least 1"),
        (Some(n), _) => (0..n as u64)
            .map(|i| {
                args.rng_seed.checked_add(i).ok_or_else(|| {
                    anyhow::anyhow!(
                        "--rng-seed {} + {i} overflows a 64-bit rng seed",
                        args.rng_seed
                    )
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
            list.clone()
        }
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

/// Runs the experiment once per rng seed and reports it: with one rng seed exactly as a single
/// run, with more the intervals and the paired comparisons.
fn run_repeated_and_report(
    args: &Args,
    graph: &BvWebGraph,
    csr: &Csr,
    experiment: &Experiment,
    rng_seeds: &[u64],
    baseline: Option<usize>,
    ids: &PageIds,
) -> Result<()> {
    eprintln!(
        "{}: {} pages, {} arcs; {} seed sets of random seeds, {} policies, run in parallel",
        graph.basename().display(),
        csr.num_nodes(),
        csr.num_arcs(),
        rng_seeds.len(),
        experiment.policies.len(),
    );
    let start = std::time::Instant::now();
    let runs = run_repeated(graph, csr, experiment, rng_seeds, args.save_orders, &|s| {
        eprintln!(
            "  rng seed {}: R = {}, done at {:.2?}",
            s.rng_seed,
            s.reachable,
            start.elapsed()
        )
    })?;
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
pub fn run_with_progress(
    graph: &BvWebGraph,
    csr: &Csr,
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
                csr.num_nodes(),
                csr.num_arcs(),
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
