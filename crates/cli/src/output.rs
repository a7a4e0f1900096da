//! Writing results: scores, atomically, and human-readable top-k tables, pages named by the ids
//! users see ([`PageIds`]).

use anyhow::Result;
use crawlrank_graph::PageIds;
use std::io::Write;
use std::path::Path;

/// Writes the scores of `crawlrank rank --out`, atomically: one score per line in node order
/// when the pages' ids are `0..n` (line `i + 1` is page `i`), else one `id<TAB>score` line per
/// page, in increasing order of id — an id with no page (a gap in the user's ids) has no line.
pub fn write_scores(path: &Path, scores: &[f64], ids: &PageIds) -> Result<()> {
    crawlrank_graph::atomic::write_file(path, |w| {
        for (node, s) in scores.iter().enumerate() {
            // `{}` on f64 prints the shortest string that reads back to the same value.
            if ids.is_dense() {
                writeln!(w, "{s}")?;
            } else {
                writeln!(w, "{}\t{s}", ids.id(node))?;
            }
        }
        Ok(())
    })
}

/// Prints the `k` best pages: rank, id, URL when known, score.
pub fn print_top(scores: &[f64], k: usize, urls: Option<&[String]>, ids: &PageIds, label: &str) {
    let top = crawlrank_rank::top_k(scores, k);
    println!("{:>5}  {:>10}  {:<14}  url", "rank", "id", label);
    for (i, (node, score)) in top.iter().enumerate() {
        let url = urls
            .and_then(|u| u.get(*node))
            .map(String::as_str)
            .unwrap_or("-");
        println!(
            "{:>5}  {:>10}  {:<14.6e}  {}",
            i + 1,
            ids.id(*node),
            score,
            url
        );
    }
}
