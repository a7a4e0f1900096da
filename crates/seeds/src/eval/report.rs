//! Presenting an [`Evaluation`]: a table for the terminal, `summary.json` (everything, the full
//! core-distance matrix included), `summary.csv` (one row per depth) and SVG plots in the style
//! of the community-seeds paper's figures.
//!
//! - `mean-pagerank.svg`: mean PageRank per BFS depth, seeds against random pages (Fig. 7); the
//!   y axis is PageRank × pages, so 1 is the score of the average page whatever the graph's size.
//! - `pages-per-depth.svg`: pages first reached per depth, log y axis (Fig. 8).
//! - `core-distances.svg`: the core-to-core distance matrix as a heatmap (our stand-in for
//!   Fig. 6), written only when the cores are known.
//!
//! Every file is drawn in memory and written atomically, so a failed run never leaves a file
//! that looks complete.

use crate::eval::{CoreDistances, DepthStats, Evaluation};
use anyhow::{Context, Result};
use crawlrank_graph::atomic::write_file;
use crawlrank_graph::table::write_aligned;
use crawlrank_graph::PageIds;
use crawlrank_plot::plotters::coord::Shift;
use crawlrank_plot::plotters::prelude::*;
use crawlrank_plot::plotters::style::text_anchor::{HPos, Pos, VPos};
use crawlrank_plot::{draw_lines, save_svg, Corner, DrawResult, SvgChart};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The distance matrix is printed in the table up to this many cores (always in the JSON).
pub const TABLE_MAX_CORES: usize = 30;

/// Prints the evaluation: the two BFS crawls side by side, depth by depth, then the average
/// distance and the core distances (with the matrix up to [`TABLE_MAX_CORES`] cores).
pub fn write_table(e: &Evaluation, w: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        w,
        "{}: {} pages, {} arcs; {} seeds against {} random pages (rng seed {})",
        e.graph,
        e.nodes,
        e.arcs,
        e.seeds.len(),
        e.random.len(),
        e.rng_seed
    )?;
    let mut rows = vec![[
        "depth",
        "seeds: pages",
        "cumulative",
        "mean PR",
        "random: pages",
        "cumulative",
        "mean PR",
    ]
    .map(String::from)
    .to_vec()];
    let side = |s: Option<&DepthStats>| match s {
        Some(s) => [
            s.pages.to_string(),
            s.cumulative_pages.to_string(),
            format!("{:.4e}", s.mean_pagerank),
        ],
        None => ["-", "", ""].map(String::from),
    };
    for d in 0..depths(e) {
        let mut row = vec![d.to_string()];
        row.extend(side(e.seeds_by_depth.get(d)));
        row.extend(side(e.random_by_depth.get(d)));
        rows.push(row);
    }
    write_aligned(&rows, w)?;
    let reached = |r: &[DepthStats]| r.last().map_or(0, |s| s.cumulative_pages);
    writeln!(
        w,
        "reached: {} pages from the seeds, {} from the random pages",
        reached(&e.seeds_by_depth),
        reached(&e.random_by_depth)
    )?;
    match &e.average {
        Some(a) => writeln!(
            w,
            "average connected distance: {} ({} sources, {} pairs, longest {})",
            a.mean.map_or("-".into(), |m| format!("{m:.3}")),
            a.sources,
            a.pairs,
            a.max
        )?,
        None => writeln!(w, "average connected distance: not measured")?,
    }
    match &e.cores {
        None => writeln!(w, "core distances: no cores given")?,
        Some(c) => write_cores(w, c)?,
    }
    Ok(())
}

fn write_cores(w: &mut impl Write, c: &CoreDistances) -> std::io::Result<()> {
    let k = c.sizes.len();
    let num = |x: Option<u32>| x.map_or("-".into(), |d| d.to_string());
    writeln!(
        w,
        "core distances ({k} cores, {} ordered pairs): min {}, mean {}, max {}; {} unreachable",
        k * k.saturating_sub(1),
        num(c.min),
        c.mean.map_or("-".into(), |m| format!("{m:.3}")),
        num(c.max),
        c.unreachable_pairs
    )?;
    if k == 0 || k > TABLE_MAX_CORES {
        return Ok(());
    }
    let mut rows = vec![std::iter::once("from\\to".to_string())
        .chain((1..=k).map(|j| j.to_string()))
        .collect::<Vec<_>>()];
    for (i, row) in c.matrix.iter().enumerate() {
        let mut cells = vec![(i + 1).to_string()];
        cells.extend(row.iter().enumerate().map(|(j, d)| match d {
            _ if i == j => "·".to_string(),
            Some(d) => d.to_string(),
            None => "∞".to_string(),
        }));
        rows.push(cells);
    }
    write_aligned(&rows, w)
}

/// The number of depth rows: the deeper of the two crawls.
fn depths(e: &Evaluation) -> usize {
    e.seeds_by_depth.len().max(e.random_by_depth.len())
}

/// Writes `summary.json`, `summary.csv`, `mean-pagerank.svg`, `pages-per-depth.svg` and, when
/// the cores are known, `core-distances.svg` into `dir` (created if needed); returns their
/// paths. `summary.json` names the seeds by their ids in `ids` (the graph's
/// [`page_ids`](crawlrank_graph::BvWebGraph::page_ids)).
pub fn write_outputs(e: &Evaluation, dir: &Path, ids: &PageIds) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    let mut out = |name: &str| {
        written.push(dir.join(name));
        dir.join(name)
    };
    write_file(&out("summary.json"), |w| {
        serde_json::to_writer_pretty(&mut *w, &summary_json(e, ids))?;
        writeln!(w)?;
        Ok(())
    })?;
    write_file(&out("summary.csv"), |w| {
        writeln!(
            w,
            "depth,seeds_pages,seeds_mean_pr,random_pages,random_mean_pr"
        )?;
        let cells = |s: Option<&DepthStats>| {
            s.map_or(("0".into(), String::new()), |s| {
                (s.pages.to_string(), s.mean_pagerank.to_string())
            })
        };
        for d in 0..depths(e) {
            let (sp, sm) = cells(e.seeds_by_depth.get(d));
            let (rp, rm) = cells(e.random_by_depth.get(d));
            writeln!(w, "{d},{sp},{sm},{rp},{rm}")?;
        }
        Ok(())
    })?;
    let name = Path::new(&e.graph)
        .file_name()
        .map_or(e.graph.clone(), |n| n.to_string_lossy().into_owned());
    let title = format!(
        "{name}: {} seeds vs {} random pages",
        e.seeds.len(),
        e.random.len()
    );
    let nodes = e.nodes as f64;
    let curves = |f: &dyn Fn(&DepthStats) -> f64| {
        [("seeds", &e.seeds_by_depth), ("random", &e.random_by_depth)].map(|(label, rows)| {
            let points: Vec<(f64, f64)> = rows.iter().map(|s| (s.depth as f64, f(s))).collect();
            (label.to_string(), points)
        })
    };
    let max_depth = depths(e).saturating_sub(1).max(1) as f64;
    let depth_labels = (max_depth as usize + 1).min(21);
    // Depths are whole numbers: no label between them.
    let whole = |x: &f64| {
        if (x - x.round()).abs() < 1e-6 {
            format!("{x:.0}")
        } else {
            String::new()
        }
    };
    let pr = curves(&|s| s.mean_pagerank * nodes);
    save_svg(&out("mean-pagerank.svg"), |root| {
        let top = highest(&pr, 0.0);
        let mut chart = chart(root, &format!("Mean PageRank per depth — {title}"))
            .build_cartesian_2d(0f64..max_depth, 0f64..(top * 1.1).max(1e-9))?;
        chart
            .configure_mesh()
            .x_labels(depth_labels)
            .x_label_formatter(&whole)
            .x_desc("BFS depth")
            .y_desc("mean PageRank × pages (1 = the average page)")
            .draw()?;
        draw_depth_lines(&mut chart, &pr)
    })?;
    let pages = curves(&|s| s.pages as f64);
    save_svg(&out("pages-per-depth.svg"), |root| {
        let top = highest(&pages, 1.0);
        let mut chart = chart(root, &format!("Pages per depth — {title}"))
            .build_cartesian_2d(0f64..max_depth, (0.8f64..top * 1.5).log_scale())?;
        chart
            .configure_mesh()
            .x_labels(depth_labels)
            .x_label_formatter(&whole)
            .y_label_formatter(&|y| format!("{y:.0}"))
            .x_desc("BFS depth")
            .y_desc("pages first reached at this depth")
            .draw()?;
        draw_depth_lines(&mut chart, &pages)
    })?;
    if let Some(c) = &e.cores {
        let title = format!("Core-to-core distances — {name}: {} cores", c.sizes.len());
        save_svg(&out("core-distances.svg"), |root| heatmap(root, &title, c))?;
    }
    Ok(written)
}

/// A chart builder with this module's caption and margins.
fn chart<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72);
    builder
}

/// One line with a dot per depth for each `(legend, points)` (the plots' palette and dashes),
/// and the legend.
fn draw_depth_lines<'a, 'b: 'a, Y: Ranged<ValueType = f64>>(
    chart: &mut SvgChart<'a, 'b, Y>,
    series: &[(String, Vec<(f64, f64)>)],
) -> DrawResult {
    draw_lines(
        chart,
        series.iter().cloned(),
        true,
        Some(Corner::UpperRight),
    )
}

/// The distance matrix as coloured cells: row `i` (from core `i`, top to bottom) and column `j`
/// (to core `j`), pale for near, dark for far, grey for unreachable, white on the diagonal; the
/// distance (∞: unreachable) is written in each cell up to 40 cores.
fn heatmap(root: &DrawingArea<SVGBackend, Shift>, title: &str, c: &CoreDistances) -> DrawResult {
    let k = c.sizes.len().max(1);
    let kf = k as f64;
    let (low, high) = (c.min.unwrap_or(1) as f64, c.max.unwrap_or(1) as f64);
    // Cell `(i, j)` is centred on `(j + 1, k − i)`: the ticks at whole numbers name the cores.
    let range = 0.5..kf + 0.5;
    let mut chart = chart(root, title).build_cartesian_2d(range.clone(), range)?;
    let core_label = |v: f64, flip: bool| {
        let r = v.round();
        if (v - r).abs() > 1e-6 || r < 1.0 || r > kf {
            return String::new();
        }
        (if flip { k + 1 - r as usize } else { r as usize }).to_string()
    };
    let labels = k.min(20);
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(labels)
        .y_labels(labels)
        .x_label_formatter(&|x| core_label(*x, false))
        .y_label_formatter(&|y| core_label(*y, true))
        .x_desc(format!(
            "to core (pale: distance {low}, dark: {high}; grey: unreachable)"
        ))
        .y_desc("from core")
        .draw()?;
    // Pale yellow (the nearest) through green and blue to navy (the farthest): ColorBrewer's
    // YlGnBu, whose steps stay apart from the grey of unreachable pairs.
    const RAMP: [(u8, u8, u8); 5] = [
        (255, 255, 217),
        (199, 233, 180),
        (65, 182, 196),
        (34, 94, 168),
        (8, 29, 88),
    ];
    let shade = |d: u32| {
        if high > low {
            (d as f64 - low) / (high - low)
        } else {
            0.0
        }
    };
    let colour = |i: usize, j: usize, d: Option<u32>| match d {
        _ if i == j => RGBColor(255, 255, 255),
        None => RGBColor(200, 200, 200),
        Some(d) => {
            let x = shade(d) * (RAMP.len() - 1) as f64;
            let (a, b) = (RAMP[x.floor() as usize], RAMP[(x.ceil() as usize).min(4)]);
            let t = x - x.floor();
            let mix = |a: u8, b: u8| (a as f64 + t * (b as f64 - a as f64)).round() as u8;
            RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
        }
    };
    let cells = c.matrix.iter().enumerate().flat_map(|(i, row)| {
        row.iter().enumerate().map(move |(j, &d)| {
            let (x, y) = (j as f64 + 1.0, (k - i) as f64);
            Rectangle::new(
                [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                colour(i, j, d).filled(),
            )
        })
    });
    chart.draw_series(cells)?;
    if k <= 40 {
        let font = TextStyle::from(("sans-serif", if k <= 15 { 14 } else { 10 }).into_font())
            .pos(Pos::new(HPos::Center, VPos::Center));
        let texts = c.matrix.iter().enumerate().flat_map(|(i, row)| {
            let font = font.clone();
            row.iter()
                .enumerate()
                .filter(move |&(j, _)| j != i)
                .map(move |(j, d)| {
                    let at = (j as f64 + 1.0, (k - i) as f64);
                    let dark = d.is_some_and(|d| shade(d) > 0.6);
                    let font = font.color(if dark { &WHITE } else { &BLACK });
                    Text::new(d.map_or("∞".into(), |d| d.to_string()), at, font)
                })
        });
        chart.draw_series(texts)?;
    }
    Ok(())
}

fn summary_json(e: &Evaluation, ids: &PageIds) -> Value {
    let depths = |rows: &[DepthStats]| -> Value {
        rows.iter()
            .map(|s| {
                json!({
                    "depth": s.depth,
                    "pages": s.pages,
                    "mean_pagerank": s.mean_pagerank,
                    "cumulative_pages": s.cumulative_pages,
                })
            })
            .collect()
    };
    json!({
        "graph": e.graph,
        "nodes": e.nodes,
        "arcs": e.arcs,
        "rng_seed": e.rng_seed,
        "seeds": ids.ids_of(&e.seeds).collect::<Vec<u64>>(),
        "random_seeds": ids.ids_of(&e.random).collect::<Vec<u64>>(),
        "seeds_by_depth": depths(&e.seeds_by_depth),
        "random_by_depth": depths(&e.random_by_depth),
        "average_distance": e.average.as_ref().map(|a| json!({
            "sources": a.sources,
            "pairs": a.pairs,
            "mean": a.mean,
            "max": a.max,
        })),
        "core_distances": e.cores.as_ref().map(|c| json!({
            "cores": c.sizes.len(),
            "sizes": c.sizes,
            "matrix": c.matrix,
            "reachable_pairs": c.reachable_pairs,
            "unreachable_pairs": c.unreachable_pairs,
            "min": c.min,
            "mean": c.mean,
            "max": c.max,
        })),
    })
}

/// The highest value over all `curves`, and at least `floor`: the top of a chart's y axis, so
/// that every line fits (and an all-zero chart still has an axis).
fn highest(curves: &[(String, Vec<(f64, f64)>)], floor: f64) -> f64 {
    curves
        .iter()
        .flat_map(|c| &c.1)
        .map(|p| p.1)
        .fold(floor, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{evaluate, EvalConfig};
    use crawlrank_graph::Csr;

    fn evaluation(with_cores: bool) -> Evaluation {
        // 0 → 1 → 2 → 3 → 0, 4 → 0: a cycle and a page pointing into it.
        let g = Csr::from_arcs(5, &[(0, 1), (1, 2), (2, 3), (3, 0), (4, 0)]);
        let cores = vec![vec![0, 1], vec![3]];
        let cores = with_cores.then_some(cores.as_slice());
        let pr = [0.3, 0.2, 0.2, 0.2, 0.1];
        evaluate(
            "dir/g",
            &g,
            &pr,
            &[4],
            cores,
            &EvalConfig::default(),
            &mut |_| {},
        )
        .unwrap()
    }

    #[test]
    fn the_table_shows_both_crawls_and_the_distances() {
        let mut out = Vec::new();
        write_table(&evaluation(true), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("dir/g: 5 pages, 5 arcs; 1 seeds"),
            "{text}"
        );
        assert!(
            text.contains("seeds: pages") && text.contains("random: pages"),
            "{text}"
        );
        // From 4: 4 | 0 | 1 | 2 | 3, five depths.
        assert!(text.lines().any(|l| l.starts_with("4 ")), "{text}");
        assert!(text.contains("average connected distance: "), "{text}");
        // 1 → 2: 1 → 2 → 3 (from 1, depth 2); 2 → 1: 3 → 0 (depth 1).
        assert!(
            text.contains("min 1, mean 1.500, max 2; 0 unreachable"),
            "{text}"
        );
        let mut out = Vec::new();
        write_table(&evaluation(false), &mut out).unwrap();
        assert!(String::from_utf8(out).unwrap().contains("no cores given"));
    }

    #[test]
    fn outputs_are_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let e = evaluation(true);
        let written = write_outputs(&e, dir.path(), &PageIds::dense(e.nodes as usize)).unwrap();
        assert_eq!(written.len(), 5);
        let csv = std::fs::read_to_string(dir.path().join("summary.csv")).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "depth,seeds_pages,seeds_mean_pr,random_pages,random_mean_pr"
        );
        assert!(lines[1].starts_with("0,1,0.1,1,"), "{csv}");
        assert_eq!(lines.len(), 1 + 5);
        let json: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(json["core_distances"]["matrix"], json!([[0, 2], [1, 0]]));
        assert_eq!(json["seeds_by_depth"][4]["cumulative_pages"], 5);
        assert_eq!(json["seeds"], json!([4]));
        // The seeds are named by the user's ids.
        let sparse = PageIds::from_sorted(vec![2, 4, 8, 16, 32], "t").unwrap();
        write_outputs(&e, dir.path(), &sparse).unwrap();
        let json: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(json["seeds"], json!([32]));
        let random: Vec<u64> = e.random.iter().map(|&v| sparse.id(v as usize)).collect();
        assert_eq!(json["random_seeds"], json!(random));
        for svg in [
            "mean-pagerank.svg",
            "pages-per-depth.svg",
            "core-distances.svg",
        ] {
            let text = std::fs::read_to_string(dir.path().join(svg)).unwrap();
            assert!(
                text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
                "{svg}"
            );
        }
        // Without cores, no heatmap; nothing but the outputs in the folder.
        let other = tempfile::tempdir().unwrap();
        assert_eq!(
            write_outputs(&evaluation(false), other.path(), &PageIds::dense(5))
                .unwrap()
                .len(),
            4
        );
        let mut names: Vec<String> = std::fs::read_dir(other.path())
            .unwrap()
            .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "mean-pagerank.svg",
                "pages-per-depth.svg",
                "summary.csv",
                "summary.json"
            ]
        );
    }
}
