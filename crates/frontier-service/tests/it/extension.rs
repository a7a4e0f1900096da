//! crawlrank's extension service end to end (`crawlrank.frontier.v1.CrawlrankFrontier` on the
//! URLFrontier service's port): `ReportPage` makes a page's out-links its children in one
//! logged call, `GetRanking` reads the policy's order without changing it and agrees with
//! what `GetURLs` then serves, bad input gets clear statuses, and the TSV export.

use crate::common;

use common::*;
use crawlrank_frontier_service::MAX_OUTLINKS;
use crawlrank_urlfrontier::ext_proto::{PageReport, RankedUrl, RankingParams};
use crawlrank_urlfrontier::proto::KnownUrlItem;
use crawlrank_urlfrontier::{
    fetch_ranking, write_ranking_tsv, MAX_RANKING_LIMIT, RANKING_HEADER, SCORE_KEY, STATE_KEY,
};
use std::time::Duration;
use tonic::Code;

const S: &str = "http://s.example/";
const T: &str = "http://t.example/";

fn report(url: &str, crawl: &str, refetch: u64, links: &[&str]) -> PageReport {
    PageReport {
        page: Some(KnownUrlItem {
            info: Some(info_in(url, "", crawl)),
            refetchable_from_date: refetch,
        }),
        outlinks: links.iter().map(|l| l.to_string()).collect(),
    }
}

async fn ranking(ext: &mut ExtClient, crawl: &str, limit: u32) -> Vec<RankedUrl> {
    let mut stream = ext
        .get_ranking(RankingParams {
            crawl_id: crawl.to_string(),
            limit,
        })
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    while let Some(r) = stream.message().await.unwrap() {
        out.push(r);
    }
    out
}

fn urls(ranking: &[RankedUrl]) -> Vec<&str> {
    ranking.iter().map(|r| r.url.as_str()).collect()
}

/// Seeds s and t; s reported with one out-link, t with three (and a duplicate, a malformed
/// link and a link back to s). FICA puts s's single child first (its distance is smallest),
/// then t's children in discovery order: GetRanking says so, leaves the frontier as it was,
/// and GetURLs then serves exactly that order.
#[test]
fn report_page_makes_children_and_the_ranking_is_the_serving_order() {
    with_fresh(Some("fica"), async |_, r| {
        put(&mut r.client, vec![discovered(S), discovered(T)]).await;
        let seeds = ranking(&mut r.ext, "", 0).await;
        assert_eq!(urls(&seeds), vec![S, T]);
        assert!(seeds.iter().all(|r| r.state == "queued"));
        assert_eq!(get(&mut r.client, params(1, 60)).await, vec![S, T]);
        let leased = ranking(&mut r.ext, "", 0).await;
        assert_eq!(urls(&leased), vec![S, T]);
        assert!(leased.iter().all(|r| r.state == "leased"), "{leased:?}");

        let ack = r
            .ext
            .report_page(report(S, "", 0, &["http://x.example/1"]))
            .await
            .unwrap()
            .into_inner();
        assert_eq!((ack.discovered, ack.known, ack.invalid), (1, 0, 0));
        let links = [
            "http://y.example/1",
            "http://y.example/2",
            "not a url",
            "http://y.example/1",
            "http://z.example/3",
            S,
        ];
        let ack = r
            .ext
            .report_page(report(T, "", 0, &links))
            .await
            .unwrap()
            .into_inner();
        assert_eq!((ack.discovered, ack.known, ack.invalid), (3, 1, 1));

        let want = vec![
            "http://x.example/1",
            "http://y.example/1",
            "http://y.example/2",
            "http://z.example/3",
        ];
        let ranked = ranking(&mut r.ext, "", 0).await;
        assert_eq!(urls(&ranked), want, "FICA: s's single child is closest");
        let ranks: Vec<u64> = ranked.iter().map(|r| r.rank).collect();
        assert_eq!(ranks, vec![1, 2, 3, 4]);
        assert!(
            ranked[0].score.unwrap() > ranked[1].score.unwrap(),
            "{ranked:?}"
        );
        assert_eq!(ranked[1].key, "y.example");
        // Read-only: the same again, and nothing was popped.
        assert_eq!(ranking(&mut r.ext, "", 0).await, ranked);
        assert_eq!(ranking(&mut r.ext, "", 2).await, ranked[..2].to_vec());
        let s = stats(&mut r.client, "", "").await;
        assert_eq!(s.counts["crawlrank.frontier"], 4);
        assert_eq!(s.counts["completed"], 2);
        // The score is the one GetURLStatus shows, and the page's state is known-done.
        let meta = discovered_metadata(&mut r.client, "http://x.example/1").await;
        assert_eq!(
            meta[SCORE_KEY].values[0],
            ranked[0].score.unwrap().to_string()
        );
        assert_eq!(meta[STATE_KEY].values, vec!["queued"]);

        // GetURLs serves the ranking's order (any number per queue: new queues, no delay).
        let served = get(&mut r.client, params(0, 60)).await;
        assert_eq!(served, want);
    });
}

/// A report is logged like the other calls: after a restart the children, the ranking and
/// the counts are the same.
#[test]
fn a_report_survives_a_restart() {
    run(async {
        let (dir, clock, mut r) = start_fresh(Some("fica")).await;
        put(&mut r.client, vec![discovered(S), discovered(T)]).await;
        get(&mut r.client, params(1, 60)).await;
        r.ext
            .report_page(report(
                T,
                "",
                T0 + 1000,
                &["http://y.example/1", "http://y.example/2"],
            ))
            .await
            .unwrap();
        r.ext
            .report_page(report(S, "", 0, &["http://x.example/1"]))
            .await
            .unwrap();
        let before = ranking(&mut r.ext, "", 0).await;
        assert_eq!(before.len(), 3);
        let Running {
            server,
            client,
            ext,
        } = r;
        server.shutdown().await.unwrap();
        drop((client, ext));
        let mut r = start(dir.path(), &clock, None).await;
        assert_eq!(ranking(&mut r.ext, "", 0).await, before);
        let s = stats(&mut r.client, "", "").await;
        assert_eq!((s.size, s.counts["completed"]), (4, 1));
        r.server.shutdown().await.unwrap();
    });
}

/// Bad input gets clear statuses and changes nothing.
#[test]
fn bad_reports_and_ranking_requests_get_clear_statuses() {
    with_fresh(Some("bfs"), async |_, r| {
        put(&mut r.client, vec![discovered(S)]).await;
        fn err<T>(res: Result<tonic::Response<T>, tonic::Status>) -> (Code, String) {
            let s = res.err().expect("an error status");
            (s.code(), s.message().to_string())
        }
        let (code, msg) = err(r.ext.report_page(PageReport::default()).await);
        assert_eq!(code, Code::InvalidArgument, "{msg}");
        assert!(msg.contains("no page"), "{msg}");
        let (code, msg) = err(r.ext.report_page(report("not a url", "", 0, &[])).await);
        assert_eq!(code, Code::InvalidArgument, "{msg}");
        assert!(msg.contains("not a URL"), "{msg}");
        let (code, msg) = err(r.ext.report_page(report(S, "NOPE", 0, &[])).await);
        assert_eq!(code, Code::NotFound, "{msg}");
        assert!(msg.contains("NOPE"), "{msg}");
        let many: Vec<String> = (0..=MAX_OUTLINKS)
            .map(|i| format!("http://m.example/{i}"))
            .collect();
        let mut big = report(S, "", 0, &[]);
        big.outlinks = many;
        let (code, msg) = err(r.ext.report_page(big).await);
        assert_eq!(code, Code::InvalidArgument, "{msg}");
        let (code, _) = err(r
            .ext
            .get_ranking(RankingParams {
                crawl_id: "NOPE".to_string(),
                limit: 1,
            })
            .await);
        assert_eq!(code, Code::NotFound);
        let (code, msg) = err(r
            .ext
            .get_ranking(RankingParams {
                crawl_id: String::new(),
                limit: MAX_RANKING_LIMIT + 1,
            })
            .await);
        assert_eq!(code, Code::InvalidArgument, "{msg}");
        // Nothing changed: S is still the one queued URL.
        let s = stats(&mut r.client, "", "").await;
        assert_eq!((s.size, s.counts["crawlrank.frontier"]), (1, 1));
        assert_eq!(urls(&ranking(&mut r.ext, "", 0).await), vec![S]);
    });
}

/// The export as the CLI runs it: `fetch_ranking` from a plain thread, then TSV.
#[test]
fn the_ranking_exports_as_tsv() {
    run(async {
        let (_dir, _clock, mut r) = start_fresh(Some("bfs")).await;
        put(&mut r.client, vec![discovered(S), discovered(T)]).await;
        let addr = r.server.addr().to_string();
        let ranked = tokio::task::spawn_blocking(move || {
            fetch_ranking(&addr, "", 0, Duration::from_secs(10)).unwrap()
        })
        .await
        .unwrap();
        let mut tsv = Vec::new();
        write_ranking_tsv(&mut tsv, &ranked).unwrap();
        let tsv = String::from_utf8(tsv).unwrap();
        let lines: Vec<&str> = tsv.lines().collect();
        assert_eq!(lines[0], RANKING_HEADER);
        // BFS: seeds in discovery order, score −(discovery rank).
        assert_eq!(lines[1], format!("1\t{S}\ts.example\t-0\tqueued"));
        assert_eq!(lines[2], format!("2\t{T}\tt.example\t-1\tqueued"));
        assert_eq!(lines.len(), 3);
        // An unknown crawl is an error naming it.
        let addr = r.server.addr().to_string();
        let e = tokio::task::spawn_blocking(move || {
            fetch_ranking(&addr, "NOPE", 0, Duration::from_secs(10)).unwrap_err()
        })
        .await
        .unwrap();
        assert!(format!("{e:#}").contains("NOPE"), "{e:#}");
        r.server.shutdown().await.unwrap();
    });
}
