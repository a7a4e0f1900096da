//! Crawls a web with the `spider` crate and prints `pages seconds`, for comparison with
//! crawlrank's crawler in `scripts/bench-crawl.sh`. Usage: `crawlrank-bench-spider PROXY SEED
//! LIMIT CONCURRENCY [robots|no-robots]`. Every host is allowed (`*`), no delay; robots.txt is
//! read with `robots` (the default: as crawlrank does, the fair comparison) and not with
//! `no-robots` (spider's fastest configuration).

use spider::website::Website;
use std::time::Instant;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !(5..=6).contains(&args.len()) {
        eprintln!("usage: crawlrank-bench-spider PROXY SEED LIMIT CONCURRENCY [robots|no-robots]");
        std::process::exit(2);
    }
    let robots = args.get(5).is_none_or(|a| a != "no-robots");
    let limit: u32 = args[3].parse().expect("LIMIT is a number");
    let conc: usize = args[4].parse().expect("CONCURRENCY is a number");
    let mut w = Website::new(&args[2]);
    w.with_proxies(Some(vec![args[1].clone()]))
        .with_external_domains(Some(vec!["*".to_string()].into_iter()))
        .with_respect_robots_txt(robots)
        .with_delay(0)
        .with_limit(limit)
        .with_concurrency_limit(Some(conc));
    let start = Instant::now();
    w.crawl().await;
    let secs = start.elapsed().as_secs_f64();
    println!("{} {secs:.3}", w.get_links().len());
}
