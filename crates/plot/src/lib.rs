//! The line charts of crawlrank's reports (`simulate`, `score-order`, `frontier-rank`,
//! `seeds-eval` and the crawl time series), drawn one way so that every plot reads the same:
//!
//! - one colour-blind-safe palette (Okabe–Ito) with a dash per line, so lines are told apart
//!   with the common colour-vision deficiencies and printed in grey ([`line_style`]);
//! - a repeated experiment's mean line over a shaded band, its 95% interval, in the line's
//!   colour ([`Series::band`]);
//! - y-axes fixed where the measure is a share (`0..1`) and scaled to the data where a fixed
//!   axis would flatten it ([`YAxis`]), and an optional x range;
//! - files written whole or not at all (an SVG is rendered in memory, then written atomically).
//!
//! Entry points: [`LineChart`] and [`Series`] for a whole chart; [`draw_lines`] and
//! [`SvgChart`] for a chart laid out by the caller (panels, log axes); [`save_svg`] for any
//! drawing.
#![warn(missing_docs)]

use anyhow::{anyhow, Result};
use crawlrank_util::atomic::write_file;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::io::Write;
use std::ops::Range;
use std::path::Path;

pub use plotters;

/// What drawing returns: plotters' errors are boxed.
pub type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// An SVG chart with an f64 x axis and a `Y` axis (f64 by default; a log axis in
/// `seeds-eval`).
pub type SvgChart<'a, 'b, Y = RangedCoordf64> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, Y>>;

/// The size of every plot, in pixels.
pub const SIZE: (u32, u32) = (1000, 640);

/// The Okabe–Ito palette (Okabe and Ito, "Color Universal Design", 2008): colours told apart
/// with the common colour-vision deficiencies and in grey, yellow last (faint on white).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(240, 228, 66),  // yellow
];

/// Dash and gap lengths in pixels: solid, dashed, dotted, long-dashed. A line is told apart by
/// its dash as well as its colour, so a plot printed in grey still reads.
const DASHES: [(u32, u32); 4] = [(100_000, 0), (10, 5), (2, 4), (20, 6)];

/// The colour and the (dash, gap) of the `i`-th line of a plot: no two of the first 32 lines
/// share both.
pub fn line_style(i: usize) -> (RGBColor, (u32, u32)) {
    (
        PALETTE[i % PALETTE.len()],
        DASHES[(i + i / PALETTE.len()) % DASHES.len()],
    )
}

/// Where a chart's legend goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corner {
    /// The upper right corner.
    UpperRight,
    /// The lower right corner.
    LowerRight,
    /// The upper left corner.
    UpperLeft,
    /// The lower left corner.
    LowerLeft,
}

impl Corner {
    fn position(self) -> SeriesLabelPosition {
        match self {
            Self::UpperRight => SeriesLabelPosition::UpperRight,
            Self::LowerRight => SeriesLabelPosition::LowerRight,
            Self::UpperLeft => SeriesLabelPosition::UpperLeft,
            Self::LowerLeft => SeriesLabelPosition::LowerLeft,
        }
    }
}

/// Draws one line per `(legend, points)` into `chart`, each in its own colour and dash
/// ([`line_style`]), with a dot on every point when `markers`, and with `legend` a box of their
/// names in that corner.
pub fn draw_lines<'a, 'b: 'a, Y, S>(
    chart: &mut SvgChart<'a, 'b, Y>,
    series: impl IntoIterator<Item = (S, Vec<(f64, f64)>)>,
    markers: bool,
    legend: Option<Corner>,
) -> DrawResult
where
    Y: Ranged<ValueType = f64>,
    S: Into<String>,
{
    for (i, (name, points)) in series.into_iter().enumerate() {
        let (color, (dash, gap)) = line_style(i);
        let style = color.stroke_width(2);
        if markers {
            chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
        chart
            .draw_series(DashedLineSeries::new(points, dash, gap, style))?
            .label(name)
            .legend(move |(x, y)| {
                DashedPathElement::new(vec![(x, y), (x + 28, y)], dash.min(28), gap, style)
            });
    }
    if let Some(corner) = legend {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(corner.position())
            .draw()?;
    }
    Ok(())
}

/// How a chart's y axis is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum YAxis {
    /// From the first to the second value, whatever the data (a share: `0..1`).
    Fixed(f64, f64),
    /// From 0 to 5% above the largest value (bands included), and at least to `min_top`.
    FromZero {
        /// The least top of the axis.
        min_top: f64,
    },
    /// From just below the smallest value to just above the largest (bands included), so
    /// that small differences show: a curve whose values all lie in 0.80–0.83 fills the
    /// chart rather than a flat line at the top of a 0–1 axis.
    Data,
}

/// One line of a [`LineChart`]: its legend, its points, and optionally a band — the lower and
/// upper ends of an interval at each point, drawn shaded in the line's colour under it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// The legend.
    pub name: String,
    /// `(x, y)` points, in order of `x`.
    pub points: Vec<(f64, f64)>,
    /// `(low, high)` at each point, when the line is a mean over runs.
    pub band: Option<Vec<(f64, f64)>>,
}

impl Series {
    /// A line without a band.
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.into(),
            points,
            band: None,
        }
    }

    /// A mean line over its band: `(x, mean, low, high)` per point.
    pub fn band(
        name: impl Into<String>,
        points: impl IntoIterator<Item = (f64, f64, f64, f64)>,
    ) -> Self {
        let (points, band) = points
            .into_iter()
            .map(|(x, y, lo, hi)| ((x, y), (lo, hi)))
            .unzip();
        Self {
            name: name.into(),
            points,
            band: Some(band),
        }
    }
}

/// A chart of lines over one x range: the title, the axes' descriptions and ranges, the
/// legend's corner and whether points get dots.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// The caption (name the graph, the measure and the runs).
    pub title: String,
    /// The x axis' description.
    pub x_desc: String,
    /// The y axis' description.
    pub y_desc: String,
    /// The x range.
    pub x: Range<f64>,
    /// The y range.
    pub y: YAxis,
    /// Where the legend goes.
    pub legend: Corner,
    /// A dot on every point (for curves of few points).
    pub markers: bool,
}

impl LineChart {
    /// The y range for `series` (see [`YAxis`]): only points inside the x range count.
    pub fn y_range(&self, series: &[Series]) -> Range<f64> {
        let inside = |x: f64| x >= self.x.start && x <= self.x.end;
        let values = series.iter().flat_map(|s| {
            let band = s.band.iter().flatten().copied();
            s.points
                .iter()
                .zip(band.map(Some).chain(std::iter::repeat(None)))
                .filter(move |((x, _), _)| inside(*x))
                .flat_map(|((_, y), b)| {
                    [Some(*y), b.map(|b| b.0), b.map(|b| b.1)]
                        .into_iter()
                        .flatten()
                })
                .filter(|v| v.is_finite())
        });
        match self.y {
            YAxis::Fixed(lo, hi) => lo..hi,
            YAxis::FromZero { min_top } => 0.0..values.fold(min_top, f64::max) * 1.05,
            YAxis::Data => {
                let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                });
                if !lo.is_finite() {
                    return 0.0..1.0;
                }
                let pad = ((hi - lo) * 0.08).max(hi.abs().max(1e-9) * 0.01);
                (lo - pad)..(hi + pad)
            }
        }
    }

    /// Draws the chart with `series` on `root`.
    pub fn draw(&self, root: &DrawingArea<SVGBackend, Shift>, series: &[Series]) -> DrawResult {
        let y = self.y_range(series);
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(self.x.clone(), y)?;
        chart
            .configure_mesh()
            .x_desc(&self.x_desc)
            .y_desc(&self.y_desc)
            .draw()?;
        let inside = |&(x, _): &(f64, f64)| x >= self.x.start && x <= self.x.end;
        for (i, s) in series.iter().enumerate() {
            let Some(band) = &s.band else { continue };
            let color = line_style(i).0;
            let pts: Vec<((f64, f64), (f64, f64))> = s
                .points
                .iter()
                .copied()
                .zip(band.iter().copied())
                .filter(|(p, _)| inside(p))
                .collect();
            let mut outline: Vec<(f64, f64)> =
                pts.iter().map(|((x, _), (_, hi))| (*x, *hi)).collect();
            outline.extend(pts.iter().rev().map(|((x, _), (lo, _))| (*x, *lo)));
            chart.draw_series(std::iter::once(Polygon::new(
                outline,
                color.mix(0.18).filled(),
            )))?;
        }
        let lines = series.iter().map(|s| {
            (
                s.name.clone(),
                s.points.iter().copied().filter(inside).collect(),
            )
        });
        draw_lines(&mut chart, lines, self.markers, Some(self.legend))
    }

    /// Draws the chart into an SVG file at `path`, written whole or not at all.
    pub fn save(&self, path: &Path, series: &[Series]) -> Result<()> {
        save_svg(path, |root| self.draw(root, series))
    }
}

/// Draws into an SVG of [`SIZE`] in memory (on white), then writes it to `path` atomically.
pub fn save_svg(
    path: &Path,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> DrawResult,
) -> Result<()> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        let drawn: DrawResult = root
            .fill(&WHITE)
            .map_err(Into::into)
            .and_then(|()| draw(&root))
            .and_then(|()| root.present().map_err(Into::into));
        drawn.map_err(|err| anyhow!("cannot draw {}: {err}", path.display()))?;
    }
    write_file(path, |w| Ok(w.write_all(svg.as_bytes())?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_lines_differ_in_colour_or_dash() {
        let styles: Vec<_> = (0..32).map(line_style).collect();
        for (i, a) in styles.iter().enumerate() {
            for b in &styles[i + 1..] {
                assert_ne!(a, b);
            }
        }
        // The first eight differ in colour alone, and neighbours in dash too.
        for i in 0..7 {
            assert_ne!(styles[i].0, styles[i + 1].0);
            assert_ne!(styles[i].1, styles[i + 1].1);
        }
    }

    fn chart(y: YAxis) -> LineChart {
        LineChart {
            title: "t".into(),
            x_desc: "x".into(),
            y_desc: "y".into(),
            x: 0.0..10.0,
            y,
            legend: Corner::UpperRight,
            markers: true,
        }
    }

    #[test]
    fn the_y_axis_follows_the_data_and_the_bands_inside_the_x_range() {
        let s = [
            Series::band("a", [(1.0, 0.81, 0.80, 0.82), (2.0, 0.82, 0.81, 0.83)]),
            Series::line("b", vec![(3.0, 0.815), (50.0, 0.0)]),
        ];
        let r = chart(YAxis::Data).y_range(&s);
        assert!(
            r.start < 0.80 && r.start > 0.79 && r.end > 0.83 && r.end < 0.84,
            "{r:?}"
        );
        let r = chart(YAxis::FromZero { min_top: 1.0 }).y_range(&s);
        assert_eq!(r, 0.0..1.05);
        let r = chart(YAxis::FromZero { min_top: 0.0 }).y_range(&s);
        assert!((r.end - 0.83 * 1.05).abs() < 1e-12, "{r:?}");
        assert_eq!(chart(YAxis::Fixed(0.0, 1.0)).y_range(&s), 0.0..1.0);
        assert_eq!(chart(YAxis::Data).y_range(&[]), 0.0..1.0);
    }

    #[test]
    fn a_chart_is_written_whole_with_its_legend_and_band() {
        let dir = std::env::temp_dir().join(format!("crawlrank-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.svg");
        let s = [
            Series::band("fica", [(1.0, 0.5, 0.4, 0.6), (2.0, 0.6, 0.5, 0.7)]),
            Series::line("opic", vec![(1.0, 0.3), (2.0, 0.4)]),
        ];
        chart(YAxis::Fixed(0.0, 1.0)).save(&path, &s).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("fica") && svg.contains("opic"));
        // The band is a filled polygon in the first line's colour (0, 114, 178).
        assert!(svg.contains("<polygon") && svg.contains("#0072B2"), "{svg}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
