//! The service end to end: a real tonic client over loopback against the server started on
//! 127.0.0.1:0, with a manual clock so that delays and leases are stepped over without
//! sleeping, and every test bounded by a timeout.

use crate::common;

use common::{
    block_queue, config, delete_queue, discovered_metadata, get, list_crawl_ids, params,
    queue_keys, run, set_active, set_crawl_limit, set_delay, start, start_fresh, stats, url_status,
    with_fresh, Client, Running, T0,
};
// The acks' ids too: several tests check which item an ack answers.
use common::put_with_ids as put;
use crawlrank_frontier::{Frontier, PageId};
use crawlrank_frontier_service::{policy_spec, FrontierService, TimeSource};
use crawlrank_urlfrontier::proto::{
    ack_message::Status as AckStatus, get_params, url_item, AnyCrawlId, CountUrlParams,
    DeleteCrawlMessage, DiscoveredBatch, DiscoveredUrlItem, GetParams, KnownUrlItem, ListUrlParams,
    Local, PurgeUrlParams, StringList, UrlInfo, UrlItem,
};
use crawlrank_urlfrontier::{DEFAULT_CRAWL, SCORE_KEY, STATE_KEY, STORMCRAWLER_PATH_KEY};

fn info(url: &str, crawl: &str, parent: Option<&str>) -> UrlInfo {
    let mut info = UrlInfo {
        url: url.to_string(),
        crawl_id: crawl.to_string(),
        ..Default::default()
    };
    if let Some(p) = parent {
        // StormCrawler's form: the path from the seed, the parent last.
        info.metadata.insert(
            STORMCRAWLER_PATH_KEY.to_string(),
            StringList {
                values: vec!["http://elsewhere.example/".to_string(), p.to_string()],
            },
        );
    }
    info
}

fn discovered(url: &str, parent: Option<&str>) -> UrlItem {
    discovered_in(url, "", parent)
}

fn discovered_in(url: &str, crawl: &str, parent: Option<&str>) -> UrlItem {
    UrlItem {
        item: Some(url_item::Item::Discovered(DiscoveredUrlItem {
            info: Some(info(url, crawl, parent)),
        })),
        ..Default::default()
    }
}

fn known(url: &str, refetch: u64) -> UrlItem {
    UrlItem {
        item: Some(url_item::Item::Known(KnownUrlItem {
            info: Some(info(url, "", None)),
            refetchable_from_date: refetch,
        })),
        ..Default::default()
    }
}

async fn get_infos(client: &mut Client, params: GetParams) -> Vec<UrlInfo> {
    let mut stream = client.get_ur_ls(params).await.unwrap().into_inner();
    let mut out = Vec::new();
    while let Some(info) = stream.message().await.unwrap() {
        out.push(info);
    }
    out
}

const A: &str = "http://a.example/";
const A1: &str = "http://a.example/1";
const A2: &str = "http://a.example/2";
const B: &str = "http://b.example/";
const B1: &str = "http://b.example/1";

/// Two seeds of two hosts, then their out-links reported with the seeds' known updates:
/// GetURLs with one URL per queue follows FICA's order across the queues (b's only child
/// is closer than a's two), which is what the frontier itself pops.
#[test]
fn get_urls_follows_the_policy_across_queues_and_honours_leases() {
    with_fresh(Some("fica"), async |clock, r| {
        let acks = put(
            &mut r.client,
            vec![discovered(A, None), discovered(B, None)],
        )
        .await;
        assert_eq!(
            acks,
            vec![
                (A.to_string(), AckStatus::Ok),
                (B.to_string(), AckStatus::Ok)
            ]
        );
        assert_eq!(get(&mut r.client, params(1, 30)).await, vec![A, B]);
        // The children, then the parents' updates (as StormCrawler sends them).
        let acks = put(
            &mut r.client,
            vec![
                discovered(A1, Some(A)),
                discovered(A2, Some(A)),
                discovered(B1, Some(B)),
                known(A, 0),
                known(B, 0),
            ],
        )
        .await;
        assert!(acks.iter().all(|(_, s)| *s == AckStatus::Ok), "{acks:?}");

        // The policy's own order over the same calls.
        let mut frontier =
            Frontier::from_spec(&policy_spec("fica", None, None, 0).unwrap()).unwrap();
        let ids: [PageId; 5] = [0, 1, 2, 3, 4]; // A, B, A1, A2, B1 in discovery order
        frontier.seed(&ids[..2]);
        assert_eq!(frontier.pop(), Some(0));
        assert_eq!(frontier.pop(), Some(1));
        frontier.on_crawled(0, &[2, 3]);
        frontier.on_crawled(1, &[4]);
        let urls = [A, B, A1, A2, B1];
        let order: Vec<&str> = std::iter::from_fn(|| frontier.pop())
            .map(|p| urls[p as usize])
            .collect();
        assert_eq!(order, vec![B1, A1, A2], "FICA: b's single link is closest");

        clock.advance(1); // past the queues' default delay of 1 s
        let first = get(&mut r.client, params(1, 30)).await;
        assert_eq!(
            first,
            vec![B1, A1],
            "one URL per queue, in the policy's order"
        );
        // Leased (and in flight for their queue): nothing more now, nor after the delay.
        assert!(get(&mut r.client, params(1, 30)).await.is_empty());
        clock.advance(5);
        assert!(get(&mut r.client, params(1, 30)).await.is_empty());
        let s = stats(&mut r.client, "", "").await;
        assert_eq!(s.in_process, 2);
        // The leases expire: the same URLs come back, in the same order.
        clock.advance(30);
        assert_eq!(get(&mut r.client, params(1, 30)).await, vec![B1, A1]);
        // An update ends a lease: A1 done, so A2 is next for a (after the delay).
        put(&mut r.client, vec![known(A1, 0)]).await;
        clock.advance(1);
        assert_eq!(get(&mut r.client, params(1, 30)).await, vec![A2]);
        // The score is visible.
        let meta = discovered_metadata(&mut r.client, A2).await;
        let score: f64 = meta[SCORE_KEY].values[0].parse().unwrap();
        assert!(
            (score + 2f64.log10()).abs() < 1e-12,
            "FICA's score is −distance: {score}"
        );
        assert_eq!(meta[STATE_KEY].values, vec!["leased"]);
    });
}

#[test]
fn malformed_urls_and_known_duplicates_are_skipped() {
    with_fresh(None, async |_, r| {
        let mut long_key = discovered("http://c.example/", None);
        if let Some(url_item::Item::Discovered(d)) = &mut long_key.item {
            d.info.as_mut().unwrap().key = "k".repeat(300);
        }
        let acks = put(
            &mut r.client,
            vec![
                discovered("not a url", None),
                discovered("http://", None),
                discovered("mailto:someone@example.org", None),
                UrlItem {
                    id: "empty".to_string(),
                    ..Default::default()
                },
                long_key,
                discovered(A, None),
                discovered(A, None),
            ],
        )
        .await;
        let statuses: Vec<AckStatus> = acks.iter().map(|(_, s)| *s).collect();
        use AckStatus::{Ok, Skipped};
        assert_eq!(
            statuses,
            vec![Skipped, Skipped, Skipped, Skipped, Skipped, Ok, Skipped]
        );
        assert_eq!(
            acks[0].0, "not a url",
            "the URL is the ack's id when none is given"
        );
        assert_eq!(acks[3].0, "empty");
        let s = stats(&mut r.client, "", "").await;
        assert_eq!((s.size, s.number_of_queues), (1, 1));
        assert_eq!(list_crawl_ids(&mut r.client).await, vec![DEFAULT_CRAWL]);
    });
}

#[test]
fn crawl_ids_are_separate() {
    with_fresh(None, async |_, r| {
        let statuses = common::put(
            &mut r.client,
            vec![
                discovered_in(A, "BESPOKE", None),
                discovered_in(A, "", None),
                discovered_in(A, DEFAULT_CRAWL, None),
                discovered_in(B, "BESPOKE", None),
            ],
        )
        .await;
        assert_eq!(
            statuses,
            vec![
                AckStatus::Ok,
                AckStatus::Ok,
                AckStatus::Skipped,
                AckStatus::Ok
            ],
            "'' and DEFAULT are one crawl"
        );
        assert_eq!(
            list_crawl_ids(&mut r.client).await,
            vec!["BESPOKE", DEFAULT_CRAWL]
        );
        assert_eq!(stats(&mut r.client, "BESPOKE", "").await.size, 2);
        let s = stats(&mut r.client, "", "").await;
        assert_eq!((s.size, s.crawl_id.as_str()), (1, DEFAULT_CRAWL));
        let mut p = params(0, 30);
        p.item = Some(get_params::Item::CrawlId("BESPOKE".to_string()));
        let got = get_infos(&mut r.client, p).await;
        let got: Vec<(&str, &str)> = got
            .iter()
            .map(|i| (i.url.as_str(), i.crawl_id.as_str()))
            .collect();
        assert_eq!(got, vec![(A, "BESPOKE"), (B, "BESPOKE")]);
        // The default crawl's A is not leased by that.
        assert_eq!(get(&mut r.client, params(0, 30)).await, vec![A]);
        // Any crawl: nothing left to serve in either.
        let mut any = params(0, 30);
        any.item = Some(get_params::Item::AnyCrawlId(AnyCrawlId {}));
        assert!(get(&mut r.client, any).await.is_empty());
        let deleted = r
            .client
            .delete_crawl(DeleteCrawlMessage {
                value: "BESPOKE".to_string(),
                local: false,
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(deleted.value, 2);
        assert_eq!(list_crawl_ids(&mut r.client).await, vec![DEFAULT_CRAWL]);
        assert_eq!(stats(&mut r.client, "BESPOKE", "").await.size, 0);
        assert_eq!(stats(&mut r.client, "", "").await.size, 1);
    });
}

#[test]
fn block_delay_and_limit_hold_a_queue() {
    with_fresh(Some("bfs"), async |clock, r| {
        put(
            &mut r.client,
            vec![
                discovered(A1, None),
                discovered(A2, None),
                discovered(B, None),
                discovered(B1, None),
            ],
        )
        .await;
        assert_eq!(get(&mut r.client, params(1, 60)).await, vec![A1, B]);
        put(&mut r.client, vec![known(A1, 0), known(B, 0)]).await;
        block_queue(&mut r.client, "a.example", T0 + 100).await;
        set_delay(&mut r.client, "b.example", 10).await;
        clock.advance(2);
        assert!(
            get(&mut r.client, params(1, 60)).await.is_empty(),
            "blocked, and delayed"
        );
        assert_eq!(
            queue_keys(&mut r.client).await,
            vec!["b.example"],
            "a blocked queue is inactive"
        );
        clock.advance(8);
        assert_eq!(get(&mut r.client, params(1, 60)).await, vec![B1]);
        put(&mut r.client, vec![known(B1, 0)]).await;
        clock.advance(90);
        assert_eq!(get(&mut r.client, params(1, 60)).await, vec![A2]);

        // A crawl limit of 1 on a queue that has fetched one page: it serves no more.
        put(&mut r.client, vec![discovered("http://a.example/3", None)]).await;
        put(&mut r.client, vec![known(A2, 0)]).await;
        set_crawl_limit(&mut r.client, "a.example", 2)
            .await
            .unwrap();
        clock.advance(5);
        assert!(
            get(&mut r.client, params(1, 60)).await.is_empty(),
            "limit reached"
        );
        set_crawl_limit(&mut r.client, "a.example", 0)
            .await
            .unwrap();
        assert_eq!(
            get(&mut r.client, params(1, 60)).await,
            vec!["http://a.example/3"]
        );
        let unknown = set_crawl_limit(&mut r.client, "nowhere.example", 3)
            .await
            .unwrap_err();
        assert_eq!(unknown.code(), tonic::Code::NotFound);
        assert!(unknown.message().contains("nowhere.example"), "{unknown}");
    });
}

#[test]
fn stats_listings_deletions_and_refetch_dates() {
    with_fresh(None, async |clock, r| {
        // Known URLs never served: one done, two due (sooner first, the reference's RightOrder).
        put(
            &mut r.client,
            vec![
                known("http://k.example/never", 0),
                known("http://k.example/later", T0),
                known("http://k.example/sooner", T0 - 10_000),
                known("http://k.example/future", T0 + 1_000),
                discovered(A, None),
                discovered(A1, None),
            ],
        )
        .await;
        let s = stats(&mut r.client, "", "").await;
        assert_eq!(s.size, 5);
        assert_eq!(s.number_of_queues, 2);
        assert_eq!(s.counts["completed"], 1);
        assert_eq!(s.counts["active_queues"], 2);
        assert_eq!(s.in_process, 0);
        let k = stats(&mut r.client, "", "k.example").await;
        assert_eq!((k.size, k.counts["completed"]), (3, 1));
        assert_eq!(
            get(&mut r.client, params(2, 30)).await,
            vec!["http://k.example/sooner", "http://k.example/later", A, A1],
            "due refetches first, oldest first; then the policy's order"
        );
        assert_eq!(stats(&mut r.client, "", "").await.in_process, 4);
        let count = r
            .client
            .count_ur_ls(CountUrlParams {
                filter: Some("K.EXAMPLE/".to_string()),
                ignore_case: Some(true),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(count.value, 4);
        let mut listed = r
            .client
            .list_ur_ls(ListUrlParams {
                key: "k.example".to_string(),
                start: 1,
                size: 2,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let mut urls = Vec::new();
        while let Some(item) = listed.message().await.unwrap() {
            assert_eq!(item.creation_date, T0);
            let Some(url_item::Item::Known(k)) = item.item else {
                panic!("known URLs are listed as known")
            };
            urls.push(k.info.unwrap().url);
        }
        assert_eq!(
            urls,
            vec!["http://k.example/later", "http://k.example/sooner"]
        );
        // PutDiscovered: one status per URL.
        let batch = DiscoveredBatch {
            id: "outlinks".to_string(),
            items: vec![
                info(B, "", Some(A)),
                info(A1, "", None),
                info("bad", "", None),
            ],
        };
        let mut acks = r
            .client
            .put_discovered(tokio_stream::iter(vec![batch]))
            .await
            .unwrap()
            .into_inner();
        let ack = acks.message().await.unwrap().unwrap();
        assert_eq!(ack.id, "outlinks");
        assert_eq!(
            ack.statuses,
            vec![
                AckStatus::Ok as i32,
                AckStatus::Skipped as i32,
                AckStatus::Skipped as i32
            ]
        );
        // B waits for its parent A's update (deferred), then is served.
        let meta = discovered_metadata(&mut r.client, B).await;
        assert_eq!(meta[STATE_KEY].values, vec!["deferred"]);
        put(&mut r.client, vec![known(A, T0 + 86_400)]).await;
        clock.advance(1);
        assert_eq!(get(&mut r.client, params(0, 30)).await, vec![B]);
        let missing = url_status(&mut r.client, "http://nowhere.example/")
            .await
            .unwrap_err();
        assert_eq!(missing.code(), tonic::Code::NotFound);
        // DeleteQueue answers its active URLs; PurgeURLs the URLs older than N days.
        assert_eq!(delete_queue(&mut r.client, "k.example").await, 3);
        let s = stats(&mut r.client, "", "").await;
        assert_eq!((s.number_of_queues, s.size), (2, 3));
        clock.advance(3 * 86_400);
        let purged = r
            .client
            .purge_ur_ls(PurgeUrlParams {
                days: 2,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(purged.value, 3);
        assert_eq!(stats(&mut r.client, "", "").await.size, 0);
        let err = r
            .client
            .set_log_level(crawlrank_urlfrontier::proto::LogLevelParams::default())
            .await
            .unwrap_err();
        assert_eq!(err.code(), tonic::Code::Unimplemented);
    });
}

/// Everything the reference service forgets survives a restart on the same state: the
/// active flag, leases, blocks, delays and the frontier's order.
/// `ListURLs` page by page (each page going on from where the last ended): every URL once,
/// in the order of one listing; URLs deleted before a page's start shift nothing (none is
/// skipped); a crawl deleted and made again is listed from its own start.
#[test]
fn listing_page_by_page_lists_each_url_once() {
    with_fresh(None, async |_clock, r| {
        let list = async |c: &mut Client, start: u32, size: u32| -> Vec<String> {
            let params = ListUrlParams {
                start,
                size,
                ..Default::default()
            };
            let mut listed = c.list_ur_ls(params).await.unwrap().into_inner();
            let mut urls = Vec::new();
            while let Some(item) = listed.message().await.unwrap() {
                let Some(url_item::Item::Discovered(d)) = item.item else {
                    panic!("never fetched: discovered")
                };
                urls.push(d.info.unwrap().url);
            }
            urls
        };
        let urls = |host: &'static str| (0..5).map(move |i| format!("http://{host}/{i}"));
        let items = urls("a.example")
            .zip(urls("b.example"))
            .flat_map(|(a, b)| [discovered(&a, None), discovered(&b, None)])
            .collect();
        put(&mut r.client, items).await;
        let all = list(&mut r.client, 0, 100).await;
        assert_eq!(all.len(), 10);
        let mut paged = Vec::new();
        for start in (0..12).step_by(3) {
            paged.extend(list(&mut r.client, start, 3).await);
        }
        assert_eq!(paged, all);

        // The first four, then b.example's URLs deleted (two of them among the four): the
        // next page is the URLs after the fourth.
        assert_eq!(list(&mut r.client, 0, 4).await, all[..4]);
        assert_eq!(delete_queue(&mut r.client, "b.example").await, 5);
        let after: Vec<String> = all[4..]
            .iter()
            .filter(|u| u.contains("a.example"))
            .cloned()
            .collect();
        assert_eq!(list(&mut r.client, 4, 4).await, after);

        // A crawl made again after DeleteCrawl: its own URLs from 8 on.
        let deleted = DeleteCrawlMessage {
            value: String::new(),
            local: false,
        };
        r.client.delete_crawl(deleted).await.unwrap();
        let again: Vec<UrlItem> = (0..10)
            .map(|i| discovered(&format!("http://c.example/{i}"), None))
            .collect();
        put(&mut r.client, again).await;
        assert_eq!(
            list(&mut r.client, 8, 4).await,
            ["http://c.example/8", "http://c.example/9"]
        );
    });
}

#[test]
fn the_state_survives_a_restart() {
    run(async {
        let (dir, clock, mut r) = start_fresh(Some("fica")).await;
        put(
            &mut r.client,
            vec![
                discovered(A, None),
                discovered(B, None),
                discovered(A1, None),
            ],
        )
        .await;
        assert_eq!(get(&mut r.client, params(1, 100)).await, vec![A, B]);
        put(
            &mut r.client,
            vec![
                discovered("http://b.example/x", Some(B)),
                discovered("http://c.example/", Some(B)),
                known(B, 0),
            ],
        )
        .await;
        block_queue(&mut r.client, "c.example", T0 + 50).await;
        set_delay(&mut r.client, "b.example", 20).await;
        set_active(&mut r.client, false).await;
        r.server.shutdown().await.unwrap();
        drop(r.client);

        // Another policy is refused for this state.
        let err = FrontierService::open(config(dir.path(), &clock, Some("bfs")))
            .err()
            .expect("a state keeps its policy");
        assert!(format!("{err:#}").contains("fica"), "{err:#}");

        let Running {
            server, mut client, ..
        } = start(dir.path(), &clock, None).await;
        let active = client
            .get_active(Local::default())
            .await
            .unwrap()
            .into_inner();
        assert!(!active.state, "the active flag survives");
        assert!(get(&mut client, params(1, 100)).await.is_empty());
        set_active(&mut client, true).await;
        clock.advance(10);
        // a: A leased for 100 s; b: delay 20 s; c: blocked until T0 + 50.
        assert!(get(&mut client, params(1, 100)).await.is_empty());
        clock.advance(10);
        assert_eq!(
            get(&mut client, params(1, 100)).await,
            vec!["http://b.example/x"]
        );
        clock.advance(30);
        assert_eq!(
            get(&mut client, params(1, 100)).await,
            vec!["http://c.example/"]
        );
        clock.advance(50);
        // A's lease ran out: A again (popped first), not A1.
        assert_eq!(get(&mut client, params(1, 100)).await, vec![A]);
        let s = stats(&mut client, "", "").await;
        assert_eq!((s.size, s.counts["completed"], s.in_process), (4, 1, 3));
        server.shutdown().await.unwrap();
    });
}

/// A long PutURLs stream (applied in batches) is acked whole and in order; GetURLs keeps to
/// max_queues and max_urls_per_queue; the URLs come in the policy's order (BFS: discovery).
#[test]
fn a_long_stream_is_acked_in_order_and_get_urls_keeps_its_limits() {
    with_fresh(Some("bfs"), async |_, r| {
        let urls: Vec<String> = (0..3000)
            .map(|i| format!("http://h{}.example/{}", i % 30, i))
            .collect();
        let acks = put(
            &mut r.client,
            urls.iter().map(|u| discovered(u, None)).collect(),
        )
        .await;
        assert_eq!(acks.len(), urls.len());
        assert!(acks
            .iter()
            .zip(&urls)
            .all(|((id, s), u)| id == u && *s == AckStatus::Ok));
        let mut p = params(2, 30);
        p.max_queues = 5;
        let got = get_infos(&mut r.client, p).await;
        let keys: std::collections::BTreeSet<&str> = got.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(keys.len(), 5, "{keys:?}");
        assert_eq!(got.len(), 10);
        // BFS over seeds: the first URLs put, two per host, for the first five hosts.
        let mut expected: Vec<&str> = (0..5)
            .flat_map(|h| [urls[h].as_str(), urls[h + 30].as_str()])
            .collect();
        let mut served: Vec<&str> = got.iter().map(|i| i.url.as_str()).collect();
        assert_eq!(
            served[..5],
            urls[..5].iter().map(String::as_str).collect::<Vec<_>>()[..]
        );
        expected.sort_unstable();
        served.sort_unstable();
        assert_eq!(served, expected);
        let s = stats(&mut r.client, "", "").await;
        assert_eq!((s.size, s.in_process, s.number_of_queues), (3000, 10, 30));
    });
}

/// A `PutDiscovered` stream of many batches of every size (empty ones, ones larger than the
/// service's commit batch), sent at once so that the service reads several together: each
/// batch gets one ack, in order, with its id and one status per URL in its order.
#[test]
fn a_put_discovered_stream_acks_each_batch_in_order() {
    with_fresh(Some("bfs"), async |_, r| {
        let mut batches = Vec::new();
        let mut expected = Vec::new();
        let mut next = 0;
        for b in 0..60usize {
            let size = match b % 7 {
                0 => 0,
                1 => 700,
                n => n * 3,
            };
            let mut items = Vec::new();
            let mut statuses = Vec::new();
            for i in 0..size {
                // Every 5th URL is one put before (skipped), every 11th not a URL (skipped).
                let (url, status) = if i % 11 == 10 {
                    ("not a url".to_string(), AckStatus::Skipped)
                } else if i % 5 == 4 && next > 0 {
                    (
                        format!("http://h{}.example/{}", (next - 1) % 20, next - 1),
                        AckStatus::Skipped,
                    )
                } else {
                    next += 1;
                    (
                        format!("http://h{}.example/{}", (next - 1) % 20, next - 1),
                        AckStatus::Ok,
                    )
                };
                items.push(info(&url, "", None));
                statuses.push(status as i32);
            }
            batches.push(DiscoveredBatch {
                id: format!("batch-{b}"),
                items,
            });
            expected.push((format!("batch-{b}"), statuses));
        }
        let mut acks = r
            .client
            .put_discovered(tokio_stream::iter(batches))
            .await
            .unwrap()
            .into_inner();
        let mut got = Vec::new();
        while let Some(ack) = acks.message().await.unwrap() {
            got.push((ack.id, ack.statuses));
        }
        assert_eq!(got, expected);
        assert_eq!(stats(&mut r.client, "", "").await.size, next as u64);
    });
}

/// The service's bounds against large or hostile clients: metadata per URL, filter lengths,
/// and the log compacted into a checkpoint without changing what the service does.
mod bounds {
    use super::*;
    use crawlrank_frontier_service::{
        spawn, MAX_FILTER_LEN, MAX_METADATA_BYTES, MAX_METADATA_VALUES,
    };
    use crawlrank_urlfrontier::ext_proto::PageReport;

    fn with_metadata(url: &str, values: Vec<String>) -> UrlItem {
        let mut info = info(url, "", None);
        info.metadata
            .insert("big".to_string(), StringList { values });
        UrlItem {
            item: Some(url_item::Item::Discovered(DiscoveredUrlItem {
                info: Some(info),
            })),
            ..Default::default()
        }
    }

    #[test]
    fn metadata_over_its_limits_is_refused_and_not_kept() {
        with_fresh(Some("bfs"), async |_, r| {
            let at_limit = "x".repeat(MAX_METADATA_BYTES - "big".len());
            let statuses = common::put(
                &mut r.client,
                vec![
                    with_metadata(A, vec![at_limit.clone()]),
                    with_metadata(A1, vec![at_limit + "x"]),
                    with_metadata(A2, vec![String::new(); MAX_METADATA_VALUES + 1]),
                    discovered(B, None),
                ],
            )
            .await;
            assert_eq!(
                statuses,
                [
                    AckStatus::Ok,
                    AckStatus::Fail,
                    AckStatus::Fail,
                    AckStatus::Ok
                ]
            );
            for url in [A1, A2] {
                let err = url_status(&mut r.client, url).await.unwrap_err();
                assert_eq!(err.code(), tonic::Code::NotFound, "{url} was not kept");
            }
            // ReportPage, a call of its own: INVALID_ARGUMENT, naming the limit.
            let mut page = info(B, "", None);
            page.metadata.insert(
                "big".to_string(),
                StringList {
                    values: vec!["y".repeat(MAX_METADATA_BYTES)],
                },
            );
            let err = r
                .ext
                .report_page(PageReport {
                    page: Some(KnownUrlItem {
                        info: Some(page),
                        refetchable_from_date: 0,
                    }),
                    outlinks: vec![B1.to_string()],
                })
                .await
                .unwrap_err();
            assert_eq!(err.code(), tonic::Code::InvalidArgument);
            assert!(err.message().contains("bytes"), "{}", err.message());
            assert_eq!(
                stats(&mut r.client, "", "").await.size,
                2,
                "the report changed nothing"
            );
        });
    }

    #[test]
    fn a_filter_over_its_limit_is_refused_and_ignore_case_matches() {
        with_fresh(Some("bfs"), async |_, r| {
            put(
                &mut r.client,
                vec![
                    discovered(A, None),
                    discovered("http://a.example/Big", None),
                ],
            )
            .await;
            let count = |filter: String, ignore_case: bool| CountUrlParams {
                filter: Some(filter),
                ignore_case: Some(ignore_case),
                ..Default::default()
            };
            let n = |r: tonic::Response<crawlrank_urlfrontier::proto::Long>| r.into_inner().value;
            assert_eq!(
                n(r.client
                    .count_ur_ls(count("BIG".into(), true))
                    .await
                    .unwrap()),
                1
            );
            assert_eq!(
                n(r.client
                    .count_ur_ls(count("BIG".into(), false))
                    .await
                    .unwrap()),
                0
            );
            let long = "/".repeat(MAX_FILTER_LEN);
            assert_eq!(n(r.client.count_ur_ls(count(long, true)).await.unwrap()), 0);
            let hostile = "/".repeat(1 << 20);
            let err = r
                .client
                .count_ur_ls(count(hostile.clone(), true))
                .await
                .unwrap_err();
            assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err:?}");
            let err = r
                .client
                .list_ur_ls(ListUrlParams {
                    filter: Some(hostile),
                    ignore_case: Some(true),
                    ..Default::default()
                })
                .await
                .unwrap_err();
            assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err:?}");
        });
    }

    /// A service whose handle stays with the test (to compact it) on 127.0.0.1:0.
    async fn start_with_handle(
        dir: &std::path::Path,
        clock: &TimeSource,
    ) -> (
        FrontierService,
        crawlrank_frontier_service::RunningServer,
        Client,
    ) {
        let service = FrontierService::open(config(dir, clock, Some("fica"))).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = spawn(service.clone(), listener).unwrap();
        let client = Client::connect(format!("http://{}", server.addr()))
            .await
            .unwrap();
        (service, server, client)
    }

    /// The same calls on two services: one compacted twice and restarted, the other never.
    /// Every answer after that must be the same.
    #[test]
    fn a_compacted_and_restarted_state_serves_as_the_uncompacted_one() {
        run(async {
            let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            let clock = TimeSource::manual(T0);
            let (svc_a, server_a, client_a) = start_with_handle(dir_a.path(), &clock).await;
            let (_svc_b, server_b, client_b) = start_with_handle(dir_b.path(), &clock).await;
            let mut clients = [client_a, client_b];
            let url = |h: usize, i: usize| format!("http://h{h}.example/{i}");
            // Seeds, links, leases, fetches, refetch dates, a delay, a block, a deleted queue.
            for c in clients.iter_mut() {
                let mut items: Vec<UrlItem> =
                    (0..4).map(|h| discovered(&url(h, 0), None)).collect();
                for h in 0..4 {
                    for i in 1..6 {
                        items.push(discovered(&url((h + i) % 4, i), Some(&url(h, 0))));
                    }
                }
                put(c, items).await;
            }
            for round in 0..6 {
                if round == 2 {
                    svc_a.compact().unwrap();
                }
                let mut answers = Vec::new();
                for c in clients.iter_mut() {
                    let got = get(c, params(2, 30)).await;
                    let mut updates = Vec::new();
                    for (i, u) in got.iter().enumerate() {
                        let refetch = if i % 3 == 0 { T0 + 40 * (round + 1) } else { 0 };
                        updates.push(known(u, refetch));
                    }
                    put(c, updates).await;
                    if round == 1 {
                        set_delay(c, "h1.example", 7).await;
                        block_queue(c, "h2.example", T0 + 100).await;
                        delete_queue(c, "h3.example").await;
                    }
                    answers.push(got);
                }
                assert_eq!(answers[0], answers[1], "round {round}");
                clock.advance(25);
            }
            svc_a.compact().unwrap();
            // One call after the checkpoint, replayed from the log at the restart.
            for c in clients.iter_mut() {
                let _ = get(c, params(1, 30)).await;
            }
            server_a.shutdown().await.unwrap();
            drop(svc_a);
            let [_, mut client_b] = clients;
            let (_svc_a, server_a, mut client_a) = start_with_handle(dir_a.path(), &clock).await;
            for round in 0..12 {
                let a = get(&mut client_a, params(3, 20)).await;
                let b = get(&mut client_b, params(3, 20)).await;
                assert_eq!(a, b, "after the restart, round {round}");
                let (sa, sb) = (
                    stats(&mut client_a, "", "").await,
                    stats(&mut client_b, "", "").await,
                );
                assert_eq!(
                    (sa.size, sa.in_process, &sa.counts),
                    (sb.size, sb.in_process, &sb.counts),
                    "round {round}"
                );
                clock.advance(15);
            }
            server_a.shutdown().await.unwrap();
            server_b.shutdown().await.unwrap();
        });
    }
}
