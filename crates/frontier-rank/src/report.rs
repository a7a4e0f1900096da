//! The reports of an [`Evaluation`]: the terminal table, and the files `scores.tsv`,
//! `summary.json`, `summary.csv` (tidy: [`write_tidy_csv`]), `impact.svg` (impact relative to
//! the ideal against `x`, one line per method: the paper's Figs. 4–5) and, with tuning,
//! `omega.svg` (the criterion against `ω`: the paper's Fig. 3). Every file is written
//! atomically. A repeated experiment's reports are in [`crate::repeat`].

use crate::evaluate::{Evaluation, OmegaChoice};
use crate::measures::{num, Ratio};
use anyhow::Result;
use crawlrank_graph::atomic::write_file;
use crawlrank_graph::csv::csv_field;
use crawlrank_graph::PageIds;
use crawlrank_plot::{Corner, LineChart, Series, YAxis};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The columns of the terminal table, in per mille: 0.2%, 1%, 2%, 5%, 10% (the paper's two
/// grids, 1–10% and 0.2–2%, at their usual reading points).
pub const TABLE_PERMILLES: [u32; 5] = [2, 10, 20, 50, 100];

pub(crate) fn pct(permille: u32) -> String {
    let v = permille as f64 / 10.0;
    if permille.is_multiple_of(10) {
        format!("{v:.0}%")
    } else {
        format!("{v:.1}%")
    }
}

pub(crate) fn cell(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.3}")
    } else {
        "-".into()
    }
}

/// Writes the table: the sizes, impact relative to the ideal per method at
/// [`TABLE_PERMILLES`] with the mean-PageRank ratio at 10%, the tuning curve and the frontier
/// impact ratios.
pub fn write_table(e: &Evaluation, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "D: {} pages ({} with impact); F: {} pages, {} train / {} test ({} test pages with impact); omega = {:.1}{}",
        e.downloaded,
        e.downloaded_with_impact,
        e.frontier.len(),
        e.frontier.len() - e.test_len(),
        e.test_len(),
        e.test_with_impact(),
        e.omega,
        if e.config.omega == OmegaChoice::Tune { " (tuned)" } else { "" }
    )?;
    writeln!(out, "impact relative to the ideal on the test frontier:")?;
    write!(out, "{:<12}", "method")?;
    for p in TABLE_PERMILLES {
        write!(out, " {:>7}", pct(p))?;
    }
    writeln!(out, " {:>9} {:>6} {:>8}", "PR@10%", "iters", "seconds")?;
    // k: how many test pages each column selects (a share of a small test frontier is a few
    // pages, and a reader should see it).
    let k = |p: u32| {
        e.methods
            .first()
            .and_then(|m| m.curve.iter().find(|c| c.permille == p))
            .map_or(String::from("-"), |c| c.pages.to_string())
    };
    write!(out, "{:<12}", "k (pages)")?;
    for p in TABLE_PERMILLES {
        write!(out, " {:>7}", k(p))?;
    }
    writeln!(out, " {:>9}", k(100))?;
    for m in &e.methods {
        write!(out, "{:<12}", m.method.name())?;
        for p in TABLE_PERMILLES {
            write!(out, " {:>7}", cell(m.impact_at(p)))?;
        }
        let pr = m
            .curve
            .iter()
            .find(|p| p.permille == 100)
            .and_then(|p| p.pagerank)
            .unwrap_or(f64::NAN);
        writeln!(
            out,
            " {:>9} {:>6} {:>8.2}",
            cell(pr),
            m.iterations,
            m.seconds
        )?;
    }
    if let Some(t) = &e.tuning {
        write!(
            out,
            "omega tuning (mean over 1-10% on the training part, {} bootstrap resamples):",
            e.config.bootstrap
        )?;
        for (w, c) in t {
            write!(out, " {w:.1}:{}", cell(*c))?;
        }
        writeln!(out)?;
    }
    let r = &e.ratios;
    let line = |name: &str, real: &Ratio, virt: &Ratio| {
        format!(
            "  X = D pages {name:<15} |X| = {:<9} r = {:<12} with virtual arcs r = {}",
            real.pages,
            cell(real.ratio),
            cell(virt.ratio)
        )
    };
    writeln!(
        out,
        "frontier impact ratios r(X->F) = sum of I(p), p in F linked from X, / |X|:"
    )?;
    writeln!(
        out,
        "{}",
        line("with impact", &r.with_impact, &r.with_impact_virtual)
    )?;
    writeln!(
        out,
        "{}",
        line(
            "without impact",
            &r.without_impact,
            &r.without_impact_virtual
        )
    )?;
    Ok(())
}

/// What names an experiment in its files and plots: the graph and the impact column.
#[derive(Debug, Clone, Copy)]
pub struct Labels<'a> {
    /// The graph as the user named it.
    pub graph: &'a str,
    /// The impact column's name.
    pub impact_column: &'a str,
    /// The x range of `impact.svg`, in % of the test frontier (default `0..10`).
    pub x_range: Option<(f64, f64)>,
}

impl Labels<'_> {
    /// The graph's file name, for titles.
    pub(crate) fn short_graph(&self) -> String {
        Path::new(self.graph)
            .file_name()
            .map_or(self.graph.to_string(), |n| n.to_string_lossy().into_owned())
    }
}

/// The summary as JSON.
pub fn summary_json(e: &Evaluation, labels: &Labels) -> serde_json::Value {
    let graph = labels.graph;
    let methods: Vec<_> = e
        .methods
        .iter()
        .map(|m| {
            let curve: Vec<_> = m
                .curve
                .iter()
                .map(|p| {
                    json!({"x_percent": p.permille as f64 / 10.0, "pages": p.pages,
                           "impact_relative": num(p.impact),
                           "pagerank_ratio": p.pagerank.map(num)})
                })
                .collect();
            json!({"method": m.method.name(), "iterations": m.iterations,
                   "seconds": m.seconds, "curve": curve})
        })
        .collect();
    let r = &e.ratios;
    json!({
        "graph": graph,
        "impact_column": labels.impact_column,
        "downloaded": e.downloaded,
        "downloaded_with_impact": e.downloaded_with_impact,
        "known_arcs": e.known_arcs,
        "frontier": e.frontier.len(),
        "train": e.frontier.len() - e.test_len(),
        "test": e.test_len(),
        "test_with_impact": e.test_with_impact(),
        "parameters": {
            "alpha": e.config.rw.alpha, "gamma": e.config.rw.gamma,
            "epsilon": e.config.rw.epsilon, "omega": e.omega,
            "omega_tuned": e.config.omega == OmegaChoice::Tune,
            "rng_seed": e.config.rng_seed, "train_fraction": e.config.train_fraction,
            "bootstrap": e.config.bootstrap,
            "learned_model": e.config.model.name(), "learned_max_train": e.config.max_train,
            "threshold": e.config.rw.threshold, "max_iterations": e.config.rw.max_iterations,
        },
        "tuning": e.tuning.as_ref().map(|t| t.iter()
            .map(|(w, c)| json!({"omega": w, "criterion": num(*c)})).collect::<Vec<_>>()),
        "frontier_impact_ratios": {
            "with_impact": r.with_impact.to_json(),
            "without_impact": r.without_impact.to_json(),
            "with_impact_virtual": r.with_impact_virtual.to_json(),
            "without_impact_virtual": r.without_impact_virtual.to_json(),
        },
        "methods": methods,
    })
}

/// Writes `scores.tsv`, `summary.json`, `summary.csv`, `impact.svg` and (with tuning)
/// `omega.svg` into `dir`, named by `labels`; `ids` (the graph's
/// [`page_ids`](crawlrank_graph::BvWebGraph::page_ids)) name the pages of `scores.tsv`, and
/// `urls` (one per page of the graph) fills its URL column. Returns the files written.
pub fn write_outputs(
    e: &Evaluation,
    dir: &Path,
    labels: &Labels,
    ids: &PageIds,
    urls: Option<&[String]>,
) -> Result<Vec<PathBuf>> {
    let out = |name: &str| dir.join(name);
    let mut written = Vec::new();
    let path = out("scores.tsv");
    write_file(&path, |w| {
        write!(w, "id\turl\tsplit\timpact")?;
        for m in &e.methods {
            write!(w, "\t{}", m.method.name())?;
        }
        writeln!(w)?;
        for (i, &page) in e.frontier.iter().enumerate() {
            let url = urls
                .and_then(|u| u.get(page as usize))
                .map_or("", |s| s.as_str());
            let split = if e.is_test[i] { "test" } else { "train" };
            let id = ids.id(page as usize);
            write!(w, "{id}\t{url}\t{split}\t{}", e.truth[i])?;
            for m in &e.methods {
                write!(w, "\t{}", m.scores[i])?;
            }
            writeln!(w)?;
        }
        Ok(())
    })?;
    written.push(path);
    let path = out("summary.json");
    let json = serde_json::to_string_pretty(&summary_json(e, labels))?;
    write_file(&path, |w| Ok(writeln!(w, "{json}")?))?;
    written.push(path);
    let path = out("summary.csv");
    write_file(&path, |w| {
        Ok(write_tidy_csv(std::slice::from_ref(e), labels, w)?)
    })?;
    written.push(path);
    let series: Vec<Series> = e
        .methods
        .iter()
        .map(|m| {
            let pts = m
                .curve
                .iter()
                .filter(|p| p.impact.is_finite())
                .map(|p| (p.permille as f64 / 10.0, p.impact))
                .collect();
            Series::line(m.method.name(), pts)
        })
        .collect();
    let path = out("impact.svg");
    let title = format!(
        "{}: impact '{}' relative to the ideal, test frontier of {} pages (rng seed {})",
        labels.short_graph(),
        labels.impact_column,
        e.test_len(),
        e.config.rng_seed
    );
    impact_chart(title, labels).save(&path, &series)?;
    written.push(path);
    if let Some(t) = &e.tuning {
        let pts: Vec<(f64, f64)> = t.iter().copied().filter(|(_, c)| c.is_finite()).collect();
        let path = out("omega.svg");
        let title = format!(
            "{}: RW-EG on the training frontier, impact '{}', mean over x = 1..10% (rng seed {})",
            labels.short_graph(),
            labels.impact_column,
            e.config.rng_seed
        );
        omega_chart(title).save(&path, &[Series::line("rw-eg", pts)])?;
        written.push(path);
    }
    Ok(written)
}

/// `impact.svg`'s chart: impact relative to the ideal (from 0, at least to 1) against `x`.
pub(crate) fn impact_chart(title: String, labels: &Labels) -> LineChart {
    let (x0, x1) = labels.x_range.unwrap_or((0.0, 10.0));
    LineChart {
        title,
        x_desc: "x (% of the test frontier)".into(),
        y_desc: "impact relative to the ideal".into(),
        x: x0..x1,
        y: YAxis::FromZero { min_top: 1.0 },
        legend: Corner::UpperRight,
        markers: true,
    }
}

/// `omega.svg`'s chart: the tuning criterion against `ω`, the y axis scaled to the data (the
/// criterion varies by a few hundredths; a 0–1 axis would flatten it).
pub(crate) fn omega_chart(title: String) -> LineChart {
    LineChart {
        title,
        x_desc: "omega".into(),
        y_desc: "impact relative to the ideal (training part)".into(),
        x: 0.0..1.0,
        y: YAxis::Data,
        legend: Corner::UpperRight,
        markers: true,
    }
}

/// Writes `summary.csv`, tidy and self-describing so that the files of many runs concatenate
/// without hand tagging: `graph,impact_column,method,rng_seed,x_percent,k,measure,value`, one
/// row per run, method, `x` and measure (`impact_relative`, and `pagerank_ratio` when the
/// graph's PageRank was given); an undefined value is an empty cell. The full provenance is in
/// `summary.json` beside it.
pub fn write_tidy_csv(
    runs: &[Evaluation],
    labels: &Labels,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        w,
        "graph,impact_column,method,rng_seed,x_percent,k,measure,value"
    )?;
    let f = |v: f64| {
        if v.is_finite() {
            v.to_string()
        } else {
            String::new()
        }
    };
    let (graph, column) = (csv_field(labels.graph), csv_field(labels.impact_column));
    for e in runs {
        for m in &e.methods {
            for p in &m.curve {
                let head = format!(
                    "{graph},{column},{},{},{},{}",
                    m.method.name(),
                    e.config.rng_seed,
                    p.permille as f64 / 10.0,
                    p.pages
                );
                writeln!(w, "{head},impact_relative,{}", f(p.impact))?;
                if let Some(pr) = p.pagerank {
                    writeln!(w, "{head},pagerank_ratio,{}", f(pr))?;
                }
            }
        }
    }
    Ok(())
}
