//! The reports of an [`Evaluation`]: the terminal table, and the files `scores.tsv`,
//! `summary.json`, `summary.csv`, `impact.svg` (impact relative to the ideal against `x`, one
//! line per method: the paper's Figs. 4–5) and, with tuning, `omega.svg` (the criterion
//! against `ω`: the paper's Fig. 3). Every file is written atomically.

use crate::evaluate::{Evaluation, OmegaChoice};
use crate::measures::{num, Ratio};
use anyhow::{anyhow, Result};
use crawlrank_graph::atomic::write_file;
use crawlrank_graph::PageIds;
use plotters::coord::Shift;
use plotters::prelude::*;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The columns of the terminal table, in per mille: 0.2%, 1%, 2%, 5%, 10% (the paper's two
/// grids, 1–10% and 0.2–2%, at their usual reading points).
pub const TABLE_PERMILLES: [u32; 5] = [2, 10, 20, 50, 100];

fn pct(permille: u32) -> String {
    let v = permille as f64 / 10.0;
    if permille.is_multiple_of(10) {
        format!("{v:.0}%")
    } else {
        format!("{v:.1}%")
    }
}

fn cell(v: f64) -> String {
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

/// The summary as JSON.
pub fn summary_json(e: &Evaluation, graph: &str) -> serde_json::Value {
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
/// `omega.svg` into `dir`; `ids` (the graph's
/// [`page_ids`](crawlrank_graph::BvWebGraph::page_ids)) name the pages of `scores.tsv`, and
/// `urls` (one per page of the graph) fills its URL column. Returns the files written.
pub fn write_outputs(
    e: &Evaluation,
    dir: &Path,
    graph: &str,
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
    let json = serde_json::to_string_pretty(&summary_json(e, graph))?;
    write_file(&path, |w| Ok(writeln!(w, "{json}")?))?;
    written.push(path);
    let path = out("summary.csv");
    write_file(&path, |w| {
        writeln!(w, "method,x_percent,pages,impact_relative,pagerank_ratio")?;
        for m in &e.methods {
            for p in &m.curve {
                let f = |v: f64| {
                    if v.is_finite() {
                        v.to_string()
                    } else {
                        String::new()
                    }
                };
                writeln!(
                    w,
                    "{},{},{},{},{}",
                    m.method.name(),
                    p.permille as f64 / 10.0,
                    p.pages,
                    f(p.impact),
                    p.pagerank.map_or(String::new(), f)
                )?;
            }
        }
        Ok(())
    })?;
    written.push(path);
    let series: Vec<(String, Vec<(f64, f64)>)> = e
        .methods
        .iter()
        .map(|m| {
            let pts = m
                .curve
                .iter()
                .filter(|p| p.impact.is_finite())
                .map(|p| (p.permille as f64 / 10.0, p.impact))
                .collect();
            (m.method.name().to_string(), pts)
        })
        .collect();
    let path = out("impact.svg");
    let title = format!("{graph}: impact relative to the ideal (test frontier)");
    save_svg(&path, |root| {
        lines(
            root,
            &title,
            "x (% of the test frontier)",
            (0.0, 10.0),
            &series,
        )
    })?;
    written.push(path);
    if let Some(t) = &e.tuning {
        let pts: Vec<(f64, f64)> = t.iter().copied().filter(|(_, c)| c.is_finite()).collect();
        let path = out("omega.svg");
        let title = format!("{graph}: RW-EG on the training frontier, mean over x = 1..10%");
        save_svg(&path, |root| {
            lines(
                root,
                &title,
                "omega",
                (0.0, 1.0),
                &[("rw-eg".to_string(), pts)],
            )
        })?;
        written.push(path);
    }
    Ok(written)
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Draws into an SVG in memory, then writes it to `path` atomically.
fn save_svg(
    path: &Path,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> DrawResult,
) -> Result<()> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 640)).into_drawing_area();
        let drawn: DrawResult = root
            .fill(&WHITE)
            .map_err(Into::into)
            .and_then(|()| draw(&root))
            .and_then(|()| root.present().map_err(Into::into));
        drawn.map_err(|err| anyhow!("cannot draw {}: {err}", path.display()))?;
    }
    write_file(path, |w| Ok(w.write_all(svg.as_bytes())?))
}

/// One line with dots for each `(legend, points)`; `y` from 0 to at least 1.
fn lines(
    root: &DrawingArea<SVGBackend, Shift>,
    title: &str,
    x_desc: &str,
    (x0, x1): (f64, f64),
    series: &[(String, Vec<(f64, f64)>)],
) -> DrawResult {
    let top = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|&(_, y)| y))
        .fold(1.0f64, f64::max)
        * 1.05;
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x0..x1, 0.0..top)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("impact relative to the ideal")
        .draw()?;
    for (i, (name, points)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}
