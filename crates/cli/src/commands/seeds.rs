//! `crawlrank seeds`: a seed set for a crawl — from the graph's communities (Extract-Seeds,
//! docs/algorithms.md §5), or one of the baselines a user compares it with.

use anyhow::{bail, ensure, Result};
use crawlrank_graph::stats::thousands;
use crawlrank_graph::{open_graph, Cache};
use crawlrank_rank::HitsConfig;
use crawlrank_seeds::file::{cores_path, CoreEntry};
use crawlrank_seeds::{
    write_cores_json, write_seeds_file, Chosen, CoreParams, CoreRule, CoresRecord, Event, Method,
    MethodError, Pruning, RuleError, SeedsConfig, StopReason,
};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

/// `--method`'s parser: crawlrank-seeds' names, which the help lists.
fn method_parser() -> impl clap::builder::TypedValueParser<Value = Method> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(
        Method::ALL.map(|m| clap::builder::PossibleValue::new(m.name()).help(m.about())),
    )
    .map(|name: String| Method::parse(&name).expect("one of the possible values"))
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph: a BVGraph basename or an arc-list file.
    #[arg(long)]
    pub graph: PathBuf,
    /// Where the graph is held: `always` decodes it into memory, `never` keeps it compressed
    /// and memory-mapped (the `random` and `top-pagerank` methods only: the core methods prune
    /// and mask arcs of a graph held in memory), `auto` decodes it when it takes at most half of
    /// the memory available, and, for `random` and `top-pagerank`, never decodes what fits.
    #[arg(long, value_name = "auto|always|never", default_value = "auto")]
    pub in_memory: crawlrank_graph::InMemory,
    /// How many seeds (`SeedCount`).
    #[arg(long, value_name = "N")]
    pub count: usize,
    /// Write the seeds here, one per line (`id`, or `id<TAB>url` when the graph has URLs; the
    /// graph's own ids: those of an imported arc list, else 0..n), and how they were found to
    /// FILE.cores.json.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// How to choose them.
    #[arg(long, value_parser = method_parser(), default_value = "cover-density")]
    pub method: Method,
    /// cover-density: the lowest cover density of a core, in (0, 100].
    #[arg(long, value_name = "PERCENT", default_value_t = 100.0)]
    pub cover_density: f64,
    /// cover-density: the most hubs a core may have.
    #[arg(long, value_name = "H", default_value_t = 999)]
    pub max_hubs: usize,
    /// fixed-size: the size |hubs| + |authorities| of each core (`BipartiteCoreSize`).
    #[arg(long, value_name = "S")]
    pub core_size: Option<usize>,
    /// fixed-size: hubs, then authorities, added per step (`NewMemberCount`).
    #[arg(long, value_name = "M", default_value_t = 1)]
    pub new_members: usize,
    /// HITS iterations per round (`HITSIterationCount`).
    #[arg(long, value_name = "N", default_value_t = 60)]
    pub hits_iterations: usize,
    /// Stop a round's HITS early once both vectors change by less than this in L1 (off by
    /// default: always --hits-iterations, as the paper; warm-started rounds converge fast).
    #[arg(long, value_name = "L1")]
    pub hits_tolerance: Option<f64>,
    /// Drop the arcs within a host before HITS (the default when the graph has URLs).
    #[arg(long, conflicts_with = "no_prune")]
    pub prune_same_host: bool,
    /// Keep every arc.
    #[arg(long)]
    pub no_prune: bool,
    /// random: the generator's seed.
    #[arg(long, default_value_t = 42)]
    pub rng_seed: u64,
}

/// The configuration `crawlrank seeds` uses by default (cover density 100, at most 999 hubs, 60
/// HITS iterations), for `count` seeds; `simulate --seeds community:N` uses it too.
pub fn default_config(count: usize) -> SeedsConfig {
    SeedsConfig {
        count,
        rule: CoreRule::CoverDensity {
            min_density: 100.0,
            max_hubs: 999,
        },
        hits: HitsConfig::default(),
    }
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    ensure!(args.count > 0, "--count must be at least 1");
    let params = CoreParams {
        cover_density: args.cover_density,
        max_hubs: args.max_hubs,
        core_size: args.core_size,
        new_members: args.new_members,
        hits: HitsConfig {
            iterations: args.hits_iterations,
            tolerance: args.hits_tolerance,
        },
    };
    let config = match args.method.config(args.count, &params) {
        Ok(config) => config,
        Err(MethodError::Rule(RuleError::NeedsCoreSize)) => {
            bail!("--method fixed-size needs --core-size S (the pages of each core)")
        }
        Err(MethodError::Rule(RuleError::CoreSizeOnlyForFixedSize)) => {
            bail!("--core-size is for --method fixed-size")
        }
        Err(MethodError::Invalid(e)) => return Err(e),
    };
    let pruning = if args.no_prune {
        Pruning::None
    } else if args.prune_same_host {
        Pruning::SameHost
    } else {
        Pruning::Auto
    };

    let t0 = Instant::now();
    let graph = open_graph(&args.graph, cache)?;
    let cores = args.method.extracts_cores();
    // The core methods work on the graph in memory; the baselines need at most PageRank's
    // sweeps, which run on the compressed graph as well.
    ensure!(
        !(cores && args.in_memory == crawlrank_graph::InMemory::Never),
        "the {} method extracts cores from the graph held in memory (it prunes and masks its \
         arcs): use --in-memory always or auto",
        args.method.name()
    );
    let decision = if cores {
        crawlrank_graph::access::Decision {
            csr: true,
            reason: "in memory (the core methods prune and mask arcs of the graph in memory)"
                .into(),
        }
    } else {
        args.in_memory.decide(&graph, 2)
    };
    eprintln!("{}: {}", graph.basename().display(), decision.reason);
    let csr = if decision.csr && args.method != Method::Random {
        Some(graph.to_csr()?)
    } else {
        None
    };
    let urls = graph.urls()?;
    let ids = graph.page_ids()?;
    eprintln!(
        "{}: {} pages, {} arcs (loaded in {:.2?})",
        graph.basename().display(),
        thousands(graph.num_nodes() as u64),
        thousands(graph.num_arcs()),
        t0.elapsed()
    );
    ensure!(
        graph.num_nodes() > 0,
        "{} is an empty graph",
        graph.basename().display()
    );
    let mut record = CoresRecord {
        graph: args.graph.display().to_string(),
        method: args.method.name().into(),
        parameters: json!({}),
        pruned: false,
        pages: graph.num_nodes() as u64,
        arcs: (graph.num_arcs(), graph.num_arcs()),
        requested: args.count,
        seeds: Vec::new(),
        stop: "baseline".into(),
        cores: Vec::new(),
    };
    record.parameters = match (args.method, &config.rule) {
        (Method::Random, _) => json!({ "rng_seed": args.rng_seed }),
        (Method::TopPagerank, _) => json!({ "damping": 0.85 }),
        (
            _,
            CoreRule::CoverDensity {
                min_density,
                max_hubs,
            },
        ) => json!({
            "cover_density": min_density,
            "max_hubs": max_hubs,
            "hits_iterations": args.hits_iterations,
            "hits_tolerance": args.hits_tolerance,
        }),
        (_, CoreRule::FixedSize { size, new_members }) => json!({
            "core_size": size,
            "new_members": new_members,
            "hits_iterations": args.hits_iterations,
            "hits_tolerance": args.hits_tolerance,
        }),
    };
    let pagerank = || match &csr {
        Some(csr) => crawlrank_sim::reference_pagerank(&graph, csr),
        None => crawlrank_sim::reference_pagerank(&graph, &graph),
    };
    let mut prep_time = 0.0;
    let chosen = args.method.choose(
        &graph,
        csr.as_ref(),
        urls.as_deref(),
        &config,
        args.rng_seed,
        pruning,
        pagerank,
        &mut |event| match event {
            Event::Prepared { pruned, arcs, time } => {
                prep_time = time.as_secs_f64();
                eprintln!(
                    "{}: {} arcs ({time:.2?})",
                    if pruned {
                        "pruned of arcs within a host"
                    } else {
                        "not pruned"
                    },
                    thousands(arcs),
                );
            }
            Event::Round(r) => {
                let seed = match r.core.seed {
                    Some(s) => match &urls {
                        Some(u) => format!("seed {} {}", ids.id(s as usize), u[s as usize]),
                        None => format!("seed {}", ids.id(s as usize)),
                    },
                    None => "no hub, no seed".into(),
                };
                eprintln!(
                    "round {:>4}: {} hubs × {} authorities, cover density {:.1}, {seed} \
                         (HITS {} iterations {:.2?}, core {:.2?})",
                    r.round,
                    r.core.hubs.len(),
                    r.core.authorities.len(),
                    r.core.cover_density(),
                    r.hits_iterations,
                    r.hits_time,
                    r.core_time
                );
            }
        },
    )?;
    match chosen {
        Chosen::Baseline(seeds) => record.seeds = seeds,
        Chosen::Cores {
            extraction: x,
            pruned,
            arcs,
        } => {
            let hits: f64 = x.rounds.iter().map(|r| r.hits_time.as_secs_f64()).sum();
            let core: f64 = x.rounds.iter().map(|r| r.core_time.as_secs_f64()).sum();
            eprintln!(
                "{} rounds in {:.2} s: HITS {hits:.2} s ({:.3} s a round), cores and removal \
                 {core:.3} s, pruning {prep_time:.2} s",
                x.rounds.len(),
                hits + core,
                hits / x.rounds.len().max(1) as f64,
            );
            record.pruned = pruned;
            record.arcs.1 = arcs;
            record.stop = match x.stop {
                StopReason::CountReached => "count reached",
                StopReason::NoArcsLeft => "no arcs left",
            }
            .into();
            record.cores = x.rounds.iter().map(CoreEntry::of).collect();
            record.seeds = x.seeds;
        }
    }
    ensure!(
        !record.seeds.is_empty(),
        "no seeds found: no core of {} has a hub (after {} rounds); nothing written",
        args.graph.display(),
        record.cores.len()
    );
    let cores_file = cores_path(&args.out);
    // The record first: a seeds file is never without the cores it came from.
    write_cores_json(&cores_file, &record, urls.as_deref(), &ids)?;
    let provenance = crate::provenance::Provenance::new(&args.graph)?;
    crate::provenance::stamp_json(&cores_file, &provenance)?;
    write_seeds_file(&args.out, &record.seeds, urls.as_deref(), &ids)?;
    if record.seeds.len() < args.count {
        eprintln!(
            "crawlrank: warning: found {} of the {} seeds asked for: {}",
            record.seeds.len(),
            args.count,
            if record.stop == "baseline" {
                "the graph has no more pages"
            } else {
                "no arc is left between the pages of the graph not yet in a core"
            }
        );
    }
    println!(
        "wrote {} seeds to {} and the cores to {}",
        record.seeds.len(),
        args.out.display(),
        cores_file.display()
    );
    Ok(())
}
