//! `crawlrank impacts`: per-page impact tables for the impact-aware rankings.
//!
//! Three modes. `--clickstream FILE` reads a Wikimedia clickstream over a graph whose URLs are
//! Wikipedia article URLs and writes `id<TAB>url<TAB>search<TAB>clicks`: search-engine referrals
//! (`other-search` rows, the RW paper's search impact) and link clicks into each page.
//! `--wikispeedia DIR` replays Wikispeedia's human navigation paths into
//! visits and clicks per page of a graph imported with `import --format wikispeedia`, and
//! writes the impact table `id<TAB>url<TAB>visits<TAB>clicks`. That traffic is goal-directed
//! game play, not search traffic. Without it, the synthetic model (`--profile web|wiki --seed
//! S`, docs/synthetic-impacts.md) writes `id<TAB>url<TAB>views<TAB>clicks` for any graph and
//! prints what it produced: shares, totals, rank correlations and the RW paper's frontier
//! impact ratios.

use anyhow::Result;
use crawlrank_graph::{open_graph, Cache};
use crawlrank_impact::{
    evaluate, read_clickstream, replay_paths, synthetic_impacts, write_impact_table, write_impacts,
    write_synthetic, HostSource, Pages, Profile, Ratio, SyntheticReport,
};
use std::path::PathBuf;

/// The synthetic profiles (the RW paper's two datasets).
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum ProfileArg {
    /// A web crawl: 0.6% of pages with impact (the paper: 0.4% clicked, 0.8% viewed).
    Web,
    /// Wikipedia: 31% of pages with impact (the paper: 27.4% clicked, 35.5% viewed).
    Wiki,
}

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
    #[arg(long, value_name = "DIR", conflicts_with_all = ["profile", "seed", "clickstream"])]
    pub wikispeedia: Option<PathBuf>,
    /// Real search impact: a Wikimedia clickstream (`prev curr type n`, TSV or CSV, maybe
    /// gzipped) over a graph whose URLs are https://en.wikipedia.org/wiki/<article>: search
    /// referrals (`other-search` rows) and link clicks into each page.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["profile", "seed"])]
    pub clickstream: Option<PathBuf>,
    /// Synthetic impacts imitating this dataset of the RW paper (the default mode: `web`).
    #[arg(long, value_enum)]
    pub profile: Option<ProfileArg>,
    /// Seed of the synthetic model: the same graph, profile and seed give the same file.
    #[arg(long)]
    pub seed: Option<u64>,
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    if let Some(file) = &args.clickstream {
        return clickstream(&args, file, cache);
    }
    let Some(dir) = &args.wikispeedia else {
        return synthetic(&args, cache);
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

fn clickstream(args: &Args, file: &std::path::Path, cache: &Cache) -> Result<()> {
    let graph = open_graph(&args.graph, cache)?;
    let pages = Pages::from_graph(&graph)?;
    let stream = read_clickstream(file)?;
    let impact = stream.on_pages(&pages)?;
    write_impact_table(
        &args.out,
        &pages,
        &["search", "clicks"],
        &[&impact.search, &impact.clicks],
    )?;
    println!("{}", stream.report);
    let count = |v: &[f64]| v.iter().filter(|&&x| x > 0.0).count();
    if impact.unknown_articles > 0 {
        println!(
            "{} articles with traffic are not pages of the graph (not counted), e.g. {}",
            impact.unknown_articles,
            impact.unknown_examples.join(", ")
        );
    }
    println!(
        "wrote {}: {} of {} pages with search referrals, {} with link clicks; {} click arcs between pages of the graph",
        args.out.display(),
        count(&impact.search),
        pages.len(),
        count(&impact.clicks),
        impact.arcs.len()
    );
    Ok(())
}

fn synthetic(args: &Args, cache: &Cache) -> Result<()> {
    let profile = match args.profile.unwrap_or(ProfileArg::Web) {
        ProfileArg::Web => Profile::Web,
        ProfileArg::Wiki => Profile::Wiki,
    };
    let seed = args.seed.unwrap_or(0);
    let graph = open_graph(&args.graph, cache)?;
    let pages = Pages::from_graph(&graph)?;
    let hosts = graph.hosts()?;
    let csr = graph.to_csr()?;
    let impact = synthetic_impacts(&csr, hosts.as_ref().map(|h| h.host_of()), profile, seed)?;
    write_synthetic(&args.out, &pages, &impact)?;
    let report = evaluate(&csr, &impact, seed)?;
    let groups = match impact.hosts {
        HostSource::Urls(h) => format!("{h} hosts from the URLs"),
        HostSource::Blocks(b) => format!(
            "{b} blocks of {} consecutive ids (the graph has no URLs)",
            crawlrank_impact::synthetic::BLOCK
        ),
    };
    println!(
        "synthetic impacts, profile {}, seed {seed}, host effect over {groups}",
        profile.name()
    );
    print_report(&report);
    println!("wrote {}", args.out.display());
    Ok(())
}

fn pct(a: u64, b: u64) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.2}%", 100.0 * a as f64 / b as f64)
    }
}

fn ratio(r: &Ratio) -> String {
    format!(
        "{:.3} ({} pages of D, {} of F linked, impact {})",
        r.ratio, r.sources, r.linked, r.impact
    )
}

fn print_report(r: &SyntheticReport) {
    println!(
        "pages with impact: {} of {} ({}) viewed, {} ({}) clicked; total views {}, clicks {}",
        r.viewed,
        r.pages,
        pct(r.viewed, r.pages),
        r.clicked,
        pct(r.clicked, r.pages),
        r.total_views,
        r.total_clicks
    );
    println!(
        "Kendall tau_b: latent quality vs in-degree {:.3}, vs PageRank {:.3}; views vs in-degree \
         {:.3} (all pages), {:.3} (viewed pages), views vs PageRank {:.3}",
        r.tau_quality_indegree,
        r.tau_quality_pagerank,
        r.tau_views_indegree,
        r.tau_views_indegree_viewed,
        r.tau_views_pagerank
    );
    println!(
        "downloaded set D: first {} pages of a BFS from {} random seeds; frontier F: {} pages, \
         {} ({}) viewed, {} ({}) clicked",
        r.downloaded,
        r.bfs_seeds,
        r.frontier,
        r.frontier_viewed,
        pct(r.frontier_viewed, r.frontier),
        r.frontier_clicked,
        pct(r.frontier_clicked, r.frontier)
    );
    println!("frontier impact ratios r(X->F) (the RW paper's Tables 2-3):");
    println!("  r_c(D_C ->F)  {}", ratio(&r.clicks.with));
    println!("  r_c(D_NC->F)  {}", ratio(&r.clicks.without));
    println!("  r_c(EG(D_C)->F) {}", ratio(&r.clicks.with_virtual));
    println!("  r_v(D_V ->F)  {}", ratio(&r.views.with));
    println!("  r_v(D_NV->F)  {}", ratio(&r.views.without));
    println!("  r_v(EG(D_V)->F) {}", ratio(&r.views.with_virtual));
}
