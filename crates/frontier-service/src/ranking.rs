//! The ranking export, client side: reads `GetRanking` from a running service (from every
//! node of a cluster, merged) and writes it as TSV (`crawlrank frontier ranking`); and each
//! node's counts for `crawlrank status --frontier` ([`fetch_node_stats`]).
//!
//! Why in this crate: the client is generated here with the service, and it needs tokio,
//! which the CLI does not otherwise use; the CLI calls [`fetch_ranking`] (which runs its own
//! small runtime) and [`write_ranking_tsv`] (into a file it writes atomically, or stdout).

use crate::ext_proto::{
    crawlrank_frontier_client::CrawlrankFrontierClient, RankedUrl, RankingParams,
};
use crate::proto::{url_frontier_client::UrlFrontierClient, Empty};
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::time::Duration;

/// The TSV's header line (without its newline).
pub const RANKING_HEADER: &str = "rank\turl\tkey\tscore\tstate";

/// Reads the ranking of crawl `crawl_id` (empty: the default crawl), at most `limit` URLs
/// (0: the service's default), from the service at `addr` (`http://HOST:PORT`, or
/// `HOST:PORT`), giving up after `timeout`. When the service is a node of a cluster
/// (`ListNodes` names several), every node's ranking is read and merged: by score, best
/// first, when every URL has one; else the nodes' orders taken in turn (each node serves its
/// own best first, so that is the order the cluster serves).
pub fn fetch_ranking(
    addr: &str,
    crawl_id: &str,
    limit: u32,
    timeout: Duration,
) -> Result<Vec<RankedUrl>> {
    let endpoint = if addr.contains("://") {
        addr.to_string()
    } else {
        format!("http://{addr}")
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start a runtime for the frontier client")?;
    let read = async {
        let nodes = UrlFrontierClient::connect(endpoint.clone())
            .await
            .with_context(|| format!("cannot connect to the frontier service at {endpoint}"))?
            .list_nodes(Empty {})
            .await
            .map_err(|s| anyhow::anyhow!("{}: {}", s.code(), s.message()))
            .with_context(|| format!("ListNodes on {endpoint} failed"))?
            .into_inner()
            .values;
        if nodes.len() <= 1 {
            return read_one(endpoint.clone(), crawl_id, limit).await;
        }
        let mut each = Vec::new();
        for node in &nodes {
            each.push(read_one(format!("http://{node}"), crawl_id, limit).await?);
        }
        let limit = if limit == 0 {
            crate::DEFAULT_RANKING_LIMIT
        } else {
            limit
        };
        Ok(merge(each, limit as usize))
    };
    runtime.block_on(async {
        match tokio::time::timeout(timeout, read).await {
            Ok(result) => result,
            Err(_) => bail!(
                "the frontier service at {endpoint} did not answer within {} s",
                timeout.as_secs()
            ),
        }
    })
}

/// Reads `GetStats` of crawl `crawl_id` from every node of the service at `addr` (the nodes
/// `ListNodes` names; the service alone when it is no node of a cluster), each with `local`
/// set, giving up after `timeout`: the node's address and its counts.
pub fn fetch_node_stats(
    addr: &str,
    crawl_id: &str,
    timeout: Duration,
) -> Result<Vec<(String, crate::proto::Stats)>> {
    let endpoint = if addr.contains("://") {
        addr.to_string()
    } else {
        format!("http://{addr}")
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start a runtime for the frontier client")?;
    let read = async {
        let nodes = UrlFrontierClient::connect(endpoint.clone())
            .await
            .with_context(|| format!("cannot connect to the frontier service at {endpoint}"))?
            .list_nodes(Empty {})
            .await
            .map_err(|s| anyhow::anyhow!("{}: {}", s.code(), s.message()))
            .with_context(|| format!("ListNodes on {endpoint} failed"))?
            .into_inner()
            .values;
        let nodes = if nodes.len() <= 1 {
            vec![endpoint.clone()]
        } else {
            nodes.iter().map(|n| format!("http://{n}")).collect()
        };
        let mut out = Vec::new();
        for node in nodes {
            let stats = UrlFrontierClient::connect(node.clone())
                .await
                .with_context(|| format!("cannot connect to the frontier node {node}"))?
                .get_stats(crate::proto::QueueWithinCrawlParams {
                    key: String::new(),
                    crawl_id: crawl_id.to_string(),
                    local: true,
                })
                .await
                .map_err(|s| anyhow::anyhow!("{}: {}", s.code(), s.message()))
                .with_context(|| format!("GetStats on {node} failed"))?
                .into_inner();
            out.push((node.trim_start_matches("http://").to_string(), stats));
        }
        Ok(out)
    };
    runtime.block_on(async {
        match tokio::time::timeout(timeout, read).await {
            Ok(result) => result,
            Err(_) => bail!(
                "the frontier service at {endpoint} did not answer within {} s",
                timeout.as_secs()
            ),
        }
    })
}

/// The nodes' rankings merged into one of at most `limit`, ranked again from 1.
fn merge(each: Vec<Vec<RankedUrl>>, limit: usize) -> Vec<RankedUrl> {
    let scored = each.iter().flatten().all(|r| r.score.is_some());
    let mut out: Vec<RankedUrl> = if scored {
        let mut all: Vec<RankedUrl> = each.into_iter().flatten().collect();
        // Stable: equal scores keep each node's order.
        all.sort_by(|a, b| b.score.unwrap_or(0.0).total_cmp(&a.score.unwrap_or(0.0)));
        all
    } else {
        let mut iters: Vec<_> = each.into_iter().map(|v| v.into_iter()).collect();
        let mut all = Vec::new();
        loop {
            let before = all.len();
            for it in &mut iters {
                all.extend(it.next());
            }
            if all.len() == before {
                break all;
            }
        }
    };
    out.truncate(limit);
    for (i, r) in out.iter_mut().enumerate() {
        r.rank = i as u64 + 1;
    }
    out
}

/// One service's ranking.
async fn read_one(endpoint: String, crawl_id: &str, limit: u32) -> Result<Vec<RankedUrl>> {
    {
        let mut client = CrawlrankFrontierClient::connect(endpoint.clone())
            .await
            .with_context(|| format!("cannot connect to the frontier service at {endpoint}"))?;
        let mut stream = client
            .get_ranking(RankingParams {
                crawl_id: crawl_id.to_string(),
                limit,
            })
            .await
            .map_err(|s| anyhow::anyhow!("{}: {}", s.code(), s.message()))
            .with_context(|| format!("GetRanking on {endpoint} failed"))?
            .into_inner();
        let mut out = Vec::new();
        while let Some(url) = stream
            .message()
            .await
            .map_err(|s| anyhow::anyhow!("{}: {}", s.code(), s.message()))
            .with_context(|| format!("the ranking stream from {endpoint} broke"))?
        {
            out.push(url);
        }
        Ok(out)
    }
}

/// Writes a ranking as TSV: [`RANKING_HEADER`], then one line per URL (an absent score is
/// an empty field). URLs and keys holding a tab or a line break are refused, since they
/// would break the format.
pub fn write_ranking_tsv(out: &mut dyn Write, ranking: &[RankedUrl]) -> Result<()> {
    writeln!(out, "{RANKING_HEADER}")?;
    for r in ranking {
        for field in [&r.url, &r.key, &r.state] {
            if field.contains(['\t', '\n', '\r']) {
                bail!("rank {}: '{field}' holds a tab or a line break", r.rank);
            }
        }
        let score = r.score.map(|s| s.to_string()).unwrap_or_default();
        writeln!(
            out,
            "{}\t{}\t{}\t{score}\t{}",
            r.rank, r.url, r.key, r.state
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(url: &str, score: Option<f64>) -> RankedUrl {
        RankedUrl {
            rank: 0,
            url: url.to_string(),
            key: String::new(),
            score,
            state: "queued".to_string(),
        }
    }

    fn urls(v: &[RankedUrl]) -> Vec<(u64, &str)> {
        v.iter().map(|r| (r.rank, r.url.as_str())).collect()
    }

    #[test]
    fn nodes_rankings_merge_by_score_or_in_turn() {
        let a = vec![r("a1", Some(-0.5)), r("a2", Some(-2.0))];
        let b = vec![
            r("b1", Some(-1.0)),
            r("b2", Some(-2.0)),
            r("b3", Some(-3.0)),
        ];
        let merged = merge(vec![a.clone(), b.clone()], 4);
        assert_eq!(urls(&merged), [(1, "a1"), (2, "b1"), (3, "a2"), (4, "b2")]);
        let unscored = vec![r("c1", None)];
        let merged = merge(vec![a, unscored, b], 10);
        assert_eq!(
            urls(&merged),
            [
                (1, "a1"),
                (2, "c1"),
                (3, "b1"),
                (4, "a2"),
                (5, "b2"),
                (6, "b3")
            ]
        );
    }
}
