//! Throughput of the test web (ignored by default: it is a measurement, not a check).
//!
//! The crawler's benchmark needs 2,000+ pages/s at concurrency 64 on 2 cores, so the server
//! must serve well above that on about one core: here it runs on its own single-threaded
//! runtime (`start_blocking`) while 64 keep-alive clients fetch pages through the proxy.
//! Run: `cargo test -p crawlrank-testweb --release --test it throughput:: -- --ignored --nocapture`.

use crate::serve::body_len;
use crawlrank_graph::Csr;
use crawlrank_testweb::{TestWeb, TestWebConfig};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
#[ignore]
fn pages_per_second() {
    let n = 100_000u32;
    let arcs: Vec<(u32, u32)> = (0..n)
        .flat_map(|v| {
            (1..=12u32).map(move |k| (v, (v.wrapping_mul(2654435761).wrapping_add(k * 7919)) % n))
        })
        .collect();
    let web = TestWeb::start_blocking(
        Arc::new(Csr::from_arcs(n as usize, &arcs)),
        None,
        "127.0.0.1:0".parse().unwrap(),
        TestWebConfig::default(),
    )
    .unwrap();
    let urls: Arc<Vec<String>> = Arc::new((0..n).map(|v| web.url(v).to_owned()).collect());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let done = Arc::new(AtomicU64::new(0));
    let secs = 3.0;
    rt.block_on(async {
        let client = reqwest::Client::builder()
            .proxy(reqwest::Proxy::all(web.proxy_url()).unwrap())
            .pool_max_idle_per_host(64)
            .build()
            .unwrap();
        let t0 = Instant::now();
        let tasks: Vec<_> = (0..64u32)
            .map(|i| {
                let (client, urls, done) = (client.clone(), urls.clone(), done.clone());
                tokio::spawn(async move {
                    let mut k = i as usize * 1543;
                    while t0.elapsed() < Duration::from_secs_f64(secs) {
                        assert!(body_len(&client, &urls[k % urls.len()]).await > 100);
                        done.fetch_add(1, Ordering::Relaxed);
                        k += 1;
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    let pages = done.load(Ordering::Relaxed);
    println!(
        "{pages} pages in {secs} s: {:.0} pages/s (server on one thread, client on one)",
        pages as f64 / secs
    );
    web.shutdown_blocking();
    assert_eq!(web.log().len() as u64, pages);
}
