//! The ranking export: reads `GetRanking` from a running service and writes it as TSV
//! (`crawlrank frontier ranking`).
//!
//! [`fetch_ranking`] is blocking and runs its own small runtime, because the CLI does not
//! otherwise use tokio; it reads through [`FrontierClient`] like any other client.
//! [`write_ranking_tsv`] writes into a file the caller writes atomically, or stdout.

use crate::ext_proto::RankedUrl;
use crate::FrontierClient;
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
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start a runtime for the frontier client")?;
    let read = async {
        let mut client = FrontierClient::connect(addr, crawl_id, false).await?;
        client.ranking(limit).await
    };
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
