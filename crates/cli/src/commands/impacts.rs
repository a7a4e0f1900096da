//! `crawlrank impacts`: per-page impact tables for the impact-aware rankings (issue 10).
//!
//! Today one mode: `--wikispeedia DIR` replays Wikispeedia's human navigation paths into
//! visits and clicks per page of a graph imported with `import --format wikispeedia`, and
//! writes the impact table `id<TAB>url<TAB>visits<TAB>clicks`. That traffic is goal-directed
//! game play, not search traffic. The synthetic model (`--profile web|wiki --seed S`) will be a
//! second mode beside it; the arguments are laid out for it, and until it exists an `impacts`
//! without `--wikispeedia` is an error saying so.

use anyhow::{bail, Result};
use crawlrank_graph::{open_graph, Cache};
use crawlrank_impact::{replay_paths, write_impacts, Pages};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph whose pages get impacts: a BVGraph basename with `.urls`.
    #[arg(long)]
    pub graph: PathBuf,
    /// The impact table to write (TSV: id, url, then the impact columns).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Real traffic: replay the navigation paths of this Wikispeedia folder
    /// (paths_finished*.tsv(.gz), paths_unfinished.tsv(.gz)) into visits and clicks per
    /// article. Goal-directed game traffic, not search traffic.
    #[arg(long, value_name = "DIR")]
    pub wikispeedia: Option<PathBuf>,
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    let Some(dir) = &args.wikispeedia else {
        bail!(
            "the synthetic impact model (--profile web|wiki) is not built yet: give \
             --wikispeedia DIR to write the real Wikispeedia traffic"
        );
    };
    let graph = open_graph(&args.graph, cache)?;
    let pages = Pages::from_graph(&graph)?;
    let replay = replay_paths(dir)?;
    let impact = replay.on_pages(&pages)?;
    write_impacts(&args.out, &pages, &impact)?;
    let r = &replay.report;
    println!(
        "replayed {} paths from {} files: {} visits, {} forward clicks ({} distinct click arcs), \
         {} back clicks{}",
        r.paths,
        r.files.len(),
        r.visits,
        r.forward_clicks,
        r.distinct_click_arcs,
        r.back_clicks,
        if r.unmatched_back_clicks > 0 {
            format!(
                " ({} with nothing to go back to, ignored)",
                r.unmatched_back_clicks
            )
        } else {
            String::new()
        }
    );
    if impact.unknown_steps > 0 {
        println!(
            "{} path steps name {} articles not in the graph (not counted), e.g. {}",
            impact.unknown_steps,
            impact.unknown_articles,
            impact.unknown_examples.join(", ")
        );
    }
    println!(
        "wrote {}: {} of {} pages visited (game traffic, not search traffic)",
        args.out.display(),
        impact.pages_visited,
        pages.len()
    );
    Ok(())
}
