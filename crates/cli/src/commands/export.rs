//! `crawlrank export`: a crawl's link graph as a BVGraph + `.urls`, and/or the policy's
//! current ranking of every URL.

use anyhow::{bail, Result};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The crawl's state directory.
    #[arg(long, value_name = "DIR")]
    pub state: PathBuf,
    /// Write the link graph here (BASENAME.graph, .offsets, .properties, .ef, .urls).
    #[arg(long, value_name = "BASENAME")]
    pub out: Option<PathBuf>,
    /// Write `score<TAB>url` lines, by decreasing policy score, to this file; and beside it
    /// FILE-stem.pages.tsv: `url<TAB>noindex<TAB>canonical` for pages marked noindex or
    /// naming another canonical URL.
    #[arg(long, value_name = "FILE")]
    pub ranking: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    if args.out.is_none() && args.ranking.is_none() {
        bail!("nothing to export: give --out BASENAME and/or --ranking FILE");
    }
    if let Some(out) = &args.out {
        let e = crawlrank_crawler::export::export_graph(&args.state, out)?;
        println!(
            "graph: {} nodes, {} arcs ({} pages crawled) -> {}",
            e.nodes,
            e.arcs,
            e.crawled,
            out.display()
        );
    }
    if let Some(r) = &args.ranking {
        let e = crawlrank_crawler::export::export_ranking(&args.state, r)?;
        match e.unscored {
            Some(unscored) => println!(
                "ranking: {} URLs -> {} ({unscored} URLs without a score left out)",
                e.scored,
                r.display()
            ),
            None => println!(
                "ranking: {} URLs -> {} (a crawl is running: its latest snapshot, taken every K pages)",
                e.scored,
                r.display()
            ),
        }
        if let Some((path, lines)) = &e.page_marks {
            println!(
                "page marks: {lines} pages marked noindex or canonical -> {}",
                path.display()
            );
        }
    }
    Ok(())
}
