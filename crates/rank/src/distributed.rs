//! PageRank, HITS and in-degree across processes, on timely dataflow: each process holds one
//! range of pages and the processes exchange the updated scores of each phase by destination.
//!
//! A graph too large for one machine's memory or time is split by pages: process `p` of `N`
//! owns a contiguous range of the [`BLOCK`]s of [`PageRank`](crate::PageRank)'s sweep, reads
//! only that range of the graph and of its transpose (sequentially, from the compressed
//! graph), and updates only those pages. The iteration is the one-process solver's, exactly:
//!
//! - a sweep is two phases, the even blocks and then the odd ones, and a block reads the pages
//!   of other blocks as last published — so within a phase no process needs anything another
//!   process computes in that phase;
//! - after a phase each process sends the new value of each page it updated to the processes
//!   that own one of the page's successors (the only ones that read it), and every block's
//!   L1 change and dangling mass to every process;
//! - every process then sums the blocks' dangling masses and changes in block order, as the
//!   one-process solver does, so all of them take the same stopping decision and the scores
//!   are bit for bit the one-process solver's, whatever `N`.
//!
//! The exchange runs on timely dataflow (the `timely` crate): one worker per process, one
//! input of messages routed by destination process, and rounds separated by the input's
//! timestamps (each phase is a round, the driver steps the worker until the round's messages
//! have all arrived). The processes connect over TCP (this module opens the sockets itself,
//! with timeouts and a handshake that refuses peers running on another graph or with other
//! parameters, then hands them to timely's networking).
//!
//! HITS runs the same way: a product is one round (`a = Aᵀ·h` reads, for each page, the hubs
//! linking to it, so each hub value goes to the owners of its successors; `h = A·a` the other
//! way round), and every chunk's sum of squares goes to every process, which sums them in chunk
//! order as [`hits`](crate::hits()) does: the scores are the one-process solver's bit for bit.
//! In-degree needs no exchange but the final gather: each process counts its pages'
//! predecessors in its range of the transpose.
//!
//! Timely has no fault tolerance: a process that dies stops the run. With a checkpoint
//! directory every process writes its range of the PageRank vector every few iterations
//! (keeping the last two), and a run started again with the same directory resumes from the
//! latest iteration every process saved, instead of from scratch. HITS across processes has no
//! checkpoints yet (a rerun starts over).

use crate::hits::{inverse_norm, multiply_chunks, Vectors, GRAIN};
use crate::pagerank::{check_distribution, converged, finish, Sweep, BLOCK};
use crate::{HitsConfig, HitsResult, PageRankConfig, PageRankResult};
use anyhow::{bail, ensure, Context, Result};
use crawlrank_graph::access::SequentialSuccessors;
use rayon::prelude::*;
use std::cell::RefCell;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most processes a run may have (a page's destinations are kept as a 64-bit mask).
pub const MAX_PROCESSES: usize = 64;

/// Where this process stands in the cluster.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// `host:port` of every process, in process order (a hostfile's lines).
    pub addresses: Vec<String>,
    /// This process's index in `addresses`.
    pub process: usize,
    /// How long to wait for every peer to connect (and to answer the handshake).
    pub connect_timeout: Duration,
    /// How long a round may take before the run is declared stuck (a peer died or hangs).
    pub round_timeout: Duration,
}

/// Checkpoints of the vector (`--checkpoint DIR`).
#[derive(Debug, Clone)]
pub struct Checkpoints {
    /// The directory every process writes its part into (shared, or one per machine).
    pub dir: PathBuf,
    /// Write one every this many iterations.
    pub every: usize,
}

/// What a distributed run ranks by, with the one-process solver's settings.
#[derive(Debug, Clone)]
pub enum Algorithm {
    /// [`PageRank`](crate::PageRank): damping, threshold, iterations, preference.
    PageRank(PageRankConfig),
    /// [`hits`](crate::hits()): iterations and tolerance.
    Hits(HitsConfig),
    /// [`indegree`](crate::indegree()).
    InDegree,
}

/// What process 0 learns at the end of a run, as the one-process solver returns it.
#[derive(Debug)]
pub enum Ranking {
    /// PageRank's scores.
    PageRank(PageRankResult),
    /// Hubs and authorities.
    Hits(HitsResult),
    /// In-degrees, as scores.
    InDegree(Vec<f64>),
}

/// What a distributed run computes and on what.
#[derive(Debug, Clone)]
pub struct DistributedConfig {
    /// The ranking and its settings: as for the one-process solver.
    pub algorithm: Algorithm,
    /// The processes.
    pub cluster: Cluster,
    /// Checkpoints, if any.
    pub checkpoints: Option<Checkpoints>,
    /// A digest of the graph's files (see [`graph_fingerprint`]); peers must agree on it.
    pub graph_fingerprint: u64,
}

/// What a process learns at the end: process 0 gets the scores, the others `None`.
#[derive(Debug)]
pub struct DistributedOutcome {
    /// The scores (process 0 only).
    pub result: Option<Ranking>,
    /// The iteration the run resumed from (0 when it started from scratch).
    pub resumed_from: usize,
}

impl DistributedOutcome {
    /// The outcome of a process other than 0, which has no scores.
    fn elsewhere(resumed_from: usize) -> Self {
        DistributedOutcome {
            result: None,
            resumed_from,
        }
    }
}

/// A digest of a graph's numbers of nodes and arcs and of its `.properties` and `.graph`
/// files (their sizes and the properties' text), by a fixed algorithm (FNV-1a), so that
/// processes on different machines compare it.
pub fn graph_fingerprint(basename: &Path, nodes: usize, arcs: u64) -> Result<u64> {
    let mut h = Fnv::new();
    h.u64(nodes as u64);
    h.u64(arcs);
    let props = crawlrank_graph::with_ext(basename, "properties");
    let text = std::fs::read(&props).with_context(|| format!("cannot read {}", props.display()))?;
    h.bytes(&text);
    let graph = crawlrank_graph::with_ext(basename, "graph");
    let len = std::fs::metadata(&graph)
        .with_context(|| format!("cannot read {}", graph.display()))?
        .len();
    h.u64(len);
    Ok(h.0)
}

/// FNV-1a, 64 bits: a digest that is the same on every machine and build.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn u64(&mut self, x: u64) {
        self.bytes(&x.to_le_bytes());
    }
}

/// The digest peers compare in the handshake: the graph, the parameters and the number of
/// processes.
fn run_fingerprint(config: &DistributedConfig) -> u64 {
    let mut h = Fnv::new();
    h.u64(config.graph_fingerprint);
    match &config.algorithm {
        Algorithm::PageRank(pr) => {
            h.u64(0);
            h.u64(pr.damping.to_bits());
            h.u64(pr.threshold.to_bits());
            h.u64(pr.max_iterations as u64);
            match &pr.preference {
                None => h.u64(0),
                Some(v) => {
                    h.u64(1);
                    for x in v {
                        h.u64(x.to_bits());
                    }
                }
            }
        }
        Algorithm::Hits(c) => {
            h.u64(1);
            h.u64(c.iterations as u64);
            h.u64(c.tolerance.map_or(u64::MAX, f64::to_bits));
        }
        Algorithm::InDegree => h.u64(2),
    }
    h.u64(config.cluster.addresses.len() as u64);
    h.0
}

/// The blocks `[first, last)` process `p` of `processes` owns, for a graph of `n` pages.
pub fn block_range(n: usize, processes: usize, p: usize) -> (usize, usize) {
    let blocks = n.div_ceil(BLOCK);
    (p * blocks / processes, (p + 1) * blocks / processes)
}

/// Reads a hostfile: one `host:port` per line (blank lines and `#` comments skipped).
pub fn read_hostfile(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the hostfile {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        ensure!(
            line.rsplit_once(':')
                .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok()),
            "{}:{}: expected host:port, found {line:?}",
            path.display(),
            i + 1
        );
        out.push(line.to_string());
    }
    ensure!(
        !out.is_empty(),
        "the hostfile {} names no process",
        path.display()
    );
    Ok(out)
}

/// One message: `(destination process, kind, index, a, b)`.
type Msg = (u32, u32, u32, f64, f64);
/// A message on the wire, with the round it belongs to (a faster peer's messages of the next
/// round may arrive while this process still steps through the current one).
type Wire = (u32, u32, u32, u32, f64, f64);
/// A page's new value: index = page, a = z.
const KIND_VALUE: u32 = 0;
/// A block's share of a phase: index = block, a = L1 change, b = dangling mass.
const KIND_BLOCK: u32 = 1;
/// The final gather to process 0: index = page, a = z, b = 1/outdeg.
const KIND_GATHER: u32 = 2;
/// A checkpoint a process holds: index = iteration.
const KIND_HAVE: u32 = 3;

/// Runs the ranking as process `config.cluster.process` of the cluster, on `graph` (its own
/// range is all it reads) and `transpose`. Blocks until the run ends; process 0 returns the
/// scores. Errors: a peer unreachable within the connect timeout, a peer on another graph or
/// with other parameters, an address in use, a checkpoint of another run, a round that takes
/// longer than the round timeout (a peer died).
pub fn run_process<G, T>(
    graph: Arc<G>,
    transpose: Arc<T>,
    config: &DistributedConfig,
) -> Result<DistributedOutcome>
where
    G: SequentialSuccessors + Send + 'static,
    T: SequentialSuccessors + Send + 'static,
{
    let n = graph.node_count();
    let cluster = &config.cluster;
    let processes = cluster.addresses.len();
    let me = cluster.process;
    ensure!(processes >= 1, "a cluster needs at least one process");
    ensure!(
        processes <= MAX_PROCESSES,
        "{processes} processes; at most {MAX_PROCESSES} are supported"
    );
    ensure!(
        me < processes,
        "--process {me} is not in the hostfile's {processes} processes (0..{})",
        processes - 1
    );
    crate::ensure_transpose_fits(&*graph, &*transpose)?;
    ensure!(n > 0, "the graph is empty");
    match &config.algorithm {
        Algorithm::PageRank(pr) => {
            ensure!(
                (0.0..1.0).contains(&pr.damping),
                "the damping factor must be in [0, 1), got {}",
                pr.damping
            );
            ensure!(pr.threshold >= 0.0, "the threshold must be non-negative");
            ensure!(
                pr.max_iterations >= 1,
                "PageRank needs at least one iteration"
            );
            if let Some(v) = &pr.preference {
                check_distribution(v, n).context("invalid preference vector")?;
            }
        }
        Algorithm::Hits(c) => {
            if let Some(t) = c.tolerance {
                ensure!(t >= 0.0, "the HITS tolerance must be non-negative, got {t}");
            }
            ensure!(
                config.checkpoints.is_none(),
                "checkpoints are kept for PageRank only: HITS across processes starts over \
                 when rerun (drop --checkpoint)"
            );
        }
        Algorithm::InDegree => ensure!(
            config.checkpoints.is_none(),
            "in-degree is one pass and keeps no checkpoints (drop --checkpoint)"
        ),
    }
    let fingerprint = run_fingerprint(config);
    // Checkpoints of another run are refused before anyone connects.
    let held = match &config.checkpoints {
        Some(c) => {
            ensure!(
                c.every >= 1,
                "checkpoints must be at least 1 iteration apart"
            );
            list_checkpoints(&c.dir, me, processes, fingerprint)?
        }
        None => Vec::new(),
    };

    let sockets = connect(cluster, fingerprint)?;
    let (allocators, guard) = {
        use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
        use timely::communication::allocator::ProcessBuilder;
        let hooks = timely::communication::Hooks::default();
        let local = ProcessBuilder::new_typed_vector(1, hooks.refill.clone(), hooks.spill.clone());
        initialize_networking_from_sockets(local, sockets, me, 1, hooks)
            .context("cannot start timely's networking")?
    };
    let allocators = allocators
        .into_iter()
        .map(timely::communication::allocator::AllocatorBuilder::Tcp)
        .collect();

    let (beat_tx, beat_rx) = mpsc::channel::<Beat>();
    let shared = Arc::new(Shared {
        graph,
        transpose,
        config: config.clone(),
        fingerprint,
        held,
        beats: std::sync::Mutex::new(beat_tx),
    });
    let worker_shared = shared.clone();
    let handle = std::thread::spawn(move || {
        timely::execute::execute_from(
            allocators,
            Box::new(guard),
            timely::WorkerConfig::default(),
            move |worker| {
                let beats = worker_shared.beats.lock().expect("beats").clone();
                let r = work(worker, &worker_shared, &beats);
                let _ = beats.send(Beat::Done(r));
            },
        )
        .map(|guards| drop(guards.join()))
    });
    // The watchdog: every round beats; a round without a beat for the timeout is a dead or
    // hung peer (timely itself would wait forever).
    let mut last_round = 0usize;
    loop {
        match beat_rx.recv_timeout(cluster.round_timeout) {
            Ok(Beat::Round(r)) => last_round = r,
            Ok(Beat::Done(r)) => {
                let _ = handle.join();
                return r;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => bail!(
                "process {me}: no progress for {:.0?} after round {last_round}: a peer died or \
                 hangs (timely has no fault tolerance; rerun, with --checkpoint DIR to resume)",
                cluster.round_timeout
            ),
            Err(mpsc::RecvTimeoutError::Disconnected) => bail!(
                "process {me}: the timely worker stopped after round {last_round} (a peer's \
                 connection broke)"
            ),
        }
    }
}

enum Beat {
    Round(usize),
    Done(Result<DistributedOutcome>),
}

struct Shared<G, T> {
    graph: Arc<G>,
    transpose: Arc<T>,
    config: DistributedConfig,
    fingerprint: u64,
    held: Vec<usize>,
    beats: std::sync::Mutex<mpsc::Sender<Beat>>,
}

/// The timely worker of this process: the dataflow (messages routed by destination into a
/// local inbox) and the rounds.
fn work<G, T>(
    worker: &mut timely::worker::Worker,
    shared: &Shared<G, T>,
    beats: &mpsc::Sender<Beat>,
) -> Result<DistributedOutcome>
where
    G: SequentialSuccessors,
    T: SequentialSuccessors,
{
    use timely::dataflow::operators::{Exchange, Input, Inspect, Probe};
    use timely::dataflow::{InputHandle, ProbeHandle};

    let inbox: Rc<RefCell<Vec<Wire>>> = Rc::new(RefCell::new(Vec::new()));
    let mut input: InputHandle<usize, _> = InputHandle::new();
    let probe = ProbeHandle::new();
    {
        let inbox = inbox.clone();
        worker.dataflow(|scope| {
            scope
                .input_from(&mut input)
                .container::<Vec<Wire>>()
                .exchange(|m: &Wire| u64::from(m.0))
                .inspect(move |m: &Wire| inbox.borrow_mut().push(*m))
                .probe_with(&probe);
        });
    }
    let mut round = 0usize;
    // Sends `out`, closes the round and steps until every message of it has arrived; returns
    // them sorted (the order of arrival is not deterministic; the order of use must be).
    let mut exchange = |out: &mut Vec<Msg>, worker: &mut timely::worker::Worker| -> Vec<Msg> {
        let tag = round as u32;
        for (dest, kind, index, a, b) in out.drain(..) {
            input.send((dest, tag, kind, index, a, b));
        }
        round += 1;
        input.advance_to(round);
        while probe.less_than(input.time()) {
            // Park rather than spin while peers compute: the processes share the cores.
            worker.step_or_park(Some(Duration::from_millis(1)));
        }
        let _ = beats.send(Beat::Round(round));
        let mut got: Vec<Msg> = Vec::new();
        inbox.borrow_mut().retain(|&(dest, r, kind, index, a, b)| {
            if r == tag {
                got.push((dest, kind, index, a, b));
                false
            } else {
                true
            }
        });
        got.sort_unstable_by_key(|m| (m.1, m.2));
        got
    };

    let part = Part::new(shared);
    match &shared.config.algorithm {
        Algorithm::PageRank(pr) => pagerank(worker, &mut exchange, shared, pr, &part),
        Algorithm::Hits(c) => hits(worker, &mut exchange, shared, c, &part),
        Algorithm::InDegree => indegree(worker, &mut exchange, shared, &part),
    }
}

/// One round of the exchange: sends the messages, steps the worker until every message of
/// the round has arrived, and returns this process's, sorted by kind and index.
type Exchange<'a> = dyn FnMut(&mut Vec<Msg>, &mut timely::worker::Worker) -> Vec<Msg> + 'a;

// A process owns whole PageRank blocks; HITS sums chunk by chunk: they must be the same pages.
const _: () = assert!(BLOCK == GRAIN);

/// This process's share of the graph: the pages `lo..hi`, which are the blocks `b0..b1`.
struct Part {
    n: usize,
    processes: usize,
    me: usize,
    owner_of_block: Vec<u8>,
    b0: usize,
    b1: usize,
    lo: usize,
    hi: usize,
}

impl Part {
    fn new<G: SequentialSuccessors, T>(shared: &Shared<G, T>) -> Part {
        let n = shared.graph.node_count();
        let processes = shared.config.cluster.addresses.len();
        let me = shared.config.cluster.process;
        let owner_of_block: Vec<u8> = (0..processes)
            .flat_map(|p| {
                let (a, b) = block_range(n, processes, p);
                std::iter::repeat_n(p as u8, b - a)
            })
            .collect();
        let (b0, b1) = block_range(n, processes, me);
        Part {
            n,
            processes,
            me,
            owner_of_block,
            b0,
            b1,
            lo: b0 * BLOCK,
            hi: n.min(b1 * BLOCK),
        }
    }

    /// For each of this process's pages, the other processes that own one of its successors
    /// in `g` (the ones that read the page's value when they sum over their pages'
    /// predecessors), as a bit mask; `out_degree` receives each page's successor count.
    fn readers<S: SequentialSuccessors>(
        &self,
        g: &S,
        mut out_degree: impl FnMut(usize, usize),
    ) -> Vec<u64> {
        let mut mask = vec![0u64; self.hi - self.lo];
        g.for_each_in(self.lo..self.hi, |v, succ| {
            out_degree(v, succ.len());
            let mut m = 0u64;
            for &s in succ {
                m |= 1 << self.owner_of_block[s as usize / BLOCK];
            }
            mask[v - self.lo] = m & !(1 << self.me);
        });
        mask
    }

    /// Each page's value in `values` to the processes `mask` names.
    fn send_values(&self, out: &mut Vec<Msg>, mask: &[u64], values: &[f64]) {
        for v in self.lo..self.hi {
            let mut m = mask[v - self.lo];
            while m != 0 {
                let q = m.trailing_zeros();
                m &= m - 1;
                out.push((q, KIND_VALUE, v as u32, values[v], 0.0));
            }
        }
    }

    /// Gathers the values `a[v]` and `b[v]` (0 where `b` is empty) of every process's pages
    /// `v` at process 0: full-length vectors there, `None` in the other processes.
    fn gather(
        &self,
        worker: &mut timely::worker::Worker,
        exchange: &mut Exchange<'_>,
        a: &[f64],
        b: &[f64],
    ) -> Result<Option<(Vec<f64>, Vec<f64>)>> {
        let mut out: Vec<Msg> = (self.lo..self.hi)
            .map(|v| {
                (
                    0,
                    KIND_GATHER,
                    v as u32,
                    a[v],
                    b.get(v).copied().unwrap_or(0.0),
                )
            })
            .collect();
        let got = exchange(&mut out, worker);
        if self.me != 0 {
            return Ok(None);
        }
        let (mut x, mut y) = (vec![0.0; self.n], vec![0.0; self.n]);
        let mut seen = 0usize;
        for (_, kind, index, p, q) in got {
            if kind == KIND_GATHER {
                x[index as usize] = p;
                y[index as usize] = q;
                seen += 1;
            }
        }
        ensure!(
            seen == self.n,
            "process 0 gathered {seen} of {} pages",
            self.n
        );
        Ok(Some((x, y)))
    }

    /// Each of this process's chunks' `(a, b)` to every process.
    fn send_chunks(&self, out: &mut Vec<Msg>, shares: &[(f64, f64)]) {
        for (k, &(a, b)) in shares.iter().enumerate() {
            for q in 0..self.processes {
                out.push((q as u32, KIND_BLOCK, (self.b0 + k) as u32, a, b));
            }
        }
    }
}

/// What a HITS or in-degree round brought: the values into `values`, every chunk's shares into
/// `chunks` (indexed by chunk).
fn receive_into(got: Vec<Msg>, values: &mut [f64], chunks: &mut [(f64, f64)]) {
    for (_, kind, index, a, b) in got {
        match kind {
            KIND_VALUE => values[index as usize] = a,
            KIND_BLOCK => chunks[index as usize] = (a, b),
            _ => {}
        }
    }
}

/// The two products of a HITS iteration.
#[derive(Clone, Copy)]
enum Product {
    /// `a = Aᵀ·h`, over the transpose: a page's value is read by the owners of its
    /// predecessors.
    Authorities,
    /// `h = A·a`, over the graph: a page's value is read by the owners of its successors.
    Hubs,
}

/// What one process of HITS keeps besides its vectors: its pages, who reads each of their
/// values, and every chunk's shares of the last round.
struct HitsPart<'a, G, T> {
    shared: &'a Shared<G, T>,
    part: &'a Part,
    hub_readers: Vec<u64>,
    auth_readers: Vec<u64>,
    shares: Vec<(f64, f64)>,
}

impl<G: SequentialSuccessors, T: SequentialSuccessors> HitsPart<'_, G, T> {
    /// `result = factor · Aᵀ·x` or `factor · A·x` over this process's pages, as
    /// [`hits`](crate::hits()) computes it; the values go to the processes that read them and
    /// every chunk's sum of squares to every process. Returns the new vector's scale.
    fn product(
        &mut self,
        worker: &mut timely::worker::Worker,
        exchange: &mut Exchange<'_>,
        which: Product,
        (x, factor): (&[f64], f64),
        result: &mut [f64],
    ) -> f64 {
        let (lo, hi) = (self.part.lo, self.part.hi);
        let (squares, readers) = match which {
            Product::Authorities => (
                multiply_chunks(
                    &*self.shared.transpose,
                    x,
                    factor,
                    None,
                    lo,
                    &mut result[lo..hi],
                ),
                &self.auth_readers,
            ),
            Product::Hubs => (
                multiply_chunks(
                    &*self.shared.graph,
                    x,
                    factor,
                    None,
                    lo,
                    &mut result[lo..hi],
                ),
                &self.hub_readers,
            ),
        };
        let mut out = Vec::new();
        self.part.send_values(&mut out, readers, result);
        let mine: Vec<(f64, f64)> = squares.into_iter().map(|s| (s, 0.0)).collect();
        self.part.send_chunks(&mut out, &mine);
        let got = exchange(&mut out, worker);
        receive_into(got, result, &mut self.shares);
        inverse_norm(self.shares.iter().map(|s| s.0).sum())
    }
}

/// HITS, as [`hits`](crate::hits()) computes it: the vectors are full length (a process reads
/// any page's value that links to or from its own), each product computes this process's
/// pages, and the chunks' sums of squares and L1 changes are summed in chunk order by every
/// process alike.
fn hits<G, T>(
    worker: &mut timely::worker::Worker,
    exchange: &mut Exchange<'_>,
    shared: &Shared<G, T>,
    config: &HitsConfig,
    part: &Part,
) -> Result<DistributedOutcome>
where
    G: SequentialSuccessors,
    T: SequentialSuccessors,
{
    use Product::{Authorities, Hubs};
    let (n, lo, hi) = (part.n, part.lo, part.hi);
    let mut h = HitsPart {
        shared,
        part,
        hub_readers: part.readers(&*shared.graph, |_, _| {}),
        auth_readers: part.readers(&*shared.transpose, |_, _| {}),
        shares: vec![(0.0, 0.0); n.div_ceil(GRAIN)],
    };
    let mut out: Vec<Msg> = Vec::new();
    let mut v = Vectors::start(vec![1.0; n]);
    let mut iterations = 0;
    let mut l1_change = 0.0;
    while iterations < config.iterations {
        let x = (&v.hubs[..], v.hub_scale);
        let auth_scale = h.product(worker, exchange, Authorities, x, &mut v.next_auth);
        let x = (&v.next_auth[..], auth_scale);
        let hub_scale = h.product(worker, exchange, Hubs, x, &mut v.next_hubs);
        if config.tolerance.is_some() || iterations + 1 == config.iterations {
            // Every chunk's share of both L1 changes, summed in chunk order everywhere.
            let (dh, da) = v.changes(lo..hi, hub_scale, auth_scale);
            let mine: Vec<(f64, f64)> = dh.into_iter().zip(da).collect();
            part.send_chunks(&mut out, &mine);
            let got = exchange(&mut out, worker);
            receive_into(got, &mut [], &mut h.shares);
            let dh: f64 = h.shares.iter().map(|s| s.0).sum();
            let da: f64 = h.shares.iter().map(|s| s.1).sum();
            l1_change = dh.max(da);
        }
        v.advance(hub_scale, auth_scale);
        iterations += 1;
        if config.tolerance.is_some_and(|t| l1_change < t) {
            break;
        }
    }
    if iterations == 0 {
        // No iteration asked for: the authorities of the starting hubs, as in one process.
        let x = (&v.hubs[..], v.hub_scale);
        v.auth_scale = h.product(worker, exchange, Authorities, x, &mut v.authorities);
    }
    // Gather both vectors, unscaled, at process 0, which scales them as the one-process
    // solver does.
    let Some((hubs, authorities)) = part.gather(worker, exchange, &v.hubs, &v.authorities)? else {
        return Ok(DistributedOutcome::elsewhere(0));
    };
    (v.hubs, v.authorities) = (hubs, authorities);
    Ok(DistributedOutcome {
        result: Some(Ranking::Hits(v.finish(iterations, l1_change))),
        resumed_from: 0,
    })
}

/// In-degree: each process counts its pages' predecessors in its range of the transpose, and
/// process 0 gathers the counts.
fn indegree<G, T>(
    worker: &mut timely::worker::Worker,
    exchange: &mut Exchange<'_>,
    shared: &Shared<G, T>,
    part: &Part,
) -> Result<DistributedOutcome>
where
    G: SequentialSuccessors,
    T: SequentialSuccessors,
{
    let mut counts = vec![0.0; part.n];
    shared
        .transpose
        .for_each_in(part.lo..part.hi, |v, preds| counts[v] = preds.len() as f64);
    let Some((scores, _)) = part.gather(worker, exchange, &counts, &[])? else {
        return Ok(DistributedOutcome::elsewhere(0));
    };
    Ok(DistributedOutcome {
        result: Some(Ranking::InDegree(scores)),
        resumed_from: 0,
    })
}

/// PageRank, as [`PageRank`](crate::PageRank) computes it (the module's doc says how).
fn pagerank<G, T>(
    worker: &mut timely::worker::Worker,
    exchange: &mut Exchange<'_>,
    shared: &Shared<G, T>,
    pr: &PageRankConfig,
    part: &Part,
) -> Result<DistributedOutcome>
where
    G: SequentialSuccessors,
    T: SequentialSuccessors,
{
    let config = &shared.config;
    let processes = part.processes;
    let me = part.me;
    let transpose = &*shared.transpose;
    let n = part.n;
    let num_blocks = n.div_ceil(BLOCK);
    let (b0, b1, lo, hi) = (part.b0, part.b1, part.lo, part.hi);

    // This process's pages: outdegrees and destinations from the graph, self-loops from the
    // transpose, each read sequentially over the range only.
    let mut inv_outdeg = vec![0.0; n];
    let dest_mask = part.readers(&*shared.graph, |v, d| {
        inv_outdeg[v] = if d == 0 { 0.0 } else { 1.0 / d as f64 };
    });
    let mut self_loop = vec![false; n];
    transpose.for_each_in(lo..hi, |v, preds| {
        self_loop[v] = preds.contains(&(v as u32))
    });

    // The starting vector, or the latest checkpoint every process holds.
    let mut out: Vec<Msg> = Vec::new();
    let mut resumed_from = 0usize;
    let mut published = vec![0.0; n];
    let mut block_dangling = vec![0.0; num_blocks];
    let mut block_change = vec![0.0; num_blocks];
    if let Some(ck) = &config.checkpoints {
        for &it in &shared.held {
            for q in 0..processes {
                out.push((q as u32, KIND_HAVE, it as u32, 0.0, 0.0));
            }
        }
        let got = exchange(&mut out, worker);
        let mut count: std::collections::BTreeMap<u32, usize> = Default::default();
        for m in &got {
            *count.entry(m.2).or_default() += 1;
        }
        if let Some((&it, _)) = count.iter().rev().find(|(_, &c)| c == processes) {
            let (z, dangling) = read_checkpoint(&ck.dir, me, processes, it as usize, shared)?;
            ensure!(
                z.len() == hi - lo && dangling.len() == b1 - b0,
                "the checkpoint of iteration {it} in {} covers other pages than process {me} \
                 owns",
                ck.dir.display()
            );
            published[lo..hi].copy_from_slice(&z);
            block_dangling[b0..b1].copy_from_slice(&dangling);
            resumed_from = it as usize;
        }
    }
    if resumed_from == 0 {
        let inv_n = 1.0 / n as f64;
        for v in lo..hi {
            let x = match &pr.preference {
                Some(p) => p[v],
                None => inv_n,
            };
            published[v] = if inv_outdeg[v] != 0.0 {
                x * inv_outdeg[v]
            } else {
                x
            };
        }
        for (b, dangling) in block_dangling.iter_mut().enumerate().take(b1).skip(b0) {
            let r = b * BLOCK..n.min((b + 1) * BLOCK);
            *dangling = published[r.clone()]
                .iter()
                .zip(&inv_outdeg[r])
                .filter(|(_, &inv)| inv == 0.0)
                .map(|(z, _)| z)
                .sum();
        }
    }
    // Every page's value to the processes that read it, every block's dangling mass to all.
    let send_blocks = |out: &mut Vec<Msg>,
                       blocks: &mut dyn Iterator<Item = usize>,
                       published: &[f64],
                       change: &[f64],
                       dangling: &[f64]| {
        for b in blocks {
            for v in b * BLOCK..n.min((b + 1) * BLOCK) {
                let mut mask = dest_mask[v - lo];
                while mask != 0 {
                    let q = mask.trailing_zeros();
                    mask &= mask - 1;
                    out.push((q, KIND_VALUE, v as u32, published[v], 0.0));
                }
            }
            for q in 0..processes {
                out.push((q as u32, KIND_BLOCK, b as u32, change[b], dangling[b]));
            }
        }
    };
    let receive =
        |got: Vec<Msg>, published: &mut [f64], change: &mut [f64], dangling: &mut [f64]| {
            for (_, kind, index, a, b) in got {
                match kind {
                    KIND_VALUE => published[index as usize] = a,
                    KIND_BLOCK => {
                        change[index as usize] = a;
                        dangling[index as usize] = b;
                    }
                    _ => {}
                }
            }
        };
    send_blocks(
        &mut out,
        &mut (b0..b1),
        &published,
        &block_change,
        &block_dangling,
    );
    let got = exchange(&mut out, worker);
    receive(got, &mut published, &mut block_change, &mut block_dangling);

    let mut work_vec = published[lo..hi].to_vec();
    let mut iterations = resumed_from;
    let mut l1_change = f64::INFINITY;
    while iterations < pr.max_iterations {
        for parity in 0..2 {
            let dangling_mass: f64 = block_dangling.iter().sum();
            let sweep = Sweep::new(
                transpose,
                &inv_outdeg,
                &self_loop,
                pr.preference.as_deref(),
                pr.damping,
                dangling_mass,
                &published,
            );
            let results: Vec<(usize, (f64, f64))> = work_vec
                .par_chunks_mut(BLOCK)
                .enumerate()
                .map(|(k, block)| (b0 + k, block))
                .filter(|(b, _)| b % 2 == parity)
                .map(|(b, block)| (b, sweep.block(b * BLOCK, block)))
                .collect();
            for &(b, (change, dangling)) in &results {
                block_change[b] = change;
                block_dangling[b] = dangling;
                let r = b * BLOCK..n.min((b + 1) * BLOCK);
                published[r.clone()].copy_from_slice(&work_vec[r.start - lo..r.end - lo]);
            }
            send_blocks(
                &mut out,
                &mut results.iter().map(|&(b, _)| b),
                &published,
                &block_change,
                &block_dangling,
            );
            let got = exchange(&mut out, worker);
            receive(got, &mut published, &mut block_change, &mut block_dangling);
        }
        l1_change = block_change.iter().sum();
        iterations += 1;
        if converged(l1_change, iterations, pr.threshold)? {
            break;
        }
        if let Some(ck) = &config.checkpoints {
            if iterations.is_multiple_of(ck.every) && iterations < pr.max_iterations {
                write_checkpoint(
                    &ck.dir,
                    me,
                    processes,
                    iterations,
                    shared.fingerprint,
                    &published[lo..hi],
                    &block_dangling[b0..b1],
                )?;
            }
        }
    }

    // Gather the vector at process 0, which finishes it as the one-process solver does.
    let Some((z, inv)) = part.gather(worker, exchange, &published, &inv_outdeg)? else {
        return Ok(DistributedOutcome::elsewhere(resumed_from));
    };
    let result = finish(z, &inv, iterations, l1_change, pr.threshold)?;
    Ok(DistributedOutcome {
        result: Some(Ranking::PageRank(result)),
        resumed_from,
    })
}

const HELLO: &[u8; 8] = b"CRWLRNK1";

/// Opens this process's sockets: listens on its own address, connects to every process
/// before it and accepts every process after it, each with a handshake (magic, index, run
/// fingerprint) — all within the connect timeout. Position `me` is `None`, as timely expects.
fn connect(cluster: &Cluster, fingerprint: u64) -> Result<Vec<Option<TcpStream>>> {
    let me = cluster.process;
    let processes = cluster.addresses.len();
    let deadline = Instant::now() + cluster.connect_timeout;
    let mut sockets: Vec<Option<TcpStream>> = (0..processes).map(|_| None).collect();
    if processes == 1 {
        return Ok(sockets);
    }
    let own = &cluster.addresses[me];
    let listener = TcpListener::bind(own.as_str()).with_context(|| {
        format!("process {me} cannot listen on {own} (is the port in use, or the host not this machine?)")
    })?;
    listener.set_nonblocking(true)?;
    let hello = |stream: &mut TcpStream, index: usize| -> Result<()> {
        let mut msg = Vec::with_capacity(24);
        msg.extend_from_slice(HELLO);
        msg.extend_from_slice(&(index as u64).to_le_bytes());
        msg.extend_from_slice(&fingerprint.to_le_bytes());
        stream.write_all(&msg)?;
        Ok(())
    };
    let read_hello = |stream: &mut TcpStream| -> Result<(usize, u64)> {
        let left = deadline.saturating_duration_since(Instant::now());
        stream.set_read_timeout(Some(left.max(Duration::from_millis(100))))?;
        let mut buf = [0u8; 24];
        stream
            .read_exact(&mut buf)
            .context("the peer did not complete the handshake in time")?;
        ensure!(
            &buf[..8] == HELLO,
            "the peer is not a crawlrank rank process"
        );
        let index = u64::from_le_bytes(buf[8..16].try_into().expect("8 bytes")) as usize;
        let fp = u64::from_le_bytes(buf[16..24].try_into().expect("8 bytes"));
        stream.set_read_timeout(None)?;
        Ok((index, fp))
    };
    let mismatch = |peer: usize| {
        anyhow::anyhow!(
            "process {peer} runs on another graph or with other parameters (the ranking, its \
             settings or the number of processes differ): refused"
        )
    };
    // Connect to the processes before this one, retrying until the deadline.
    for (q, address) in cluster.addresses.iter().enumerate().take(me) {
        let addrs: Vec<SocketAddr> = address
            .to_socket_addrs()
            .with_context(|| format!("cannot resolve process {q}'s address {address}"))?
            .collect();
        let mut stream = loop {
            let attempt = addrs
                .iter()
                .find_map(|a| TcpStream::connect_timeout(a, Duration::from_millis(500)).ok());
            if let Some(s) = attempt {
                break s;
            }
            if Instant::now() >= deadline {
                bail!(
                    "process {me} cannot reach process {q} at {address} within {:.0?} (is it \
                     running, and the address right?)",
                    cluster.connect_timeout
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        stream.set_nodelay(true)?;
        hello(&mut stream, me)?;
        let (index, fp) = read_hello(&mut stream)
            .with_context(|| format!("handshake with process {q} at {address}"))?;
        ensure!(index == q, "{address} answered as process {index}, not {q}");
        if fp != fingerprint {
            return Err(mismatch(q));
        }
        sockets[q] = Some(stream);
    }
    // Accept the processes after this one.
    let mut missing = processes - me - 1;
    while missing > 0 {
        match listener.accept() {
            Ok((mut stream, _)) => {
                stream.set_nonblocking(false)?;
                stream.set_nodelay(true)?;
                let (index, fp) = read_hello(&mut stream).context("handshake with a peer")?;
                ensure!(
                    index > me && index < processes && sockets[index].is_none(),
                    "a peer announced itself as process {index}, which process {me} does not expect"
                );
                hello(&mut stream, me)?;
                if fp != fingerprint {
                    return Err(mismatch(index));
                }
                sockets[index] = Some(stream);
                missing -= 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    let absent: Vec<String> = (me + 1..processes)
                        .filter(|&q| sockets[q].is_none())
                        .map(|q| format!("{q} ({})", cluster.addresses[q]))
                        .collect();
                    bail!(
                        "process {me}: processes {} did not connect within {:.0?}",
                        absent.join(", "),
                        cluster.connect_timeout
                    );
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e).context("accepting a peer's connection"),
        }
    }
    Ok(sockets)
}

fn checkpoint_path(dir: &Path, me: usize, iteration: usize) -> PathBuf {
    dir.join(format!("pagerank-p{me}-it{iteration}.ckpt"))
}

/// The header of a checkpoint part: magic, run fingerprint, processes, process, iteration.
const CKPT_MAGIC: &[u8; 8] = b"CRCKPT01";

/// The iterations this process holds checkpoints of in `dir`, after checking that they were
/// written by this run (graph, parameters, processes).
fn list_checkpoints(dir: &Path, me: usize, processes: usize, fp: u64) -> Result<Vec<usize>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the checkpoint directory {}", dir.display()))?;
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        let Some(rest) = name
            .strip_prefix("pagerank-p")
            .and_then(|r| r.strip_suffix(".ckpt"))
        else {
            continue;
        };
        let Some((p, it)) = rest.split_once("-it") else {
            continue;
        };
        let (Ok(p), Ok(it)) = (p.parse::<usize>(), it.parse::<usize>()) else {
            continue;
        };
        let path = dir.join(&name);
        let header = read_header(&path)?;
        ensure!(
            header.0 == fp,
            "{} is a checkpoint of another graph or of other parameters (damping, threshold, \
             iterations, preference or number of processes): use another --checkpoint \
             directory, or delete it",
            path.display()
        );
        ensure!(
            header.1 == processes as u64,
            "{} was written by a run of {} processes, not {processes}",
            path.display(),
            header.1
        );
        if p == me {
            out.push(it);
        }
    }
    out.sort_unstable();
    Ok(out)
}

fn read_header(path: &Path) -> Result<(u64, u64)> {
    let mut f = std::fs::File::open(path)
        .with_context(|| format!("cannot read the checkpoint {}", path.display()))?;
    let mut h = [0u8; 40];
    f.read_exact(&mut h)
        .with_context(|| format!("{} is truncated", path.display()))?;
    ensure!(
        &h[..8] == CKPT_MAGIC,
        "{} is not a crawlrank checkpoint",
        path.display()
    );
    let word = |i: usize| u64::from_le_bytes(h[8 + 8 * i..16 + 8 * i].try_into().expect("8"));
    Ok((word(0), word(1)))
}

#[allow(clippy::too_many_arguments)]
fn write_checkpoint(
    dir: &Path,
    me: usize,
    processes: usize,
    iteration: usize,
    fp: u64,
    z: &[f64],
    dangling: &[f64],
) -> Result<()> {
    let path = checkpoint_path(dir, me, iteration);
    crawlrank_graph::atomic::write_file(&path, |w| {
        w.write_all(CKPT_MAGIC)?;
        for x in [fp, processes as u64, me as u64, iteration as u64] {
            w.write_all(&x.to_le_bytes())?;
        }
        w.write_all(&(z.len() as u64).to_le_bytes())?;
        for x in z.iter().chain(dangling) {
            w.write_all(&x.to_le_bytes())?;
        }
        Ok(())
    })
    .with_context(|| format!("cannot write the checkpoint {}", path.display()))?;
    // Keep the last two: every process has written at least the previous one by now (it
    // sent this iteration's messages after writing it).
    let mut mine = my_checkpoints(dir, me);
    mine.sort_unstable();
    for &old in mine.iter().rev().skip(2) {
        let _ = std::fs::remove_file(checkpoint_path(dir, me, old));
    }
    Ok(())
}

/// The iterations of process `me`'s checkpoint files in `dir`.
fn my_checkpoints(dir: &Path, me: usize) -> Vec<usize> {
    let prefix = format!("pagerank-p{me}-it");
    std::fs::read_dir(dir)
        .map(|list| {
            list.flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .strip_prefix(&prefix)
                        .and_then(|r| r.strip_suffix(".ckpt"))
                        .and_then(|r| r.parse::<usize>().ok())
                })
                .collect()
        })
        .unwrap_or_default()
}

fn read_checkpoint<G, T>(
    dir: &Path,
    me: usize,
    processes: usize,
    iteration: usize,
    shared: &Shared<G, T>,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let path = checkpoint_path(dir, me, iteration);
    let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    ensure!(bytes.len() >= 48, "{} is truncated", path.display());
    let word = |i: usize| u64::from_le_bytes(bytes[8 + 8 * i..16 + 8 * i].try_into().expect("8"));
    ensure!(
        &bytes[..8] == CKPT_MAGIC
            && word(0) == shared.fingerprint
            && word(1) == processes as u64
            && word(2) == me as u64
            && word(3) == iteration as u64,
        "{} is not this run's checkpoint of iteration {iteration}",
        path.display()
    );
    let len = word(4) as usize;
    let values: Vec<f64> = bytes[48..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    ensure!(
        values.len() >= len && (bytes.len() - 48) % 8 == 0,
        "{} is truncated",
        path.display()
    );
    let dangling = values[len..].to_vec();
    let mut z = values;
    z.truncate(len);
    Ok((z, dangling))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawlrank_graph::Csr;
    use crawlrank_rng::XorShift64;

    /// A graph of a little more than three blocks, arcs drawn at random (with dangling pages,
    /// self-loops and pages nobody links to), so that three processes own unequal ranges.
    fn graph() -> Csr {
        let n = 3 * BLOCK + 1234;
        let mut rng = XorShift64::new(42);
        let mut arcs = Vec::new();
        for u in 0..n as u32 {
            if u % 7 == 0 {
                continue;
            }
            for _ in 0..rng.next_u64() % 6 {
                let v = if rng.next_u64().is_multiple_of(4) {
                    (rng.next_u64() % 50) as u32
                } else {
                    (rng.next_u64() % n as u64) as u32
                };
                arcs.push((u, v));
            }
        }
        Csr::from_arcs(n, &arcs)
    }

    /// Runs `algorithm` in `processes` threads, each a process of a loopback cluster, and
    /// returns process 0's ranking.
    fn across(g: &Csr, algorithm: Algorithm, processes: usize) -> Ranking {
        let listeners: Vec<TcpListener> = (0..processes)
            .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
            .collect();
        let addresses: Vec<String> = listeners
            .iter()
            .map(|l| l.local_addr().unwrap().to_string())
            .collect();
        drop(listeners);
        let graph = Arc::new(g.clone());
        let transpose = Arc::new(g.transpose());
        let threads: Vec<_> = (0..processes)
            .map(|p| {
                let config = DistributedConfig {
                    algorithm: algorithm.clone(),
                    cluster: Cluster {
                        addresses: addresses.clone(),
                        process: p,
                        connect_timeout: Duration::from_secs(20),
                        round_timeout: Duration::from_secs(60),
                    },
                    checkpoints: None,
                    graph_fingerprint: 1,
                };
                let (graph, transpose) = (graph.clone(), transpose.clone());
                std::thread::spawn(move || run_process(graph, transpose, &config))
            })
            .collect();
        let mut outcomes: Vec<DistributedOutcome> = threads
            .into_iter()
            .map(|t| {
                t.join()
                    .expect("a process panicked")
                    .expect("a process failed")
            })
            .collect();
        assert!(outcomes[1..].iter().all(|o| o.result.is_none()));
        outcomes
            .swap_remove(0)
            .result
            .expect("process 0 has the scores")
    }

    #[test]
    fn hits_across_processes_is_the_one_process_solver_bit_for_bit() {
        let g = graph();
        let t = g.transpose();
        for (config, processes) in [
            (HitsConfig::default(), 3),
            (HitsConfig::default(), 1),
            (
                HitsConfig {
                    iterations: 200,
                    tolerance: Some(1e-9),
                },
                2,
            ),
            (
                HitsConfig {
                    iterations: 0,
                    tolerance: None,
                },
                3,
            ),
        ] {
            let one = crate::hits(&g, &t, &config).unwrap();
            let Ranking::Hits(r) = across(&g, Algorithm::Hits(config.clone()), processes) else {
                panic!("not a HITS result");
            };
            let case = format!("{config:?} in {processes} processes");
            assert_eq!(r.iterations, one.iterations, "{case}");
            assert_eq!(r.l1_change.to_bits(), one.l1_change.to_bits(), "{case}");
            assert_eq!(r.hubs, one.hubs, "{case}: hubs");
            assert_eq!(r.authorities, one.authorities, "{case}: authorities");
        }
    }

    #[test]
    fn indegree_across_processes_counts_every_arc() {
        let g = graph();
        let Ranking::InDegree(scores) = across(&g, Algorithm::InDegree, 3) else {
            panic!("not an in-degree result");
        };
        assert_eq!(scores, crate::indegree(&g));
    }

    #[test]
    fn hits_and_indegree_refuse_checkpoints() {
        let g = Arc::new(graph());
        for algorithm in [Algorithm::Hits(HitsConfig::default()), Algorithm::InDegree] {
            let config = DistributedConfig {
                algorithm,
                cluster: Cluster {
                    addresses: vec!["127.0.0.1:1".into()],
                    process: 0,
                    connect_timeout: Duration::from_secs(1),
                    round_timeout: Duration::from_secs(1),
                },
                checkpoints: Some(Checkpoints {
                    dir: std::env::temp_dir(),
                    every: 1,
                }),
                graph_fingerprint: 1,
            };
            let err = run_process(g.clone(), Arc::new(g.transpose()), &config).unwrap_err();
            assert!(err.to_string().contains("checkpoint"), "{err:#}");
        }
    }
}
