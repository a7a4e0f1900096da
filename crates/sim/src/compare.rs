//! Two seed sets side by side: the same policies crawled from each, compared at a few points of
//! the crawl. This answers the community-seeds paper's question for every ordering policy — do
//! crawls from community seeds find the important pages sooner than crawls from random seeds?
//!
//! Each run is measured against its own reachable set `R`, so the comparison is exact when both
//! seed sets reach the same pages (on a strongly connected graph, or whenever `R` is the whole
//! graph) and the table prints both `R`s so a reader sees when they differ.

use crate::measures::Measures;
use crate::report::Summary;
use anyhow::{ensure, Result};
use crawlrank_graph::atomic::write_file;
use std::io::Write;
use std::path::Path;

/// The points of the crawl compared (percent of `R` crawled).
pub const COMPARE_PERCENTS: [usize; 4] = [1, 5, 10, 25];

/// Prints, per policy, PageRank mass and throughput at [`COMPARE_PERCENTS`] from both seed sets
/// and which one is ahead.
pub fn write_comparison(
    a: &Summary,
    a_label: &str,
    b: &Summary,
    b_label: &str,
    w: &mut impl Write,
) -> Result<()> {
    ensure_same_policies(a, b)?;
    writeln!(
        w,
        "{a_label}: {} seeds ({}), R = {};  {b_label}: {} seeds ({}), R = {}",
        a.seeds, a.seed_source, a.reachable, b.seeds, b.seed_source, b.reachable
    )?;
    write!(w, "{:<17}", "policy")?;
    for p in COMPARE_PERCENTS {
        write!(w, " {:>15}", format!("mass@{p}%"))?;
    }
    for p in COMPARE_PERCENTS {
        write!(w, " {:>15}", format!("hot@{p}%"))?;
    }
    writeln!(w, "  ahead")?;
    for (ra, rb) in a.results.iter().zip(&b.results) {
        let (ma, mb) = (&ra.measures, &rb.measures);
        write!(w, "{:<17}", ra.run.policy.name())?;
        for p in COMPARE_PERCENTS {
            let (x, y) = (Measures::at(&ma.mass, p), Measures::at(&mb.mass, p));
            write!(w, " {:>15}", format!("{x:.3} / {y:.3}"))?;
        }
        for p in COMPARE_PERCENTS {
            let (x, y) = (
                Measures::at(&ma.throughput, p),
                Measures::at(&mb.throughput, p),
            );
            write!(w, " {:>15}", format!("{x:.3} / {y:.3}"))?;
        }
        let ahead = COMPARE_PERCENTS
            .iter()
            .filter(|&&p| Measures::at(&ma.mass, p) > Measures::at(&mb.mass, p))
            .count();
        writeln!(
            w,
            "  {a_label} at {ahead} of {} points (mass)",
            COMPARE_PERCENTS.len()
        )?;
    }
    writeln!(w, "(each cell: {a_label} / {b_label})")?;
    Ok(())
}

/// Writes `comparison.csv`: `policy,percent,<a>_mass,<b>_mass,<a>_hot,<b>_hot` for every
/// percent 1..=100.
pub fn write_comparison_csv(
    a: &Summary,
    a_label: &str,
    b: &Summary,
    b_label: &str,
    path: &Path,
) -> Result<()> {
    ensure_same_policies(a, b)?;
    write_file(path, |w| {
        writeln!(
            w,
            "policy,percent,{a_label}_mass,{b_label}_mass,{a_label}_hot,{b_label}_hot"
        )?;
        for (ra, rb) in a.results.iter().zip(&b.results) {
            let (ma, mb) = (&ra.measures, &rb.measures);
            for p in 1..=crate::checkpoints::POINTS {
                writeln!(
                    w,
                    "{},{p},{},{},{},{}",
                    ra.run.policy,
                    Measures::at(&ma.mass, p),
                    Measures::at(&mb.mass, p),
                    Measures::at(&ma.throughput, p),
                    Measures::at(&mb.throughput, p)
                )?;
            }
        }
        Ok(())
    })
}

fn ensure_same_policies(a: &Summary, b: &Summary) -> Result<()> {
    let names = |s: &Summary| s.results.iter().map(|r| r.run.policy).collect::<Vec<_>>();
    ensure!(
        names(a) == names(b),
        "the two runs crawled different policies"
    );
    Ok(())
}
