//! `crawlrank rank`: PageRank, HITS or in-degree of every page.

use crate::output;
use anyhow::{bail, ensure, Context, Result};
use crawlrank_graph::access::{SequentialSuccessors, Transpose};
use crawlrank_graph::{open_graph, Cache, InMemory, PageIds};
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    Pagerank,
    Hits,
    Indegree,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitsScore {
    Authority,
    Hub,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph: a BVGraph basename or an arc-list file.
    #[arg(long)]
    pub graph: PathBuf,
    /// The ranking to compute.
    #[arg(long, value_enum, default_value_t = Algo::Pagerank)]
    pub algo: Algo,
    /// Where the graph is held: `always` decodes it (and its transpose, for PageRank and HITS)
    /// into memory, `never` ranks the memory-mapped compressed graph and its transpose (built
    /// once in the cache), `auto` decodes when that takes at most half of the memory
    /// available. The scores are the same bit for bit.
    #[arg(long, value_name = "auto|always|never", default_value = "auto")]
    pub in_memory: InMemory,
    /// Write the scores to FILE: one per line in node order when the pages' ids are 0..n (every
    /// BVGraph without .ids), else `id<TAB>score` lines, the graph's own ids (an arc list with
    /// gaps in its ids, or not starting at 0), in increasing order of id.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print the N best pages (id, URL when known, score).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// PageRank damping factor.
    #[arg(long, default_value_t = 0.85)]
    pub damping: f64,
    /// PageRank stops when the L1 change between iterations is below this.
    #[arg(long, default_value_t = 1e-10)]
    pub threshold: f64,
    /// PageRank's maximum number of iterations.
    #[arg(long, default_value_t = 1000)]
    pub max_iter: usize,
    /// PageRank preference (teleport) vector, summing to 1: one non-negative value per line in
    /// node order (pages with ids 0..n only), or `id<TAB>value` lines, as --out writes them
    /// (pages not named get 0).
    #[arg(long, value_name = "FILE")]
    pub preference: Option<PathBuf>,
    /// HITS iterations.
    #[arg(long, default_value_t = 60)]
    pub hits_iterations: usize,
    /// Which HITS score to write and print.
    #[arg(long, value_enum, default_value_t = HitsScore::Authority)]
    pub hits_score: HitsScore,
    /// Rank in N processes on this machine (loopback, free ports), each reading only its
    /// range of the compressed graph; started and stopped by this command. The scores are
    /// the one-process solver's (PageRank, HITS and in-degree alike).
    #[arg(long, value_name = "N", conflicts_with_all = ["hostfile", "process"])]
    pub processes: Option<usize>,
    /// Rank across machines: FILE lists every process's `host:port`, one a line; start
    /// the command on each machine with the same options and its own --process.
    #[arg(long, value_name = "FILE", requires = "process")]
    pub hostfile: Option<PathBuf>,
    /// This process's line in --hostfile, from 0 (process 0 writes --out and prints --top).
    #[arg(long, value_name = "I", requires = "hostfile")]
    pub process: Option<usize>,
    /// With --processes or --hostfile, PageRank only: save the vector in DIR every
    /// --checkpoint-every iterations, and resume from the latest one DIR holds (after a
    /// process died).
    #[arg(long, value_name = "DIR")]
    pub checkpoint: Option<PathBuf>,
    /// Iterations between checkpoints.
    #[arg(long, value_name = "K", default_value_t = 5)]
    pub checkpoint_every: usize,
    /// Seconds to wait for every peer to connect before giving up.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub connect_timeout: f64,
    /// Seconds a round may take before a peer is declared dead.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    pub round_timeout: f64,
}

pub fn run(args: Args, cache: &Cache) -> Result<()> {
    if args.processes.is_some() || args.hostfile.is_some() {
        return distributed::run(&args, cache);
    }
    ensure!(
        args.checkpoint.is_none(),
        "--checkpoint saves a run across processes: it needs --processes N or --hostfile"
    );
    let t0 = Instant::now();
    let graph = open_graph(&args.graph, cache)?;
    let ids = graph.page_ids()?;
    let directions = if args.algo == Algo::Indegree { 1 } else { 2 };
    let decision = args.in_memory.decide(&graph, directions);
    eprintln!("{}: {}", graph.basename().display(), decision.reason);
    let (scores, label, note, loaded, ranked) = if decision.csr {
        let csr = graph.to_csr()?;
        rank_on(&args, &csr, &ids, t0)?
    } else {
        rank_on(&args, &graph, &ids, t0)?
    };
    eprintln!(
        "{}: {} nodes, {} arcs; loaded in {:.2?}, ranked in {:.2?} {}",
        graph.basename().display(),
        graph.num_nodes(),
        graph.num_arcs(),
        loaded,
        ranked,
        note
    );
    if let Some(out) = &args.out {
        output::write_scores(out, &scores, &ids)?;
        eprintln!(
            "wrote {} scores to {}{}",
            scores.len(),
            out.display(),
            if ids.is_dense() {
                ""
            } else {
                " (id<TAB>score: the graph's ids are not 0..n)"
            }
        );
    }
    if let Some(k) = args.top {
        let urls = graph.urls()?;
        output::print_top(&scores, k, urls.as_deref(), &ids, label);
    }
    Ok(())
}

/// The scores of `graph` (decoded, or compressed), their label, a note on the iterations, the
/// time to load (from `t0`, including the transpose) and the time to rank.
type Ranked = (
    Vec<f64>,
    &'static str,
    String,
    std::time::Duration,
    std::time::Duration,
);

fn rank_on<G: SequentialSuccessors + Transpose>(
    args: &Args,
    graph: &G,
    ids: &PageIds,
    t0: Instant,
) -> Result<Ranked> {
    let transpose = match args.algo {
        Algo::Indegree => None,
        _ => Some(graph.transposed()?),
    };
    let loaded = t0.elapsed();
    let t1 = Instant::now();
    let (scores, label, note) = match args.algo {
        Algo::Pagerank => {
            let preference = args
                .preference
                .as_deref()
                .map(|p| read_vector(p, ids))
                .transpose()?;
            let cfg = crawlrank_rank::PageRankConfig {
                damping: args.damping,
                threshold: args.threshold,
                max_iterations: args.max_iter,
                preference,
            };
            let outdeg = crawlrank_graph::access::outdegrees_of(graph);
            let t = transpose.as_ref().expect("built for PageRank");
            let r = crawlrank_rank::PageRank::new(t, &outdeg)?.run(&cfg, None)?;
            let note = format!("{} iterations, L1 change {:.3e}", r.iterations, r.l1_change);
            (r.scores, "pagerank", note)
        }
        Algo::Hits => {
            let t = transpose.as_ref().expect("built for HITS");
            let cfg = crawlrank_rank::HitsConfig {
                iterations: args.hits_iterations,
                ..Default::default()
            };
            let r = crawlrank_rank::hits(graph, t, &cfg)?;
            let note = format!("{} iterations", r.iterations);
            match args.hits_score {
                HitsScore::Authority => (r.authorities, "authority", note),
                HitsScore::Hub => (r.hubs, "hub", note),
            }
        }
        Algo::Indegree => (crawlrank_rank::indegree(graph), "indegree", String::new()),
    };
    Ok((scores, label, note, loaded, t1.elapsed()))
}

/// PageRank, HITS and in-degree across processes (`--processes`, `--hostfile`): the launcher
/// and one process.
mod distributed {
    use super::{output, read_vector, Algo, Args, HitsScore};
    use anyhow::{bail, ensure, Context, Result};
    use crawlrank_graph::access::Transpose;
    use crawlrank_graph::{open_graph, Cache};
    use crawlrank_rank::distributed::{
        graph_fingerprint, read_hostfile, run_process, Algorithm, Checkpoints, Cluster,
        DistributedConfig, Ranking, MAX_PROCESSES,
    };
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    pub(super) fn run(args: &Args, cache: &Cache) -> Result<()> {
        ensure!(
            args.checkpoint.is_none() || args.algo == Algo::Pagerank,
            "--checkpoint is kept for PageRank only: HITS and in-degree across processes start \
             over when rerun (drop --checkpoint)"
        );
        ensure!(
            args.checkpoint_every >= 1,
            "--checkpoint-every must be at least 1"
        );
        for (name, v) in [
            ("--connect-timeout", args.connect_timeout),
            ("--round-timeout", args.round_timeout),
        ] {
            ensure!(
                v.is_finite() && v > 0.0,
                "{name} must be a positive number of seconds"
            );
        }
        match (args.processes, &args.hostfile, args.process) {
            (Some(n), _, _) => launch(args, cache, n),
            (None, Some(file), Some(i)) => one_process(args, cache, read_hostfile(file)?, i),
            _ => bail!("--hostfile needs --process I"),
        }
    }

    /// Starts `n` processes of this very command on loopback, on free ports, and waits for
    /// them; when one fails, stops the others and says which failed and how.
    fn launch(args: &Args, cache: &Cache, n: usize) -> Result<()> {
        ensure!(
            (1..=MAX_PROCESSES).contains(&n),
            "--processes must be between 1 and {MAX_PROCESSES}"
        );
        // Build the transpose (and check the graph) once, here, rather than in every process.
        let graph = open_graph(&args.graph, cache)?;
        graph.transposed()?;
        drop(graph);
        let listeners: Vec<std::net::TcpListener> = (0..n)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
            .collect::<std::io::Result<_>>()
            .context("cannot find free loopback ports")?;
        let mut hosts = String::new();
        for l in &listeners {
            hosts.push_str(&format!("127.0.0.1:{}\n", l.local_addr()?.port()));
        }
        drop(listeners);
        let hostfile = std::env::temp_dir().join(format!("crawlrank-hosts-{}", std::process::id()));
        std::fs::write(&hostfile, hosts)
            .with_context(|| format!("cannot write {}", hostfile.display()))?;
        let result = supervise(args, &hostfile, n);
        let _ = std::fs::remove_file(&hostfile);
        result
    }

    /// Runs the `n` processes and waits for them (see [`launch`]).
    fn supervise(args: &Args, hostfile: &std::path::Path, n: usize) -> Result<()> {
        // The same command line, without --processes, plus each process's place.
        let mut argv: Vec<std::ffi::OsString> = Vec::new();
        let mut skip = false;
        for a in std::env::args_os().skip(1) {
            if skip {
                skip = false;
                continue;
            }
            match a.to_str() {
                Some("--processes") => skip = true,
                Some(s) if s.starts_with("--processes=") => {}
                _ => argv.push(a),
            }
        }
        let exe = std::env::current_exe().context("cannot find the crawlrank executable")?;
        let mut children = Vec::new();
        for i in 0..n {
            let spawned = std::process::Command::new(&exe)
                .args(&argv)
                .arg("--hostfile")
                .arg(hostfile)
                .arg("--process")
                .arg(i.to_string())
                .spawn();
            match spawned {
                Ok(child) => children.push(Some(child)),
                Err(e) => {
                    for child in children.iter_mut().flatten() {
                        let _ = child.kill();
                        let _ = child.wait();
                    }
                    return Err(e).with_context(|| format!("cannot start process {i}"));
                }
            }
        }
        eprintln!("started {n} processes on loopback (pids {})", {
            let pids: Vec<String> = children
                .iter()
                .flatten()
                .map(|c| c.id().to_string())
                .collect();
            pids.join(", ")
        });
        let mut failure: Option<String> = None;
        while children.iter().any(Option::is_some) {
            for (i, slot) in children.iter_mut().enumerate() {
                let Some(child) = slot else { continue };
                if let Some(status) = child.try_wait()? {
                    *slot = None;
                    if !status.success() && failure.is_none() {
                        failure = Some(describe(i, status));
                    }
                }
            }
            if failure.is_some() {
                // Stop the others: without their peer they cannot finish.
                for child in children.iter_mut().flatten() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if let Some(f) = failure {
            let hint = match &args.checkpoint {
                Some(d) => format!(
                    "; run the same command again to resume from the latest checkpoint in {}",
                    d.display()
                ),
                None => "; with --checkpoint DIR a rerun resumes instead of starting over".into(),
            };
            bail!("{f}: the run stopped{hint}");
        }
        Ok(())
    }

    fn describe(i: usize, status: std::process::ExitStatus) -> String {
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if let Some(sig) = status.signal() {
                return format!("process {i} was killed by signal {sig}");
            }
        }
        format!("process {i} failed ({status})")
    }

    /// One process of the cluster: reads its range, runs, and (process 0) writes the scores.
    fn one_process(args: &Args, cache: &Cache, addresses: Vec<String>, me: usize) -> Result<()> {
        let t0 = Instant::now();
        let graph = open_graph(&args.graph, cache)?;
        let ids = graph.page_ids()?;
        let basename = graph.basename().to_path_buf();
        let fingerprint = graph_fingerprint(&basename, graph.num_nodes(), graph.num_arcs())?;
        let transpose = graph.transposed()?;
        let algorithm = match args.algo {
            Algo::Pagerank => Algorithm::PageRank(crawlrank_rank::PageRankConfig {
                damping: args.damping,
                threshold: args.threshold,
                max_iterations: args.max_iter,
                preference: args
                    .preference
                    .as_deref()
                    .map(|p| read_vector(p, &ids))
                    .transpose()?,
            }),
            Algo::Hits => Algorithm::Hits(crawlrank_rank::HitsConfig {
                iterations: args.hits_iterations,
                ..Default::default()
            }),
            Algo::Indegree => Algorithm::InDegree,
        };
        let processes = addresses.len();
        let config = DistributedConfig {
            algorithm,
            cluster: Cluster {
                addresses,
                process: me,
                connect_timeout: Duration::from_secs_f64(args.connect_timeout),
                round_timeout: Duration::from_secs_f64(args.round_timeout),
            },
            checkpoints: args.checkpoint.as_ref().map(|dir| Checkpoints {
                dir: dir.clone(),
                every: args.checkpoint_every,
            }),
            graph_fingerprint: fingerprint,
        };
        let urls_graph = if me == 0 && args.top.is_some() {
            graph.urls()?
        } else {
            None
        };
        let (nodes, arcs) = (graph.num_nodes(), graph.num_arcs());
        let outcome = run_process(Arc::new(graph), Arc::new(transpose), &config)?;
        let Some(ranking) = outcome.result else {
            return Ok(());
        };
        let resumed = if outcome.resumed_from > 0 {
            format!(
                ", resumed from the checkpoint of iteration {}",
                outcome.resumed_from
            )
        } else {
            String::new()
        };
        let (scores, label, note) = match ranking {
            Ranking::PageRank(r) => {
                let note = format!(
                    ", {} iterations, L1 change {:.3e}",
                    r.iterations, r.l1_change
                );
                (r.scores, "pagerank", note)
            }
            Ranking::Hits(r) => {
                let note = format!(", {} iterations", r.iterations);
                match args.hits_score {
                    HitsScore::Authority => (r.authorities, "authority", note),
                    HitsScore::Hub => (r.hubs, "hub", note),
                }
            }
            Ranking::InDegree(scores) => (scores, "indegree", String::new()),
        };
        eprintln!(
            "{}: {nodes} nodes, {arcs} arcs; {label} in {processes} processes in {:.2?}{note}\
             {resumed}",
            basename.display(),
            t0.elapsed(),
        );
        if let Some(out) = &args.out {
            output::write_scores(out, &scores, &ids)?;
            eprintln!("wrote {} scores to {}", scores.len(), out.display());
        }
        if let Some(k) = args.top {
            output::print_top(&scores, k, urls_graph.as_deref(), &ids, label);
        }
        Ok(())
    }
}

/// Reads a preference vector: one number per line in node order, or `id<TAB>value` lines
/// naming pages by their ids (blank lines and `#` comments skipped; one form per file).
fn read_vector(path: &std::path::Path, ids: &PageIds) -> Result<Vec<f64>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the preference vector {}", path.display()))?;
    let mut plain = Vec::new();
    let mut by_id: Option<Vec<f64>> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = format!("{}:{}", path.display(), i + 1);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let value = fields[fields.len() - 1];
        let x: f64 = value
            .parse()
            .ok()
            .filter(|x: &f64| !x.is_nan())
            .with_context(|| format!("{at}: expected a number, found {value:?}"))?;
        match fields.len() {
            1 => {
                ensure!(
                    by_id.is_none(),
                    "{at}: a value without an id, after `id<TAB>value` lines"
                );
                ensure!(
                    ids.is_dense(),
                    "{at}: a value without an id: the pages of this graph have their own ids \
                     (not 0..n), so write `id<TAB>value` lines"
                );
                plain.push(x);
            }
            2 => {
                ensure!(
                    plain.is_empty(),
                    "{at}: an `id<TAB>value` line after lines of values alone"
                );
                let node = ids.parse(fields[0], &at)?;
                let v = by_id.get_or_insert_with(|| vec![f64::NAN; ids.len()]);
                ensure!(v[node].is_nan(), "{at}: page {} is named twice", fields[0]);
                v[node] = x;
            }
            n => bail!("{at}: {n} fields; expected a value or `id<TAB>value`"),
        }
    }
    Ok(match by_id {
        // Pages not named prefer nothing.
        Some(v) => v
            .into_iter()
            .map(|x| if x.is_nan() { 0.0 } else { x })
            .collect(),
        None => plain,
    })
}
