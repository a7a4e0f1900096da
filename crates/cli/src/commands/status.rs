//! `crawlrank status --state DIR`: where a crawl stands, from its state directory.
//! `crawlrank status --frontier URL`: where a frontier service's crawl stands, every node of a
//! cluster counted (docs/scaling.md).

use anyhow::Result;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
#[group(required = true, multiple = false)]
pub struct Args {
    /// The crawl's state directory.
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// A frontier service (`http://127.0.0.1:7071`), or any node of a cluster.
    #[arg(long, value_name = "URL")]
    pub frontier: Option<String>,
    /// The crawl id at the frontier (default: the default crawl).
    #[arg(long, value_name = "ID", default_value = "", requires = "frontier")]
    pub crawl: String,
}

pub fn run(args: Args) -> Result<()> {
    if let Some(url) = &args.frontier {
        return frontier(url, &args.crawl);
    }
    let Some(state) = &args.state else {
        anyhow::bail!("give --state DIR or --frontier URL");
    };
    let st = crawlrank_crawler::status(state)?;
    println!("crawl state: {}", state.display());
    print!("{st}");
    Ok(())
}

/// One line per node and their total: URLs not done, leased, fetched, done for good, queues
/// and the JetStream messages set aside.
fn frontier(url: &str, crawl: &str) -> Result<()> {
    let nodes = crawlrank_urlfrontier::fetch_node_stats(url, crawl, Duration::from_secs(30))?;
    let count =
        |s: &crawlrank_urlfrontier::proto::Stats, k: &str| s.counts.get(k).copied().unwrap_or(0);
    println!(
        "frontier: {url} ({} node{})",
        nodes.len(),
        if nodes.len() == 1 { "" } else { "s" }
    );
    println!("node\turls_left\tin_process\tfetched\tcompleted\tqueues\tdead_letters");
    let mut total = [0u64; 6];
    for (node, s) in &nodes {
        let row = [
            s.size,
            u64::from(s.in_process),
            count(s, "crawlrank.fetched"),
            count(s, "completed"),
            s.number_of_queues,
            count(s, "crawlrank.dead_letters"),
        ];
        for (t, v) in total.iter_mut().zip(row) {
            *t += v;
        }
        let cells: Vec<String> = row.iter().map(u64::to_string).collect();
        println!("{node}\t{}", cells.join("\t"));
    }
    if nodes.len() > 1 {
        let cells: Vec<String> = total.iter().map(u64::to_string).collect();
        println!("total\t{}", cells.join("\t"));
    }
    Ok(())
}
