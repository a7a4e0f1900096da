//! The ranking export: reads `GetRanking` from a running service (from every node of a
//! cluster, merged) and writes it as TSV (`crawlrank frontier ranking`); and each node's
//! counts for `crawlrank status --frontier` ([`fetch_node_stats`]).
//!
//! [`fetch_ranking`] is blocking and runs its own small runtime, because the CLI does not
//! otherwise use tokio; it reads through [`FrontierClient`] like any other client.
//! [`write_ranking_tsv`] writes into a file the caller writes atomically, or stdout.

use crate::ext_proto::RankedUrl;
use crate::proto::{url_frontier_client::UrlFrontierClient, Empty, QueueWithinCrawlParams, Stats};
use crate::FrontierClient;
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
    let read = async {
        let nodes = list_nodes(addr).await?;
        if nodes.len() <= 1 {
            let mut client = FrontierClient::connect(addr, crawl_id, false).await?;
            return client.ranking(limit).await;
        }
        let mut each = Vec::new();
        for node in &nodes {
            let mut client = FrontierClient::connect(node, crawl_id, false).await?;
            each.push(client.ranking(limit).await?);
        }
        let limit = if limit == 0 {
            crate::DEFAULT_RANKING_LIMIT
        } else {
            limit
        };
        Ok(merge(each, limit as usize))
    };
    block_on_within(addr, timeout, read)
}

/// Runs `read` (calls to the service at `addr`) to its end on a small runtime of its own,
/// giving up after `timeout`: the blocking side of [`fetch_ranking`] and [`fetch_node_stats`].
fn block_on_within<T>(
    addr: &str,
    timeout: Duration,
    read: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start a runtime for the frontier client")?;
    runtime.block_on(async {
        match tokio::time::timeout(timeout, read).await {
            Ok(result) => result,
            Err(_) => bail!(
                "the frontier service at {addr} did not answer within {} s",
                timeout.as_secs()
            ),
        }
    })
}

/// The endpoint URL of an address given as `HOST:PORT` or `http://HOST:PORT`.
fn endpoint(addr: &str) -> String {
    if addr.contains("://") {
        addr.to_string()
    } else {
        format!("http://{addr}")
    }
}

/// The nodes `ListNodes` names at `addr`.
async fn list_nodes(addr: &str) -> Result<Vec<String>> {
    let endpoint = endpoint(addr);
    Ok(UrlFrontierClient::connect(endpoint.clone())
        .await
        .with_context(|| format!("cannot connect to the frontier service at {endpoint}"))?
        .list_nodes(Empty {})
        .await
        .map_err(|s| anyhow::anyhow!("{}: {}", s.code(), s.message()))
        .with_context(|| format!("ListNodes on {endpoint} failed"))?
        .into_inner()
        .values)
}

/// Reads `GetStats` of crawl `crawl_id` from every node of the service at `addr` (the nodes
/// `ListNodes` names; the service alone when it is no node of a cluster), each with `local`
/// set, giving up after `timeout`: the node's address and its counts.
pub fn fetch_node_stats(
    addr: &str,
    crawl_id: &str,
    timeout: Duration,
) -> Result<Vec<(String, Stats)>> {
    let read = async {
        let nodes = list_nodes(addr).await?;
        let nodes = if nodes.len() <= 1 {
            vec![endpoint(addr)]
        } else {
            nodes.iter().map(|n| endpoint(n)).collect()
        };
        let mut out = Vec::new();
        for node in nodes {
            let stats = UrlFrontierClient::connect(node.clone())
                .await
                .with_context(|| format!("cannot connect to the frontier node {node}"))?
                .get_stats(QueueWithinCrawlParams {
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
    block_on_within(addr, timeout, read)
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

    fn ranked(rank: u64, url: &str, score: Option<f64>) -> RankedUrl {
        RankedUrl {
            rank,
            url: url.to_string(),
            key: "h.example".to_string(),
            score,
            state: "queued".to_string(),
        }
    }

    #[test]
    fn a_ranking_writes_as_tsv_with_empty_absent_scores() {
        let mut out = Vec::new();
        let rows = [
            ranked(1, "http://h.example/a", Some(2.5)),
            ranked(2, "http://h.example/b", None),
        ];
        write_ranking_tsv(&mut out, &rows).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "{RANKING_HEADER}\n1\thttp://h.example/a\th.example\t2.5\tqueued\n\
                 2\thttp://h.example/b\th.example\t\tqueued\n"
            )
        );
    }

    #[test]
    fn a_field_with_a_tab_is_refused_not_written() {
        let e = write_ranking_tsv(&mut Vec::new(), &[ranked(7, "http://h.example/\tx", None)])
            .unwrap_err();
        assert!(e.to_string().contains("rank 7"), "{e}");
    }

    /// A listener that never answers (the kernel completes the connection into its backlog,
    /// nobody reads): the export gives up at its timeout with an error naming the service,
    /// instead of hanging.
    #[test]
    fn a_silent_service_times_out() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let e = fetch_ranking(&addr, "", 0, Duration::from_millis(500)).unwrap_err();
        assert!(e.to_string().contains("did not answer"), "{e:#}");
        assert!(e.to_string().contains(&addr), "{e:#}");
        drop(listener);
    }
}
