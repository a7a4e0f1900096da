//! Generates a synthetic web: `generate PAGES BASENAME [SEED] [OUTDEGREE] [HOSTS]`.
//!
//! Used by `scripts/bench-generate.sh`; the thread count is `RAYON_NUM_THREADS`'s.

use anyhow::{Context, Result};
use crawlrank_gen::{generate, GenConfig};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: generate PAGES BASENAME [SEED] [OUTDEGREE] [HOSTS]";
    let pages: u64 = args.first().context(usage)?.parse()?;
    let base = args.get(1).context(usage)?;
    let mut cfg = GenConfig::new(pages);
    if let Some(s) = args.get(2) {
        cfg.seed = s.parse()?;
    }
    if let Some(d) = args.get(3) {
        cfg.outdegree = d.parse()?;
    }
    if let Some(h) = args.get(4) {
        cfg.hosts = Some(h.parse()?);
    }
    let r = generate(&cfg, base.as_ref())?;
    let secs = r.elapsed.as_secs_f64();
    println!(
        "pages {} arcs {} hosts {} domains {} bits/link {:.3} time {:.2} s  {:.2} M arcs/s  {:.2} M pages/s  threads {}",
        r.pages,
        r.arcs,
        r.hosts,
        r.domains,
        r.bits_per_link,
        secs,
        r.arcs as f64 / secs / 1e6,
        r.pages as f64 / secs / 1e6,
        rayon::current_num_threads()
    );
    Ok(())
}
