//! Statistics of real and generated webs, side by side (the tables of `docs/generator.md`).
//!
//! ```text
//! cargo run --release -p crawlrank-gen --example compare_stats -- \
//!     --cnr /work/shared/data/cnr-2000/cnr-2000 --pages 325557 --pages 10000000 \
//!     --out /tmp/gen-compare
//! ```
//!
//! Options: `--cnr BASENAME` (a real BVGraph, repeatable; its name is the basename's),
//! `--pages N` (a generated web of N pages, repeatable), `--seed S` (generator seed, 0),
//! `--samples K` (BFS start nodes for reachability, 100), `--out DIR` (where generated
//! graphs go; default: a temporary directory removed at the end). The derived files of
//! the real graphs go to the crawlrank cache (`$CRAWLRANK_CACHE`, …), never beside them.

use anyhow::{bail, Context, Result};
use crawlrank_gen::{generate, GenConfig};
use crawlrank_graph::stats::{GraphStats, Log2Histogram};
use crawlrank_graph::{BvWebGraph, Cache};
use std::io::BufRead;
use std::path::{Path, PathBuf};

struct Column {
    name: String,
    stats: GraphStats,
    bits_per_link: f64,
    gen_secs: Option<f64>,
}

/// Host ids from a `.urls` file whose hosts are contiguous (LAW order).
fn hosts_from_urls(path: &Path) -> Result<Vec<u32>> {
    let r = std::io::BufReader::with_capacity(1 << 22, std::fs::File::open(path)?);
    let mut ids = Vec::new();
    let mut last = String::new();
    let mut id = 0u32;
    for line in r.lines() {
        let line = line?;
        let rest = line.split_once("://").map_or(line.as_str(), |(_, r)| r);
        let host = rest.split('/').next().unwrap_or("");
        if ids.is_empty() {
            last = host.to_string();
        } else if host != last {
            id += 1;
            last = host.to_string();
        }
        ids.push(id);
    }
    Ok(ids)
}

fn measure(
    name: String,
    base: &Path,
    cache: &Cache,
    urls: Option<&Path>,
    samples: usize,
    gen_secs: Option<f64>,
) -> Result<Column> {
    eprintln!("measuring {name} ...");
    let g = BvWebGraph::open(base, cache)?;
    let host_of = urls.map(hosts_from_urls).transpose()?;
    let csr = g.to_csr()?;
    let stats = GraphStats::compute(g.bv(), host_of.as_deref())?
        .with_reachability(&csr, samples, 0)
        .with_scc(&csr);
    let bits = 8 * std::fs::metadata(crawlrank_graph::bv::with_ext(base, "graph"))?.len();
    println!("## {name}\n\n```text\n{stats}```\n");
    Ok(Column {
        name,
        bits_per_link: bits as f64 / stats.arcs.max(1) as f64,
        stats,
        gen_secs,
    })
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn int(v: u64) -> String {
    crawlrank_graph::stats::thousands(v)
}

fn row(label: &str, cols: &[Column], f: impl Fn(&Column) -> String) {
    let cells: Vec<String> = cols.iter().map(f).collect();
    println!("| {label} | {} |", cells.join(" | "));
}

fn histogram_table(title: &str, cols: &[Column], h: impl Fn(&GraphStats) -> &Log2Histogram) {
    println!("\n{title} (fraction of nodes per log2 bin)\n");
    let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
    println!("| degree | {} |", names.join(" | "));
    println!("|---|{}", "---:|".repeat(cols.len()));
    let bins = cols
        .iter()
        .map(|c| h(&c.stats).counts.len())
        .max()
        .unwrap_or(0);
    for i in 0..bins {
        let cells: Vec<String> = cols
            .iter()
            .map(|c| {
                let hist = h(&c.stats);
                let v = hist.counts.get(i).copied().unwrap_or(0);
                let f = v as f64 / c.stats.nodes as f64;
                match v {
                    0 => "–".into(),
                    _ if f >= 1e-3 => format!("{f:.4}"),
                    _ => format!("{f:.1e}"),
                }
            })
            .collect();
        println!(
            "| {} | {} |",
            Log2Histogram::bin_label(i),
            cells.join(" | ")
        );
    }
}

fn main() -> Result<()> {
    let mut real: Vec<PathBuf> = Vec::new();
    let mut pages: Vec<u64> = Vec::new();
    let mut seed = 0u64;
    let mut samples = 100usize;
    let mut out: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--cnr" | "--real" => real.push(val()?.into()),
            "--pages" => pages.push(val()?.parse()?),
            "--seed" => seed = val()?.parse()?,
            "--samples" => samples = val()?.parse()?,
            "--out" => out = Some(val()?.into()),
            _ => bail!("unknown option {a} (see the top of examples/compare_stats.rs)"),
        }
    }
    let tmp = tempfile::tempdir()?;
    let out = out.unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&out)?;
    let cache = Cache::new(out.join("cache"));

    let mut cols = Vec::new();
    for base in &real {
        let name = base
            .file_name()
            .map_or("real".into(), |n| n.to_string_lossy().into_owned());
        cols.push(measure(name, base, &cache, None, samples, None)?);
    }
    for &n in &pages {
        let base = out.join(format!("gen-{n}"));
        let cfg = GenConfig {
            pages: n,
            seed,
            ..GenConfig::default()
        };
        eprintln!("generating {n} pages ...");
        let report = generate(&cfg, &base)?;
        eprintln!("{report:?}");
        let urls = crawlrank_graph::bv::with_ext(&base, "urls");
        let secs = report.elapsed.as_secs_f64();
        cols.push(measure(
            format!("gen {}", int(n)),
            &base,
            &cache,
            Some(&urls),
            samples,
            Some(secs),
        )?);
    }

    println!(
        "| statistic | {} |",
        cols.iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|{}", "---:|".repeat(cols.len()));
    row("nodes", &cols, |c| int(c.stats.nodes));
    row("arcs", &cols, |c| int(c.stats.arcs));
    row("mean outdegree", &cols, |c| {
        format!("{:.2}", c.stats.outdegree.mean())
    });
    row("dangling", &cols, |c| pct(c.stats.dangling_fraction()));
    row("self-loops (per node)", &cols, |c| {
        pct(c.stats.self_loops as f64 / c.stats.nodes as f64)
    });
    row("in-degree 0", &cols, |c| {
        pct(c.stats.zero_indegree as f64 / c.stats.nodes as f64)
    });
    row("in-degree 1", &cols, |c| {
        pct(c
            .stats
            .indegree
            .histogram
            .counts
            .get(1)
            .copied()
            .unwrap_or(0) as f64
            / c.stats.nodes as f64)
    });
    row("max outdegree", &cols, |c| int(c.stats.outdegree.max));
    row("max in-degree", &cols, |c| int(c.stats.indegree.max));
    let tail = |t: &Option<crawlrank_graph::stats::PowerLawTail>| match t {
        Some(t) => format!("{:.2} (x ≥ {})", t.alpha, int(t.x_min)),
        None => "–".into(),
    };
    row("outdegree tail exponent", &cols, |c| {
        tail(&c.stats.outdegree.tail)
    });
    row("in-degree tail exponent", &cols, |c| {
        tail(&c.stats.indegree.tail)
    });
    row("hosts", &cols, |c| {
        c.stats
            .hosts
            .as_ref()
            .map_or("n/a (no URLs)".into(), |h| int(h.hosts))
    });
    row("intra-host arcs", &cols, |c| {
        c.stats
            .intra_host_fraction()
            .map_or("n/a (no URLs)".into(), pct)
    });
    row("largest host (pages)", &cols, |c| {
        c.stats
            .hosts
            .as_ref()
            .map_or("n/a".into(), |h| int(h.host_sizes.max))
    });
    let reach = |c: &Column| c.stats.reachability.clone().expect("computed");
    row("reach from a random node: mean", &cols, |c| {
        pct(reach(c).mean_fraction)
    });
    row("reach from a random node: median", &cols, |c| {
        pct(reach(c).median_fraction)
    });
    row("starts reaching ≥ 10%", &cols, |c| {
        pct(reach(c).giant_start_fraction)
    });
    row("largest SCC", &cols, |c| {
        let s = c.stats.scc.clone().expect("computed");
        pct(s.largest as f64 / c.stats.nodes as f64)
    });
    row("bits per link (BVGraph)", &cols, |c| {
        format!("{:.2}", c.bits_per_link)
    });
    row("generation time", &cols, |c| {
        c.gen_secs.map_or("–".into(), |s| format!("{s:.1} s"))
    });
    histogram_table("Outdegree distribution", &cols, |s| &s.outdegree.histogram);
    histogram_table("In-degree distribution", &cols, |s| &s.indegree.histogram);
    Ok(())
}
