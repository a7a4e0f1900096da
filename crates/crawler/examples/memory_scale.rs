//! The crawl's per-URL memory at a scale no test web reaches here: the engine's structures
//! that grow with the URLs discovered — the URL table (hosts, and the seen-set: its Bloom
//! filter and cache in memory, its table in a real crawl store on disk) and the policy's
//! frontier — driven as the engine drives them, without HTTP, until N URLs are discovered
//! (default 10^8), printing the process's resident memory at each tenfold up to 10^7 and then at
//! every 10^7 (so that a run stopped early leaves rows), the store's size
//! and where the seen-set's lookups were answered.
//!
//!   cargo run --release -p crawlrank-crawler --features internals --example memory_scale -- [URLS] [POLICY] [HOSTS] [STATE_DIR] [FRONTIER_HOT] [KNOWN]
//!
//! STATE_DIR (default: a temporary directory, removed at the end) receives the store;
//! FRONTIER_HOT (default 0: all in memory) spills the frontier's cold part to STATE_DIR/spill
//! with that many entries in memory, as `crawl --frontier-hot` does.
//!
//! Each popped page links to 10 URLs: 4 new ones (the crawl discovers 4 URLs a page, about
//! what generated webs and real crawls show) and 6 already known, drawn at random: among all
//! URLs found so far with KNOWN `uniform` (the default: the worst case for the seen-set's
//! cache, nearly every known link reads the store), or among the last 65,536 with `recent`
//! (a page links to pages found shortly before it, as a real crawl's do: docs/performance.md,
//! "The seen-set on disk", measures 0.25% of lookups reading the store there). A URL is
//! `http://hH.test/pK` for the K-th URL, so a known one is written again from K (no string is
//! kept, as in the engine). The URLs not committed are dropped every 1,000 pages, as the
//! engine's commits drop them. What this leaves out: the fixed part (connections, the store's
//! page cache, bodies in flight) and per-host robots.txt rules; docs/crawler.md, Resources.

use crawlrank_crawl_state::DEFAULT_CACHE_ENTRIES;
use crawlrank_crawl_state::{Interned, UrlLimits, UrlTable};
use crawlrank_crawler::store::{StepWrites, Store};
use crawlrank_frontier::{Frontier, PageId, PolicyConfig, PolicyKind};

/// `VmRSS` and `VmHWM` of this process in bytes (0 where `/proc` is absent).
fn rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn url(k: u64, hosts: u64) -> String {
    format!("http://h{}.test/p{k}", crawlrank_rng::mix64(k) % hosts)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let target: u64 = args.first().map_or(Ok(100_000_000), |a| a.parse())?;
    let policy = PolicyKind::parse(args.get(1).map_or("fica", String::as_str))?;
    let hosts: u64 = args.get(2).map_or(Ok(1_000_000), |a| a.parse())?;
    let mut config = PolicyConfig::for_crawl(target / 4, target);
    let tmp = tempfile::tempdir()?;
    let dir = args
        .get(3)
        .map_or(tmp.path().to_path_buf(), std::path::PathBuf::from);
    let hot: usize = args.get(4).map_or(Ok(0), |a| a.parse())?;
    let recent = match args.get(5).map_or("uniform", String::as_str) {
        "uniform" => false,
        "recent" => true,
        other => anyhow::bail!("KNOWN is uniform or recent, not '{other}'"),
    };
    if hot > 0 {
        config.spill = Some(crawlrank_frontier::SpillConfig::new(dir.join("spill"), hot));
    }
    let mut frontier = Frontier::with_policy(policy, &config)?;
    let (mut store, loaded) = Store::open(&dir, true)?;
    store.ensure_seen_index(loaded.urls)?;
    let mut table = UrlTable::new(
        UrlLimits::UNBOUNDED,
        store.seen_reader()?,
        DEFAULT_CACHE_ENTRIES,
    );
    let mut writes = StepWrites::default();
    let mut rng = crawlrank_rng::XorShift64::new(42);
    let base = rss().0;
    println!(
        "{policy}, {hosts} hosts, up to {target} URLs; resident at start {} MiB",
        base >> 20
    );
    println!("| URLs discovered | pages popped | frontier | RSS MiB | peak MiB | bytes per URL over the start | seen-set MiB | store MiB | lookups: filtered / memory / disk | s |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let Interned::New(seed) = table.intern(&url(0, hosts), true)? else {
        anyhow::bail!("the seed is not new");
    };
    writes.new_urls.push((seed, url(0, hosts)));
    frontier.seed(&[seed]);
    let mut next_k = 1u64;
    let mut popped = 0u64;
    let mut report_at = 1_000_000u64.min(target);
    let mut links: Vec<PageId> = Vec::with_capacity(10);
    let started = std::time::Instant::now();
    while let Some(page) = frontier.pop() {
        popped += 1;
        links.clear();
        for i in 0..10 {
            let k = if i < 4 && next_k < target {
                next_k += 1;
                next_k - 1
            } else if recent {
                let window = next_k.min(1 << 16);
                next_k - 1 - rng.next_u64() % window
            } else {
                rng.next_u64() % next_k
            };
            let u = url(k, hosts);
            match table.intern(&u, false)? {
                Interned::Known(id) => links.push(id),
                Interned::New(id) => {
                    links.push(id);
                    writes.new_urls.push((id, u));
                }
                // Unbounded but for the ids' width, which 10^8 URLs do not reach.
                Interned::Capped
                | Interned::DomainHostsCapped
                | Interned::DomainCapped
                | Interned::NoIdLeft => {}
            }
        }
        frontier.on_crawled(page, &links);
        if popped.is_multiple_of(1000) {
            store.commit(&std::mem::take(&mut writes))?;
            table.saved(store.seen_reader()?);
        }
        if table.len() as u64 >= report_at || next_k >= target && frontier.is_empty() {
            let (now, peak) = rss();
            let c = table.seen_counts();
            let store_bytes = std::fs::metadata(store.path()).map_or(0, |m| m.len());
            println!(
                "| {} | {} | {} | {} | {} | {:.1} | {} | {} | {} / {} / {} | {:.0} |",
                table.len(),
                popped,
                frontier.len(),
                now >> 20,
                peak >> 20,
                now.saturating_sub(base) as f64 / table.len() as f64,
                table.seen_memory_bytes() >> 20,
                store_bytes >> 20,
                c.filtered,
                c.in_memory,
                c.disk_reads,
                started.elapsed().as_secs_f64()
            );
            if report_at >= target {
                break;
            }
            // Tenfolds up to 10^7, then every 10^7: a run stopped early still leaves rows.
            let step = if report_at < 10_000_000 {
                report_at * 9
            } else {
                10_000_000
            };
            report_at = (report_at + step).min(target);
        }
    }
    if let Some(sp) = frontier.spill_status() {
        println!(
            "frontier: {} entries in memory, {} on disk in {} runs, {} failed writes",
            sp.hot, sp.cold, sp.runs, sp.write_failures
        );
    }
    println!("{:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}
