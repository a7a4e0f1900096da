//! The ranking export, client side: reads `GetRanking` from a running service and writes it
//! as TSV (`crawlrank frontier ranking`).
//!
//! Why in this crate: the client is generated here with the service, and it needs tokio,
//! which the CLI does not otherwise use; the CLI calls [`fetch_ranking`] (which runs its own
//! small runtime) and [`write_ranking_tsv`] (into a file it writes atomically, or stdout).

use crate::ext_proto::{
    crawlrank_frontier_client::CrawlrankFrontierClient, RankedUrl, RankingParams,
};
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::time::Duration;

/// The TSV's header line (without its newline).
pub const RANKING_HEADER: &str = "rank\turl\tkey\tscore\tstate";

/// Reads the ranking of crawl `crawl_id` (empty: the default crawl), at most `limit` URLs
/// (0: the service's default), from the service at `addr` (`http://HOST:PORT`, or
/// `HOST:PORT`), giving up after `timeout`.
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
