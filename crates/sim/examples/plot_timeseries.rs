//! Plots a crawl's time series — the CSV `scripts/bench-crawl-scale.sh` records every few
//! seconds of a long crawl — as one SVG of panels sharing the time axis (pages/s, RSS, open
//! sockets and descriptors, store size, pages and URLs), and prints a markdown table of the
//! samples, about one a minute, for docs/performance.md.
//!
//! Why: whether throughput holds as a crawl grows, which only shows over time —
//! a rate that sags, memory or sockets that climb. The plot makes that visible at a glance;
//! the table is what the docs quote. Its lines are drawn as every report's are
//! (`crawlrank-plot`).
//!
//! ```sh
//! cargo run --release -p crawlrank-sim --example plot_timeseries -- CSV SVG [--every SECS] [--title TEXT]
//! ```
//!
//! The CSV has a header line naming its columns; `elapsed_s` is required and so are the
//! columns of the first four panels (`pages_per_s`, `rss_mib`, `sockets`, `store_mib`); the
//! others (`fds`, `rss_peak_mib`, `redb_mib`, `pages`, `discovered`, `frontier`) are drawn
//! when present. An empty
//! cell is a value not measured (e.g. the RSS after the crawl exited) and is skipped. A
//! malformed line is an error naming the line.

use anyhow::{bail, Context, Result};
use crawlrank_plot::plotters::prelude::*;
use std::path::Path;

/// A CSV of numbers: the column names, and per row one value (or none) per column.
#[derive(Debug)]
struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<Option<f64>>>,
}

impl Table {
    /// Parses `text` (read from `name`, used in errors).
    fn parse(text: &str, name: &str) -> Result<Table> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let Some((_, header)) = lines.next() else {
            bail!("{name} is empty: expected a header line naming the columns");
        };
        let columns: Vec<String> = header.split(',').map(|c| c.trim().to_string()).collect();
        if let Some(c) = columns.iter().find(|c| c.is_empty()) {
            bail!("{name}:1: an empty column name in the header ('{c}')");
        }
        let mut rows = Vec::new();
        for (i, line) in lines {
            let cells: Vec<&str> = line.split(',').collect();
            if cells.len() != columns.len() {
                bail!(
                    "{name}:{}: {} fields where the header has {} ({line:?})",
                    i + 1,
                    cells.len(),
                    columns.len()
                );
            }
            let mut row = Vec::with_capacity(cells.len());
            for (cell, col) in cells.iter().zip(&columns) {
                let cell = cell.trim();
                row.push(if cell.is_empty() {
                    None
                } else {
                    match cell.parse::<f64>() {
                        Ok(v) if v.is_finite() => Some(v),
                        _ => bail!(
                            "{name}:{}: column '{col}' holds '{cell}', not a number",
                            i + 1
                        ),
                    }
                });
            }
            rows.push(row);
        }
        let t = Table { columns, rows };
        let x = t.require("elapsed_s", name)?;
        if let Some(r) = t.rows.iter().position(|r| r[x].is_none()) {
            bail!("{name}: sample {} has no elapsed_s", r + 1);
        }
        Ok(t)
    }

    fn col(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    fn require(&self, column: &str, name: &str) -> Result<usize> {
        self.col(column).with_context(|| {
            format!(
                "{name} has no column '{column}' (its columns: {})",
                self.columns.join(", ")
            )
        })
    }

    /// The (elapsed, value) points of `column`, without the empty cells.
    fn series(&self, column: usize) -> Vec<(f64, f64)> {
        let x = self.col("elapsed_s").expect("checked by parse");
        self.rows
            .iter()
            .filter_map(|r| Some((r[x]?, r[column]?)))
            .collect()
    }
}

/// One panel: a title, and the columns drawn in it (column, legend, divisor of the values).
struct Panel {
    title: &'static str,
    lines: &'static [(&'static str, &'static str, f64)],
    required: bool,
}

const PANELS: &[Panel] = &[
    Panel {
        title: "pages/s (over each interval)",
        lines: &[("pages_per_s", "pages/s", 1.0)],
        required: true,
    },
    Panel {
        title: "crawl process RSS (MiB)",
        lines: &[
            ("rss_mib", "RSS", 1.0),
            ("rss_peak_mib", "peak RSS (VmHWM)", 1.0),
        ],
        required: true,
    },
    Panel {
        title: "open descriptors of the crawl process",
        lines: &[("sockets", "sockets", 1.0), ("fds", "all descriptors", 1.0)],
        required: true,
    },
    Panel {
        title: "state directory on disk (MiB)",
        lines: &[
            ("store_mib", "the whole directory", 1.0),
            ("redb_mib", "its database", 1.0),
        ],
        required: true,
    },
    Panel {
        title: "pages fetched and URLs discovered (millions)",
        lines: &[
            ("pages", "pages fetched", 1e6),
            ("discovered", "URLs discovered", 1e6),
        ],
        required: false,
    },
    Panel {
        title: "frontier (millions of URLs)",
        lines: &[("frontier", "frontier", 1e6)],
        required: false,
    },
];

/// A line to draw: the index of its column, its legend, the divisor of its values.
type Line = (usize, &'static str, f64);

/// The panels to draw, each with the lines whose columns the table has.
type Panels = [(&'static Panel, Vec<Line>)];

/// The panels to draw: the required ones (their first column must exist; the others are
/// drawn when present), then the optional ones that have at least one column.
fn panels(t: &Table, name: &str) -> Result<Vec<(&'static Panel, Vec<Line>)>> {
    let mut out = Vec::new();
    for p in PANELS {
        let lines: Vec<Line> = p
            .lines
            .iter()
            .filter_map(|&(c, legend, div)| t.col(c).map(|i| (i, legend, div)))
            .collect();
        if p.required {
            // The first line of a required panel is its point.
            t.require(p.lines[0].0, name)?;
        }
        if !lines.is_empty() {
            out.push((p, lines));
        }
    }
    Ok(out)
}

fn plot(t: &Table, name: &str, svg: &Path, title: &str) -> Result<()> {
    let panels = panels(t, name)?;
    // plotters writes the file itself; draw into a temporary name and rename when complete.
    let tmp = svg.with_extension("svg.tmp");
    draw(t, &panels, &tmp, title)
        .map_err(|e| anyhow::anyhow!("cannot draw {}: {e}", svg.display()))?;
    std::fs::rename(&tmp, svg).with_context(|| format!("cannot write {}", svg.display()))
}

fn draw(
    t: &Table,
    panels: &Panels,
    path: &Path,
    title: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let rows = panels.len().div_ceil(2);
    let root = SVGBackend::new(path, (1200, 60 + 330 * rows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 22))?;
    let x_end = t
        .series(t.col("elapsed_s").expect("checked by parse"))
        .iter()
        .map(|p| p.0)
        .fold(1.0, f64::max);
    for ((panel, lines), area) in panels.iter().zip(root.split_evenly((rows, 2)).iter()) {
        let series: Vec<(&str, Vec<(f64, f64)>)> = lines
            .iter()
            .map(|&(c, legend, div)| {
                let pts = t.series(c).into_iter().map(|(x, y)| (x, y / div)).collect();
                (legend, pts)
            })
            .collect();
        let y_max = series
            .iter()
            .flat_map(|s| s.1.iter().map(|p| p.1))
            .fold(0.0, f64::max);
        let y_end = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
        let mut chart = ChartBuilder::on(area)
            .caption(panel.title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..x_end, 0f64..y_end)?;
        // As many decimals as the axis needs: 9000, not 9000.0; 0.25, not 0.3.
        let decimals = if y_end >= 20.0 {
            0
        } else if y_end >= 2.0 {
            1
        } else {
            2
        };
        let y_format = move |v: &f64| format!("{v:.decimals$}");
        let x_decimals = if x_end >= 20.0 { 0 } else { 1 };
        let x_format = move |v: &f64| format!("{v:.x_decimals$}");
        chart
            .configure_mesh()
            .x_desc("elapsed (s)")
            .y_label_formatter(&y_format)
            .x_label_formatter(&x_format)
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        let legend = (lines.len() > 1).then_some(crawlrank_plot::Corner::LowerRight);
        crawlrank_plot::draw_lines(&mut chart, series, false, legend)?;
    }
    root.present()?;
    Ok(())
}

/// `1234567` as `1,234,567` (rounded; the graph crate's grouping, with a sign).
fn thousands(v: f64) -> String {
    let digits = crawlrank_graph::stats::thousands(v.round().abs() as u64);
    if v.round() < 0.0 {
        format!("-{digits}")
    } else {
        digits
    }
}

/// The markdown table: the first sample at or after every `every` seconds, and the last.
/// pages/s is the rate since the row above (from the `pages` column) and since the start.
fn summary(t: &Table, every: f64) -> String {
    let x = t.col("elapsed_s").expect("checked by parse");
    let pages = t.col("pages");
    let mut picked = Vec::new();
    let mut next = every;
    for (i, r) in t.rows.iter().enumerate() {
        let e = r[x].expect("checked by parse");
        if e >= next || i + 1 == t.rows.len() {
            picked.push(i);
            while next <= e {
                next += every;
            }
        }
    }
    // (column, heading, format)
    type Extra = (&'static str, &'static str, fn(f64) -> String);
    let extra: &[Extra] = &[
        ("rss_mib", "RSS MiB", |v| format!("{v:.0}")),
        ("rss_peak_mib", "peak RSS MiB", |v| format!("{v:.0}")),
        ("sockets", "sockets", thousands),
        ("fds", "fds", thousands),
        ("store_mib", "state MiB", |v| format!("{v:.0}")),
        ("redb_mib", "database MiB", |v| format!("{v:.0}")),
        ("discovered", "URLs discovered", thousands),
        ("frontier", "frontier", thousands),
        ("fd_shortages", "fd shortages", thousands),
    ];
    let extra: Vec<_> = extra
        .iter()
        .filter_map(|&(c, h, f)| t.col(c).map(|i| (i, h, f)))
        .collect();
    let mut head = vec!["elapsed s".to_string()];
    if pages.is_some() {
        head.extend([
            "pages".into(),
            "pages/s since row above".into(),
            "pages/s since start".into(),
        ]);
    }
    head.extend(extra.iter().map(|e| e.1.to_string()));
    let mut out = format!("| {} |\n", head.join(" | "));
    out.push_str(&format!("|{}\n", "---:|".repeat(head.len())));
    let cell = |v: Option<f64>, f: fn(f64) -> String| v.map(f).unwrap_or_else(|| "—".into());
    let (mut prev_e, mut prev_p) = (0.0, 0.0);
    for i in picked {
        let r = &t.rows[i];
        let e = r[x].expect("checked by parse");
        let mut cells = vec![format!("{e:.0}")];
        if let Some(p) = pages {
            let rate = |dp: f64, de: f64| {
                if de > 0.0 {
                    thousands(dp / de)
                } else {
                    "—".into()
                }
            };
            match r[p] {
                Some(v) => {
                    cells.push(thousands(v));
                    cells.push(rate(v - prev_p, e - prev_e));
                    cells.push(rate(v, e));
                    prev_p = v;
                }
                None => cells.extend(["—".to_string(), "—".into(), "—".into()]),
            }
        }
        prev_e = e;
        cells.extend(extra.iter().map(|&(c, _, f)| cell(r[c], f)));
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

fn main() -> Result<()> {
    let usage = "usage: plot_timeseries CSV SVG [--every SECS] [--title TEXT]";
    let mut args = std::env::args().skip(1);
    let (mut files, mut every, mut title) = (Vec::new(), 60.0, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--every" => {
                let v = args.next().context(usage)?;
                every = v
                    .parse::<f64>()
                    .ok()
                    .filter(|e| *e > 0.0 && e.is_finite())
                    .with_context(|| format!("--every {v}: expected seconds > 0"))?;
            }
            "--title" => title = Some(args.next().context(usage)?),
            "-h" | "--help" => {
                println!("{usage}");
                return Ok(());
            }
            _ if a.starts_with("--") => bail!("unknown option {a}; {usage}"),
            _ => files.push(a),
        }
    }
    let [csv, svg] = files.as_slice() else {
        bail!("{usage}");
    };
    let text = std::fs::read_to_string(csv).with_context(|| format!("cannot read {csv}"))?;
    let table = Table::parse(&text, csv)?;
    if table.rows.is_empty() {
        bail!("{csv} holds no samples, only its header");
    }
    let title = title.unwrap_or_else(|| format!("crawl over time ({csv})"));
    plot(&table, csv, Path::new(svg), &title)?;
    print!("{}", summary(&table, every));
    eprintln!("plot: {svg} ({} samples)", table.rows.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "elapsed_s,pages,pages_per_s,rss_mib,sockets,fds,store_mib\n\
                       10,1000,100,50,20,30,5\n\
                       20,3000,200,60,21,31,9\n\
                       30,4000,100,,,,12\n";

    #[test]
    fn parses_and_skips_empty_cells() {
        let t = Table::parse(CSV, "t.csv").unwrap();
        assert_eq!(t.rows.len(), 3);
        let rss = t.col("rss_mib").unwrap();
        assert_eq!(t.series(rss), vec![(10.0, 50.0), (20.0, 60.0)]);
    }

    #[test]
    fn a_malformed_line_is_an_error_naming_it() {
        let bad = CSV.replace("20,3000", "20,3x00");
        let e = Table::parse(&bad, "t.csv").unwrap_err().to_string();
        assert!(
            e.contains("t.csv:3") && e.contains("'pages'") && e.contains("3x00"),
            "{e}"
        );
        let short = CSV.replace("30,4000,100,,,,12", "30,4000");
        let e = Table::parse(&short, "t.csv").unwrap_err().to_string();
        assert!(e.contains("t.csv:4") && e.contains("2 fields"), "{e}");
        let e = Table::parse("pages\n1\n", "t.csv").unwrap_err().to_string();
        assert!(e.contains("no column 'elapsed_s'"), "{e}");
        let e = Table::parse("", "t.csv").unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
        let e = Table::parse("elapsed_s,pages\n,5\n", "t.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sample 1 has no elapsed_s"), "{e}");
    }

    #[test]
    fn a_missing_panel_column_is_an_error() {
        let t = Table::parse("elapsed_s,pages_per_s\n1,2\n", "t.csv").unwrap();
        let e = panels(&t, "t.csv").err().unwrap().to_string();
        assert!(e.contains("no column 'rss_mib'"), "{e}");
    }

    #[test]
    fn summary_picks_one_row_per_interval_and_the_last() {
        let t = Table::parse(CSV, "t.csv").unwrap();
        let s = summary(&t, 15.0);
        let rows: Vec<&str> = s.lines().skip(2).collect();
        assert_eq!(rows.len(), 2, "{s}");
        assert!(
            rows[0].starts_with("| 20 | 3,000 | 150 | 150 | 60 |"),
            "{s}"
        );
        assert!(rows[1].starts_with("| 30 | 4,000 | 100 | 133 | — |"), "{s}");
        assert_eq!(thousands(1234567.0), "1,234,567");
        assert_eq!(thousands(12.0), "12");
    }

    #[test]
    fn plots_an_svg_with_every_panel() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("t.svg");
        let t = Table::parse(CSV, "t.csv").unwrap();
        plot(&t, "t.csv", &svg, "test").unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        for p in &PANELS[..4] {
            assert!(text.contains(p.title), "{}", p.title);
        }
        assert!(text.contains("<polyline"));
    }
}
