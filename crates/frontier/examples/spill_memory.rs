//! Memory per queued page of the frontier's priority queue, in memory and spilling its cold
//! part to disk: `pages` pushes of random keys, half as many key changes, then
//! every pop (checked in order). Each mode runs in a child process of its own, so that one's
//! memory does not hide the other's.
//!
//! ```sh
//! cargo run --release -p crawlrank-frontier --example spill_memory -- [PAGES] [HOT] [DIR]
//! ```
//!
//! Defaults: 10^7 pages, a hot part of 10^6 entries, spill directory in the system's temp
//! directory. Resident memory is read from /proc/self/status (Linux).

use crawlrank_frontier::{PageHeap, SpillConfig};
use std::time::Instant;

fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn run(mode: &str, pages: u32, hot: usize, dir: &str) {
    let config = SpillConfig::new(dir, hot);
    let mut heap = PageHeap::new((mode == "spill").then_some(&config));
    let before = status_kib("VmRSS:");
    let mut rng = crawlrank_rng::XorShift64::new(0x5eed);
    let key = |r: u64| (r >> 11) as f64 / (1u64 << 53) as f64;
    let start = Instant::now();
    for p in 0..pages {
        heap.push_or_update(p, key(rng.next_u64()), p);
    }
    for _ in 0..pages / 2 {
        let p = (rng.next_u64() % u64::from(pages)) as u32;
        heap.push_or_update(p, key(rng.next_u64()), p);
    }
    let pushed = start.elapsed();
    let after = status_kib("VmRSS:");
    let queued = heap.len();
    let status = heap.spill_status();
    let start = Instant::now();
    let mut last = f64::NEG_INFINITY;
    let mut popped = 0usize;
    while let Some((_, k)) = heap.pop() {
        assert!(k >= last, "popped out of order");
        last = k;
        popped += 1;
    }
    assert_eq!(popped, queued);
    let popped_in = start.elapsed();
    let peak = status_kib("VmHWM:");
    println!(
        "{mode:>6}: {queued} queued, {:.1} B/page resident after the pushes ({} MiB), peak RSS {} MiB; \
         pushes+updates {:.2} s, pops {:.2} s{}",
        (after - before) as f64 * 1024.0 / queued as f64,
        (after - before) / 1024,
        peak / 1024,
        pushed.as_secs_f64(),
        popped_in.as_secs_f64(),
        status.map(|s| format!("; then {} hot, {} cold in {} runs, {} write failures", s.hot, s.cold, s.runs, s.write_failures)).unwrap_or_default()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let pages: u32 = args
        .get(1)
        .map_or(10_000_000, |a| a.parse().expect("PAGES"));
    let hot: usize = args.get(2).map_or(1_000_000, |a| a.parse().expect("HOT"));
    let dir = args
        .get(3)
        .cloned()
        .unwrap_or_else(|| std::env::temp_dir().display().to_string());
    if let Ok(mode) = std::env::var("SPILL_MEMORY_MODE") {
        run(&mode, pages, hot, &dir);
        return;
    }
    println!("{pages} pages, hot capacity {hot}, spill directory in {dir}");
    for mode in ["memory", "spill"] {
        let status = std::process::Command::new(std::env::current_exe().expect("own path"))
            .args(&args[1..])
            .env("SPILL_MEMORY_MODE", mode)
            .status()
            .expect("child");
        assert!(status.success());
    }
}
