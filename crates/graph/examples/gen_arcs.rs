//! Writes a synthetic web-like arc list to stdout, for benchmarking `crawlrank import`.
//!
//! `cargo run --release -p crawlrank-graph --example gen_arcs -- ARCS [NODES] [SEED] > arcs.txt`
//!
//! Arcs are grouped by source, as in crawl dumps; about 70% of them point near their source
//! (links within a site) and the rest to a popularity-skewed random node, and about 2% are
//! repeated, so the import's deduplication has work to do. Deterministic for a given seed.

use std::io::{BufWriter, Write};

fn main() -> std::io::Result<()> {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.replace('_', "").parse().expect("arguments are integers"))
        .collect();
    let arcs = *args.first().unwrap_or(&1_000_000);
    let nodes = args.get(1).copied().unwrap_or((arcs / 10).max(1));
    let mut x = args.get(2).copied().unwrap_or(42) | 1;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let out = std::io::stdout();
    let mut w = BufWriter::with_capacity(1 << 20, out.lock());
    let mut buf = itoa_buf();
    let avg = arcs as f64 / nodes as f64;
    let mut written = 0u64;
    let mut src = 0u64;
    while written < arcs {
        // Outdegree: roughly geometric around the average.
        let u = (rnd() >> 11) as f64 / (1u64 << 53) as f64;
        let deg = ((-u.max(1e-12).ln()) * avg).round() as u64;
        let mut last = src;
        for _ in 0..deg.min(arcs - written) {
            let r = rnd();
            let dst = if r % 100 < 2 {
                last // a repeated link
            } else if r % 100 < 72 {
                (src + (r >> 8) % 64).saturating_sub(32).min(nodes - 1)
            } else {
                // Skewed towards small ids: popular pages were found early.
                let v = (r >> 8) % nodes;
                (v * ((r >> 40) % nodes)) / nodes
            };
            last = dst;
            write_arc(&mut w, &mut buf, src, dst)?;
            written += 1;
        }
        src = (src + 1) % nodes;
    }
    w.flush()
}

fn itoa_buf() -> [u8; 48] {
    [0; 48]
}

fn write_arc(w: &mut impl Write, buf: &mut [u8; 48], s: u64, d: u64) -> std::io::Result<()> {
    let mut i = buf.len();
    buf[i - 1] = b'\n';
    i -= 1;
    for (k, mut v) in [d, s].into_iter().enumerate() {
        loop {
            i -= 1;
            buf[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        if k == 0 {
            i -= 1;
            buf[i] = b' ';
        }
    }
    w.write_all(&buf[i..])
}
