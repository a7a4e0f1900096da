//! Repeated experiments: the same experiment over several random seed sets, summarized by
//! mean, standard deviation and 95% interval per policy and checkpoint, and every pair of
//! policies compared seed set by seed set (win counts and the Wilcoxon signed-rank test).
//!
//! One seed set is one run of [`run_experiment`](crate::run_experiment) with
//! `--rng-seed s`: its seeds are drawn with `s`, and the `random` policy uses `s` too, so run
//! `s` of a repeated experiment is exactly the single run with that rng seed. The runs share
//! the graph, its decoded form and the reference PageRank (computed once), and run in
//! parallel on rayon's threads.

use crate::checkpoints::POINTS;
use crate::experiment::{run_with_pagerank, Experiment};
use crate::graph::SimGraph;
use crate::measures::Measures;
use crate::reference::reference_pagerank;
use crate::report::{
    charts, curves, file_name, summary_json, write_orders, write_tidy_csv, Band, Summary,
};
use crate::seeds::SeedChoice;
use anyhow::{bail, ensure, Context, Result};
use crawlrank_graph::atomic::write_file;
use crawlrank_graph::csv::csv_field;
use crawlrank_graph::table::write_aligned;
use crawlrank_graph::{BvWebGraph, PageIds};
use crawlrank_stats::{Interval, Wins};
use rayon::prelude::*;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// The checkpoint the paired comparison prints on stdout (FICA Fig. 3's 15% crawled).
pub const HEADLINE_PERCENT: usize = 15;

/// Runs `experiment` (whose seeds must be [`SeedChoice::Random`]) once per rng seed in
/// `rng_seeds`, in parallel, each run as the single experiment with that rng seed. Without
/// `keep_orders` the crawl orders are dropped once measured. `done` is called as each run
/// ends. The summaries come back in the order of `rng_seeds`.
pub fn run_repeated<G: SimGraph>(
    graph: &BvWebGraph,
    csr: &G,
    experiment: &Experiment,
    rng_seeds: &[u64],
    keep_orders: bool,
    done: &(dyn Fn(&Summary) + Sync),
) -> Result<Vec<Summary>> {
    ensure!(
        !rng_seeds.is_empty(),
        "a repeated experiment needs at least one rng seed"
    );
    let SeedChoice::Random { count, .. } = experiment.seeds else {
        bail!("a repeated experiment draws random seeds; it cannot repeat a fixed seed set");
    };
    ensure!(
        csr.node_count() > 0,
        "{} is an empty graph",
        graph.basename().display()
    );
    let pagerank = Arc::new(reference_pagerank(graph, csr)?);
    // The batch policies compute a PageRank on every thread at each reorder: their seed sets
    // run one after the other, the other policies' seed sets in parallel (docs/performance.md).
    let (parallel, serial): (Vec<_>, Vec<_>) = experiment
        .policies
        .iter()
        .partition(|p| !matches!(p.name(), "batch-pagerank" | "partial-pagerank"));
    let run_one = |rng_seed: u64, policies: &[crate::SimPolicy]| -> Result<Option<Summary>> {
        if policies.is_empty() {
            return Ok(None);
        }
        let mut one = experiment.clone();
        one.seeds = SeedChoice::Random { count, rng_seed };
        one.config.rng_seed = rng_seed;
        one.policies = policies.to_vec();
        let mut summary = run_with_pagerank(graph, csr, &one, pagerank.clone(), &mut |_| {})
            .with_context(|| format!("the run with rng seed {rng_seed}"))?;
        if !keep_orders {
            for r in &mut summary.results {
                r.run.order = Vec::new();
                r.run.final_scores = Vec::new();
            }
        }
        Ok(Some(summary))
    };
    let parallel: Vec<Option<Summary>> = rng_seeds
        .par_iter()
        .map(|&s| run_one(s, &parallel))
        .collect::<Result<_>>()?;
    let mut out = Vec::with_capacity(rng_seeds.len());
    for (&rng_seed, light) in rng_seeds.iter().zip(parallel) {
        let heavy = run_one(rng_seed, &serial)?;
        let summary = match (light, heavy) {
            (Some(mut l), Some(h)) => {
                // Both halves crawled from the same seeds; restore the policies' order.
                let mut results: Vec<_> = l.results.drain(..).chain(h.results).collect();
                results
                    .sort_by_key(|r| experiment.policies.iter().position(|&p| p == r.run.policy));
                l.results = results;
                l
            }
            (Some(l), None) => l,
            (None, Some(h)) => h,
            (None, None) => bail!("a repeated experiment needs at least one policy"),
        };
        done(&summary);
        out.push(summary);
    }
    Ok(out)
}

/// The measures compared pair by pair (`mean_pagerank`, a per-window value, is not).
const PAIRED: [&str; 3] = ["throughput", "mass", "impact"];

/// The value of `measure` at `percent` (`None`: τ_b) of policy `p` in every run.
fn values(runs: &[Summary], p: usize, measure: &str, percent: Option<usize>) -> Option<Vec<f64>> {
    runs.iter()
        .map(|s| {
            let m = &s.results[p].measures;
            match percent {
                None => Some(m.kendall_tau),
                Some(pc) => curves(m)
                    .into_iter()
                    .find(|(n, _)| *n == measure)
                    .map(|(_, c)| Measures::at(c, pc)),
            }
        })
        .collect()
}

/// One paired comparison of two policies on one measure (`throughput`, `mass`, `impact` or
/// `tau_b`) at one checkpoint (`at`: % crawled, `None` for τ_b), paired by seed set.
pub type Paired = crawlrank_stats::Paired<Option<usize>>;

/// Every pair of policies (with `baseline`, the index of a policy, only each policy against
/// it), on throughput, mass, impact (when measured) at every percent and on τ_b.
pub fn paired(runs: &[Summary], baseline: Option<usize>) -> Vec<Paired> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let n = first.results.len();
    let name = |i: usize| first.results[i].run.policy.name().to_string();
    let pairs = crawlrank_stats::pairs(n, baseline);
    let mut rows = Vec::new();
    let points: Vec<(&'static str, Option<usize>)> = PAIRED
        .iter()
        .flat_map(|&m| (1..=POINTS).map(move |p| (m, Some(p))))
        .chain(std::iter::once(("tau_b", None)))
        .collect();
    for &(measure, percent) in &points {
        for &(a, b) in &pairs {
            let (Some(va), Some(vb)) = (
                values(runs, a, measure, percent),
                values(runs, b, measure, percent),
            ) else {
                continue;
            };
            rows.push(Paired {
                measure,
                at: percent,
                a: name(a),
                b: name(b),
                wins: Wins::of(&va, &vb),
            });
        }
    }
    rows
}

/// Prints the repeated experiment's table: per policy, `mean ± half-width` of the 95%
/// interval of throughput and mass (and impact) at 5–45% crawled and of τ_b, and the mean
/// crawl time.
pub fn write_repeat_table(runs: &[Summary], w: &mut impl Write) -> std::io::Result<()> {
    let Some(first) = runs.first() else {
        return Ok(());
    };
    let rng: Vec<String> = runs.iter().map(|s| s.rng_seed.to_string()).collect();
    let r: Vec<u64> = runs.iter().map(|s| s.reachable).collect();
    writeln!(
        w,
        "{}: {} pages, {} arcs; {} seed sets of {} random seeds (rng seeds {}); R = {}..{} reachable pages",
        first.graph,
        first.nodes,
        first.arcs,
        runs.len(),
        first.seeds,
        rng.join(","),
        r.iter().min().unwrap_or(&0),
        r.iter().max().unwrap_or(&0),
    )?;
    writeln!(
        w,
        "mean ± half-width of the 95% confidence interval (Student t, {} degrees of freedom)",
        runs.len() - 1
    )?;
    let impact = first.results.iter().any(|r| r.measures.impact.is_some());
    let mut measures = vec![("hot", "throughput"), ("mass", "mass")];
    if impact {
        measures.push(("impact", "impact"));
    }
    let mut header = vec!["policy".to_string()];
    for (label, _) in &measures {
        header.extend(first.percents.iter().map(|p| format!("{label}@{p}%")));
    }
    header.extend(["tau_b", "time"].map(String::from));
    let mut rows = vec![header];
    let cell = |v: Option<Vec<f64>>| match v {
        Some(v) => {
            let i = Interval::of(&v);
            format!("{:.3} ± {:.3}", i.mean, i.half_width)
        }
        None => "-".into(),
    };
    for (p, r) in first.results.iter().enumerate() {
        let mut row = vec![r.run.policy.name().to_string()];
        for (_, m) in &measures {
            row.extend(
                first
                    .percents
                    .iter()
                    .map(|&pc| cell(values(runs, p, m, Some(pc)))),
            );
        }
        row.push(cell(values(runs, p, "tau_b", None)));
        let secs: f64 = runs
            .iter()
            .map(|s| s.results[p].run.crawl_time.as_secs_f64())
            .sum::<f64>()
            / runs.len() as f64;
        row.push(format!("{secs:.2}s"));
        rows.push(row);
    }
    write_aligned(&rows, w)
}

/// Prints the paired comparisons of hot-page share at [`HEADLINE_PERCENT`] crawled.
pub fn write_paired_headline(
    rows: &[Paired],
    runs: usize,
    w: &mut impl Write,
) -> std::io::Result<()> {
    writeln!(
        w,
        "paired by seed set, hot pages at {HEADLINE_PERCENT}% crawled: wins of each over {runs} seed sets (ties), two-sided Wilcoxon signed-rank p"
    )?;
    for r in rows
        .iter()
        .filter(|r| r.measure == "throughput" && r.at == Some(HEADLINE_PERCENT))
    {
        writeln!(
            w,
            "  {} vs {}: {}–{} ({} ties), p = {:.4}",
            r.a, r.b, r.wins.a_wins, r.wins.b_wins, r.wins.ties, r.wins.p
        )?;
    }
    Ok(())
}

/// Writes a repeated experiment into `dir`: `summary.json` (every run as a single run writes
/// it, and the statistics), `summary.csv` (tidy: one row per run, policy, checkpoint and
/// measure), `summary-stats.csv` (one row per policy, checkpoint and measure: n, mean, sd and
/// the 95% interval), `paired.csv` (`rows`), `throughput.svg` and `mass.svg` (and
/// `impact.svg`) with bands, and with `save_orders` each run's orders in `dir/rng-<seed>/`.
pub fn write_repeat_outputs(
    runs: &[Summary],
    rows: &[Paired],
    dir: &Path,
    save_orders: bool,
    ids: &PageIds,
) -> Result<()> {
    let Some(first) = runs.first() else {
        return Ok(());
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let graph = &first.graph;
    let policies: Vec<&str> = first.results.iter().map(|r| r.run.policy.name()).collect();
    let interval = |v: &[f64]| -> serde_json::Value {
        let i = Interval::of(v);
        serde_json::json!({"n": i.n, "mean": i.mean, "sd": i.sd, "ci95_low": i.low(), "ci95_high": i.high()})
    };
    let mut stats = Vec::new();
    for (p, name) in policies.iter().enumerate() {
        let mut per = serde_json::Map::new();
        per.insert("policy".into(), (*name).into());
        for (measure, _) in curves(&first.results[p].measures) {
            let at: serde_json::Map<String, serde_json::Value> = first
                .percents
                .iter()
                .filter_map(|&pc| {
                    Some((
                        pc.to_string(),
                        interval(&values(runs, p, measure, Some(pc))?),
                    ))
                })
                .collect();
            per.insert(format!("{measure}_at"), at.into());
        }
        if let Some(t) = values(runs, p, "tau_b", None) {
            per.insert("kendall_tau_b".into(), interval(&t));
        }
        stats.push(serde_json::Value::Object(per));
    }
    let json = serde_json::json!({
        "graph": graph,
        "nodes": first.nodes,
        "arcs": first.arcs,
        "seeds": first.seeds,
        "seed_sets": runs.len(),
        "rng_seeds": runs.iter().map(|s| s.rng_seed).collect::<Vec<_>>(),
        "interval": "95% confidence interval of the mean, Student t with n - 1 degrees of freedom",
        "paired_test": "two-sided Wilcoxon signed-rank (zeros dropped; exact up to 25 non-zero differences, else normal approximation with tie correction): paired.csv",
        "stats": stats,
        "runs": runs.iter().map(summary_json).collect::<Vec<_>>(),
    });
    write_file(&dir.join("summary.json"), |w| {
        serde_json::to_writer_pretty(&mut *w, &json)?;
        writeln!(w)?;
        Ok(())
    })?;
    let csv_name = csv_field(graph);
    write_file(&dir.join("summary.csv"), |w| Ok(write_tidy_csv(runs, w)?))?;
    write_file(&dir.join("summary-stats.csv"), |w| {
        writeln!(
            w,
            "graph,policy,percent,measure,n,mean,sd,ci95_low,ci95_high"
        )?;
        for (p, name) in policies.iter().enumerate() {
            let mut points: Vec<(&str, Option<usize>)> = curves(&first.results[p].measures)
                .into_iter()
                .flat_map(|(m, _)| (1..=POINTS).map(move |j| (m, Some(j))))
                .collect();
            points.push(("tau_b", None));
            for (measure, percent) in points {
                let Some(v) = values(runs, p, measure, percent) else {
                    continue;
                };
                let i = Interval::of(&v);
                let pc = percent.map_or(String::new(), |p| p.to_string());
                writeln!(w, "{csv_name},{name},{pc},{measure},{}", i.csv_cells())?;
            }
        }
        Ok(())
    })?;
    write_file(&dir.join("paired.csv"), |w| {
        writeln!(
            w,
            "graph,measure,percent,policy_a,policy_b,seed_sets,a_wins,b_wins,ties,wilcoxon_p"
        )?;
        for r in rows {
            let pc = r.at.map_or(String::new(), |p| p.to_string());
            writeln!(w, "{csv_name},{},{pc},{}", r.measure, r.csv_cells())?;
        }
        Ok(())
    })?;
    if save_orders {
        for s in runs {
            let sub = dir.join(format!("rng-{}", s.rng_seed));
            std::fs::create_dir_all(&sub)
                .with_context(|| format!("cannot create {}", sub.display()))?;
            write_orders(s, &sub, ids)?;
        }
    }
    let title = format!(
        "{} — {} seed sets of {} seeds, mean and 95% CI",
        file_name(graph),
        runs.len(),
        first.seeds
    );
    let bands = |measure: &str| -> Vec<Band> {
        (0..policies.len())
            .filter_map(|p| {
                let (mut mean, mut low, mut high) = (Vec::new(), Vec::new(), Vec::new());
                for j in 1..=POINTS {
                    let i = Interval::of(&values(runs, p, measure, Some(j))?);
                    mean.push(i.mean);
                    low.push(i.low().max(0.0));
                    high.push(i.high().min(1.0));
                }
                Some((policies[p].to_string(), mean, low, high))
            })
            .collect()
    };
    for chart in charts(first.impact_column.as_deref()) {
        let bands = bands(chart.measure);
        // Impact is drawn only when the crawls were measured by it.
        if chart.measure == "impact" && bands.is_empty() {
            continue;
        }
        chart.draw_bands(dir, &title, &bands)?;
    }
    Ok(())
}
