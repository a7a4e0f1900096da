//! Resident memory per URL of one crawl of the service's state, without gRPC or the store: the
//! `PutURLs` a client would send (discovered URLs, no metadata) applied to a
//! [`FrontierState`] as the service applies them, the resident memory read from `/proc` at
//! each step. It isolates what the crawl state itself costs a URL from what the transport and
//! the store's cache cost (`scripts/bench-puturls.sh` measures the whole service).
//!
//!   cargo run --release -p crawlrank-frontier-service --example state_memory -- [URLS] [HOSTS] [STEPS] [LINKED] [TEXT_DIR] [HOT]
//!
//! URLS (default 3,000,000) are `http://hH.example/pI` on HOSTS hosts (default 10,000), put in
//! STEPS equal steps (default 3); with LINKED = 1 every URL but the first on its host is put as
//! an out-link of the one before it on the same host (a `crawlrank.parent` metadata entry), as a
//! worker's reports would, else all are seeds. With TEXT_DIR the pages' URLs and metadata go to
//! scratch files there, as `frontier serve` keeps them (in its state directory); without, in
//! memory. With HOT (and TEXT_DIR) the frontier keeps HOT entries in memory and spills the
//! rest to TEXT_DIR/spill, as `frontier serve --frontier-hot HOT` does; without, all in memory.
//!
//! With `CHECKPOINT=one` or `CHECKPOINT=parts` (environment) it then builds and encodes the
//! state's checkpoint, as a compaction does, in one message or in parts one at a time (as the
//! store writes it since format 5), and reports the time, the process's peak memory before and
//! after and the encoded bytes: what a compaction costs a node on top of its state.

use anyhow::Result;
use crawlrank_frontier_service::{policy_spec, Call, FrontierState};
use crawlrank_urlfrontier::proto::{url_item, DiscoveredUrlItem, StringList, UrlInfo, UrlItem};
use crawlrank_urlfrontier::PARENT_KEY;

/// A line of `/proc/self/status` in KiB (`VmRSS:`, `VmHWM:`), 0 when unreadable.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
}

fn rss_bytes() -> u64 {
    status_kib("VmRSS:") * 1024
}

fn url(i: u64, hosts: u64) -> String {
    format!("http://h{}.example/p{i}", i % hosts)
}

fn main() -> Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let text_dir = (args.len() > 4).then(|| std::path::PathBuf::from(args.remove(4)));
    let hot: usize = match args.get(4) {
        Some(_) => args.remove(4).parse()?,
        None => 0,
    };
    let args: Vec<u64> = args.iter().map(|a| a.parse()).collect::<Result<_, _>>()?;
    let urls = args.first().copied().unwrap_or(3_000_000);
    let hosts = args.get(1).copied().unwrap_or(10_000);
    let steps = args.get(2).copied().unwrap_or(3).max(1);
    let linked = args.get(3).copied().unwrap_or(0) == 1;
    let mut spec = policy_spec("fica", None, None, 0)?;
    if let (Some(dir), true) = (&text_dir, hot > 0) {
        spec.config.spill = Some(crawlrank_frontier::SpillConfig::new(dir.join("spill"), hot));
    }
    let mut state = match &text_dir {
        Some(dir) => FrontierState::new_in(spec, dir)?,
        None => FrontierState::new(spec)?,
    };
    let before = rss_bytes();
    println!("urls,rss_mib,bytes_per_url_step");
    let (mut last_urls, mut last_rss) = (0u64, before);
    for step in 1..=steps {
        let end = urls * step / steps;
        for i in last_urls..end {
            let mut info = UrlInfo {
                url: url(i, hosts),
                ..Default::default()
            };
            if linked && i >= hosts {
                info.metadata.insert(
                    PARENT_KEY.to_string(),
                    StringList {
                        values: vec![url(i - hosts, hosts)],
                    },
                );
            }
            let item = UrlItem {
                item: Some(url_item::Item::Discovered(DiscoveredUrlItem {
                    info: Some(info),
                })),
                ..Default::default()
            };
            state
                .apply(&Call::Put(item), 1_000, 1_000)
                .map_err(|s| anyhow::anyhow!("{s}"))?;
        }
        let rss = rss_bytes();
        println!(
            "{end},{:.1},{:.1}",
            rss as f64 / (1 << 20) as f64,
            (rss as f64 - last_rss as f64) / (end - last_urls) as f64
        );
        (last_urls, last_rss) = (end, rss);
    }
    println!(
        "# {} URLs: {:.1} bytes a URL over the empty state",
        urls,
        (last_rss as f64 - before as f64) / urls as f64
    );
    if let Ok(how) = std::env::var("CHECKPOINT") {
        use prost::Message;
        let peak = peak_mib();
        let t = std::time::Instant::now();
        let bytes = match how.as_str() {
            "one" => state.checkpoint().encode_to_vec().len(),
            "parts" => {
                let mut bytes = state.checkpoint_header().encode_to_vec().len();
                state.checkpoint_parts(|_, _, part| {
                    bytes += part.encode_to_vec().len();
                    Ok(())
                })?;
                bytes
            }
            other => anyhow::bail!("CHECKPOINT is one or parts, not {other}"),
        };
        println!(
            "# checkpoint in {how}: {bytes} bytes encoded in {:.2} s; peak memory {peak} MiB before, {} MiB after",
            t.elapsed().as_secs_f64(),
            peak_mib()
        );
    }
    Ok(())
}

/// The process's peak resident memory so far, MiB.
fn peak_mib() -> u64 {
    status_kib("VmHWM:") / 1024
}
