//! `crawlrank export`: a crawl's link graph as a BVGraph + `.ef` + `.urls` and/or a text arc
//! list, and/or the policy's current ranking of every URL.

use anyhow::{bail, Result};
use crawlrank_crawler::LinkOutputs;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The crawl's state directory.
    #[arg(long, value_name = "DIR")]
    pub state: PathBuf,
    /// Write the link graph here (BASENAME.graph, .offsets, .properties, .ef, .urls).
    #[arg(long, value_name = "BASENAME")]
    pub out: Option<PathBuf>,
    /// Write the link graph as a text arc list to this file: one `src<TAB>dst` line per
    /// link, nodes numbered as in the BVGraph (node i is line i+1 of its .urls).
    #[arg(long, value_name = "FILE")]
    pub arcs: Option<PathBuf>,
    /// With --arcs: name the nodes by URL, `src_url<TAB>dst_url`.
    #[arg(long, requires = "arcs")]
    pub urls: bool,
    /// Write `score<TAB>url` lines, by decreasing policy score, to this file; and beside it
    /// FILE-stem.pages.tsv: `url<TAB>noindex<TAB>canonical` for pages marked noindex or
    /// naming another canonical URL.
    #[arg(long, value_name = "FILE")]
    pub ranking: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    if args.out.is_none() && args.arcs.is_none() && args.ranking.is_none() {
        bail!("nothing to export: give --out BASENAME, --arcs FILE and/or --ranking FILE");
    }
    if args.out.is_some() || args.arcs.is_some() {
        let outputs = LinkOutputs {
            graph: args.out.clone(),
            arcs: args.arcs.clone(),
            arc_urls: args.urls,
        };
        let e = crawlrank_crawler::export_links(&args.state, &outputs)?;
        let to: Vec<String> = [&args.out, &args.arcs]
            .into_iter()
            .flatten()
            .map(|p| p.display().to_string())
            .collect();
        println!(
            "graph: {} nodes, {} arcs ({} pages crawled) -> {}",
            e.nodes,
            e.arcs,
            e.crawled,
            to.join(", ")
        );
    }
    if let Some(r) = &args.ranking {
        let e = crawlrank_crawler::export_ranking(&args.state, r)?;
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
