//! Presenting simulation results: a table per run, `summary.json`, `summary.csv` with every
//! curve point, crawl orders, and SVG plots in the style of FICA Fig. 3 / IECA Figs. 4–6.
//!
//! Every file is written atomically, so an interrupted run never leaves a summary that looks
//! complete.

use crate::measures::Measures;
use crate::reference::Reference;
use crate::run::{PolicyRun, SimConfig};
use anyhow::{Context, Result};
use crawlrank_graph::access::GraphSize;
use crawlrank_graph::atomic::write_file;
use crawlrank_graph::csv::csv_field;
use crawlrank_graph::table::write_aligned;
use crawlrank_graph::PageIds;
use crawlrank_plot::{Corner, LineChart, Series, YAxis};
use std::io::Write;
use std::path::Path;

pub use crate::checkpoints::TABLE_PERCENTS;

/// One policy's run and its measures.
#[derive(Debug, Clone)]
pub struct PolicyResult {
    /// The crawl: its order and its costs.
    pub run: PolicyRun,
    /// How good the order is (throughput, PageRank mass, τ_b).
    pub measures: Measures,
}

/// A whole simulation: the setting and every policy's result.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The graph's basename, as given.
    pub graph: String,
    /// Pages of the graph.
    pub nodes: u64,
    /// Arcs of the graph.
    pub arcs: u64,
    /// Number of seeds every crawl starts from.
    pub seeds: usize,
    /// How the seeds were chosen, e.g. "100 random (rng seed 42)" or a file name.
    pub seed_source: String,
    /// Seed of the `random` policy's generator ([`SimConfig::rng_seed`](crate::SimConfig)).
    pub rng_seed: u64,
    /// `R`: the pages reachable from the seeds, where every crawl ends.
    pub reachable: u64,
    /// One result per policy, in report order.
    pub results: Vec<PolicyResult>,
    /// The percentages of `R` crawled the table and `summary.json`'s `*_at` report
    /// ([`TABLE_PERCENTS`] by default).
    pub percents: Vec<usize>,
    /// Named parameters of the policies (β, δ's schedule), recorded in `summary.json`.
    pub parameters: Vec<(&'static str, f64)>,
    /// The impact column the crawls were measured by (`simulate --impact`), named in
    /// `summary.json` and the impact plot's title.
    pub impact_column: Option<String>,
}

impl Summary {
    /// The summary of `results`: crawls of `graph` (`csr`, its decoded form) from `seeds`
    /// seeds chosen as `seed_source` says, under `config`, measured against `reference`; no
    /// impact column is named (set [`Summary::impact_column`] for one).
    pub fn new(
        graph: String,
        csr: &impl GraphSize,
        seeds: usize,
        seed_source: String,
        reference: &Reference,
        config: &SimConfig,
        results: Vec<PolicyResult>,
    ) -> Self {
        Summary {
            graph,
            nodes: csr.node_count() as u64,
            arcs: csr.arc_count(),
            seeds,
            seed_source,
            rng_seed: config.rng_seed,
            reachable: reference.reachable,
            results,
            percents: config.percents.clone(),
            parameters: config.parameters(),
            impact_column: None,
        }
    }
}

/// Whether the crawls were also measured by impact (`simulate --impact`).
fn has_impact(s: &Summary) -> bool {
    s.results.iter().any(|r| r.measures.impact.is_some())
}

/// Prints the table: throughput and PageRank mass at 5–45% crawled, with impacts the impact
/// relative to the ideal order there too, τ_b, and costs.
pub fn write_table(s: &Summary, w: &mut impl Write) -> std::io::Result<()> {
    let impact = has_impact(s);
    writeln!(
        w,
        "{}: {} pages, {} arcs; {} seeds ({}); R = {} reachable pages",
        s.graph, s.nodes, s.arcs, s.seeds, s.seed_source, s.reachable
    )?;
    let percents = &s.percents;
    let pct =
        |label: &str| -> Vec<String> { percents.iter().map(|p| format!("{label}@{p}%")).collect() };
    let mut header = vec!["policy".to_string()];
    header.extend(pct("hot"));
    header.extend(pct("mass"));
    if impact {
        header.extend(pct("impact"));
    }
    header.extend(["tau_b", "time", "Marcs/s", "peak frontier", "peak RSS"].map(String::from));
    let mut rows = vec![header];
    for r in &s.results {
        let m = &r.measures;
        let mut row = vec![r.run.policy.name().to_string()];
        let at = |c: &[f64]| -> Vec<String> {
            percents
                .iter()
                .map(|&p| format!("{:.3}", Measures::at(c, p)))
                .collect()
        };
        row.extend(at(&m.throughput));
        row.extend(at(&m.mass));
        if impact {
            row.extend(percents.iter().map(|&p| match &m.impact {
                Some(c) => format!("{:.3}", Measures::at(c, p)),
                None => "-".into(),
            }));
        }
        let secs = r.run.crawl_time.as_secs_f64();
        row.push(format!("{:.3}", m.kendall_tau));
        if matches!(r.run.policy, crate::SimPolicy::Outside(_)) {
            // An order scored by `score-order` was not crawled here: no time to report.
            row.extend(["-".to_string(), "-".to_string()]);
        } else {
            row.push(format!("{secs:.2}s"));
            row.push(format!("{:.1}", r.run.arcs as f64 / secs.max(1e-9) / 1e6));
        }
        row.push(r.run.peak_frontier.to_string());
        row.push(
            r.run
                .peak_rss_bytes
                .map_or("-".into(), |b| format!("{:.0} MiB", b as f64 / 1048576.0)),
        );
        rows.push(row);
    }
    write_aligned(&rows, w)
}

/// Writes `summary.json`, `summary.csv`, `throughput.svg`, `mass.svg`, with impacts
/// `impact.svg` (and `impact` rows in the tidy `summary.csv`: [`write_tidy_csv`]), and, with `save_orders`,
/// `<policy>.order` into `dir`: the crawled pages in crawl order, one id per line, each page
/// named by its id in `ids` (the graph's [`page_ids`](crawlrank_graph::BvWebGraph::page_ids)).
pub fn write_outputs(s: &Summary, dir: &Path, save_orders: bool, ids: &PageIds) -> Result<()> {
    let impact = has_impact(s);
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_file(&dir.join("summary.json"), |w| {
        serde_json::to_writer_pretty(&mut *w, &summary_json(s))?;
        writeln!(w)?;
        Ok(())
    })?;
    write_file(&dir.join("summary.csv"), |w| {
        Ok(write_tidy_csv(std::slice::from_ref(s), w)?)
    })?;
    if save_orders {
        write_orders(s, dir, ids)?;
    }
    let title = format!(
        "{} — {} seeds, R = {}",
        file_name(&s.graph),
        s.seeds,
        s.reachable
    );
    for chart in charts(s.impact_column.as_deref()) {
        if chart.measure == "impact" && !impact {
            continue;
        }
        let series: Vec<(String, Vec<f64>)> = s
            .results
            .iter()
            .filter_map(|r| {
                let (_, c) = curves(&r.measures)
                    .into_iter()
                    .find(|(m, _)| *m == chart.measure)?;
                Some((r.run.policy.name().to_string(), c.to_vec()))
            })
            .collect();
        chart.draw_lines(dir, &title, &series)?;
    }
    Ok(())
}

/// Writes each policy's crawl order into `dir` as `POLICY.order`: one page a line, by the
/// graph's own ids (`ids`).
pub(crate) fn write_orders(s: &Summary, dir: &Path, ids: &PageIds) -> Result<()> {
    for r in &s.results {
        write_file(&dir.join(format!("{}.order", r.run.policy)), |w| {
            for id in ids.ids_of(&r.run.order) {
                writeln!(w, "{id}")?;
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// The last part of the graph's basename `graph`, for the charts' titles.
pub(crate) fn file_name(graph: &str) -> String {
    Path::new(graph)
        .file_name()
        .map_or(graph.to_string(), |n| n.to_string_lossy().into_owned())
}

/// One of a simulation's charts (of one run, or the bands of repeated runs).
pub(crate) struct Chart {
    /// The measure drawn, as [`curves`] names it.
    pub measure: &'static str,
    /// The SVG file's name.
    pub file: &'static str,
    /// The title's head, before the setting.
    pub head: String,
    /// The y axis's label.
    pub y_label: &'static str,
}

impl Chart {
    /// Draws `series` (one curve each) into `dir`, titled `head: setting`.
    pub(crate) fn draw_lines(
        &self,
        dir: &Path,
        setting: &str,
        series: &[(String, Vec<f64>)],
    ) -> Result<()> {
        let title = format!("{}: {setting}", self.head);
        plot(&dir.join(self.file), &title, self.y_label, series)
    }

    /// Draws `bands` (a mean over its interval each) into `dir`, titled `head: setting`.
    pub(crate) fn draw_bands(&self, dir: &Path, setting: &str, bands: &[Band]) -> Result<()> {
        let title = format!("{}: {setting}", self.head);
        plot_bands(&dir.join(self.file), &title, self.y_label, bands)
    }
}

/// The charts of a simulation: throughput, PageRank mass and impact (measured by
/// `impact_column`; drawn only when the crawls were measured by impact).
pub(crate) fn charts(impact_column: Option<&str>) -> [Chart; 3] {
    [
        Chart {
            measure: "throughput",
            file: "throughput.svg",
            head: "Hot pages found".into(),
            y_label: "fraction of hot pages crawled (throughput)",
        },
        Chart {
            measure: "mass",
            file: "mass.svg",
            head: "PageRank mass".into(),
            y_label: "fraction of PageRank mass crawled",
        },
        Chart {
            measure: "impact",
            file: "impact.svg",
            head: format!("Impact '{}' crawled", impact_column.unwrap_or("?")),
            y_label: "impact crawled relative to the ideal order",
        },
    ]
}

pub(crate) fn summary_json(s: &Summary) -> serde_json::Value {
    let policies: Vec<_> = s
        .results
        .iter()
        .map(|r| {
            let m = &r.measures;
            let at = |c: &[f64]| -> serde_json::Value {
                s.percents
                    .iter()
                    .map(|&p| (format!("{p}"), Measures::at(c, p).into()))
                    .collect::<serde_json::Map<_, _>>()
                    .into()
            };
            serde_json::json!({
                "policy": r.run.policy.name(),
                "batch": r.run.batch,
                // R: measure() checks that the crawl reached every reachable page (and a
                // repeated experiment drops the orders it does not save).
                "crawled": m.checkpoints.last(),
                "kendall_tau_b": m.kendall_tau,
                "crawl_seconds": r.run.crawl_time.as_secs_f64(),
                "arcs": r.run.arcs,
                "peak_frontier": r.run.peak_frontier,
                "peak_rss_bytes": r.run.peak_rss_bytes,
                "throughput_at": at(&m.throughput),
                "mass_at": at(&m.mass),
                "impact_at": m.impact.as_deref().map(at),
                "checkpoints": m.checkpoints,
                "throughput": m.throughput,
                "mass": m.mass,
                "mean_pagerank": m.mean_pagerank,
                "impact": m.impact,
            })
        })
        .collect();
    serde_json::json!({
        "graph": s.graph,
        "nodes": s.nodes,
        "arcs": s.arcs,
        "seeds": s.seeds,
        "seed_source": s.seed_source,
        "rng_seed": s.rng_seed,
        "reachable": s.reachable,
        "percents": s.percents,
        "impact_column": s.impact_column,
        "parameters": s
            .parameters
            .iter()
            .map(|(k, v)| (k.to_string(), (*v).into()))
            .collect::<serde_json::Map<_, _>>(),
        "policies": policies,
    })
}

/// The chart of [`plot`] and [`plot_bands`]: `% of reachable pages crawled` (0–100) against
/// `y_label` (a share, 0–1).
fn percent_chart(title: &str, y_label: &str) -> LineChart {
    LineChart {
        title: title.to_string(),
        x_desc: "% of reachable pages crawled".into(),
        y_desc: y_label.to_string(),
        x: 0.0..100.0,
        y: YAxis::Fixed(0.0, 1.0),
        legend: Corner::LowerRight,
        markers: false,
    }
}

/// One curve per named series over `% of reachable pages crawled`, its values evenly spaced
/// up to 100% (a simulation's curves: one per percent), y in [0, 1]; written to `path` as SVG.
pub fn plot(path: &Path, title: &str, y_label: &str, series: &[(String, Vec<f64>)]) -> Result<()> {
    let lines: Vec<Series> = series
        .iter()
        .map(|(name, ys)| {
            let step = 100.0 / ys.len().max(1) as f64;
            let points = ys
                .iter()
                .enumerate()
                .map(|(j, &y)| ((j + 1) as f64 * step, y));
            Series::line(name.as_str(), points.collect())
        })
        .collect();
    percent_chart(title, y_label).save(path, &lines)
}

/// One policy's curve over repeated runs: its name, the mean at each percent, and the lower
/// and upper ends of the 95% interval there.
pub(crate) type Band = (String, Vec<f64>, Vec<f64>, Vec<f64>);

/// Like [`plot`], each policy's mean line over a shaded band (its 95% interval) in the
/// line's colour.
pub(crate) fn plot_bands(path: &Path, title: &str, y_label: &str, bands: &[Band]) -> Result<()> {
    let series: Vec<Series> = bands
        .iter()
        .map(|(name, mean, low, high)| {
            let points = (0..mean.len()).map(|j| ((j + 1) as f64, mean[j], low[j], high[j]));
            Series::band(name.as_str(), points)
        })
        .collect();
    percent_chart(title, y_label).save(path, &series)
}

/// The measures a run reports per checkpoint: each curve's name and the curve.
pub(crate) fn curves(m: &Measures) -> Vec<(&'static str, &[f64])> {
    let mut c: Vec<(&'static str, &[f64])> = vec![
        ("throughput", &m.throughput),
        ("mass", &m.mass),
        ("mean_pagerank", &m.mean_pagerank),
    ];
    if let Some(i) = &m.impact {
        c.push(("impact", i));
    }
    c
}

/// Writes `summary.csv`, tidy and self-describing so that the files of many runs concatenate
/// (pandas' `concat`) without hand tagging: one row per run, policy, checkpoint and measure —
/// `graph,policy,rng_seed,seeds,reachable,percent,k,measure,value` — and one `tau_b` row per
/// run and policy (empty percent and k). The full provenance is in `summary.json` beside it.
pub(crate) fn write_tidy_csv(runs: &[Summary], w: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        w,
        "graph,policy,rng_seed,seeds,reachable,percent,k,measure,value"
    )?;
    for s in runs {
        let graph = csv_field(&s.graph);
        for r in &s.results {
            let m = &r.measures;
            let head = format!(
                "{graph},{},{},{},{}",
                r.run.policy, s.rng_seed, s.seeds, s.reachable
            );
            for (measure, c) in curves(m) {
                for (j, (k, v)) in m.checkpoints.iter().zip(c).enumerate() {
                    writeln!(w, "{head},{},{k},{measure},{v}", j + 1)?;
                }
            }
            writeln!(w, "{head},,,tau_b,{}", m.kendall_tau)?;
        }
    }
    Ok(())
}
