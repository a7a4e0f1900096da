//! What a crawl state can be turned into: its link graph as a BVGraph (so a real crawl feeds
//! `crawlrank simulate` and `rank`, and LAW's tools open it) and/or as a text arc list (for
//! NetworkX and friends), the policy's current ranking of every URL, and a status summary.
//! All of them read the state without changing it.
//!
//! The graph: nodes are all discovered URLs (ids in discovery order, which is the `.urls`
//! line order), arcs are the out-links of the crawled pages as reported to the policy
//! (redirects contribute their target), each once. Pages not crawled have no out-links.
//!
//! The ranking and its companion file of page marks are written as [`crate::ranking`]
//! describes; while a crawl runs and holds the state, its own latest snapshots are copied.

use crate::ranking::{
    page_marks_path, url_in, write_page_marks, write_ranking, PAGE_MARKS_SNAPSHOT, RANKING_SNAPSHOT,
};
use crate::resume;
use crate::store::{Event, Loaded, Store};
use anyhow::{anyhow, ensure, Context, Result};
use crawlrank_fetch::page::PageMeta;
use crawlrank_fetch::Stats;
use crawlrank_frontier::{PageId, PolicySpec};
use crawlrank_graph::arclist;
use crawlrank_graph::import::DEFAULT_SORT_MEMORY;
use crawlrank_graph::GraphWriter;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use webgraph::graphs::par_sorted_graph::ParSortedGraph;
use webgraph::utils::MemoryUsage;

/// The state of `dir`, opened for reading only (it is left as it is); its events are then
/// read from the store as a stream.
fn load(dir: &Path) -> Result<(Store, Loaded)> {
    Store::open_read_only(dir)
}

fn config(dir: &Path, loaded: &Loaded) -> Result<PolicySpec> {
    let mut c = loaded
        .config
        .clone()
        .with_context(|| format!("{} holds no crawl configuration yet", dir.display()))?;
    if c.kind.needs_impact() {
        // The impacts of the discovered pages are in the state ([`Store::impacts`]).
        c.config.impact = Some(crawlrank_frontier::Impacts::new(Vec::new()));
    }
    Ok(c)
}

/// Numbers of an export.
#[derive(Debug, Clone, Copy)]
pub struct GraphExport {
    /// Nodes: every URL the crawl discovered, crawled or not (ids as in the state).
    pub nodes: usize,
    /// Arcs: distinct links between them.
    pub arcs: u64,
    /// Pages whose fetch ended (any outcome): the nodes that can have out-links.
    pub crawled: u64,
}

/// Which forms of a crawl's link graph [`export_links`] writes.
#[derive(Debug, Clone, Default)]
pub struct LinkOutputs {
    /// A BVGraph at this basename: `.graph`, `.offsets`, `.properties`, `.ef`, `.urls`.
    pub graph: Option<PathBuf>,
    /// A text arc list in this file, one `src<TAB>dst` line per link (see
    /// [`crawlrank_graph::arclist`]).
    pub arcs: Option<PathBuf>,
    /// Name the nodes of the arc list by URL (`src_url<TAB>dst_url`) instead of by id.
    pub arc_urls: bool,
}

/// Writes the crawl's link graph as a BVGraph at `out` (`.graph`, `.offsets`,
/// `.properties`, and the `.ef` index that webgraph-rs and LAW's Python bindings need) with
/// `out.urls`, atomically. See [`export_links`].
pub fn export_graph(dir: &Path, out: &Path) -> Result<GraphExport> {
    export_links(
        dir,
        &LinkOutputs {
            graph: Some(out.to_path_buf()),
            ..LinkOutputs::default()
        },
    )
}

/// Writes the crawl's link graph in the forms `outputs` asks for — a BVGraph (as
/// [`export_graph`]) and/or a text arc list — each atomically. Both hold the same arcs:
/// sorted by source then destination, each link once.
///
/// The arcs come in crawl order and a BVGraph wants them by source: they are sorted once, in
/// external memory (sorted batches of at most [`DEFAULT_SORT_MEMORY`] spilled to the system
/// temporary directory, `TMPDIR`), and streamed from there to each output, so memory stays
/// within that budget however many links the crawl found.
pub fn export_links(dir: &Path, outputs: &LinkOutputs) -> Result<GraphExport> {
    ensure!(
        outputs.graph.is_some() || outputs.arcs.is_some(),
        "nothing to export: ask for a BVGraph and/or an arc list"
    );
    let (store, _) = load(dir)?;
    let urls = store.all_urls()?;
    let n = urls.len();
    let mut crawled = 0;
    // The sort takes an iterator of arcs; a bad event ends it and is reported as is rather
    // than as a failure of the sort.
    let mut read_error = None;
    let mut events = store.events()?;
    let (mut from, mut links) = (0, Vec::new().into_iter());
    let arcs = std::iter::from_fn(|| loop {
        if let Some(to) = links.next() {
            return Some((from, to as usize));
        }
        match events.next()? {
            Ok((i, Event::Crawled { id, links: l, .. })) => {
                if let Some(p) = std::iter::once(id)
                    .chain(l.iter().copied())
                    .find(|&p| p as usize >= n)
                {
                    read_error = Some(anyhow!(
                        "the crawl state {} is inconsistent: event {i} names page {p}, which has \
                         no URL",
                        crate::store::db_path(dir).display()
                    ));
                    return None;
                }
                crawled += 1;
                from = id as usize;
                links = l.into_iter();
            }
            Ok(_) => {}
            Err(e) => {
                read_error = Some(e);
                return None;
            }
        }
    });
    let sorted = ParSortedGraph::config()
        .dedup()
        .memory_usage(MemoryUsage::MemorySize(DEFAULT_SORT_MEMORY))
        .sort_pairs(n, arcs);
    if let Some(e) = read_error {
        return Err(e);
    }
    let sorted = sorted.context("cannot sort the crawl's links in the temporary directory")?;
    let mut arcs = None;
    if let Some(out) = &outputs.graph {
        let writer = GraphWriter::new(out)?;
        arcs = Some(writer.compress(&sorted)?.properties.arcs);
        writer.write_urls(&urls)?;
        writer.commit()?;
    }
    if let Some(out) = &outputs.arcs {
        let urls = outputs.arc_urls.then_some(&urls[..]);
        let written = arclist::write_arcs(&sorted, urls, out).with_context(|| {
            format!(
                "cannot write the links of the crawl {} as arcs",
                dir.display()
            )
        })?;
        arcs = Some(written.arcs);
    }
    Ok(GraphExport {
        nodes: n,
        arcs: arcs.unwrap_or(0),
        crawled,
    })
}

/// What [`export_ranking`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankingExport {
    /// URLs written (those the policy scores).
    pub scored: usize,
    /// URLs left out because the policy has no score for them (unknown when read from a
    /// snapshot).
    pub unscored: Option<usize>,
    /// Whether a running crawl held the state, so the latest snapshot was copied instead.
    pub from_snapshot: bool,
    /// The companion file of page marks ([`page_marks_path`]) and its number of lines; `None`
    /// when a running crawl's snapshot has none (a crawl started by an older build).
    pub page_marks: Option<(PathBuf, usize)>,
}

/// Copies a snapshot file; returns its number of lines.
fn copy_snapshot(from: &Path, out: &Path) -> Result<usize> {
    let text = std::fs::read(from).with_context(|| format!("cannot read {}", from.display()))?;
    crawlrank_graph::atomic::write_file(out, |w| {
        w.write_all(&text)
            .with_context(|| format!("cannot write {}", out.display()))
    })?;
    Ok(text.iter().filter(|&&b| b == b'\n').count())
}

/// Writes the current ranking of every URL by the policy's score (`score\turl`, best first;
/// URLs the policy has no score for, e.g. pages a FIFO policy never ranks, are left out), and
/// the marks of the fetched pages to [`page_marks_path`]`(out)`: `url\tnoindex\tcanonical`
/// for each page that said `noindex` (`1`, else `0`) or named another canonical URL.
/// While a crawl is running and holds the state, the crawl's latest snapshots
/// ([`RANKING_SNAPSHOT`], [`PAGE_MARKS_SNAPSHOT`]) are copied instead.
pub fn export_ranking(dir: &Path, out: &Path) -> Result<RankingExport> {
    let marks_out = page_marks_path(out);
    let (store, loaded) = match load(dir) {
        Ok(opened) => opened,
        Err(e) => {
            let snapshot = dir.join(RANKING_SNAPSHOT);
            if !snapshot.is_file() {
                return Err(e);
            }
            let scored = copy_snapshot(&snapshot, out)?;
            let marks = dir.join(PAGE_MARKS_SNAPSHOT);
            let page_marks = if marks.is_file() {
                Some((marks_out.clone(), copy_snapshot(&marks, &marks_out)?))
            } else {
                None
            };
            return Ok(RankingExport {
                scored,
                unscored: None,
                from_snapshot: true,
                page_marks,
            });
        }
    };
    let cfg = config(dir, &loaded)?;
    let replayed = resume::replay(&cfg, loaded.urls, &store.impacts()?, store.events()?)?;
    let urls = store.all_urls()?;
    let score = |id| replayed.frontier.score(id);
    let (scored, unscored) = write_ranking(out, urls.len(), score, url_in(&urls))?;
    let n = write_page_marks(&marks_out, store.marks()?, url_in(&urls))?;
    Ok(RankingExport {
        scored,
        unscored: Some(unscored),
        from_snapshot: false,
        page_marks: Some((marks_out, n)),
    })
}

/// The marks of the fetched pages that have any (`noindex`, a canonical URL), by URL, read
/// from the state.
pub fn page_marks(dir: &Path) -> Result<Vec<(String, PageMeta)>> {
    let (store, _) = load(dir)?;
    let urls = store.url_reader()?;
    store
        .marks()?
        .map(|mark| {
            let (id, m) = mark?;
            let url = urls
                .get(id)?
                .with_context(|| format!("page {id} has marks but no URL in the state"))?;
            Ok((url, m))
        })
        .collect()
}

/// A summary of a crawl state.
#[derive(Debug, Clone)]
pub struct Status {
    /// The policy and its configuration; `None` before the first run stored them.
    pub config: Option<PolicySpec>,
    /// URLs discovered.
    pub discovered: usize,
    /// Pages popped from the frontier.
    pub popped: u64,
    /// Pages whose fetch ended (any outcome).
    pub crawled: u64,
    /// Popped, not finished: fetched first when the crawl resumes.
    pub pending: u64,
    /// Discovered, never popped.
    pub frontier: u64,
    /// Finished pages by outcome name ([`Outcome::name`](crawlrank_fetch::page::Outcome::name)).
    pub outcomes: BTreeMap<&'static str, u64>,
    /// Distinct hosts (scheme, host and port) of the discovered URLs.
    pub hosts: usize,
    /// WARC files written (0 before any record).
    pub warc_files: u32,
    /// The crawl's counters, over all runs.
    pub stats: Stats,
}

/// Reads the status of the crawl in `dir`.
pub fn status(dir: &Path) -> Result<Status> {
    let (store, loaded) = load(dir)?;
    let (mut popped, mut crawled) = (0, 0);
    let mut outcomes = BTreeMap::new();
    for event in store.events()? {
        match event?.1 {
            Event::Popped(_) => popped += 1,
            Event::Crawled { outcome, .. } => {
                crawled += 1;
                *outcomes.entry(outcome.name()).or_insert(0) += 1;
            }
            Event::Seed(_) => {}
        }
    }
    let mut hosts = std::collections::HashSet::new();
    for row in store.urls()? {
        if let Some(h) = crawlrank_fetch::links::origin_key(&row?.1) {
            hosts.insert(h);
        }
    }
    Ok(Status {
        config: loaded.config.clone(),
        discovered: loaded.urls as usize,
        popped,
        crawled,
        pending: popped - crawled,
        frontier: loaded.urls.saturating_sub(popped),
        outcomes,
        hosts: hosts.len(),
        warc_files: if loaded.warc == Default::default() && crawled == 0 {
            0
        } else {
            loaded.warc.file + 1
        },
        stats: Stats::decode(&loaded.stats),
    })
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(spec) = &self.config {
            let c = &spec.config;
            writeln!(
                f,
                "policy {} (K = {}, expected pages {}, total pages {}, rng seed {})",
                spec.kind, c.batch, c.expected_pages, c.total_pages, c.rng_seed
            )?;
        }
        writeln!(f, "discovered URLs   {}", self.discovered)?;
        write!(f, "{}", self.stats.pages_summary())?;
        writeln!(
            f,
            "pages finished    {} (fetched or given up)",
            self.crawled
        )?;
        writeln!(
            f,
            "in flight at stop {} (fetched first on resume)",
            self.pending
        )?;
        writeln!(f, "frontier          {}", self.frontier)?;
        writeln!(f, "hosts             {}", self.hosts)?;
        writeln!(f, "WARC files        {}", self.warc_files)?;
        for (k, v) in &self.outcomes {
            writeln!(f, "  {k:<20} {v}")?;
        }
        write!(f, "counters:\n{}", self.stats)
    }
}

/// The URLs of the pages popped so far, in pop order (the crawl order the policy chose;
/// with one request slot it is also the fetch order).
pub fn crawl_order(dir: &Path) -> Result<Vec<String>> {
    let (store, _) = load(dir)?;
    let urls = store.url_reader()?;
    let mut order = Vec::new();
    for event in store.events()? {
        if let Event::Popped(id) = event?.1 {
            order.extend(urls.get(id)?);
        }
    }
    Ok(order)
}

/// Every URL a crawl discovered, by page id (crawled or not), read from its state.
pub fn discovered_urls(dir: &Path) -> Result<Vec<String>> {
    let (store, _) = load(dir)?;
    store.all_urls()
}

/// One of the frontier calls a crawl logged, with URLs for page ids ([`crawl_log`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoggedCall {
    /// URLs seeded (the user's seeds, or a sitemap's entries).
    Seed(Vec<String>),
    /// The policy chose this page next.
    Popped(String),
    /// This page was fetched, with its out-links in page order (a redirect's: its target).
    Crawled {
        /// The page.
        url: String,
        /// Its out-links.
        links: Vec<String>,
    },
}

/// The frontier calls a crawl logged, in order, with URLs (for checking a crawl against an
/// expected one; it holds the whole log, so it is meant for crawls of a test's size).
pub fn crawl_log(dir: &Path) -> Result<Vec<LoggedCall>> {
    let (store, _) = load(dir)?;
    let urls = store.url_reader()?;
    let url = |id: PageId| -> Result<String> {
        urls.get(id)?
            .with_context(|| format!("page {id} of the log has no URL in the state"))
    };
    let mut calls = Vec::new();
    for event in store.events()? {
        calls.push(match event?.1 {
            Event::Seed(ids) => LoggedCall::Seed(ids.into_iter().map(url).collect::<Result<_>>()?),
            Event::Popped(id) => LoggedCall::Popped(url(id)?),
            Event::Crawled { id, links, .. } => LoggedCall::Crawled {
                url: url(id)?,
                links: links.into_iter().map(url).collect::<Result<_>>()?,
            },
        });
    }
    Ok(calls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StepWrites;
    use crawlrank_fetch::page::Outcome;
    use crawlrank_frontier::{PageId, PolicyConfig, PolicyKind};

    /// A bfs crawl of `0 -> 1, 2; 1 -> 0, 3` stopped with page 2 in flight: events 0 (seed)
    /// to 5, event 4 being page 1's `Crawled`.
    fn stopped_crawl(dir: &Path) {
        let (mut s, _) = Store::open(dir, true).unwrap();
        let c = PolicySpec {
            kind: PolicyKind::Bfs,
            config: PolicyConfig {
                batch: 1,
                ..PolicyConfig::for_crawl(4, 4)
            },
        };
        s.set_config(&c).unwrap();
        let succ: [Vec<PageId>; 4] = [vec![1, 2], vec![0, 3], vec![], vec![]];
        let mut f = crawlrank_frontier::Frontier::from_spec(&c).unwrap();
        f.seed(&[0]);
        let mut events = vec![Event::Seed(vec![0])];
        for _ in 0..2 {
            let p = f.pop().unwrap();
            f.on_crawled(p, &succ[p as usize]);
            events.push(Event::Popped(p));
            events.push(Event::Crawled {
                id: p,
                outcome: Outcome::Html,
                status: 200,
                links: succ[p as usize].clone(),
            });
        }
        events.push(Event::Popped(f.pop().unwrap()));
        s.commit(&StepWrites {
            new_urls: (0..4).map(|i| (i, format!("http://a.test/{i}"))).collect(),
            events,
            ..StepWrites::default()
        })
        .unwrap();
    }

    /// Overwrites event `i` behind the store's back.
    fn tamper(dir: &Path, i: u64, bytes: &[u8]) {
        let table = redb::TableDefinition::<u64, &[u8]>::new("events");
        let db = redb::Database::open(crate::store::db_path(dir)).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(table).unwrap().insert(i, bytes).unwrap();
        txn.commit().unwrap();
    }

    #[test]
    fn status_order_graph_and_ranking_read_the_log() {
        let dir = tempfile::tempdir().unwrap();
        stopped_crawl(dir.path());
        let st = status(dir.path()).unwrap();
        assert_eq!(
            (
                st.discovered,
                st.popped,
                st.crawled,
                st.pending,
                st.frontier
            ),
            (4, 3, 2, 1, 1)
        );
        assert_eq!(st.outcomes.get("html"), Some(&2));
        let url = |i: u32| format!("http://a.test/{i}");
        assert_eq!(crawl_order(dir.path()).unwrap(), [url(0), url(1), url(2)]);

        let out = dir.path().join("out/crawl.v1");
        let e = export_graph(dir.path(), &out).unwrap();
        assert_eq!((e.nodes, e.arcs, e.crawled), (4, 4, 2));
        let cache = crawlrank_graph::Cache::new(dir.path().join("cache"));
        let g = crawlrank_graph::BvWebGraph::open(&out, &cache).unwrap();
        let arcs: Vec<(u32, u32)> = g.to_csr().unwrap().arcs().collect();
        assert_eq!(arcs, [(0, 1), (0, 2), (1, 0), (1, 3)]);
        assert!(crawlrank_graph::bv::with_ext(&out, "ef").is_file());
        let urls = crawlrank_graph::urls::read_urls(&crawlrank_graph::bv::with_ext(&out, "urls"));
        assert_eq!(urls.unwrap(), (0..4).map(url).collect::<Vec<_>>());

        let r = export_ranking(dir.path(), &dir.path().join("rank.tsv")).unwrap();
        assert!(!r.from_snapshot);
        assert_eq!(r.scored + r.unscored.unwrap(), 4);

        // A state whose crawl never started (its seeds were refused) exports an empty graph.
        let empty = tempfile::tempdir().unwrap();
        drop(Store::open(empty.path(), true).unwrap());
        let e = export_graph(empty.path(), &empty.path().join("g")).unwrap();
        assert_eq!((e.nodes, e.arcs, e.crawled), (0, 0, 0));
        assert_eq!(crawl_order(empty.path()).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn links_export_as_a_bvgraph_with_its_ef_and_as_an_arc_list() {
        use webgraph::prelude::*;
        let dir = tempfile::tempdir().unwrap();
        stopped_crawl(dir.path());
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let (base, arcs, named) = (out.join("crawl"), out.join("a.tsv"), out.join("u.tsv"));
        let e = export_links(
            dir.path(),
            &LinkOutputs {
                graph: Some(base.clone()),
                arcs: Some(arcs.clone()),
                arc_urls: false,
            },
        )
        .unwrap();
        assert_eq!((e.nodes, e.arcs, e.crawled), (4, 4, 2));
        assert_eq!(
            std::fs::read_to_string(&arcs).unwrap(),
            "0\t1\n0\t2\n1\t0\n1\t3\n"
        );
        // The `.ef` is beside the graph: webgraph's own loader (what LAW's Python bindings
        // call) opens it from there, with no cache.
        let mut files: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(
            files,
            [
                "a.tsv",
                "crawl.ef",
                "crawl.graph",
                "crawl.offsets",
                "crawl.properties",
                "crawl.urls"
            ]
        );
        let g = webgraph::graphs::bvgraph::BvGraph::with_basename(&base)
            .load()
            .unwrap();
        let succ: Vec<Vec<usize>> = (0..4).map(|v| g.successors(v).collect()).collect();
        assert_eq!(succ, [vec![1, 2], vec![0, 3], vec![], vec![]]);

        // The arc list alone, with URLs.
        let e = export_links(
            dir.path(),
            &LinkOutputs {
                arcs: Some(named.clone()),
                arc_urls: true,
                ..LinkOutputs::default()
            },
        )
        .unwrap();
        assert_eq!(e.arcs, 4);
        let url = |i: u32| format!("http://a.test/{i}");
        let expected: String = [(0, 1), (0, 2), (1, 0), (1, 3)]
            .iter()
            .map(|&(s, d)| format!("{}\t{}\n", url(s), url(d)))
            .collect();
        assert_eq!(std::fs::read_to_string(&named).unwrap(), expected);
        let err = format!(
            "{:#}",
            export_links(dir.path(), &LinkOutputs::default()).unwrap_err()
        );
        assert!(err.contains("nothing to export"), "{err}");
    }

    #[test]
    fn a_bad_event_is_an_error_for_every_reader_and_for_a_resume() {
        let dir = tempfile::tempdir().unwrap();
        stopped_crawl(dir.path());
        tamper(dir.path(), 4, &[2, 1]);
        let out = dir.path().join("crawl");
        let arcs = dir.path().join("arcs.tsv");
        let rank = dir.path().join("rank.tsv");
        let resume = crate::engine::CrawlConfig {
            state_dir: dir.path().to_path_buf(),
            policy: PolicyKind::Bfs.into(),
            ..Default::default()
        };
        for err in [
            status(dir.path()).err(),
            crawl_order(dir.path()).err(),
            export_graph(dir.path(), &out).err(),
            export_links(
                dir.path(),
                &LinkOutputs {
                    arcs: Some(arcs.clone()),
                    ..LinkOutputs::default()
                },
            )
            .err(),
            export_ranking(dir.path(), &rank).err(),
            crate::engine::crawl(
                &resume,
                &std::sync::atomic::AtomicBool::new(false),
                &mut |_| {},
            )
            .err(),
        ] {
            let err = format!("{:#}", err.expect("refused"));
            assert!(
                err.contains("is unreadable") && err.contains("event 4"),
                "{err}"
            );
        }
        assert!(!crawlrank_graph::bv::with_ext(&out, "properties").exists());
        assert!(!arcs.exists());
        assert!(!rank.exists());

        // Decodable but naming a page the URL table lacks.
        let bad = Event::Crawled {
            id: 1,
            outcome: Outcome::Html,
            status: 200,
            links: vec![0, 9],
        };
        tamper(dir.path(), 4, &bad.encode());
        let err = format!("{:#}", export_graph(dir.path(), &out).err().unwrap());
        assert!(err.contains("event 4 names page 9"), "{err}");
        assert!(!crawlrank_graph::bv::with_ext(&out, "properties").exists());
    }
}
