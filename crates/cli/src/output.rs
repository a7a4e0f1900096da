//! Writing results: one value per line, atomically, and human-readable top-k tables.

use anyhow::Result;
use std::io::Write;
use std::path::Path;

/// Writes one score per line in node order (`FILE` of `crawlrank rank --out`), atomically.
pub fn write_scores(path: &Path, scores: &[f64]) -> Result<()> {
    crawlrank_graph::atomic::write_file(path, |w| {
        for s in scores {
            // `{}` on f64 prints the shortest string that reads back to the same value.
            writeln!(w, "{s}")?;
        }
        Ok(())
    })
}

/// Prints the `k` best pages: rank, id, URL when known, score.
pub fn print_top(scores: &[f64], k: usize, urls: Option<&[String]>, label: &str) {
    let top = crawlrank_rank::top_k(scores, k);
    println!("{:>5}  {:>10}  {:<14}  url", "rank", "node", label);
    for (i, (node, score)) in top.iter().enumerate() {
        let url = urls
            .and_then(|u| u.get(*node))
            .map(String::as_str)
            .unwrap_or("-");
        println!("{:>5}  {:>10}  {:<14.6e}  {}", i + 1, node, score, url);
    }
}
