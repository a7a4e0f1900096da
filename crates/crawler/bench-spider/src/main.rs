//! Crawls a web with the `spider` crate and prints `pages seconds`, for comparison with
//! crawlrank's crawler in `scripts/bench-crawl.sh`. Usage: `crawlrank-bench-spider PROXY SEED
//! LIMIT CONCURRENCY`. Every host is allowed (`*`), robots.txt is not read (crawlrank reads
//! it, but the test web's is tiny), no delay: spider's fastest configuration.

use spider::website::Website;
use std::time::Instant;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: crawlrank-bench-spider PROXY SEED LIMIT CONCURRENCY");
        std::process::exit(2);
    }
    let limit: u32 = args[3].parse().expect("LIMIT is a number");
    let conc: usize = args[4].parse().expect("CONCURRENCY is a number");
    let mut w = Website::new(&args[2]);
    w.with_proxies(Some(vec![args[1].clone()]))
        .with_external_domains(Some(vec!["*".to_string()].into_iter()))
        .with_respect_robots_txt(false)
        .with_delay(0)
        .with_limit(limit)
        .with_concurrency_limit(Some(conc));
    let start = Instant::now();
    w.crawl().await;
    let secs = start.elapsed().as_secs_f64();
    println!("{} {secs:.3}", w.get_links().len());
}
