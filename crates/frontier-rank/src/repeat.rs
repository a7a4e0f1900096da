//! A repeated offline experiment: the same evaluation under N rng seeds — N splits of the
//! frontier into training and test parts, N random rankings, and with a downloaded set made by
//! a BFS from random seeds N seed sets too — reported as a reviewer needs it: per method and
//! `x` the mean, standard deviation and 95% confidence interval of each measure, with `k` (the
//! pages selected) beside it, and per pair of methods the runs each wins and the Wilcoxon
//! signed-rank p-value (`crawlrank_stats`).

use crate::evaluate::{Evaluation, OmegaChoice};
use crate::measures::PERMILLES;
use crate::report::{
    cell, impact_chart, omega_chart, pct, summary_json, write_tidy_csv, Labels, TABLE_PERMILLES,
};
use anyhow::{Context, Result};
use crawlrank_graph::atomic::write_file;
use crawlrank_graph::csv::csv_field;
use crawlrank_plot::Series;
use crawlrank_stats::{Interval, Wins};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The measures of a run, by name: impact relative to the ideal, and the mean-PageRank ratio.
pub const MEASURES: [&str; 2] = ["impact_relative", "pagerank_ratio"];

/// The value of `measure` for method `m` at `permille` in each run (NaN where undefined).
fn values(runs: &[Evaluation], m: usize, measure: &str, permille: u32) -> Vec<f64> {
    runs.iter()
        .map(|e| {
            let point = e.methods[m].curve.iter().find(|p| p.permille == permille);
            match (measure, point) {
                ("impact_relative", Some(p)) => p.impact,
                ("pagerank_ratio", Some(p)) => p.pagerank.unwrap_or(f64::NAN),
                _ => f64::NAN,
            }
        })
        .collect()
}

/// The interval of the defined values among `v`, if any.
fn interval(v: &[f64]) -> Option<Interval> {
    let defined: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    (!defined.is_empty()).then(|| Interval::of(&defined))
}

/// The range of `k` (pages selected at `permille`) over the runs: `"8"` or `"7–9"` (`"-"`
/// when no run measured it).
fn k_range(runs: &[Evaluation], permille: u32) -> String {
    let ks: Vec<usize> = runs
        .iter()
        .filter_map(|e| {
            e.methods
                .first()?
                .curve
                .iter()
                .find(|p| p.permille == permille)
                .map(|p| p.pages)
        })
        .collect();
    if ks.is_empty() {
        "-".into()
    } else {
        span(ks.into_iter())
    }
}

/// `"a"` or `"a–b"` for the smallest and largest of `v` (at least one value).
fn span(v: impl Iterator<Item = usize>) -> String {
    let (lo, hi) = v.fold((usize::MAX, 0), |(lo, hi), x| (lo.min(x), hi.max(x)));
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    }
}

/// `mean ± half-width` of the 95% interval, or `-` when undefined in every run.
fn mean_cell(v: &[f64]) -> String {
    match interval(v) {
        Some(i) if i.n > 1 => format!("{}±{:.3}", cell(i.mean), i.half_width),
        Some(i) => cell(i.mean),
        None => "-".into(),
    }
}

/// Prints the repeated experiment's table: the sizes over the runs, then per method the mean
/// ± 95% half-width of the impact relative to the ideal at the table's `x` and of the
/// mean-PageRank ratio at 10%, under a row of `k`.
pub fn write_repeat_table(runs: &[Evaluation], out: &mut dyn Write) -> Result<()> {
    let Some(first) = runs.first() else {
        return Ok(());
    };
    let seeds: Vec<String> = runs.iter().map(|e| e.config.rng_seed.to_string()).collect();
    writeln!(
        out,
        "{} runs (rng seeds {}): D {} pages; F {} pages, test {} ({} with impact)",
        runs.len(),
        seeds.join(","),
        span(runs.iter().map(|e| e.downloaded)),
        span(runs.iter().map(|e| e.frontier.len())),
        span(runs.iter().map(|e| e.test_len())),
        span(runs.iter().map(|e| e.test_with_impact())),
    )?;
    if first.config.omega == OmegaChoice::Tune {
        let tuned: Vec<String> = runs.iter().map(|e| format!("{:.1}", e.omega)).collect();
        writeln!(out, "omega tuned per run: {}", tuned.join(", "))?;
    } else {
        writeln!(out, "omega = {:.1}", first.omega)?;
    }
    writeln!(
        out,
        "impact relative to the ideal on the test frontier, mean ± 95% CI half-width over {} runs:",
        runs.len()
    )?;
    let width = 14;
    write!(out, "{:<12}", "method")?;
    for p in TABLE_PERMILLES {
        write!(out, " {:>width$}", pct(p))?;
    }
    writeln!(out, " {:>width$}", "PR@10%")?;
    write!(out, "{:<12}", "k (pages)")?;
    for p in TABLE_PERMILLES {
        write!(out, " {:>width$}", k_range(runs, p))?;
    }
    writeln!(out, " {:>width$}", k_range(runs, 100))?;
    for (m, method) in first.methods.iter().enumerate() {
        write!(out, "{:<12}", method.method.name())?;
        for p in TABLE_PERMILLES {
            write!(
                out,
                " {:>width$}",
                mean_cell(&values(runs, m, "impact_relative", p))
            )?;
        }
        writeln!(
            out,
            " {:>width$}",
            mean_cell(&values(runs, m, "pagerank_ratio", 100))
        )?;
    }
    Ok(())
}

/// One row of a repeated experiment's statistics (`summary-stats.csv`): a method's measure at
/// one `x`, over the runs where it is defined.
#[derive(Debug, Clone)]
pub struct Stat {
    /// The method's name.
    pub method: String,
    /// `impact_relative` or `pagerank_ratio`.
    pub measure: &'static str,
    /// `x`, in per mille of the test frontier.
    pub permille: u32,
    /// The pages selected at `x` over the runs: `"8"` or `"7–9"`.
    pub k: String,
    /// n, mean, standard deviation and 95% interval of the measure.
    pub interval: Interval,
}

/// Every method's statistics on both measures at every `x` of [`PERMILLES`] where the measure
/// is defined in at least one run (the rows of `summary-stats.csv`).
pub fn stats(runs: &[Evaluation]) -> Vec<Stat> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for (m, method) in first.methods.iter().enumerate() {
        for measure in MEASURES {
            for permille in PERMILLES {
                let Some(interval) = interval(&values(runs, m, measure, permille)) else {
                    continue;
                };
                rows.push(Stat {
                    method: method.method.name().to_string(),
                    measure,
                    permille,
                    k: k_range(runs, permille),
                    interval,
                });
            }
        }
    }
    rows
}

/// One paired comparison of two methods on one measure at one `x` (`at`, in per mille of the
/// test frontier).
pub type Paired = crawlrank_stats::Paired<u32>;

/// Every pair of methods (with `baseline`, the index of a method, only each method against
/// it), on both measures at every `x` of [`PERMILLES`].
pub fn paired(runs: &[Evaluation], baseline: Option<usize>) -> Vec<Paired> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let n = first.methods.len();
    let name = |i: usize| first.methods[i].method.name().to_string();
    let pairs = crawlrank_stats::pairs(n, baseline);
    let mut rows = Vec::new();
    for measure in MEASURES {
        if measure == "pagerank_ratio" && !first.has_pagerank {
            continue;
        }
        for permille in PERMILLES {
            for &(a, b) in &pairs {
                let wins = Wins::of(
                    &values(runs, a, measure, permille),
                    &values(runs, b, measure, permille),
                );
                rows.push(Paired {
                    measure,
                    at: permille,
                    a: name(a),
                    b: name(b),
                    wins,
                });
            }
        }
    }
    rows
}

/// Prints the paired comparisons of the impact relative to the ideal at `permille`: per pair,
/// the runs each wins and the p-value.
pub fn write_paired_headline(rows: &[Paired], permille: u32, out: &mut dyn Write) -> Result<()> {
    let at: Vec<&Paired> = rows
        .iter()
        .filter(|r| r.measure == "impact_relative" && r.at == permille)
        .collect();
    if at.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "paired, impact relative to the ideal at {} (runs won, ties; two-sided Wilcoxon signed-rank p):",
        pct(permille)
    )?;
    for r in at {
        writeln!(
            out,
            "  {:<11} vs {:<11} {:>3} : {:<3} ({} ties)  p = {:.4}",
            r.a, r.b, r.wins.a_wins, r.wins.b_wins, r.wins.ties, r.wins.p
        )?;
    }
    Ok(())
}

/// Writes a repeated experiment into `dir`: `summary.json` (every run as a single run writes
/// it, and the statistics), `summary.csv` (tidy, every run's rows), `summary-stats.csv` (per
/// method, `x` and measure: n, mean, sd, the 95% interval and the range of `k`), `paired.csv`
/// (`rows`), `impact.svg` (means over 95% bands) and, with tuning, `omega.svg` (the tuning
/// criterion's mean over its band). Returns the files written.
pub fn write_repeat_outputs(
    runs: &[Evaluation],
    rows: &[Paired],
    dir: &Path,
    labels: &Labels,
) -> Result<Vec<PathBuf>> {
    let Some(first) = runs.first() else {
        return Ok(Vec::new());
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    let stats: Vec<_> = first
        .methods
        .iter()
        .enumerate()
        .map(|(m, method)| {
            let at = |measure: &str| {
                PERMILLES
                    .iter()
                    .filter_map(|&p| {
                        let i = interval(&values(runs, m, measure, p))?;
                        Some((
                            (p as f64 / 10.0).to_string(),
                            json!({"n": i.n, "mean": i.mean, "sd": i.sd,
                                   "ci95_low": i.low(), "ci95_high": i.high()}),
                        ))
                    })
                    .collect::<serde_json::Map<_, _>>()
            };
            json!({"method": method.method.name(),
                   "impact_relative_at": at("impact_relative"),
                   "pagerank_ratio_at": at("pagerank_ratio")})
        })
        .collect();
    let json = json!({
        "graph": labels.graph,
        "impact_column": labels.impact_column,
        "runs_count": runs.len(),
        "rng_seeds": runs.iter().map(|e| e.config.rng_seed).collect::<Vec<_>>(),
        "interval": "95% confidence interval of the mean over the runs where the measure is defined, Student t with n - 1 degrees of freedom",
        "paired_test": "two-sided Wilcoxon signed-rank over the runs where both are defined (zeros dropped; exact up to 25 non-zero differences, else normal approximation with tie correction): paired.csv",
        "stats": stats,
        "runs": runs.iter().map(|e| summary_json(e, labels)).collect::<Vec<_>>(),
    });
    let path = dir.join("summary.json");
    let text = serde_json::to_string_pretty(&json)?;
    write_file(&path, |w| Ok(writeln!(w, "{text}")?))?;
    written.push(path);
    let path = dir.join("summary.csv");
    write_file(&path, |w| Ok(write_tidy_csv(runs, labels, w)?))?;
    written.push(path);
    let (graph, column) = (csv_field(labels.graph), csv_field(labels.impact_column));
    let path = dir.join("summary-stats.csv");
    write_file(&path, |w| {
        writeln!(
            w,
            "graph,impact_column,method,x_percent,k,measure,n,mean,sd,ci95_low,ci95_high"
        )?;
        for r in self::stats(runs) {
            let (method, k, measure) = (&r.method, &r.k, r.measure);
            let (x, cells) = (r.permille as f64 / 10.0, r.interval.csv_cells());
            writeln!(w, "{graph},{column},{method},{x},{k},{measure},{cells}")?;
        }
        Ok(())
    })?;
    written.push(path);
    let path = dir.join("paired.csv");
    write_file(&path, |w| {
        writeln!(
            w,
            "graph,impact_column,measure,x_percent,method_a,method_b,runs,a_wins,b_wins,ties,wilcoxon_p"
        )?;
        for r in rows {
            let x = r.at as f64 / 10.0;
            writeln!(w, "{graph},{column},{},{x},{}", r.measure, r.csv_cells())?;
        }
        Ok(())
    })?;
    written.push(path);
    let series: Vec<Series> = first
        .methods
        .iter()
        .enumerate()
        .map(|(m, method)| {
            let points = PERMILLES.iter().filter_map(|&p| {
                let i = interval(&values(runs, m, "impact_relative", p))?;
                Some((p as f64 / 10.0, i.mean, i.low().max(0.0), i.high()))
            });
            Series::band(method.method.name(), points)
        })
        .collect();
    let path = dir.join("impact.svg");
    // A chart's title: the graph, what it shows, and over how many runs.
    let title = |what: String| {
        format!(
            "{}: {what} — {} runs, mean and 95% CI",
            labels.short_graph(),
            runs.len()
        )
    };
    let column = labels.impact_column;
    let what = format!("impact '{column}' relative to the ideal, test frontier");
    impact_chart(title(what), labels).save(&path, &series)?;
    written.push(path);
    if first.tuning.is_some() {
        let omegas: Vec<f64> = first.tuning.iter().flatten().map(|(w, _)| *w).collect();
        let points = omegas.iter().enumerate().filter_map(|(j, &w)| {
            let v: Vec<f64> = runs
                .iter()
                .map(|e| e.tuning.as_ref().map_or(f64::NAN, |t| t[j].1))
                .collect();
            let i = interval(&v)?;
            Some((w, i.mean, i.low(), i.high()))
        });
        let path = dir.join("omega.svg");
        let what =
            format!("RW-EG on the training frontier, impact '{column}', mean over x = 1..10%");
        omega_chart(title(what)).save(&path, &[Series::band("rw-eg", points)])?;
        written.push(path);
    }
    Ok(written)
}
