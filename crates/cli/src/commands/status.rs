//! `crawlrank status --state DIR`: where a crawl stands, from its state directory.
//! `crawlrank status --frontier URL`: where a frontier service's crawl stands, every node of a
//! cluster counted (docs/scaling.md). [`frontier_summary`] reads those numbers for the
//! dashboard of a frontier too (`crawlrank dashboard --frontier URL`), so both show the same.

use anyhow::Result;
use crawlrank_frontier_service::Capped;
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

/// The columns of [`FrontierSummary`]'s rows, with what each counts (one line).
pub const FRONTIER_COLUMNS: [(&str, &str); 6] = [
    (
        "urls_left",
        "URLs of the crawl not done yet (queued or leased).",
    ),
    ("in_process", "URLs leased to a worker now."),
    ("fetched", "Pages reported fetched."),
    ("completed", "URLs done for good."),
    ("queues", "Queues (hosts) of the crawl."),
    (
        "dead_letters",
        "Messages between cluster nodes that did not decode, set aside.",
    ),
];

/// Where a frontier service's crawl stands: a row of [`FRONTIER_COLUMNS`] per node (one for a
/// service that is no node of a cluster), their sum, and OPIC's cash over the nodes.
pub struct FrontierSummary {
    /// Each node's address and row.
    pub nodes: Vec<(String, [u64; 6])>,
    /// The sum of the rows.
    pub total: [u64; 6],
    /// For an OPIC crawl.
    pub cash: Option<Cash>,
    /// Links the service's bounds skipped, over the nodes, by the counts `Capped::KEYS` names.
    pub skipped: [u64; 6],
}

/// Reads [`FrontierSummary`] of crawl `crawl` from the service at `url`: every node `ListNodes`
/// names, each asked for its own counts.
pub fn frontier_summary(url: &str, crawl: &str) -> Result<FrontierSummary> {
    let nodes = crawlrank_urlfrontier::fetch_node_stats(url, crawl, Duration::from_secs(30))?;
    let count =
        |s: &crawlrank_urlfrontier::proto::Stats, k: &str| s.counts.get(k).copied().unwrap_or(0);
    let mut total = [0u64; 6];
    let mut skipped = [0u64; 6];
    let mut rows = Vec::with_capacity(nodes.len());
    for (node, s) in &nodes {
        for (t, key) in skipped.iter_mut().zip(Capped::KEYS) {
            *t += count(s, key);
        }
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
        rows.push((node.clone(), row));
    }
    Ok(FrontierSummary {
        cash: opic_cash(nodes.iter().map(|(_, s)| s)),
        nodes: rows,
        total,
        skipped,
    })
}

/// One line per node and their total: URLs not done, leased, fetched, done for good, queues
/// and the JetStream messages set aside; for an OPIC crawl, its total cash over the nodes
/// and how much of it is in flight between them.
fn frontier(url: &str, crawl: &str) -> Result<()> {
    let summary = frontier_summary(url, crawl)?;
    let n = summary.nodes.len();
    println!(
        "frontier: {url} ({n} node{})",
        if n == 1 { "" } else { "s" }
    );
    let names: Vec<&str> = FRONTIER_COLUMNS.iter().map(|(name, _)| *name).collect();
    println!("node\t{}", names.join("\t"));
    let line = |row: &[u64; 6]| {
        row.iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join("\t")
    };
    for (node, row) in &summary.nodes {
        println!("{node}\t{}", line(row));
    }
    if n > 1 {
        println!("total\t{}", line(&summary.total));
    }
    if let Some(cash) = &summary.cash {
        println!("{}", cash.line());
    }
    if summary.skipped.iter().any(|&n| n > 0) {
        // The crawler's names of these counters, without the service's prefix.
        let counts: Vec<String> = Capped::KEYS
            .iter()
            .zip(summary.skipped)
            .map(|(key, n)| format!("{} {n}", key.trim_start_matches("crawlrank.")))
            .collect();
        println!("links skipped by the bounds: {}", counts.join(", "));
    }
    Ok(())
}

/// OPIC's cash over the nodes.
pub struct Cash {
    /// Every page's, the virtual page's and the cash in flight: 1 at any instant.
    pub total: f64,
    /// Sent along links to other nodes and not yet applied there.
    pub in_flight: f64,
}

impl Cash {
    /// As `crawlrank status` prints it.
    pub fn line(&self) -> String {
        format!(
            "opic cash: {:.12} (in flight between nodes: {:.12})",
            self.total, self.in_flight
        )
    }
}

/// OPIC's cash from the nodes' counts (crawlrank_frontier_service's `OPIC_HELD` and the
/// others, in units of 1e-15): `Σ held + Σ sent − Σ received + (n − Σ pages)/n`, the last
/// term the `1/n` of each page no node knows yet. `None` when no node reports it (another
/// policy).
fn opic_cash<'a>(
    nodes: impl Iterator<Item = &'a crawlrank_urlfrontier::proto::Stats>,
) -> Option<Cash> {
    use crawlrank_frontier_service::{
        OPIC_HELD, OPIC_PAGES, OPIC_RECEIVED, OPIC_SENT, OPIC_TOTAL_PAGES,
    };
    let (mut held, mut sent, mut received, mut pages, mut n) = (0i128, 0i128, 0i128, 0u64, 0u64);
    for s in nodes {
        let c = |k: &str| s.counts.get(k).copied();
        n = n.max(c(OPIC_TOTAL_PAGES).unwrap_or(0));
        held += i128::from(c(OPIC_HELD).unwrap_or(0));
        sent += i128::from(c(OPIC_SENT).unwrap_or(0));
        received += i128::from(c(OPIC_RECEIVED).unwrap_or(0));
        pages += c(OPIC_PAGES).unwrap_or(0);
    }
    if n == 0 {
        return None;
    }
    let unknown = n.saturating_sub(pages) as f64 / n as f64;
    Some(Cash {
        total: (held + sent - received) as f64 / 1e15 + unknown,
        in_flight: (sent - received) as f64 / 1e15,
    })
}
